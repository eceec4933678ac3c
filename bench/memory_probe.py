"""One query's peak memory in this fresh process, for the memory estimate's fit
(compiler/memory_estimate.py; bench/reports/memory-estimate.md).

    python bench/memory_probe.py MODEL [--kind check|max_gap] [--feature NAME]
        [--timeout 60] [--memory-mb MB]  >> probes.jsonl

Loads the model, resets this process's high-water mark (Linux: ``5`` written to
``/proc/self/clear_refs``), answers one query (a check at gap 0.2, or a max gap) on
``--feature`` (default: the middle one of those the splits read) with the default
settings, and prints one JSON line: the model's trees, leaves and features, the peak
resident memory after the import, after the load and over the query (MB), the times (wall
and CPU) and the answer.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def _cpu_s() -> float:
    """CPU seconds of this process and of its children waited for (a solver process)."""
    me, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _reset_peak() -> float:
    """Reset this process's high-water mark; the resident memory now (MB)."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_mb("VmRSS")


def _stage(out: dict, name: str, run) -> None:
    before, c0, t0 = _reset_peak(), _cpu_s(), time.time()
    note = run()
    out[name] = {
        "rss_before_mb": round(before),
        "peak_mb": round(_status_mb("VmHWM")),
        "cpu_s": round(_cpu_s() - c0, 1),
        "wall_s": round(time.time() - t0, 1),
    }
    if note is not None:
        out[name]["note"] = note


def _children_peak_mb(stop, out: dict) -> None:
    """Until ``stop`` is set: the largest high-water mark of this process's children."""
    import os

    me = str(os.getpid())
    while not stop.wait(0.2):
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                stat = (d / "stat").read_text()
                if stat.rsplit(")", 1)[1].split()[1] != me:
                    continue
                for line in (d / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        mb = int(line.split()[1]) / 1024.0
                        out["worker_peak_mb"] = max(out.get("worker_peak_mb", 0), round(mb))
            except (OSError, IndexError, ValueError):
                continue


def stages(model: str, feature: str | None, timeout: float, solver: bool = False) -> dict:
    """The peaks of a check's stages on ``model`` (gap 0.2 on ``feature``)."""
    import treesens
    from treesens.compiler.query import Gap, Query
    from treesens.driver.solve import _start
    from treesens.questions.memory import memory_limit
    from treesens.search.boxes import box_stage
    from treesens.search.heuristic_stage import heuristic_search
    from treesens.search.pair_boxes import PairTablesTooLarge, pair_tables

    out: dict = {"model": Path(model).name, "import_mb": round(_status_mb("VmHWM"))}
    held: dict = {}

    def load():
        held["ens"] = treesens.load_model(model)

    _stage(out, "load", load)
    ens = held["ens"]
    used = sorted({int(f) for t in ens.trees for f in t.feature if f >= 0})
    feature = feature or ens.feature_names[used[len(used) // 2]]
    out.update(trees=len(ens.trees), leaves=ens.n_leaves(), features=ens.n_features)
    out["feature"] = feature
    q = Query(vary=(feature,), gap=Gap(0.2)).planned(timeout=timeout)
    limit = memory_limit(None)
    ctx = _start(ens, q, None, time.time() + timeout, None, False, None)
    ctx.tables_mb = limit.mb

    def heuristic():
        return "answered" if heuristic_search(ctx) else "not answered"

    def boxes():
        ctx.deadline = time.time() + timeout
        answered = box_stage(ctx)
        bs = ctx.stats.get("box_search", {})
        return f"answered={answered} {bs.get('status')} leaves={bs.get('leaves')}"

    def gap_tables():
        from treesens.compiler.memory_estimate import room_bytes
        from treesens.search.pair_boxes import tables_held

        try:
            tab = pair_tables(
                ctx.enc,
                max_held=room_bytes(ens, limit.mb),
                deadline=time.time() + timeout,
                boxes=False,
            )
            return f"{tables_held(tab) / 2**20:,.0f} MB of tables"
        except PairTablesTooLarge as e:
            return f"skipped: {e}"

    def solver_compile():
        ctx.cq  # noqa: B018 - the Problem, built as the solver stage asks for it
        return None

    _stage(out, "heuristic", heuristic)
    _stage(out, "box_stage", boxes)
    ctx.boxes = None  # the box stage's tables let go, as the max gap's run apart
    _stage(out, "gap_tables", gap_tables)
    _stage(out, "solver_compile", solver_compile)
    if solver:
        import threading

        from treesens.driver.solve import _solver_stage

        seen: dict = {}
        stop = threading.Event()
        watch = threading.Thread(target=_children_peak_mb, args=(stop, seen), daemon=True)
        watch.start()

        def solve():
            ctx.deadline = time.time() + timeout
            _solver_stage(ctx)
            return str(ctx.result.status)

        _stage(out, "solver_stage", solve)
        stop.set()
        watch.join()
        out["solver_stage"].update(seen)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--kind", choices=("check", "max_gap"), default="check")
    ap.add_argument("--feature", default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--memory-mb", type=int, default=None)
    ap.add_argument("--stages", action="store_true", help="each stage's peak (see above)")
    ap.add_argument("--solver", action="store_true", help="with --stages: the solver stage too")
    args = ap.parse_args()
    if args.stages:
        print(json.dumps(stages(args.model, args.feature, args.timeout, args.solver)))
        return
    t0 = time.time()
    import treesens

    import_mb = _status_mb("VmHWM")
    ens = treesens.load_model(args.model)
    load_s, load_mb = time.time() - t0, _status_mb("VmHWM")
    used = sorted({int(f) for t in ens.trees for f in t.feature if f >= 0})
    feature = args.feature or ens.feature_names[used[len(used) // 2]]
    Path("/proc/self/clear_refs").write_text("5")
    t1, c1 = time.time(), _cpu_s()
    kw = {"timeout": args.timeout, "memory_mb": args.memory_mb}
    if args.kind == "check":
        r = treesens.check(ens, vary=[feature], gap=0.2, **kw)
    else:
        r = treesens.max_gap(ens, [feature], **kw)
    query_mb = _status_mb("VmHWM")
    print(
        json.dumps(
            {
                "model": Path(args.model).name,
                "kind": args.kind,
                "feature": feature,
                "trees": len(ens.trees),
                "leaves": ens.n_leaves(),
                "features": ens.n_features,
                "import_mb": round(import_mb),
                "load_mb": round(load_mb),
                "query_peak_mb": round(query_mb),
                "peak_mb": round(max(query_mb, load_mb)),
                "load_s": round(load_s, 1),
                "query_s": round(time.time() - t1, 1),
                "query_cpu_s": round(_cpu_s() - c1, 1),
                "status": str(r.status),
                "max_gap": r.max_gap,
                "box_search": (r.stats or {}).get("box_search"),
            }
        )
    )


if __name__ == "__main__":
    main()
