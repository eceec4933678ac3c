"""Backends side by side on a few shared benchmark queries, measured in one run.

    python bench/backends.py [--timeout 120] [--backends cpsat,cbc,highs,gurobi,z3,race]
                             [--out bench/results/backends.md] [--heuristic]

Each query is compiled once and solved on every backend (each in its own worker
process, like ``treesens compare``); the local-search heuristic is off unless
``--heuristic`` (it would answer for every backend alike). Writes a Markdown table
(time in seconds, status letter) to ``--out`` and prints it. Needs ../shared/benchmarks.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TREESENS_SHARED", REPO.parent / "shared")) / "benchmarks"

# (label, model path relative to shared/benchmarks, features to vary, gap)
QUERIES = [
    ("breast_cancer_robust 4 trees, f1", "chen2019/breast_cancer_robust/0004.json", "f1", 0.2),
    ("breast_cancer_robust 4 trees, f2", "chen2019/breast_cancer_robust/0004.json", "f2", 0.2),
    ("breast_cancer_robust 4 trees, f3", "chen2019/breast_cancer_robust/0004.json", "f3", 0.2),
    ("diabetes_robust 20 trees, f2", "chen2019/diabetes_robust/0020.json", "f2", 0.2),
    ("diabetes_unrobust 20 trees, f2", "chen2019/diabetes_unrobust/0020.json", "f2", 0.2),
    ("pimadiabetes t200 d5, Glucose", "pimadiabetes/pimadiabetes_t200_d5.json", "Glucose", 0.2),
]
# harder ones (minutes per backend on a loaded 2-core machine): with --more
MORE = [
    ("ijcnn_robust 60 trees d8, f1", "chen2019/ijcnn_robust/0060.json", "f1", 0.2),
    ("adult t200 d5, age", "adult/adult_t200_d5.json", "age", 0.2),
]

SHORT = {"sensitive": "S", "insensitive": "I", "unknown": "?", "error": "E"}


def _cpu(pid) -> float | None:
    """CPU seconds (user + system) a process has used so far, from /proc."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _warm_up(backends) -> None:
    """Start every backend's worker process (and load its solver) before timing a query."""
    from treesens.backends.worker import worker_for
    from treesens.compiler.ir import ExactlyOne, Problem, Var
    from treesens.compiler.solver import SolveOptions

    p = Problem((Var("a"), Var("b")), (ExactlyOne((0, 1)),))
    for b in backends:
        worker_for(b).solve(p, SolveOptions(deadline=time.time() + 30))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--timeout", type=float, default=120.0, help="seconds per backend and query (default 120)"
    )
    ap.add_argument(
        "--backends", default=None, help="comma-separated (default: every installed one, then race)"
    )
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "backends.md"))
    ap.add_argument("--heuristic", action="store_true", help="let the heuristic answer first")
    ap.add_argument("--more", action="store_true", help="also the harder queries (ijcnn, adult)")
    ap.add_argument("--only", default=None, help="run only queries whose label contains this text")
    args = ap.parse_args(argv)

    from treesens.backends.registry import BACKENDS, available
    from treesens.backends.worker import worker_for
    from treesens.driver import compile_query, solve_query
    from treesens.interfaces.api import make_query
    from treesens.readers.load import load_model

    if not SHARED.is_dir():
        print(f"needs {SHARED} (the shared benchmarks)", file=sys.stderr)
        return 2
    backends = (
        args.backends.split(",")
        if args.backends
        else [b for b in BACKENDS if available(b)] + ["race"]
    )
    rows = []
    t_all = time.time()
    load0 = " ".join(f"{x:.1f}" for x in os.getloadavg())
    for label, rel, feat, gap in QUERIES + (MORE if args.more else []):
        if args.only and args.only not in label:
            continue
        ens = load_model(str(SHARED / rel))
        q = make_query(feat, gap=gap, timeout=args.timeout)
        q = q.planned(options=(("heuristic", bool(args.heuristic)),))
        # warm up the replay (the library's own predict) so no backend pays its import
        import numpy as np

        if ens.replayer is not None:
            ens.replayer.predict_proba(np.zeros((1, ens.n_features)))
        _warm_up([b for b in backends if b != "race"])
        print(f"{label}: ", end="", file=sys.stderr, flush=True)

        def show(r):
            print(
                f"{r.backend} {r.status} {r.time['total']:.1f}s; ",
                end="",
                file=sys.stderr,
                flush=True,
            )

        results = []
        cq = compile_query(ens, q)
        for b in backends:
            w = worker_for(b) if b != "race" else None
            pid = w.proc.pid if w is not None and w.alive() else None
            c0 = _cpu(pid)
            t = time.time()
            r = solve_query(ens, q.planned(backend=b), compiled=cq, deadline=t + args.timeout)
            r.time["total"] = time.time() - t
            c1 = _cpu(pid)
            r.stats["worker_cpu"] = (c1 - c0) if (c0 is not None and c1 is not None) else None
            results.append(r)
            show(r)
        print(file=sys.stderr)
        stats = None
        for r in results:
            if r.status != "error" and "vars" in r.stats:
                stats = r.stats
                break
        rows.append((label, stats, results))

    lines = [
        "# Backends side by side",
        "",
        f"Measured in one run by `python bench/backends.py` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{platform.node()} ({os.cpu_count()} cores, Python {platform.python_version()}); "
        f"time limit {args.timeout:g} s per backend; 1 solver thread; heuristic "
        f"{'on' if args.heuristic else 'off (every answer comes from the backend)'}; gap g = 0.2.",
        "",
        f"Load average when the run started: {load0}. "
        "Each cell: wall-clock seconds of `solve_query` (worker round trip, model build, solve, invert and replay; "
        "every worker process is started and its solver loaded before each query), in parentheses the CPU "
        "seconds the backend's worker process used (robust to other load on the machine; not measured for race), "
        "and the answer "
        "(S sensitive with a replayed witness, I insensitive (proved), ? time limit, E error; "
        "E* = Gurobi's size-limited license refused the model).",
        "",
        "| query | vars / constraints | " + " | ".join(backends) + " |",
        "|---|---|" + "---:|" * len(backends),
    ]
    for label, stats, results in rows:
        size = f"{stats['vars']} / {stats['constraints']}" if stats else "-"
        cells = []
        for r in results:
            tag = SHORT.get(r.status, r.status)
            if r.status == "error" and "license refused" in (r.error or ""):
                tag = "E*"
            cpu = r.stats.get("worker_cpu")
            if r.status == "unknown":
                cells.append(f">{args.timeout:g} ?")
            elif cpu is not None:
                cells.append(f"{r.time.get('total', 0.0):.2f} ({cpu:.2f}) {tag}")
            else:
                cells.append(f"{r.time.get('total', 0.0):.2f} {tag}")
        lines.append(f"| {label} | {size} | " + " | ".join(cells) + " |")
    agree = all(
        len({r.status for r in res if r.status in ("sensitive", "insensitive")}) <= 1
        for _, _, res in rows
    )
    lines += [
        "",
        f"All proven answers agree: {'yes' if agree else 'NO'}. Total run time {time.time() - t_all:.0f} s.",
        "",
    ]
    text = "\n".join(lines)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(text)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
