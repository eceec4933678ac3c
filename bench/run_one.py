"""Solve ONE benchmark instance with one configuration, in this process; print one JSON line.

    python bench/run_one.py '{"instance": {...}, "config": {...}, "timeout": 60}'

bench/run.py starts one such process per (instance, configuration), pinned to one core.
The clock starts after the imports (treesens, xgboost, veritas): ``time.total`` is load + compile + solve (+ the
replay check), the same span for every configuration. ``time.cpu`` is the CPU time of that span, this
process and its solver process together (robust to other load on the machine).
"""

from __future__ import annotations

import contextlib
import json
import resource
import signal
import sys
import time
from pathlib import Path


def no_answer(status: str, error: str | None, **more) -> dict:
    """The result line of a run that gave none of its own (it failed, or was killed)."""
    line = {"status": status, "validated": False, "distance": None, "time": {"total": None}}
    return {**line, "error": error, **more}


def _cpu(who) -> float:
    u = resource.getrusage(who)
    return u.ru_utime + u.ru_stime


def run_treesens(inst: dict, cfg: dict, timeout: float) -> dict:
    import treesens
    from treesens.driver import solve_query

    t0 = time.time()
    c0 = _cpu(resource.RUSAGE_SELF)
    ens = treesens.load_model(inst["model_path"], details=inst["details_path"])
    t_load = time.time() - t0
    res = solve_query(ens, treesens_query(inst, cfg, timeout), deadline=t0 + timeout)
    total = time.time() - t0
    from treesens.backends.worker import shutdown

    shutdown()  # reap the solver process so that its CPU time is counted below
    cpu = _cpu(resource.RUSAGE_SELF) - c0 + _cpu(resource.RUSAGE_CHILDREN)
    return treesens_record(res, cfg, {"load": t_load, "total": total, "cpu": cpu})


def treesens_query(inst: dict, cfg: dict, timeout: float):
    """The query a treesens configuration asks of an instance."""
    from treesens.interfaces.api import make_query

    q = make_query(
        list(inst["features"]),
        gap=inst["gap"],
        classes=tuple(inst["classes"]) if inst.get("classes") else None,
        passes=cfg.get("passes"),
        baseline=cfg.get("baseline"),
        backend=cfg.get("backend", "cpsat"),
        timeout=timeout,
        threads=1,
    )
    opts = []
    if not cfg.get("heuristic", True):
        opts.append(("heuristic", False))
    box = cfg.get("box_search")
    if not (cfg.get("heuristic", True) if box is None else box):
        opts.append(("box_search", False))
    if cfg.get("heuristic_effort", 1.0) != 1.0:
        opts.append(("heuristic_effort", float(cfg["heuristic_effort"])))
    if cfg.get("params"):
        opts.append(("solver_params", tuple((k, v) for k, v in cfg["params"])))
    if cfg.get("data_aware"):
        opts.append(("data", inst["data_path"]))
        q = q.planned(data_aware=cfg["data_aware"])
    if opts:
        q = q.planned(options=tuple(opts))
    return q


def treesens_record(res, cfg: dict, times: dict) -> dict:
    """A result line of a treesens run: ``times`` holds load, total and cpu."""
    stats = res.stats or {}
    return {
        "status": res.status,
        "validated": bool(res.validated),
        "distance": res.distance,
        "time": {
            "load": times["load"],
            "compile": res.time.get("compile", 0.0),
            "solve": res.time.get("solve", 0.0),
            "total": times["total"],
            "cpu": times["cpu"],
        },
        "found_by": stats.get("found_by"),
        "proved_by": stats.get("proved_by"),
        "search": stats.get("search"),
        "vars": stats.get("vars", stats.get("n_vars")),
        "constraints": stats.get("constraints", stats.get("n_constraints")),
        "message": res.message,
        "error": res.error,
        **({"data_aware": _data_aware_record(stats)} if cfg.get("data_aware") else {}),
    }


GRACE = 30.0  # seconds past a query's time limit before a batch stops it (its hard limit)


class HardLimit(KeyboardInterrupt):
    """A query of a batch past its hard limit: unwinds like Ctrl-C, so that the same
    clean-up runs (the box search's thread and the solver processes end)."""


@contextlib.contextmanager
def hard_limit(seconds: float):
    """Raise HardLimit in this thread (a process's main thread) after ``seconds``: the
    batch's stop for a query that overran its own time limit (SIGALRM; its handler runs
    when the interpreter next runs Python code, so a native call holds it until it
    returns; every long wait of treesens wakes every 0.25 s)."""

    def stop(_signum, _frame) -> None:
        raise HardLimit()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _stopped(what: str, limit: float) -> str:
    from treesens.backends.worker import kill_now

    kill_now()  # its solver processes, at once
    return f"{what} stopped by the batch's hard limit ({limit:g} s)"


def run_batch(
    timeout: float, group: tuple[dict, list[dict]], certificates: str | None = None
) -> list[dict]:
    """One configuration on every instance of ONE model, in this process (``bench/run.py
    --batch``; an executor's task): the model is loaded once and each query is asked
    through the batch path (treesens.questions.campaign.ask_many) within ``timeout`` from
    its own start, and stopped by a hard limit ``GRACE`` seconds later (an "unknown"
    line saying so; the next query goes on). ``certificates``: a folder where each
    "insensitive" answer's certificate is written (``<instance id>.json``, questions/
    certify.py, the box search within ``timeout``) and checked by the independent
    checker, under the same hard limit; its line's ``certificate`` says what became of it.
    A line's ``time.load`` is the model's load time shared out over its queries,
    ``time.total`` its answer's time plus that share; ``time.cpu`` this process's CPU
    time over the answer (a solver process kept for the next query counts in the group's
    ``batch_cpu``, given on every line of the group: this process and its reaped solver
    processes, from the load to the end, certificates included)."""
    import treesens
    from treesens.backends.worker import shutdown
    from treesens.questions.campaign import ask_many
    from treesens.questions.certify_recorded import recording_for

    cfg, insts = group
    t0 = time.time()
    c0 = _cpu(resource.RUSAGE_SELF)
    ch0 = _cpu(resource.RUSAGE_CHILDREN)
    ens = treesens.load_model(insts[0]["model_path"], details=insts[0]["details_path"])
    share = (time.time() - t0) / len(insts)
    lines = []
    for inst in insts:
        q = treesens_query(inst, cfg, timeout)
        began, cpu0 = time.time(), _cpu(resource.RUSAGE_SELF)
        try:
            # a certificate asked for: the answer's box search records its proof
            with hard_limit(timeout + GRACE), recording_for(q, certificates):
                (res,) = ask_many(ens, [q])
        except HardLimit:
            why = _stopped("the query", timeout + GRACE)
            line = no_answer("unknown", None, message=why)
            line["time"] = {"load": share, "total": time.time() - began + share}
            lines.append(line)
            continue
        times = {"load": share, "total": res.time["total"] + share}
        times["cpu"] = _cpu(resource.RUSAGE_SELF) - cpu0
        line = treesens_record(res, cfg, times)
        if certificates is not None and res.status == "insensitive":
            line["certificate"] = certify_line(ens, q, res, inst, certificates, timeout)
        lines.append(line)
    shutdown()  # reap the solver processes so that their CPU time is counted
    batch_cpu = _cpu(resource.RUSAGE_SELF) - c0 + _cpu(resource.RUSAGE_CHILDREN) - ch0
    return [{**line, "batch_cpu": batch_cpu} for line in lines]


def certify_line(ens, q, res, inst: dict, folder: str, timeout: float) -> dict:
    """Certify an "insensitive" answer into ``folder/<instance id>.json`` and check it with
    the independent checker (questions/certify.py ``certify_answer``), within the hard
    limit: whether it was written and verified, the file, the seconds to write it (the box
    search's proof, or the answer's own: ``from_answer``) and to check it, the CPU
    seconds of both, and why not when it was not."""
    from treesens.questions.certify import certify_answer
    from treesens.questions.sweep_certs import safe_name

    path = Path(folder) / f"{safe_name(inst['id'])}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    t0, cpu0 = time.time(), _cpu(resource.RUSAGE_SELF)
    from_answer = res.box_proof is not None  # written from the answer's recorded proof
    try:
        with hard_limit(timeout + GRACE):
            done = certify_answer(ens, q, res, path, inst["model_path"], timeout)
    except HardLimit:
        why = _stopped("the certificate", timeout + GRACE)
        return {"written": path.exists(), "verified": False, "path": str(path), "why_not": why}
    return {
        "written": done.written,
        "verified": done.verified,
        "path": done.path,
        "write_s": done.seconds,
        "verify_s": max(0.0, time.time() - t0 - done.seconds) if done.written else None,
        # this process's CPU over writing and checking it (the checker runs here)
        "cpu": _cpu(resource.RUSAGE_SELF) - cpu0,
        "from_answer": from_answer and "the answer's own proof" in done.message,
        "why_not": done.reason,
    }


DATA_AWARE_STATS = (
    "solver_status",  # optimal / feasible
    "objective",  # the utility (log-likelihood) of the pair
    "objective_bound",
    "objective_gap",  # relative: |bound - objective| / max(1, |objective|)
    "stopped_by",
    "clauses",
    "clauses_source",  # "learned" or the cache file: whether the time includes learning
    "clause_learning",
    "data_restrictions_dropped",
)


def _data_aware_record(stats: dict) -> dict:
    return {k: stats[k] for k in DATA_AWARE_STATS if k in stats}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    spec = json.loads(argv[0])
    inst, cfg, timeout = spec["instance"], spec["config"], float(spec["timeout"])
    # Imports are start-up, not answer time: treesens, and the model's own library that
    # the replay check calls (importing xgboost takes seconds on a loaded machine).
    import xgboost  # noqa: F401

    import treesens  # noqa: F401

    if cfg.get("kind") == "veritas":
        import veritas  # noqa: F401

    try:
        if cfg.get("kind") == "veritas":
            from veritas_peer import run_veritas  # bench/ is on sys.path (script dir)

            out = run_veritas(inst, timeout, dict(cfg.get("params") or ()))
        elif cfg.get("kind") == "ensense-clause":
            from ensense_clauses import run_ensense_clauses  # its data-aware clause mode

            out = run_ensense_clauses(inst, timeout, dict(cfg.get("params") or ()))
        elif cfg.get("kind") == "ensense":
            from ensense_peer import run_ensense  # an external program (GPLv3), replayed here

            out = run_ensense(inst, timeout, dict(cfg.get("params") or ()))
        else:
            out = run_treesens(inst, cfg, timeout)
    except Exception as e:  # one broken instance must not stop the run
        import traceback

        traceback.print_exc()
        out = no_answer("error", f"{type(e).__name__}: {e}")
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
