"""Row-level audit: for each real row r, is there an x2 equal to r outside the features F
that gets the other decision with confidence? Answered exactly by enumeration.

The model distinguishes the values of a feature only by its threshold cells (the
intervals between consecutive thresholds, or the category codes), so the x2 worth trying
are the product of the cells of the features in F. In each cell x2 takes the admissible
value nearest the row's own (the row's value when it lies in the cell; else the shortest
decimal within ``NEAR_EDGE`` of the feature's scale from the cell's nearest end, so that
x2 reads 26.96 rather than the double 26.950000000000003 just past 26.95): every candidate
is scored by the library's own predict, so a "flippable" answer is replay-checked by
construction and "not flippable" is a proof by exhaustion (relative to the cells of the
IR, which the conformance tests hold equal to the library's routing).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from .decimals import shortest_decimal
from .domain import FeatureDomain, candidates, in_interval
from .encode import ensemble_structure, resolve_features
from .ensemble import LOGISTIC, Ensemble, Feature
from .errors import InputError, binary_gap_range
from .flip import Target, flip_confidence
from .replay import library_output

MAX_CANDIDATES = 200_000  # x2 per row beyond which a row is not enumerated (unknown)
BATCH = 200_000  # candidate rows per predict call
# rows times trees a call of the library's predict holds at most, about 0.3 s of CPU: the
# main thread is back in Python between two calls, where Ctrl-C is heard (one call of
# 91,440 rows on churn's 1,000-tree LightGBM kept it waiting for the 5 s grace kill)
CALL_TREE_VISITS = 10_000_000

FLIPPABLE, NOT_FLIPPABLE, UNKNOWN = "flippable", "not flippable", "unknown"
# how far into a cell (a share of the feature's scale) x2 may go past the cell's end
# nearest the row, for a shorter number: the change grows by at most this
NEAR_EDGE = 1e-3


@dataclass(frozen=True)
class FeatureCells:
    """The cells of one feature: per cell the smallest and largest admissible value
    (equal for a category code or the missing value NaN; +-inf when the cell is
    unbounded on that side) and whether a change into it counts as a whole unit."""

    feature: int
    lo: np.ndarray  # (n_cells,)
    hi: np.ndarray  # (n_cells,)
    rep: np.ndarray  # (n_cells,) a value in the cell, for rows whose own value is NaN
    discrete: bool  # category codes: a change counts 1 whatever the codes
    scale: float  # a numeric change is |x2 - r| / scale
    # (n_cells,) the values x2 takes for rows below lo and above hi: the shortest
    # decimals near those ends (``NEAR_EDGE``)
    lo_shown: np.ndarray
    hi_shown: np.ndarray


@dataclass(frozen=True)
class RowAnswers:
    """The answers for a block of rows, aligned with its rows."""

    decision: np.ndarray  # (n,) int: the class predicted for r
    status: list[str]  # FLIPPABLE / NOT_FLIPPABLE / UNKNOWN
    x2: np.ndarray  # (n, n_features): the chosen x2 (NaN rows where none)
    p_row: np.ndarray  # (n, n_classes)
    p_x2: np.ndarray  # (n, n_classes), NaN where none
    change: np.ndarray  # (n,) smallest scaled change on F that flips (``unproven``), NaN where none
    note: str = ""  # why rows are unknown, when not the default reason
    # a regressor's rows: (n, 2) the lowest and highest prediction reachable by changing
    # only F (exact, by enumeration; NaN where not enumerated); None for classifiers
    reach: np.ndarray | None = None
    # the rows a solver answered (questions/audit_solve.py), by index: its backend; the
    # others were answered by enumerating F's cells
    answered_by: dict[int, str] = field(default_factory=dict)
    # the rows a solver was asked about, by index: its answer's times (compile, solve,
    # total), whatever it answered; the enumerated rows have none
    times: dict[int, dict] = field(default_factory=dict)
    # under a work budget per row (questions/audit_solve.py), the rows a solver was asked
    # about, by index: the work each used (answers/work.Work.stats: budget, used, stages)
    work: dict[int, dict] = field(default_factory=dict)
    # the flipped rows a solver answered whose change is that of an x2 that flips, not
    # proven the smallest (the x2 of smaller change not all ruled out in the row's time:
    # questions/audit_solve.smallest_flip, audit_nearest.py), by index: the change below
    # which no x2 flips
    # (0: none known); every other flipped row's change is the smallest
    unproven: dict[int, float] = field(default_factory=dict)
    # a worker's block of an audit to be certified: the answers whose proof its box search
    # recorded (questions/audit_solve.taken_proofs), sent back for the rows' certificates
    proofs: dict = field(default_factory=dict)


def _numeric_cell(ens: Ensemble, feat: Feature, dom: FeatureDomain, j: int):
    lo_edge, hi_edge = dom.edges(j)
    vals = []
    for v in candidates(lo_edge, hi_edge, feat):
        if not math.isfinite(v):
            continue
        # the library's own value (float32) when it is within the bounds, else the input
        # itself: a bound the cast rounds past (the data's largest value 1.94 under the
        # float32 threshold 1.94000006) still reaches the cell its float32 value falls in
        # (domain.any_value's rule, by which the cell counts as admissible)
        for x in (float(ens.cast_value(v)), v):
            if math.isfinite(x) and feat.admits(x) and in_interval(ens, dom.thresholds, j, x):
                vals.append(x)
                break
    lo = -math.inf if lo_edge == -math.inf and feat.lb == -math.inf else min(vals)
    hi = math.inf if hi_edge == math.inf and feat.ub == math.inf else max(vals)
    return lo, hi, float(dom.reps[j])


def feature_cells(ens: Ensemble, f: int, scale: float) -> FeatureCells:
    """The cells of feature ``f`` that hold an admissible value, plus NaN when the
    feature may be missing."""
    dom = ensemble_structure(ens).domains[f]
    feat = ens.features[f]
    if dom.codes is not None:
        lo = hi = rep = [float(c) for c in dom.codes]
        discrete = True
    else:
        cells = [_numeric_cell(ens, feat, dom, j) for j in dom.valid]
        lo, hi, rep = ([c[k] for c in cells] for k in range(3))
        discrete = False
    if feat.may_be_missing:
        lo, hi, rep = [*lo, math.nan], [*hi, math.nan], [*rep, math.nan]
    scale = scale if math.isfinite(scale) and scale > 0 else 1.0
    lo_shown = [_near(a, b, a, feat.integral, scale) for a, b in zip(lo, hi, strict=True)]
    hi_shown = [_near(a, b, b, feat.integral, scale) for a, b in zip(lo, hi, strict=True)]
    return FeatureCells(
        f,
        np.array(lo),
        np.array(hi),
        np.array(rep),
        discrete,
        scale,
        np.array(lo_shown),
        np.array(hi_shown),
    )


def _near(lo: float, hi: float, end: float, integral: bool, scale: float) -> float:
    """The shortest decimal of the cell [lo, hi] within ``NEAR_EDGE * scale`` of its
    ``end``, nearest it (``end`` itself when it is not a number: NaN, an unbounded end)."""
    if not math.isfinite(end):
        return end
    reach = NEAR_EDGE * scale
    a, b = (end, min(hi, end + reach)) if end == lo else (max(lo, end - reach), end)
    v = shortest_decimal(a, b, end, integral)
    return end if v is None else v


def feature_scale(ens: Ensemble, f: int, data_range: float | None) -> float:
    """The range a change on ``f`` is measured against: its declared bounds when both are
    finite, else the data's range."""
    feat = ens.features[f]
    if math.isfinite(feat.lb) and math.isfinite(feat.ub) and feat.ub > feat.lb:
        return feat.ub - feat.lb
    return float(data_range) if data_range else 1.0


def values_and_changes(cells: FeatureCells, col: np.ndarray):
    """(n, n_cells) value of x2 in each cell nearest the row's value, and its change."""
    r = col[:, None]
    missing_row = np.isnan(r)
    own = np.where(missing_row, cells.rep[None, :], r)
    vals = np.where(own < cells.lo, cells.lo_shown, np.where(own > cells.hi, cells.hi_shown, own))
    nan_cell = np.isnan(cells.lo)[None, :]
    vals = np.where(nan_cell, np.nan, vals)
    if cells.discrete:
        change = (vals != r).astype(float)
    else:
        change = np.abs(vals - r) / cells.scale
    both_nan = missing_row & nan_cell
    one_nan = missing_row ^ nan_cell
    change = np.where(both_nan, 0.0, np.where(one_nan, 1.0, change))
    return vals, change


def candidate_count(cells: list[FeatureCells]) -> int:
    return math.prod(len(c.lo) for c in cells)


def _grid(cells: list[FeatureCells], X: np.ndarray):
    """Candidates for every row: (n, m, |F|) values and (n, m) total change."""
    n = len(X)
    vals = np.zeros((n, 1, 0))
    change = np.zeros((n, 1))
    for c in cells:
        v, ch = values_and_changes(c, X[:, c.feature])
        k = v.shape[1]
        vals = np.concatenate(
            [np.repeat(vals, k, axis=1), np.tile(v, (1, vals.shape[1]))[:, :, None]], axis=2
        )
        change = np.repeat(change, k, axis=1) + np.tile(ch, (1, change.shape[1]))
    return vals, change


def decisions(ens: Ensemble, proba: np.ndarray) -> np.ndarray:
    """The class each row is decided; a regressor's "decision" is its prediction."""
    if ens.is_regressor:
        return proba[:, 0].astype(float)
    if ens.n_classes == 2 and proba.shape[1] == 2:
        return (proba[:, 1] >= 0.5).astype(int)
    return np.argmax(proba, axis=1)


Predict = Callable[[np.ndarray], np.ndarray]


def library_predict(ens: Ensemble) -> tuple[Predict, Predict | None]:
    """The library's own predict_proba and predict_raw (the IR's when no replayer), a
    regressor's predictions as one column for both; OutputsMisaligned when the library's
    columns are not the model's (``library_output``)."""

    per_call = max(1, CALL_TREE_VISITS // max(1, len(ens.trees)))

    def proba(X: np.ndarray) -> np.ndarray:
        return in_calls(lambda part: library_output(ens, part), X, per_call)

    def raw(X: np.ndarray) -> np.ndarray:
        return in_calls(
            lambda part: library_output(ens, part, raw=not ens.is_regressor), X, per_call
        )

    return proba, raw


def in_calls(predict: Predict, X: np.ndarray, per_call: int) -> np.ndarray:
    """``predict(X)``, asked ``per_call`` rows at a time."""
    if len(X) <= per_call:
        return predict(X)
    parts = [np.asarray(predict(X[s : s + per_call])) for s in range(0, len(X), per_call)]
    return np.concatenate(parts, axis=0)


def check_target(ens: Ensemble, target: Target) -> None:
    if ens.is_regressor:
        if target.delta is None or not (math.isfinite(target.delta) and target.delta > 0):
            raise InputError(
                "the model is a regressor: give delta D > 0 (how far x2's prediction must "
                "move from the row's)"
            )
        return
    g = target.gap
    binary = ens.n_classes == 2 and ens.n_outputs == 1
    if g.kind == "margin" and binary and ens.link != LOGISTIC:
        raise InputError("a margin gap needs a model with a logistic link")
    if g.kind == "margin" and not g.value >= 0:  # as a check's: x2 on the row's side
        raise InputError(f"margin gap {g.value:g} must be >= 0")
    if binary and g.kind == "prob" and not 0 <= g.value < 0.5:
        raise InputError(
            binary_gap_range(
                g.value, "x2's P <= 0.5-g when the row is decided 1, P >= 0.5+g when decided 0"
            )
        )
    if not binary and g.kind == "prob" and g.value < 1:
        raise InputError(
            f"gap {g.value:g} out of range: a multiclass gap is a probability ratio g >= 1 "
            "(P(c) >= g * P(other) for x2's class c and every other class)"
        )


def audit_rows(
    ens: Ensemble,
    X: np.ndarray,
    vary: Iterable[str | int],
    target: Target,
    scales: dict[int, float],
    max_candidates: int | None = None,
) -> RowAnswers:
    """Answer every row of X (model feature order) exactly, by enumeration; rows with
    more than ``max_candidates`` (default MAX_CANDIDATES) cells of F to try are left
    unknown."""
    check_target(ens, target)
    F = sorted(resolve_features(ens, vary))
    cells = [feature_cells(ens, f, scales.get(f, 1.0)) for f in F]
    proba_of, raw_of = library_predict(ens)
    need_raw = target.gap.kind == "margin"
    n = len(X)
    p_row = np.asarray(proba_of(X), dtype=float)
    d = decisions(ens, p_row)
    x2 = np.full(X.shape, np.nan)
    p_x2 = np.full(p_row.shape, np.nan)
    change = np.full(n, np.nan)
    m = candidate_count(cells)
    reach = np.full((n, 2), np.nan) if ens.is_regressor else None
    if m > (MAX_CANDIDATES if max_candidates is None else max_candidates):
        return RowAnswers(d, [UNKNOWN] * n, x2, p_row, p_x2, change, reach=reach)
    status = [NOT_FLIPPABLE] * n
    step = max(1, BATCH // m)
    for s in range(0, n, step):
        rows = X[s : s + step]
        vals, ch = _grid(cells, rows)
        k = len(rows)
        cand = np.repeat(rows, m, axis=0)
        cand[:, F] = vals.reshape(k * m, len(F))
        pc = np.asarray(proba_of(cand), dtype=float)
        rc = np.asarray(raw_of(cand), dtype=float).reshape(len(cand), -1) if need_raw else None
        conf = flip_confidence(ens, target, np.repeat(d[s : s + k], m), pc, rc).reshape(k, m)
        if reach is not None:
            predictions = pc[:, 0].reshape(k, m)
            reach[s : s + k] = np.stack([predictions.min(axis=1), predictions.max(axis=1)], 1)
        ok = conf >= 0
        # the smallest change that flips; among equals the most confident
        key = np.where(ok, ch, np.inf)
        order = np.lexsort((-conf, key), axis=1)[:, 0]
        for i in np.flatnonzero(ok.any(axis=1)).tolist():
            j = int(order[i])
            status[s + i] = FLIPPABLE
            x2[s + i] = cand[i * m + j]
            p_x2[s + i] = pc[i * m + j]
            change[s + i] = ch[i, j]
    _recheck(ens, target, d, status, x2, proba_of, raw_of if need_raw else None)
    return RowAnswers(d, status, x2, p_row, p_x2, change, reach=reach)


def unanswered(ens: Ensemble, X: np.ndarray, note: str) -> RowAnswers:
    """Every row of X unknown (``note`` says why), with its decision and probabilities."""
    proba_of, _ = library_predict(ens)
    p_row = np.asarray(proba_of(X), dtype=float)
    n = len(X)
    nan = np.full(p_row.shape, np.nan)
    return RowAnswers(
        decisions(ens, p_row),
        [UNKNOWN] * n,
        np.full(X.shape, np.nan),
        p_row,
        nan,
        np.full(n, np.nan),
        note,
        reach=np.full((n, 2), np.nan) if ens.is_regressor else None,
    )


def _recheck(ens, target, d, status, x2, proba_of, raw_of) -> None:
    """Score every chosen x2 once more with the library's predict, on its own."""
    idx = [i for i, s in enumerate(status) if s == FLIPPABLE]
    if not idx:
        return
    P = np.asarray(proba_of(x2[idx]), dtype=float)
    R = np.asarray(raw_of(x2[idx]), dtype=float).reshape(len(idx), -1) if raw_of else None
    bad = flip_confidence(ens, target, d[idx], P, R) < 0
    if bad.any():
        raise AssertionError(f"the library's predict disagrees on re-check of {int(bad.sum())} x2")
