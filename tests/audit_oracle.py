"""Test helper (not tests): an independent per-row brute force for the row-level audit.

For each row r: x2 = r with the features F set to every combination of one value per
threshold interval (``tests/oracle.py``'s independent interval values), scored with the
library's predict; r is flippable iff some x2 meets the flip condition.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from treesens.compiler.audit import Target
from treesens.compiler.encode import resolve_features
from treesens.tests.oracle import _raw_candidates, feature_thresholds, interval_values


def _predict(ens):
    return ens.replayer.predict_proba if ens.replayer is not None else ens.proba


def brute_force_flippable(ens, X, vary, target: Target) -> list[bool]:
    """Per row: does some x2 (r with F set to one value per threshold interval of each
    feature in F) meet the flip condition, by the library's predict?"""
    F = sorted(resolve_features(ens, vary))
    vals = [interval_values(ens, f) for f in F]
    grid = np.array(list(itertools.product(*vals)), dtype=float)
    predict = _predict(ens)
    m = len(grid)
    P0 = predict(X)
    cand = np.repeat(X, m, axis=0)
    cand[:, F] = np.tile(grid, (len(X), 1))
    P = predict(cand)
    out = []
    for i, p in enumerate(P0):
        Pi = P[i * m : (i + 1) * m]
        g = target.gap.value
        if len(p) == 2:
            ok = Pi[:, 1] <= 0.5 - g if p[1] >= 0.5 else Pi[:, 1] >= 0.5 + g
        else:
            d = int(np.argmax(p))
            classes = [c for c in range(len(p)) if c != d]
            if target.cls is not None:
                classes = [c for c in classes if c == target.cls]
            ok = np.zeros(m, dtype=bool)
            for c in classes:
                ok |= Pi[:, c] >= g * np.delete(Pi, c, axis=1).max(axis=1)
        out.append(bool(ok.any()))
    return out


def _values_near(ens, f: int, own: float) -> list[float]:
    """Values of feature f worth trying for the least change from ``own``: the row's
    own, and every threshold with its float32 and float64 neighbours (each cell's ends
    among them), within the feature's bounds; a category's codes; NaN where missing."""
    feat = ens.features[f]
    if feat.kind == "categorical" and feat.categories:
        return [own, *interval_values(ens, f)]
    vals = [own, *(v for v in _raw_candidates(ens, feat, feature_thresholds(ens)[f]))]
    return vals + ([math.nan] if feat.may_be_missing else [])


def _flips(P: np.ndarray, p: np.ndarray, g: float) -> np.ndarray:
    """Which rows of P meet a binary gap g against a row decided by p."""
    return P[:, 1] <= 0.5 - g if p[1] >= 0.5 else P[:, 1] >= 0.5 + g


def brute_force_smallest_change(ens, X, vary, target: Target, scales) -> list[float]:
    """Per row of a binary model: the least change on F (each feature's |x2 - r| over its
    scale, a changed category or a change to or from missing 1) of an x2 that flips it by
    the library's predict, among the row's values near each cell's ends; inf when none."""
    F = sorted(resolve_features(ens, vary))
    predict = _predict(ens)
    out = []
    for r in X:
        grid = np.array(list(itertools.product(*(_values_near(ens, f, r[f]) for f in F))))
        cand = np.repeat(r[None, :], len(grid), axis=0)
        cand[:, F] = grid
        change = np.zeros(len(grid))
        for k, f in enumerate(F):
            a, b = r[f], grid[:, k]
            if ens.features[f].kind == "categorical":
                step = (b != a).astype(float)
            else:
                step = np.abs(b - a) / scales.get(f, 1.0)
            change += np.where(np.isnan(a) | np.isnan(b), np.isnan(a) != np.isnan(b), step)
        ok = _flips(predict(cand), predict(r[None, :])[0], target.gap.value)
        out.append(float(change[ok].min()) if ok.any() else math.inf)
    return out
