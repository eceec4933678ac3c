"""Max gap side by side: treesens' box search against Veritas' anytime bounds.

Both are asked the same question, the largest gap that changing only F can make:

* binary: the largest g with P(x1) >= 0.5 + g and P(x2) <= 0.5 - g, i.e. the largest
  min(m(x1), -m(x2)) in margin space, g = sigmoid(margin) - 0.5;
* multiclass, classes (c1, c2): the largest G with P1[c1] >= G P1[c] and
  P2[c2] >= G P2[c] for every other c, i.e. ln G = the largest of the smallest log-ratio.

Veritas maximises that smallest side directly (the exact "sides" posing of
bench/veritas_peer.py with target 0, MULTI_MAX_MAX_OUTPUT_DIFF): its lower bound is the
best solution's pair replayed with the library's predict, its upper bound the top of its
open list. treesens runs ``treesens.max_gap`` (the box search). Each gets the same time
limit, in its own process::

    python bench/max_gap_peer.py --timeout 60 --out bench/results/max-gap-peer.jsonl
    python bench/max_gap_peer.py --report bench/results/max-gap-peer.jsonl

``--tier scale`` asks the scale tier's open max gaps instead (issue 47: the models of
bench/models/train_scale.py trained on adult, read from ``--models-dir`` with the
dataset's details.csv beside them), into their own results file::

    python bench/max_gap_peer.py --tier scale --timeout 120 --models-dir bench/results/scale-models \
        --out bench/results/max-gap-peer-scale.jsonl
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from instances import MODELS, SHARED  # noqa: E402
from outputs import add_results_args, bounds_cell, by_query, run_or_report, run_sides  # noqa: E402
from veritas_peer import _point, build_sides_addtree  # noqa: E402

# (model key, feature, classes): binary features of the quick tier's models, and
# multiclass class pairs of the paper's wine model and the digits stand-ins
QUERIES = [
    *[("breast_cancer_robust", f, None) for f in ("f1", "f2", "f6")],
    *[("diabetes_robust", f, None) for f in ("f1", "f2", "f6")],
    *[("pimadiabetes_t200_d5", f, None) for f in ("Glucose", "BMI", "Age")],
    *[("adult_t200_d5", f, None) for f in ("age", "sex", "race", "education-num")],
    *[("winequality_red_t100_d5", "alcohol", c) for c in ((0, 1), (2, 3), (3, 2), (5, 4))],
    *[("digits_xgb_t100_d6", "px3_4", c) for c in ((0, 3), (3, 0), (8, 9))],
]
# the scale tier's adult models (bench/models/train_scale.py), on the features whose max
# gap the box search left open in 120 s (bench/reports/scale-tier.md), and one it proves
SCALE_QUERIES = [
    *[("adult_xgb_t1000_d8", f, None) for f in ("sex", "race", "education-num")],
    *[("adult_xgb_t2000_d6", f, None) for f in ("sex", "race")],
    *[("adult_lgbm_t1000_l63", f, None) for f in ("race", "education")],
]
TIERS = {"paper": QUERIES, "scale": SCALE_QUERIES}
TOLERANCE = 1e-3
# where a scale-tier key's model is (the spawned processes read it from the environment)
SCALE_DIR = "TREESENS_SCALE_MODELS"


def _load(key: str):
    import treesens

    if key in MODELS:
        m, d = MODELS[key]
        return treesens.load_model(str(SHARED / m), details=str(SHARED / d) if d else None)
    dataset = key.split("_")[0]
    folder = Path(os.environ[SCALE_DIR]) / dataset
    (model,) = [p for p in folder.glob(f"{key}.*") if p.suffix != ".csv"]
    return treesens.load_model(str(model), details=str(folder / "details.csv"))


def _sides(ens, classes) -> list[tuple[int, np.ndarray]]:
    if ens.n_outputs == 1:
        return [(0, np.array([1.0])), (1, np.array([-1.0]))]
    out = []
    for copy, mine in zip((0, 1), classes, strict=True):
        for c in range(ens.n_outputs):
            if c != mine:
                v = np.zeros(ens.n_outputs)
                v[mine], v[c] = 1.0, -1.0
                out.append((copy, v))
    return out


def to_gap(margin: float, binary: bool) -> float:
    """A margin-space value as the question's gap (probability gap, or ratio)."""
    if binary:
        return 1.0 / (1.0 + math.exp(-margin)) - 0.5
    return math.exp(margin)


def replayed_gap(P: np.ndarray, binary: bool, classes) -> float:
    if binary:
        return float(min(P[0, 1] - 0.5, 0.5 - P[1, 1]))
    c1, c2 = classes
    r1 = min(P[0, c1] / P[0, c] for c in range(P.shape[1]) if c != c1)
    r2 = min(P[1, c2] / P[1, c] for c in range(P.shape[1]) if c != c2)
    return float(min(r1, r2))


def _pair_of(sol, ens, varied, lbs, ubs):
    import veritas

    n = ens.n_features
    box = sol.box()
    x = np.array(
        [
            _point(box[i] if i in box else veritas.Interval(), lbs[i], ubs[i])
            for i in range(n + len(varied))
        ]
    )
    x1, x2 = x[:n].copy(), x[:n].copy()
    for j, f in enumerate(varied):
        x2[f] = x[n + j]
    return np.stack([x1, x2])


def veritas_max_gap(key: str, feature: str, classes, timeout: float) -> dict:
    import veritas

    t0 = time.time()
    ens = _load(key)
    binary = ens.n_outputs == 1
    varied = [ens.feature_names.index(feature)]
    at = build_sides_addtree(ens, varied, _sides(ens, classes), 0.0)
    lbs = [f.lb for f in ens.features] + [ens.features[f].lb for f in varied]
    ubs = [f.ub for f in ens.features] + [ens.features[f].ub for f in varied]
    box = [
        veritas.Interval(lb, float(np.nextafter(ub, np.inf)) if math.isfinite(ub) else math.inf)
        for lb, ub in zip(lbs, ubs, strict=True)
    ]
    cfg = veritas.Config(veritas.HeuristicType.MULTI_MAX_MAX_OUTPUT_DIFF)
    cfg.stop_when_optimal = False
    cfg.max_memory = 4 * 1024**3
    search = cfg.get_search(at, box)
    lower, checked, closed = None, 0, False
    while time.time() < t0 + timeout:
        reason = search.step_for(min(0.5, t0 + timeout - time.time()), 50)
        while checked < search.num_solutions():
            pair = _pair_of(search.get_solution(checked), ens, varied, lbs, ubs)
            checked += 1
            got = replayed_gap(ens.replayer.predict_proba(pair), binary, classes)
            lower = got if lower is None else max(lower, got)
        top = search.current_bounds().top_of_open
        if lower is not None and to_gap(top, binary) <= _closed(lower, binary):
            closed = True
        if reason == veritas.StopReason.NO_MORE_OPEN or search.num_open() == 0:
            closed = True
        if closed or reason == veritas.StopReason.OUT_OF_MEMORY:
            break
    # the optimum is the best pair found once no open state can beat it
    top = search.current_bounds().top_of_open
    upper = lower if search.num_open() == 0 else to_gap(top, binary)
    if lower is not None and upper is not None:
        upper = max(upper, lower)
    return _line("veritas", key, feature, classes, lower, upper, closed, time.time() - t0)


def _closed(lower: float, binary: bool) -> float:
    """The upper bound at which the bounds count as met (the tolerance of max_gap)."""
    return lower + TOLERANCE if binary else lower * math.exp(TOLERANCE)


def treesens_max_gap(key: str, feature: str, classes, timeout: float) -> dict:
    import treesens

    t0 = time.time()
    ens = _load(key)
    kw = {"classes": list(classes)} if classes else {}
    r = treesens.max_gap(ens, [feature], tolerance=TOLERANCE, timeout=timeout, **kw)
    mg = r.max_gap or {}
    line = _line(
        "treesens",
        key,
        feature,
        classes,
        mg.get("lower"),
        mg.get("upper"),
        bool(mg.get("proven")),
        time.time() - t0,
    )
    line["method"] = mg.get("method")
    return line


def _line(tool, key, feature, classes, lower, upper, closed, seconds) -> dict:
    # a best pair whose gap is at most none (0, or a ratio of 1) is no pair: "none"
    none = 1.0 if classes else 0.0
    lower = None if lower is None or lower <= none else lower
    return {
        "tool": tool,
        "model": key,
        "feature": feature,
        "classes": list(classes) if classes else None,
        "lower": lower,
        "upper": upper,
        "closed": closed,
        "seconds": round(seconds, 3),
    }


def _run_one(args) -> dict:
    tool, key, feature, classes, timeout = args
    fn = veritas_max_gap if tool == "veritas" else treesens_max_gap
    try:
        return fn(key, feature, classes, timeout)
    except Exception as e:  # one query's failure is recorded, the others go on
        line = _line(tool, key, feature, classes, None, None, False, 0.0)
        line["error"] = f"{type(e).__name__}: {e}"
        return line


def run(timeout: float, out: Path, queries=QUERIES) -> None:
    run_sides(out, "tool", ("treesens", "veritas"), queries, _run_one, timeout)


def report(path: Path) -> str:
    """One table per tier (the paper's questions, the scale tier's) of the queries the
    results file holds."""
    by = by_query(path, "tool")
    scale = {k for k, _, _ in SCALE_QUERIES}
    tiers = [("", {q: t for q, t in by.items() if q[0] not in scale})]
    tiers.append(("The scale tier: ", {q: t for q, t in by.items() if q[0] in scale}))
    return "\n".join(_table(head, part) for head, part in tiers if part)


def _table(head: str, by: dict) -> str:
    rows = [
        "| model | feature | classes | treesens [lower, upper] (s) | Veritas [lower, upper] (s) |",
        "|---|---|---|---|---|",
    ]

    def cell(d):
        return bounds_cell(d, "seconds")

    closed = {"treesens": 0, "veritas": 0}
    for (model, feat, cls), tools in by.items():
        for t in closed:
            closed[t] += bool(tools.get(t, {}).get("closed"))
        rows.append(
            f"| {model} | {feat} | {cls if cls != 'None' else ''} | "
            f"{cell(tools.get('treesens'))} | {cell(tools.get('veritas'))} |"
        )
    head += (
        f"{len(by)} queries; bounds closed (within {TOLERANCE:g}): treesens "
        f"{closed['treesens']}, Veritas {closed['veritas']}"
    )
    return head + "\n\n" + "\n".join(rows) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--tier", choices=sorted(TIERS), default="paper")
    ap.add_argument(
        "--models-dir",
        default=str(HERE / "results" / "scale-models"),
        help="the scale tier's models (bench/models/train_scale.py --out)",
    )
    add_results_args(ap, HERE / "results" / "max-gap-peer.jsonl", "the table")
    args = ap.parse_args(argv)
    os.environ[SCALE_DIR] = str(Path(args.models_dir).resolve())
    return run_or_report(args, lambda out: run(args.timeout, out, TIERS[args.tier]), report)


if __name__ == "__main__":
    sys.exit(main())
