"""The audit's fallback for rows whose F has too many cell combinations to enumerate:
solver queries per row (binary: one; multiclass: one per class the row may flip to).

The query lets every feature differ between its two inputs; the flipped side is bounded
to the row outside F (and to F's declared bounds), the other side is fixed to an anchor,
a data row that meets that side of the gap. The anchor makes "insensitive" a proof that
no x2 exists (the pair condition is then exactly the one-sided condition on x2).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from ..answers.result import INSENSITIVE, SENSITIVE
from ..compiler.audit import (
    FLIPPABLE,
    UNKNOWN,
    RowAnswers,
    Target,
    flip_confidence,
    library_predict,
)
from ..compiler.encode import resolve_features
from ..compiler.ensemble import Ensemble
from ..compiler.query import FeatureBound, Query
from ..driver import solve_query
from ..frontends.data import Dataset

if TYPE_CHECKING:
    from .audit import AuditSpec

NOT_FLIPPABLE_BY_SOLVER = "not flippable"


def anchors(ens: Ensemble, data: Dataset, target: Target) -> dict[int, np.ndarray | None]:
    """Per flipped side (the x2 class 0 or 1): a data row meeting the other side's gap."""
    proba_of, raw_of = library_predict(ens)
    g = target.gap
    score = (
        np.asarray(raw_of(data.X), float)[:, 0]
        if g.kind == "margin"
        else np.asarray(proba_of(data.X), float)[:, 1] - 0.5
    )
    hi, lo = int(np.argmax(score)), int(np.argmin(score))
    return {
        0: data.X[hi] if score[hi] >= g.value else None,  # x2 must be class 0: x1 is class 1
        1: data.X[lo] if score[lo] <= -g.value else None,
    }


def _fixed(ens: Ensemble, values: np.ndarray, features, copy: int) -> list[FeatureBound]:
    names = ens.feature_names
    return [FeatureBound(names[f], float(values[f]), float(values[f]), (copy,)) for f in features]


def row_query(ens: Ensemble, spec: AuditSpec, r: np.ndarray, decision: int, anchor, timeout):
    """The query whose 'sensitive' answer holds a flipped x2 of row r."""
    F = resolve_features(ens, spec.vary)
    outside = [f for f in range(ens.n_features) if f not in F]
    flipped, fixed = (2, 1) if decision == 1 else (1, 2)
    bounds = _fixed(ens, r, outside, flipped) + _fixed(ens, anchor, range(ens.n_features), fixed)
    return Query(
        vary=tuple(ens.feature_names),
        gap=spec.target.gap,
        name=spec.label,
        bounds=tuple(bounds),
        timeout=float(timeout),
    ), flipped


def _witness_row(ens: Ensemble, w: dict, r: np.ndarray, spec: AuditSpec) -> np.ndarray:
    """The row r with F set to the witness's values (category names back to codes)."""
    x2 = r.copy()
    for f in resolve_features(ens, spec.vary):
        v = w[ens.feature_names[f]]
        cats = ens.features[f].categories or ()
        if isinstance(v, str):
            v = cats.index(v)
        x2[f] = math.nan if v is None else float(v)
    return x2


def _accept(ens: Ensemble, spec: AuditSpec, ans: RowAnswers, i: int, r: np.ndarray, x2) -> bool:
    """Record x2 as row i's flip when the library's predict agrees that it flips."""
    proba_of, raw_of = library_predict(ens)
    p2 = np.asarray(proba_of(x2[None, :]), float)
    margin = spec.target.gap.kind == "margin"
    r2 = np.asarray(raw_of(x2[None, :]), float).reshape(1, -1) if margin else None
    if flip_confidence(ens, spec.target, ans.decision[i : i + 1], p2, r2)[0] < 0:
        return False  # the library disagrees with the solver's pair: left unknown
    ans.status[i] = FLIPPABLE
    ans.x2[i] = x2
    ans.p_x2[i] = p2[0]
    ch = [abs(x2[f] - r[f]) / spec.scales[f] for f in resolve_features(ens, spec.vary)]
    ans.change[i] = float(np.nansum(ch))  # an x2 that flips, not the smallest change
    return True


def solve_rows(
    ens: Ensemble, data: Dataset, spec: AuditSpec, X: np.ndarray, ans: RowAnswers, timeout: float
) -> None:
    """Answer the rows ``ans`` left unknown by solver queries (in place)."""
    if UNKNOWN not in ans.status:
        return
    if ens.is_regressor:
        solve_regressor_rows(ens, spec, X, ans, timeout)
        return
    if ens.n_classes != 2 or ens.n_outputs != 1:
        solve_multiclass_rows(ens, data, spec, X, ans, timeout)
        return
    anchor = anchors(ens, data, spec.target)
    for i, s in enumerate(ans.status):
        d = int(ans.decision[i])
        a = anchor[1 - d]
        if s != UNKNOWN or a is None or np.isnan(X[i]).any():
            continue
        q, flipped = row_query(ens, spec, X[i], d, a, timeout)
        res = solve_query(ens, q, deadline=time.time() + timeout)
        if res.status == INSENSITIVE:
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER
        elif res.status == SENSITIVE and res.validated and res.witness:
            x2 = _witness_row(ens, res.witness[f"x{flipped}"], X[i], spec)
            _accept(ens, spec, ans, i, X[i], x2)


def solve_regressor_rows(
    ens: Ensemble, spec: AuditSpec, X: np.ndarray, ans: RowAnswers, timeout: float
) -> None:
    """A regressor's row left unknown: x1 is the row itself, x2 the row outside F, and
    the pair's predictions at least delta apart in the asked direction (up: x2 above the
    row). An "insensitive" answer is then a proof that no x2 moves the prediction so far."""
    F = resolve_features(ens, spec.vary)
    outside = [f for f in range(ens.n_features) if f not in F]
    flipped = {"up": "down", "down": "up"}.get(spec.target.direction, "either")
    for i, s in enumerate(ans.status):
        if s != UNKNOWN or np.isnan(X[i]).any():
            continue
        bounds = _fixed(ens, X[i], range(ens.n_features), 1) + _fixed(ens, X[i], outside, 2)
        q = Query(
            vary=tuple(ens.feature_names),
            delta=spec.target.delta,
            direction=flipped,
            name=spec.label,
            bounds=tuple(bounds),
            timeout=float(timeout),
        )
        res = solve_query(ens, q, deadline=time.time() + timeout)
        if res.status == INSENSITIVE:
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER
        elif res.status == SENSITIVE and res.validated and res.witness:
            _accept(ens, spec, ans, i, X[i], _witness_row(ens, res.witness["x2"], X[i], spec))


def class_anchors(ens: Ensemble, data: Dataset, target: Target) -> dict[int, tuple | None]:
    """Per class c x2 may take: a data row and its class a != c that it meets with the
    gap (as x1 of the query 'a -> c'), or None when no row does."""
    proba_of, raw_of = library_predict(ens)
    P = np.asarray(proba_of(data.X), float)
    R = (
        np.asarray(raw_of(data.X), float).reshape(len(P), -1)
        if target.gap.kind == "margin"
        else None
    )
    none = np.full(len(P), -1)
    wins = [flip_confidence(ens, Target(target.gap, a), none, P, R) for a in range(ens.n_classes)]
    out: dict[int, tuple | None] = {}
    for c in range(ens.n_classes):
        best = max((a for a in range(ens.n_classes) if a != c), key=lambda a: wins[a].max())
        row = int(np.argmax(wins[best]))
        out[c] = (data.X[row], best) if wins[best][row] >= 0 else None
    return out


def _class_query(ens, spec: AuditSpec, r, anchor, c: int, timeout: float) -> Query:
    """x1 is the anchor (class a with the gap), x2 is r outside F and class c with the gap."""
    x1, a = anchor
    F = resolve_features(ens, spec.vary)
    outside = [f for f in range(ens.n_features) if f not in F]
    bounds = _fixed(ens, x1, range(ens.n_features), 1) + _fixed(ens, r, outside, 2)
    return Query(
        vary=tuple(ens.feature_names),
        gap=spec.target.gap,
        name=spec.label,
        classes=(a, c),
        bounds=tuple(bounds),
        timeout=float(timeout),
    )


def solve_multiclass_rows(
    ens: Ensemble, data: Dataset, spec: AuditSpec, X: np.ndarray, ans: RowAnswers, timeout: float
) -> None:
    """Multiclass: a row left unknown asks, for each class c it may flip to, whether an x2
    of class c exists (one query per class, ``timeout`` seconds for the row in all)."""
    anchor = class_anchors(ens, data, spec.target)
    cls = spec.target.cls
    for i, s in enumerate(ans.status):
        if s != UNKNOWN or np.isnan(X[i]).any():
            continue
        d = int(ans.decision[i])
        wanted = [c for c in range(ens.n_classes) if c != d] if cls is None else [cls]
        if cls == d:  # the row is already the named class: no x2 is another class
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER
            continue
        deadline = time.time() + timeout
        answered = all(anchor[c] is not None for c in wanted)
        for c in (c for c in wanted if anchor[c] is not None):
            left = deadline - time.time()
            if left <= 0:
                answered = False
                break
            res = solve_query(
                ens, _class_query(ens, spec, X[i], anchor[c], c, left), deadline=deadline
            )
            if res.status == SENSITIVE and res.validated and res.witness:
                x2 = _witness_row(ens, res.witness["x2"], X[i], spec)
                if _accept(ens, spec, ans, i, X[i], x2):
                    break
            if res.status != INSENSITIVE:
                answered = False
        else:
            if answered:
                ans.status[i] = NOT_FLIPPABLE_BY_SOLVER
