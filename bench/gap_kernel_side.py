"""Two largest-gap searches side by side in one run: the compiled search as shipped
(numba, search/gap_kernel.py) against the search in Python (search/gap_boxes.py), or
against the compiled search with the split rule before pseudo-costs (``--sides
compiled,static``: the first open tree of a fixed order, gap_kernel.PROBES 0).

Each query is asked of ``treesens.max_gap`` once per side, each time in a fresh process
with the same time limit (the side set up in that process only). The report gives each
side's bounds, time and boxes, the ratio of boxes per second and of the time to close.
The kernel's compiled code is cached on disk: the first compiled run of an installation
pays the compile (about 35 s of CPU), so run once before measuring (``--warm``, the default)::

    python bench/gap_kernel_side.py --timeout 60 --out bench/results/gap-kernel-side.jsonl
    python bench/gap_kernel_side.py --report bench/results/gap-kernel-side.jsonl
    python bench/gap_kernel_side.py --sides compiled,static --queries adult --timeout 600 \
        --out bench/results/gap-split-rule-side.jsonl
    python bench/gap_kernel_side.py --sides compiled,static --queries digits --timeout 120 \
        --out bench/results/gap-split-rule-side.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import MODELS, SHARED  # noqa: E402
from outputs import (  # noqa: E402
    add_results_args,
    bounds_cell,
    by_query,
    fresh_process,
    run_or_report,
    run_sides,
)

# (model key, feature, classes): the adult features of issue 34's sweep that close within
# a minute, one that does not (age), and multiclass class pairs of the digits stand-in
KERNEL_QUERIES = [
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
ADULT = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
]
QUERY_SETS = {
    "kernel": KERNEL_QUERIES,
    # issue 34's sweep: every adult feature
    "adult": [("adult_t200_d5", f, None) for f in ADULT],
    "digits": [("digits_xgb_t100_d6", "px3_4", c) for c in ((8, 9), (0, 3))],
}
TOLERANCE = 1e-3
# the side as shipped, then what it is compared with
SIDES = ("compiled", "python", "static")


def _max_gap(side: str, key: str, feature: str, classes, timeout: float) -> dict:
    import treesens
    from treesens.search import gap_kernel, gap_kernel_compile

    if side == "python":
        gap_kernel_compile.available = lambda: False  # this process only: the Python search
    elif side == "static":
        gap_kernel.PROBES = 0  # this process only: the split rule before pseudo-costs
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


def run(timeout: float, out: Path, warm: bool, sides: tuple[str, ...], queries: list) -> None:
    if warm:  # compile (or load) the kernel once, unmeasured
        key, feature, classes = queries[0]
        fresh_process(_run_one, ("compiled", key, feature, classes, 5.0))
    run_sides(out, "side", sides, queries, _run_one, timeout)


def report(path: Path) -> str:
    by = by_query(path, "side")
    # the side as shipped first, then the other one the file holds
    a = "compiled"
    b = next((s for s in SIDES[1:] if any(s in sides for sides in by.values())), "python")
    rows = [
        f"| model | feature | classes | {a} [lower, upper] s, boxes | "
        f"{b} [lower, upper] s, boxes | boxes/s ratio | time ratio ({b} / {a}) |",
        "|---|---|---|---|---|---:|---:|",
    ]

    def cell(d):
        return bounds_cell(d, "search_s", boxes=True)

    def rate(d):
        return d["boxes"] / max(d["search_s"], 1e-9)

    rates, times, at_least = [], [], 0
    for (model, feat, cls), sides in by.items():
        c, p = sides.get(a), sides.get(b)
        ok = c and p and not c.get("error") and not p.get("error") and c["boxes"] and p["boxes"]
        r = rate(c) / rate(p) if ok else None
        # both closed: the ratio of times; only ``a`` closed: at least that ratio
        t = p["search_s"] / c["search_s"] if ok and c["closed"] else None
        if r is not None:
            rates.append(r)
        if t is not None:
            times.append(t)
            at_least += not p["closed"]
        shown = "" if t is None else f"{'>= ' if not p['closed'] else ''}{t:.2f}x"
        rows.append(
            f"| {model} | {feat} | {cls if cls != 'None' else ''} | {cell(c)} | {cell(p)} | "
            f"{'' if r is None else f'{r:.2f}x'} | {shown} |"
        )
    head = (
        f"{len(by)} queries, tolerance {TOLERANCE:g}; boxes per second, {a} / {b}: "
        f"median {statistics.median(rates):.2f}x"
        if rates
        else f"{len(by)} queries"
    )
    if times:
        head += f"; time to close, {b} / {a}: median {statistics.median(times):.2f}x"
        if at_least:
            head += f" ({at_least} of them lower bounds: {b} open at its limit)"
    totals = {
        s: sum(d[s]["search_s"] for d in by.values() if s in d and "search_s" in d[s])
        for s in (a, b)
    }
    head += f"; total search time {a} {totals[a]:.1f} s, {b} {totals[b]:.1f} s"
    return head + "\n\n" + "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--no-warm", dest="warm", action="store_false")
    ap.add_argument(
        "--sides",
        default="compiled,python",
        help="the two searches, the shipped one first: compiled,python or compiled,static",
    )
    ap.add_argument("--queries", choices=sorted(QUERY_SETS), default="kernel")
    add_results_args(ap, HERE / "results" / "gap-kernel-side.jsonl", "the table")
    args = ap.parse_args(argv)
    sides = tuple(args.sides.split(","))
    if len(sides) != 2 or sides[0] != "compiled" or sides[1] not in SIDES[1:]:
        ap.error("--sides: compiled,python or compiled,static")
    queries = QUERY_SETS[args.queries]
    return run_or_report(
        args, lambda out: run(args.timeout, out, args.warm, sides, queries), report
    )


if __name__ == "__main__":
    sys.exit(main())
