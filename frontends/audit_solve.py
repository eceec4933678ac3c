"""The audit's fallback for rows whose F has too many cell combinations to enumerate:
one solver query per row (binary models only).

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
from ..compiler.result import INSENSITIVE, SENSITIVE
from ..driver import solve_query
from .data import Dataset

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


def solve_rows(
    ens: Ensemble, data: Dataset, spec: AuditSpec, X: np.ndarray, ans: RowAnswers, timeout: float
) -> None:
    """Answer the rows ``ans`` left unknown by one solver query each (in place)."""
    if ens.n_classes != 2 or ens.n_outputs != 1:
        return
    anchor = anchors(ens, data, spec.target)
    proba_of, raw_of = library_predict(ens)
    margin = spec.target.gap.kind == "margin"
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
            p2 = np.asarray(proba_of(x2[None, :]), float)
            r2 = np.asarray(raw_of(x2[None, :]), float).reshape(1, -1) if margin else None
            if flip_confidence(ens, spec.target, ans.decision[i : i + 1], p2, r2)[0] < 0:
                continue  # the library disagrees with the solver's pair: left unknown
            ans.status[i] = FLIPPABLE
            ans.x2[i] = x2
            ans.p_x2[i] = p2[0]
            ch = [abs(x2[f] - X[i, f]) / spec.scales[f] for f in resolve_features(ens, spec.vary)]
            ans.change[i] = float(np.nansum(ch))  # an x2 that flips, not the smallest change
