"""Solve ONE benchmark instance with one configuration, in this process; print one JSON line.

    python bench/run_one.py '{"instance": {...}, "config": {...}, "timeout": 60}'

bench/run.py starts one such process per (instance, configuration), pinned to one core.
The clock starts after the imports (treesens, xgboost, veritas): ``time.total`` is load + compile + solve (+ the
replay check), the same span for every configuration. ``time.cpu`` is the CPU time of that span, this
process and its solver process together (robust to other load on the machine).
"""

from __future__ import annotations

import json
import resource
import sys
import time


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


def run_batch(timeout: float, group: tuple[dict, list[dict]]) -> list[dict]:
    """One configuration on every instance of ONE model, in this process (``bench/run.py
    --batch``; an executor's task): the model is loaded once and the queries are asked
    through the batch path (treesens.questions.campaign.ask_many), each within
    ``timeout`` from its own start. A line's ``time.load`` is the model's load time shared
    out over its queries, ``time.total`` its answer's time plus that share; ``time.cpu``
    this process's CPU time over the answer (a solver process kept for the next query
    counts in the group's ``batch_cpu``, given on every line of the group: this process
    and its reaped solver processes, from the load to the end)."""
    import treesens
    from treesens.backends.worker import shutdown
    from treesens.questions.campaign import ask_many

    cfg, insts = group
    t0 = time.time()
    c0 = _cpu(resource.RUSAGE_SELF)
    ch0 = _cpu(resource.RUSAGE_CHILDREN)
    ens = treesens.load_model(insts[0]["model_path"], details=insts[0]["details_path"])
    share = (time.time() - t0) / len(insts)
    queries = [treesens_query(inst, cfg, timeout) for inst in insts]
    cpu: list[float] = []
    began = [0.0]

    def started(_q) -> None:
        began[0] = _cpu(resource.RUSAGE_SELF)

    def ended(_res) -> None:
        cpu.append(_cpu(resource.RUSAGE_SELF) - began[0])

    results = ask_many(ens, queries, on_start=started, on_result=ended)
    shutdown()  # reap the solver processes so that their CPU time is counted
    batch_cpu = _cpu(resource.RUSAGE_SELF) - c0 + _cpu(resource.RUSAGE_CHILDREN) - ch0
    lines = []
    for res, c in zip(results, cpu, strict=True):
        times = {"load": share, "total": res.time["total"] + share, "cpu": c}
        lines.append({**treesens_record(res, cfg, times), "batch_cpu": batch_cpu})
    return lines


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
