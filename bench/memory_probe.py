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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--kind", choices=("check", "max_gap"), default="check")
    ap.add_argument("--feature", default=None)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--memory-mb", type=int, default=None)
    args = ap.parse_args()
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
