"""Run the benchmark: every (instance, configuration) in its own process, one core each.

    python bench/run.py --tier quick                  # a few minutes on 2 cores
    python bench/run.py --tier full [--suite single]  # hours; resumable
    python bench/run.py --tier full --configs default,kant --suite single --jobs 2
    python bench/run.py --tier full --executor dask=tcp://scheduler:8786  # on a cluster
    python bench/run.py --tier full --shard $SLURM_ARRAY_TASK_ID/8       # a job array

Each (instance, configuration) runs ``python bench/run_one.py RUN_JSON`` in a fresh process
(pinned with ``taskset -c K`` to core K when ``--jobs`` <= the number of cores, so
``--jobs 2`` runs two instances side by side, one per core; the solver uses 1 thread),
with the tier's per-instance time limit passed to the solver and a hard kill of the
process group ``GRACE`` seconds later. One JSON line per run is appended to the results
file (default ``bench/results/<tier>.jsonl``); pairs already there are skipped, so an
interrupted run resumes where it stopped. Instances are shuffled with a fixed seed and all
configurations of one instance run before the next instance, so partial results compare
the configurations on the same instances.

With ``--executor dask[=ADDRESS]`` or ``ray[=ADDRESS]`` the runs are tasks of that
cluster (each still ``run_one.py`` in a fresh process on some worker, with this checkout
and ../shared/benchmarks at the same paths there); the results file is written here, as
each ends. ``--shard I/N`` keeps every N-th instance from the I-th (after the shuffle), so
N job-array tasks run disjoint parts; ``python bench/report.py SHARD*.jsonl`` merges them
(docs/distributed.md).

With ``--against REV`` the same runs are made at commit REV too, interleaved with this
checkout's so that both see the same machine load: REV is checked out once as a git
worktree ``bench/results/checkouts/<commit>/treesens`` (git-ignored; reused by later
runs), and each configuration of each instance runs at both checkouts in turn, the two
taking turns to go first (with two jobs they mostly run at the same time, neither keeping
one core). There the run is that checkout's own ``bench/run_one.py`` with ``PYTHONPATH``
set to the checkout's parent (the package ``treesens`` is the repository root); it is
recorded as ``CONFIG@<commit>`` (e.g. ``default@5f936ca``), and the report sets it beside
this checkout's.

At the end the report is written (``bench/report.py``: ``bench/results/<tier>.md`` and
``bench/results/<tier>-cactus-*.png``) and printed; ``python bench/report.py FILE`` makes it
again from any (partial) results file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import CONFIGS, SHARED, TIERS, installed_backends, tier  # noqa: E402
from outputs import repo_commit  # noqa: E402
from run_one import no_answer  # noqa: E402

from treesens.questions.sweep import parse_shard, shard_of  # noqa: E402

GRACE = 30.0  # seconds past the time limit before the process group is killed
# Ensense's runs add its interpreter's start-up, measured twice (bench/ensense_peer.py
# kills its process group at the limit itself)
GRACE_BY_KIND = {"ensense": 150.0, "ensense-clause": 150.0}


def _done(path: Path) -> set[tuple[str, str]]:
    done = set()
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            done.add((r["instance"], r["config"]))
    return done


CHECKOUTS = HERE / "results" / "checkouts"  # other commits' worktrees (--against)


@dataclass(frozen=True)
class Checkout:
    """A checkout whose ``bench/run_one.py`` runs a configuration: this one (``label``
    None) or another commit's (``label`` its short hash, the configuration names' suffix)."""

    root: Path  # the repository root, a folder named treesens
    label: str | None = None

    def name(self, config: str) -> str:
        return config if self.label is None else f"{config}@{self.label}"

    def command(self, spec: str, core: int | None) -> tuple[list[str], dict[str, str]]:
        """The command line and environment of one run at this checkout."""
        cmd = [sys.executable, str(self.root / "bench" / "run_one.py"), spec]
        if core is not None:
            cmd = ["taskset", "-c", str(core)] + cmd
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        if self.label is not None:
            env["PYTHONPATH"] = str(self.root.parent)  # its treesens, not this one's
        return cmd, env


HERE_CHECKOUT = Checkout(HERE.parent)


def _git(*args: str, cwd: Path) -> str:
    """A git command's output; ValueError with git's message when it fails."""
    p = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise ValueError(p.stderr.strip() or f"git {' '.join(args)} failed")
    return p.stdout.strip()


def other_checkout(rev: str, repo: Path = HERE.parent, under: Path = CHECKOUTS) -> Checkout:
    """Commit ``rev`` of ``repo`` as a worktree ``under/<short hash>/treesens``: made once,
    then reused (a folder there at another commit, or with edited files, is refused)."""
    try:
        full = _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", cwd=repo)
    except ValueError:
        raise ValueError(f"not a commit of {repo}") from None
    short = _git("rev-parse", "--short", full, cwd=repo)
    root = under / short / "treesens"
    if root.exists():
        if _git("rev-parse", "HEAD", cwd=root) != full:
            raise ValueError(f"{root} is not a checkout of {short}")
        if _git("status", "--porcelain", "--untracked-files=no", cwd=root):
            raise ValueError(f"{root} has edited files")
    else:
        root.parent.mkdir(parents=True, exist_ok=True)
        _git("worktree", "add", "--detach", str(root), full, cwd=repo)
    return Checkout(root, short)


def compile_sources(checkout: Checkout) -> None:
    """Byte-compile a checkout once, so that no run compiles a module on the clock (with
    PYTHONDONTWRITEBYTECODE set, every process would compile what it imports)."""
    skip = re.escape(str(checkout.root / "bench" / "results"))  # other checkouts, outputs
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-x", skip, str(checkout.root)],
        capture_output=True,
    )


def planned_runs(insts: list, configs: list[str], checkouts: list[Checkout]) -> list[tuple]:
    """(instance, configuration named for its checkout, checkout) of every run: each
    configuration of an instance at every checkout, before the next one. The checkouts
    take turns going first, so that with two jobs neither keeps the same core."""
    runs = []
    for n, (i, c) in enumerate((i, c) for i in insts for c in configs):
        k = n % len(checkouts)
        runs += [
            (i, replace(CONFIGS[c], name=co.name(c)), co) for co in checkouts[k:] + checkouts[:k]
        ]
    return runs


def _run_task(timeout: float, run: tuple[dict, dict]) -> dict:
    """One (instance, configuration) run on an executor's worker, and the load there."""
    inst, cfg = run
    load = os.getloadavg()[0]
    return {**_run_one(inst, cfg, timeout, None), "load": load, "worker": platform.node()}


def _run_one(
    inst: dict, cfg: dict, timeout: float, core: int | None, checkout: Checkout = HERE_CHECKOUT
) -> dict:
    spec = json.dumps({"instance": inst, "config": cfg, "timeout": timeout})
    cmd, env = checkout.command(spec, core)
    t0 = time.time()
    p = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    try:
        out, err = p.communicate(timeout=timeout + GRACE_BY_KIND.get(cfg.get("kind"), GRACE))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        res = no_answer("unknown", None, message="killed after the time limit and its grace")
    else:
        lines = [ln for ln in out.splitlines() if ln.startswith("{")]
        if lines:
            res = json.loads(lines[-1])
        else:
            res = no_answer("error", f"no result (exit {p.returncode}): {err.strip()[-500:]}")
    # kill anything left in the group (a solver worker)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(p.pid, signal.SIGKILL)
    res["wall"] = time.time() - t0
    return res


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = ap.add_argument_group("which runs (a tier's instances x configurations)")
    which.add_argument("--tier", default="quick", choices=list(TIERS))
    which.add_argument(
        "--suite",
        default=None,
        help="full tier: comma-separated suites (single, multiclass, multi)",
    )
    which.add_argument("--gaps", default=None, help="keep only these gaps (comma-separated)")
    which.add_argument(
        "--models", default=None, help="keep only these model keys (comma-separated)"
    )
    which.add_argument(
        "--instances",
        default=None,
        metavar="FILE",
        help=(
            "keep only the instances whose ids (as --list prints them) this file lists, "
            "one per line; # starts a comment"
        ),
    )
    which.add_argument(
        "--configs", default=None, help="comma-separated configurations (default: the tier's)"
    )
    which.add_argument("--seed", type=int, default=0, help="shuffle seed of the instance order")
    which.add_argument(
        "--limit", type=int, default=None, help="stop after this many instances (testing)"
    )
    which.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="run only every N-th instance from the I-th (0 <= I < N), for job arrays",
    )
    which.add_argument(
        "--list", action="store_true", help="print the instances and configurations, run nothing"
    )
    how = ap.add_argument_group("how they run")
    how.add_argument(
        "--timeout", type=float, default=None, help="per-instance time limit (default: the tier's)"
    )
    how.add_argument("--jobs", type=int, default=2, help="instances run in parallel (default 2)")
    how.add_argument(
        "--no-pin", action="store_true", help="do not pin each job to one core with taskset"
    )
    how.add_argument(
        "--cores",
        default=None,
        help="cores to pin the jobs to, one per job (comma-separated; default 0..jobs-1), "
        "e.g. --jobs 1 --cores 1 to leave core 0 to something else",
    )
    how.add_argument(
        "--batch",
        action="store_true",
        help="treesens configurations only: each model's instances in ONE process, the model "
        "loaded once and its queries asked through the batch path (ask_many); --jobs worker "
        "processes of a local pool, the largest groups first (no pinning, no hard kill)",
    )
    how.add_argument(
        "--batch-size",
        type=int,
        default=None,
        metavar="N",
        help="with --batch: at most N instances per process (a model's instances in parts, "
        "each loading it; results are written as each part ends); default: all of them",
    )
    how.add_argument(
        "--certificates",
        default=None,
        metavar="DIR",
        help="with --batch: certify every insensitive answer into DIR/<instance id>.json "
        "and check it with the independent checker (its line's certificate says so)",
    )
    how.add_argument(
        "--executor",
        default=None,
        metavar="KIND[=ADDRESS]",
        help="dask[=ADDRESS] or ray[=ADDRESS]: run on that cluster (no address: a local one "
        "of --jobs workers); default: --jobs processes here, pinned to cores",
    )
    results = ap.add_argument_group("results")
    results.add_argument(
        "--out", default=None, help="results file (JSON Lines; default bench/results/<tier>.jsonl)"
    )
    results.add_argument(
        "--no-report", action="store_true", help="do not write the report at the end"
    )
    ap.add_argument(
        "--against",
        default=None,
        metavar="REV",
        help="run every configuration at commit REV too, interleaved with this checkout "
        "(a worktree in bench/results/checkouts/), recorded as CONFIG@<commit>",
    )
    return ap


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)

    if not SHARED.is_dir():
        ap.error(
            f"{SHARED} not found: the benchmarks need ../shared/benchmarks (or TREESENS_SHARED=...)"
        )
    suites = tuple(args.suite.split(",")) if args.suite else None
    insts, configs, timeout = tier(args.tier, suites)
    if args.configs:
        configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    if args.timeout:
        timeout = args.timeout
    if args.gaps:
        keep = {float(g) for g in args.gaps.split(",")}
        insts = [i for i in insts if i.gap in keep]
    if args.models:
        keep = set(args.models.split(","))
        insts = [i for i in insts if i.model in keep]
    if args.instances:
        lines = (
            ln.split("#", 1)[0].strip() for ln in Path(args.instances).read_text().splitlines()
        )
        wanted = {ln for ln in lines if ln}
        missing = wanted - {i.id for i in insts}
        if missing:
            ap.error(f"{args.instances}: not instances of this tier: {', '.join(sorted(missing))}")
        insts = [i for i in insts if i.id in wanted]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        ap.error(f"unknown configuration(s) {', '.join(unknown)}; known: {', '.join(CONFIGS)}")
    have = set(installed_backends())
    for c in list(configs):
        cfg = CONFIGS[c]
        if cfg.kind == "treesens" and cfg.backend not in have:
            print(
                f"skipping configuration {c}: backend {cfg.backend} not installed", file=sys.stderr
            )
            configs.remove(c)
        if cfg.kind == "veritas":
            try:
                import veritas  # noqa: F401
            except ImportError:
                print("skipping configuration veritas: dtai-veritas not installed", file=sys.stderr)
                configs.remove(c)
        if cfg.kind in ("ensense", "ensense-clause") and not args.list:
            from ensense_peer import unavailable

            why = unavailable()
            if why:
                print(f"skipping configuration {c}: Ensense cannot run: {why}", file=sys.stderr)
                configs.remove(c)
    if args.certificates and not args.batch:
        ap.error("--certificates is a --batch option")
    if args.batch:
        if args.against or args.executor:
            ap.error("--batch runs here only, without --against or --executor")
        others = [c for c in configs if CONFIGS[c].kind != "treesens"]
        if others:
            ap.error(f"--batch runs treesens configurations only, not {', '.join(others)}")
    checkouts = [HERE_CHECKOUT]
    if args.against:
        if args.executor:
            ap.error("--against runs here only, not with --executor")
        import treesens

        mine = Path(treesens.__file__).resolve().parent
        if mine != HERE.parent:
            ap.error(f"treesens is imported from {mine}, not from this checkout {HERE.parent}")
        try:
            checkouts.append(other_checkout(args.against))
        except ValueError as e:
            ap.error(f"--against {args.against}: {e}")
    names = [co.name(c) for c in configs for co in checkouts]
    random.Random(args.seed).shuffle(insts)
    if args.limit:
        insts = insts[: args.limit]
    if args.shard:
        insts = shard_of(insts, parse_shard(args.shard))
    if args.list:
        try:
            for i in insts:
                print(i.id)
            sys.stdout.flush()
        except BrokenPipeError:  # `--list | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print(
            f"{len(insts)} instances x {len(names)} configurations ({', '.join(names)}), "
            f"time limit {timeout:g}s",
            file=sys.stderr,
        )
        return 0

    if len(checkouts) > 1:
        for co in checkouts:
            compile_sources(co)
    out = Path(args.out) if args.out else HERE / "results" / f"{args.tier}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    done = _done(out)
    todo = [
        run
        for run in planned_runs(insts, configs, checkouts)
        if (run[0].id, run[1].name) not in done
    ]
    pin = (
        not args.no_pin
        and not args.executor
        and not args.batch
        and shutil.which("taskset") is not None
        and args.jobs <= (os.cpu_count() or 1)
    )
    cores = list(range(args.jobs))
    if args.cores:
        cores = [int(c) for c in args.cores.split(",")]
        if len(cores) != args.jobs:
            ap.error(f"--cores names {len(cores)} core(s) for {args.jobs} job(s)")
    print(
        f"{len(insts)} instances x {len(names)} configurations, {len(todo)} runs to do "
        f"({len(done)} already in {out}); time limit {timeout:g}s; {args.jobs} jobs"
        f"{', pinned to cores ' + ','.join(map(str, cores)) if pin else ''}",
        file=sys.stderr,
    )
    host = {
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "commit": repo_commit(),
    }
    lock = threading.Lock()
    counter = {"n": 0}
    t_start = time.time()

    def record(inst, cfg, res: dict, core: int | None, load: float, checkout=HERE_CHECKOUT) -> None:
        rec = {
            "instance": inst.id,
            "config": cfg.name,
            "suite": inst.suite,
            "model": inst.model,
            "features": list(inst.features),
            "gap": inst.gap,
            "classes": inst.classes,
            "timeout": timeout,
            "tier": args.tier,
            "core": core,
            "load": load,
            **host,
            **({"commit": checkout.label} if checkout.label else {}),
            **res,
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        with lock:
            with out.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            counter["n"] += 1
            t = res.get("time", {}).get("total")
            print(
                f"[{counter['n']}/{len(todo)} {time.time() - t_start:6.0f}s] {cfg.name:15s} {inst.id:45s} "
                f"{res['status']:11s} {t if t is None else round(t, 2)}",
                file=sys.stderr,
                flush=True,
            )

    if args.batch:
        _run_batches(todo, timeout, args.jobs, record, args.batch_size, args.certificates)
    elif args.executor:
        _run_on_executor(args.executor, args.jobs, [run[:2] for run in todo], timeout, record)
    else:
        _run_here(todo, timeout, args.jobs, cores if pin else None, record)
    print(f"done: {counter['n']} runs in {time.time() - t_start:.0f}s -> {out}", file=sys.stderr)
    if not args.no_report:
        from report import report

        prefix = out.with_suffix("")
        sys.stdout.write(report([out], prefix))
        print(f"report: {prefix}.md, plots {prefix}-cactus-*.png", file=sys.stderr)
    return 0


def _run_here(todo: list, timeout: float, jobs: int, cores: list[int] | None, record) -> None:
    """``jobs`` threads, each running one instance at a time in a process of its own
    (pinned to its core when ``cores`` is given)."""
    lock = threading.Lock()
    queue = list(reversed(todo))

    def worker(k: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                inst, cfg, checkout = queue.pop()
            load = os.getloadavg()[0]
            core = cores[k] if cores else None
            res = _run_one(inst.to_dict(), asdict(cfg), timeout, core, checkout)
            record(inst, cfg, res, core, load, checkout)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def model_groups(todo: list, size: int | None = None) -> list[list]:
    """The runs grouped by (configuration, model), each group's runs in their order (cut
    in parts of at most ``size`` runs when given), the largest groups first (by runs x
    model file size), so that two workers end together."""
    groups: dict[tuple[str, str], list] = {}
    for inst, cfg, _checkout in todo:
        groups.setdefault((cfg.name, inst.model), []).append((inst, cfg))
    if size:
        parts = [g[k : k + size] for g in groups.values() for k in range(0, len(g), size)]
        groups = dict(enumerate(parts))

    def size(runs: list) -> float:
        path = Path(runs[0][0].paths[0])
        return len(runs) * (path.stat().st_size if path.exists() else 1)

    return sorted(groups.values(), key=size, reverse=True)


def _run_batches(
    todo: list,
    timeout: float,
    jobs: int,
    record,
    size: int | None = None,
    certificates: str | None = None,
) -> None:
    """Each (configuration, model) group as one task of a local process pool of ``jobs``
    workers (questions/executors): ``run_one.run_batch`` loads the model once and asks its
    queries through the batch path, each stopped by a hard limit ``run_one.GRACE`` seconds
    past its time limit (and certified into ``certificates`` when insensitive); each group
    is recorded as it ends (a group that failed twice is recorded as errors, so a resumed
    run tries it again)."""
    from functools import partial

    from run_one import run_batch

    from treesens.questions.executors import Failure, make_executor

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"  # the pool's workers inherit it
    groups = model_groups(todo, size)
    items = [(asdict(runs[0][1]), [inst.to_dict() for inst, _ in runs]) for runs in groups]
    executor = make_executor("local", jobs)
    try:
        task = run_batch
        if certificates:
            task = partial(run_batch, certificates=str(Path(certificates).resolve()))
        for i, out in executor.run(task, timeout, items):
            load = os.getloadavg()[0]
            for k, (inst, cfg) in enumerate(groups[i]):
                res = (
                    out[k]
                    if not isinstance(out, Failure)
                    else no_answer("error", f"batch failed: {out.message}")
                )
                record(inst, cfg, res, None, load)
    finally:
        executor.close()


def _run_on_executor(spec: str, jobs: int, todo: list, timeout: float, record) -> None:
    """The runs as tasks of a dask or ray executor; each recorded here as it ends (a task
    that failed twice is recorded as an error, so a resumed run tries it again)."""
    from treesens.questions.executors import Failure, make_executor

    executor = make_executor(spec, jobs)
    try:
        runs = [(inst.to_dict(), asdict(cfg)) for inst, cfg in todo]
        for i, res in executor.run(_run_task, timeout, runs):
            if isinstance(res, Failure):
                res = {
                    "status": "error",
                    "validated": False,
                    "distance": None,
                    "time": {"total": None},
                    "error": f"task failed: {res.message}",
                }
            inst, cfg = todo[i]
            record(inst, cfg, res, None, res.pop("load", None))
    finally:
        executor.close()


if __name__ == "__main__":
    raise SystemExit(main())
