"""Test helpers (not tests): the exact largest gap of a binary ensemble by enumeration,
and the checks of a ``--max-gap`` answer against it.

``exact_max_gap(ens, vary)`` enumerates one value per threshold interval of every
feature (``tests/oracle.py``'s representatives, computed independently of the pipeline)
and returns max over the shared part s of min(max_v P(s, v) - 0.5, 0.5 - min_v P(s, v)):
the largest g with a pair meeting P(x1) >= 0.5 + g and P(x2) <= 0.5 - g (negative: no
pair even at g = 0). ``source="ir"`` asks the IR's evaluation, ``"library"`` the
library's predict (``tests/regressions/harness.py``'s grid). ``max_gap_problems`` compares
a result's bounds with it within the product's rounding band (``draw_band``).
"""

from __future__ import annotations

import numpy as np

from treesens.compiler.ensemble import LOGISTIC, Ensemble
from treesens.compiler.query import Gap, Query
from treesens.compiler.rounding import gap_relaxation
from treesens.tests.oracle import cell_grid
from treesens.tests.regressions import harness as H

MAX_ROWS = 2_000_000


def exact_max_gap(ens: Ensemble, vary, source: str = "ir") -> float:
    """The largest gap any pair reaches (negative when none meets g = 0)."""
    if source == "library":
        grid = H.build_grid(ens, vary)
        return H.best_gap(ens, grid, Query(vary=tuple(vary), gap=Gap(0.0)), "prob")
    X, ns, nv = cell_grid(ens, vary, max_rows=MAX_ROWS)
    p = ens.proba(X)[:, 1].reshape(ns, nv)
    return float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))


def draw_band(ens: Ensemble) -> float:
    """How far apart two sums of the same leaves may land and still be a draw, in
    probability: the product's rounding band (``compiler/rounding.gap_relaxation``, by
    which its proofs' rows are relaxed so that they hold for the library's own float
    scores, and within which its replay takes a pair on the boundary for a near miss, not
    a disagreement), through the logistic link's slope (at most 1/4) for a boosted
    model's raw scores; a forest's raw score is its probability."""
    band = gap_relaxation(ens)
    return band / 4 if ens.link == LOGISTIC else band


def max_gap_problems(exact: float, r, ens: Ensemble) -> list[str]:
    """What is wrong with a max-gap result ``r`` of ``ens`` given the exact largest gap
    (empty: all good). "insensitive" must mean g* < upper <= tolerance (``upper``
    proven); a time-limited answer (status unknown, or bounds not met) is checked only for
    sound bounds. A bound and the exact gap are compared within ``draw_band``: the
    oracle's float sums and the product's (its bounds, the library's predict its pair is
    replayed on, its lower bound rounded down until its pair meets it) land on either
    side of a float boundary alike; the witness is judged as the replay judges it."""
    m = r.max_gap
    if r.status == "error" or m is None:
        return [f"status {r.status}: {r.error}"]
    draw = draw_band(ens)
    probs = []
    if m["upper"] < exact - draw:
        probs.append(f"upper {m['upper']!r} below the exact max gap {exact!r}")
    if r.status == "insensitive":
        if m["lower"] is not None or not m["proven"] or m["upper"] > m["tolerance"]:
            probs.append(f"insensitive with bounds {m}")
        return probs
    if exact < -draw and r.status == "sensitive":
        return probs + [f"sensitive (lower {m['lower']!r}) but no pair meets g = 0"]
    if r.status != "sensitive":
        return probs
    if not r.validated:
        probs.append("witness not validated")
    if m["lower"] > exact + draw:
        probs.append(f"lower {m['lower']!r} above the exact max gap {exact!r}")
    if m["proven"] and m["upper"] - m["lower"] > m["tolerance"]:
        probs.append(f"proven, but bounds [{m['lower']!r}, {m['upper']!r}] too far apart")
    if m["proven"] and exact - m["lower"] > m["tolerance"] + draw:
        probs.append(f"lower {m['lower']!r} more than the tolerance below {exact!r}")
    p1, p2 = r.outputs["x1"][1], r.outputs["x2"][1]
    if not (p1 >= 0.5 + r.gap and p2 <= 0.5 - r.gap):
        probs.append(f"the witness ({p1!r}, {p2!r}) does not meet its gap {r.gap!r}")
    return probs


def exact_max_ratio(ens: Ensemble, vary, classes, source: str = "ir") -> float:
    """The largest probability ratio any pair reaches for a multiclass query: x1 is
    ``classes[0]`` and x2 ``classes[1]``, each with P(c) >= g * P(k) for every other k
    (either class may be "any": the best pair of different classes). Below 1: no pair.
    ``source="library"``: the library's predict on the regression harness's grid
    (tests/regressions/harness.py, which enumerates category codes and NaN as well)."""
    if source == "library":  # the harness's grid: every routing signature, categories too
        grid = H.build_grid(ens, vary)
        ns, nv, p = grid.ns, grid.nv, grid.lib_proba
    else:
        X, ns, nv = cell_grid(ens, vary, max_rows=MAX_ROWS)
        p = ens.proba(X)
    p = np.asarray(p, dtype=np.float64)
    C = ens.n_classes
    ratio = np.stack(
        [np.min(_ratios(p[:, [c]], np.delete(p, c, axis=1)), axis=1) for c in range(C)], axis=1
    ).reshape(ns, nv, C)
    best = ratio.max(axis=1)  # per shared cell and class: the best ratio F can reach
    sides = [range(C) if c == "any" else [int(c)] for c in classes]
    return max(
        float(np.max(np.minimum(best[:, a], best[:, b])))
        for a in sides[0]
        for b in sides[1]
        if a != b
    )


def _ratios(pc: np.ndarray, pk: np.ndarray) -> np.ndarray:
    """pc / pk, where a class at probability 0 (a forest's, or an underflow) is beaten by
    any positive probability: the largest float stands for that ratio (as treesens'
    ``achieved_ratio`` reads it)."""
    big = np.finfo(float).max
    with np.errstate(divide="ignore", invalid="ignore"):
        r = pc / pk
    return np.where(pk > 0, r, np.where(pc > 0, big, 0.0))


def max_ratio_problems(exact: float, r) -> list[str]:
    """What is wrong with a multiclass max-gap result given the exact largest ratio."""
    m = r.max_gap
    if r.status == "error" or m is None:
        return [f"status {r.status}: {r.error}"]
    probs = []
    if m["upper"] < exact * (1 - 1e-9):
        probs.append(f"upper {m['upper']!r} below the exact max ratio {exact!r}")
    if r.status == "sensitive":
        if m["lower"] > exact * (1 + 1e-9):
            probs.append(f"lower {m['lower']!r} above the exact max ratio {exact!r}")
        if m["proven"] and m["upper"] > m["lower"] * np.exp(m["tolerance"]) * (1 + 1e-12):
            probs.append(f"proven, but bounds [{m['lower']!r}, {m['upper']!r}] too far apart")
        if not r.validated:
            probs.append("witness not validated")
    elif r.status == "insensitive" and exact >= np.exp(m["tolerance"]):
        probs.append(f"insensitive, but a pair reaches ratio {exact!r}")
    return probs
