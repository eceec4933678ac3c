"""The largest-gap search compiled (numba, compiler/gap_kernel.py) against the same search
in Python (compiler/gap_boxes.py), side by side in one run.

Each query is asked of ``treesens.max_gap`` twice, each time in a fresh process with the
same time limit: once as shipped (compiled), once with the compiled kernel switched off
(``gap_kernel.available`` made false in that process, so the Python search runs). The
report gives each side's bounds, time and boxes, and the ratio of boxes per second. The
kernel's compiled code is cached on disk: the first compiled run of an installation pays
the compile (10-20 s), so run once before measuring (``--warm``, the default)::

    python bench/gap_kernel_side.py --timeout 60 --out bench/results/gap-kernel-side.jsonl
    python bench/gap_kernel_side.py --report bench/results/gap-kernel-side.jsonl
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import MODELS, SHARED  # noqa: E402
from outputs import add_results_args, run_or_report  # noqa: E402

# (model key, feature, classes): the adult features of issue 34's sweep that close within
# a minute, one that does not (age), and multiclass class pairs of the digits stand-in
QUERIES = [
    *[
        ("adult_t200_d5", f, None)
        for f in (
            "sex",
            "race",
            "native-country",
            "relationship",
            "capital-loss",
            "marital-status",
            "education",
            "age",
        )
    ],
    *[("digits_xgb_t100_d6", "px3_4", c) for c in ((8, 9), (0, 3))],
]
TOLERANCE = 1e-3
SIDES = ("compiled", "python")


def _max_gap(side: str, key: str, feature: str, classes, timeout: float) -> dict:
    import treesens
    from treesens.compiler import gap_kernel

    if side == "python":
        gap_kernel.available = lambda: False  # this process only: the Python search
    m, d = MODELS[key]
    t0 = time.time()
    ens = treesens.load_model(str(SHARED / m), details=str(SHARED / d) if d else None)
    kw = {"classes": list(classes)} if classes else {}
    r = treesens.max_gap(ens, [feature], tolerance=TOLERANCE, timeout=timeout, **kw)
    mg = r.max_gap or {}
    return {
        "side": side,
        "model": key,
        "feature": feature,
        "classes": list(classes) if classes else None,
        "lower": mg.get("lower"),
        "upper": mg.get("upper"),
        "closed": bool(mg.get("proven")),
        "method": mg.get("method"),
        "boxes": (r.stats.get("box_search") or {}).get("boxes"),
        "search_s": round(r.time.get("total", 0.0), 3),
        "seconds": round(time.time() - t0, 3),
        "timeout": timeout,
    }


def _run_one(args) -> dict:
    side, key, feature, classes, timeout = args
    try:
        return _max_gap(side, key, feature, classes, timeout)
    except Exception as e:  # one query's failure is recorded, the others go on
        return {
            "side": side,
            "model": key,
            "feature": feature,
            "classes": list(classes) if classes else None,
            "error": f"{type(e).__name__}: {e}",
        }


def _fresh(args) -> dict:
    with mp.get_context("spawn").Pool(1) as pool:  # a fresh process per run
        return pool.apply(_run_one, (args,))


def run(timeout: float, out: Path, warm: bool) -> None:
    done = set()
    if out.exists():
        for ln in out.read_text().splitlines():
            d = json.loads(ln)
            done.add((d["side"], d["model"], d["feature"], str(d["classes"])))
    if warm:  # compile (or load) the kernel once, unmeasured
        key, feature, classes = QUERIES[0]
        _fresh(("compiled", key, feature, classes, 5.0))
    with out.open("a") as fh:
        for key, feature, classes in QUERIES:
            for side in SIDES:
                cls = list(classes) if classes else None
                if (side, key, feature, str(cls)) in done:
                    continue
                line = _fresh((side, key, feature, classes, timeout))
                fh.write(json.dumps(line) + "\n")
                fh.flush()
                print(json.dumps(line), flush=True)


def report(path: Path) -> str:
    lines = [json.loads(ln) for ln in path.read_text().splitlines()]
    by: dict = {}
    for d in lines:
        by.setdefault((d["model"], d["feature"], str(d["classes"])), {})[d["side"]] = d
    rows = [
        "| model | feature | classes | compiled [lower, upper] s, boxes | "
        "Python [lower, upper] s, boxes | boxes/s ratio | time ratio (both closed) |",
        "|---|---|---|---|---|---:|---:|",
    ]

    def cell(d):
        if d is None:
            return "not run"
        if d.get("error"):
            return f"error: {d['error'][:60]}"
        lo = "none" if d["lower"] is None else f"{d['lower']:.4f}"
        mark = "closed" if d["closed"] else "open"
        return f"[{lo}, {d['upper']:.4f}] {mark}, {d['search_s']:.1f} s, {d['boxes']:,}"

    def rate(d):
        return d["boxes"] / max(d["search_s"], 1e-9)

    rates, times = [], []
    for (model, feat, cls), sides in by.items():
        c, p = sides.get("compiled"), sides.get("python")
        ok = c and p and not c.get("error") and not p.get("error") and c["boxes"] and p["boxes"]
        r = rate(c) / rate(p) if ok else None
        t = p["search_s"] / c["search_s"] if ok and c["closed"] and p["closed"] else None
        if r is not None:
            rates.append(r)
        if t is not None:
            times.append(t)
        rows.append(
            f"| {model} | {feat} | {cls if cls != 'None' else ''} | {cell(c)} | {cell(p)} | "
            f"{'' if r is None else f'{r:.2f}x'} | {'' if t is None else f'{t:.2f}x'} |"
        )
    head = (
        f"{len(by)} queries, tolerance {TOLERANCE:g}; boxes per second, compiled / Python: "
        f"median {statistics.median(rates):.2f}x"
        if rates
        else f"{len(by)} queries"
    )
    if times:
        head += f"; time to close, Python / compiled: median {statistics.median(times):.2f}x"
    return head + "\n\n" + "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--no-warm", dest="warm", action="store_false")
    add_results_args(ap, HERE / "results" / "gap-kernel-side.jsonl", "the table")
    args = ap.parse_args(argv)
    return run_or_report(args, lambda out: run(args.timeout, out, args.warm), report)


if __name__ == "__main__":
    sys.exit(main())
