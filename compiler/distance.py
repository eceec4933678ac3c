"""Distance of a witness to the data (paper section 6; docs/data-aware.md).

The counterexample region of a witness pair is the box of inputs that reach the same
leaves in every tree: for copy c and feature f, the intersection of the tests on f along
the path to the leaf the copy reaches in each tree. Features outside F are shared by the
two inputs, so the pair's region on such a feature is the intersection of both copies'
boxes. The distance is the l2 distance, over the features outside F, from the nearest
data row to that region, each feature divided by the data's range (max - min;
1 for a constant feature). A row inside the region has distance 0.

Per feature, a row's value v is at distance 0 when the library routes v into the region
(same comparison as the model), else |v - nearest edge| / range, the edge for an integer
feature the region's nearest whole value (x in [3, 4) is x = 3: a row holding 4 is a
whole step away, not 0 as the excluded edge 4 would give). Categorical splits
allow a set of codes: the distance is to the nearest allowed code. A missing value (NaN)
in the data is at distance 0 when the region admits NaN, else 1 (a full range).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from .ensemble import MISSING_NAN, MISSING_NONE, Ensemble


@dataclass
class _Side:
    lo: float = -math.inf  # the test at lo fails ("x >= lo" for "<" models)
    hi: float = math.inf  # the test at hi holds ("x < hi")
    codes: set | None = None  # categorical: allowed codes
    nan_ok: bool = True


def region(ens: Ensemble, leaves: Sequence[int]) -> dict[int, _Side]:
    """The box of inputs reaching ``leaves`` (one leaf per tree), per feature tested."""
    out: dict[int, _Side] = {}
    for t, leaf in zip(ens.trees, leaves):
        parent = _parents(t)
        n = int(leaf)
        while n in parent:
            p, yes = parent[n]
            f = int(t.feature[p])
            side = out.setdefault(f, _Side())
            mode = int(t.missing[p]) if t.missing is not None else MISSING_NAN
            if mode == MISSING_NONE:
                th = float(t.threshold[p])
                nan_yes = (th > 0.0) if ens.op == "<" else (th >= 0.0)
            else:
                nan_yes = bool(t.default_left[p])
            if nan_yes != yes:
                side.nan_ok = False
            if t.is_categorical(p):
                cats = set(t.categories[p])
                side.codes = _merge_codes(side.codes, cats if yes else _NotIn(cats))
            else:
                th = float(t.threshold[p])
                if yes:
                    side.hi = min(side.hi, th)
                else:
                    side.lo = max(side.lo, th)
            n = p
    return out


class _NotIn(set):
    """Every code except these (a categorical "no" branch)."""


def _merge_codes(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, _NotIn) and isinstance(b, _NotIn):
        return _NotIn(set(a) | set(b))
    if isinstance(a, _NotIn):
        return {c for c in b if c not in a}
    if isinstance(b, _NotIn):
        return {c for c in a if c not in b}
    return set(a) & set(b)


_PARENTS: dict[int, dict] = {}


def _parents(t) -> dict[int, tuple[int, bool]]:
    key = id(t)
    got = _PARENTS.get(key)
    if got is not None and got[0] is t:
        return got[1]
    par = {}
    for n in np.flatnonzero(t.feature >= 0).tolist():
        par[int(t.left[n])] = (n, True)
        par[int(t.right[n])] = (n, False)
    _PARENTS[key] = (t, par)
    return par


def _merge(a: _Side, b: _Side) -> _Side:
    return _Side(
        max(a.lo, b.lo), min(a.hi, b.hi), _merge_codes(a.codes, b.codes), a.nan_ok and b.nan_ok
    )


def _routed(ens: Ensemble, v: float, side: _Side) -> bool:
    vc = float(np.float32(v)) if ens.cast == "float32" else v
    if side.lo != -math.inf and not ((vc >= side.lo) if ens.op == "<" else (vc > side.lo)):
        return False
    return side.hi == math.inf or ((vc < side.hi) if ens.op == "<" else (vc <= side.hi))


def whole_edges(ens: Ensemble, side: _Side) -> tuple[float, float]:
    """The region's side narrowed to the whole values the library routes into it (an
    integer feature's region), or the side's own edges where it holds none."""
    lo, hi = side.lo, side.hi
    if math.isfinite(lo):  # an edge at +inf (a side past every number) has no whole value
        lo = next(
            (
                float(k)
                for k in range(math.floor(lo), math.floor(lo) + 3)
                if _routed(ens, k, _Side(lo=side.lo))
            ),
            side.lo,
        )
    if math.isfinite(hi):
        hi = next(
            (
                float(k)
                for k in range(math.ceil(hi), math.ceil(hi) - 3, -1)
                if _routed(ens, k, _Side(hi=side.hi))
            ),
            side.hi,
        )
    if lo > hi:
        return side.lo, side.hi
    return lo, hi


def feature_distances(
    ens: Ensemble, side: _Side, col: np.ndarray, scale: float, integral: bool = False
) -> np.ndarray:
    """Scaled distance of each value of one feature's column to the region's side
    (``integral``: to the whole values in it)."""
    v = np.asarray(col, dtype=np.float64)
    nan = np.isnan(v)
    vc = v.astype(np.float32).astype(np.float64) if ens.cast == "float32" else v
    lo_edge, hi_edge = whole_edges(ens, side) if integral else (side.lo, side.hi)
    d = np.zeros(len(v))
    if side.codes is not None:
        if isinstance(side.codes, _NotIn):
            bad = np.isin(v, list(side.codes))
            d = np.where(bad, 1.0 / scale, 0.0)  # the nearest other code is at least 1 away
        else:
            allowed = np.array(sorted(side.codes), dtype=np.float64)
            if allowed.size == 0:
                d = np.full(len(v), np.inf)
            else:
                d = np.min(np.abs(v[:, None] - allowed[None, :]), axis=1) / scale
    if side.lo != -math.inf:
        below = ~((vc >= side.lo) if ens.op == "<" else (vc > side.lo))
        d = np.where(below & ~nan, np.maximum(d, (lo_edge - v) / scale), d)
    if side.hi != math.inf:
        above = ~((vc < side.hi) if ens.op == "<" else (vc <= side.hi))
        d = np.where(above & ~nan, np.maximum(d, (v - hi_edge) / scale), d)
    d = np.where(nan, 0.0 if side.nan_ok else 1.0, d)
    return np.maximum(d, 0.0)


def distance_to_data(
    ens: Ensemble,
    leaves: Sequence[int],
    varying: Collection[int],
    X: np.ndarray,
    ranges: np.ndarray | None = None,
) -> tuple[float, int, np.ndarray]:
    """(distance, index of the nearest row, per-row distances) of a witness's region.

    ``leaves``: per copy, the leaf of each tree; ``varying``: feature indices in F;
    ``ranges``: per-feature scale (default the data's max - min, 1 when constant).
    """
    X = np.asarray(X, dtype=np.float64)
    if ranges is None:
        with warnings.catch_warnings():  # a column missing in every row: range 1
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanmin(X, axis=0)
            hi = np.nanmax(X, axis=0)
        ranges = np.where(np.isfinite(hi - lo) & (hi - lo > 0), hi - lo, 1.0)
    r1 = region(ens, leaves[0])
    r2 = region(ens, leaves[1])
    sq = np.zeros(X.shape[0])
    for f in sorted(set(r1) | set(r2)):
        if f in varying:
            continue
        side = _merge(r1.get(f, _Side()), r2.get(f, _Side()))
        integral = ens.features[f].integral and side.codes is None
        d = feature_distances(ens, side, X[:, f], float(ranges[f]), integral)
        sq += d * d
    per_row = np.sqrt(sq)
    i = int(np.argmin(per_row))
    return float(per_row[i]), i, per_row
