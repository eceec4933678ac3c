"""Fold per-column preprocessing into an ensemble: trees over the model's columns become
trees over the user's features.

Each model column is one ``ColumnMap``: the user feature it is computed from and how.

* a numeric user feature reaches the column through a nondecreasing map (a scaler, an
  imputer, the identity); the map is the library's own computation, so a split
  ``cast(map(x)) op t`` holds exactly for the doubles ``x < b``, with ``b`` the first
  double where it fails (found by bisection over the ordered doubles). The folded
  ensemble compares ``float64`` with ``<``, whatever the model did;
* a categorical user feature gives the column one value per category (a one-hot
  indicator, an ordinal code): a split becomes a categorical split whose "yes" set is the
  categories whose value takes the "yes" side.

A missing user value (NaN) goes where the map sends it: an imputed value's side, or, when
the map keeps NaN, the node's default side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...compiler.ensemble import (
    MISSING_NONE,
    MISSING_ZERO,
    ZERO_BAND,
    Ensemble,
    Feature,
    ModelOrigin,
    Tree,
)
from ...compiler.errors import UnsupportedModelError

Forward = Callable[[np.ndarray], np.ndarray]  # user values (n,) -> model column values (n,)
# several forwards' values at once: [(forward, x)] -> [forward(x)] (one pass through the
# preprocessing for all of them, where it can)
Evaluate = Callable[[list[tuple[Forward, np.ndarray]]], list[np.ndarray]]


@dataclass(frozen=True)
class ColumnMap:
    """How one model column follows from user feature ``user``: through ``forward``
    (a numeric feature) or as ``values[code]`` (a categorical one); ``constant``: the
    column does not depend on any user feature and always holds this value.
    ``missing``: a categorical feature's column where the input is missing (NaN), when
    the preprocessing takes NaN (an imputer before the encoder fills it; an encoder
    that ignores unknown categories encodes it as one); None: the node's default side."""

    user: int
    forward: Forward | None = None
    values: tuple[float, ...] | None = None
    constant: float | None = None
    missing: float | None = None


def identity(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def fold(
    ens: Ensemble,
    features: Sequence[Feature],
    maps: Sequence[ColumnMap],
    *,
    replayer: Any,
    columns: Any = None,
    source: str,
    origin: ModelOrigin | None = None,
    evaluate: Evaluate | None = None,
) -> Ensemble:
    """``ens`` (over the model's columns) as an ensemble over ``features``, model column
    ``j`` being ``maps[j]`` of them; ``replayer`` checks witnesses in the user's space.
    ``origin``: what the folded model was read from (default: ``ens``'s). ``evaluate``:
    the numeric maps' values at once (default: each forward called in turn)."""
    if len(maps) != ens.n_features:
        raise ValueError(f"{len(maps)} column maps for {ens.n_features} model columns")
    features = tuple(features)
    bounds = numeric_boundaries(ens, maps, evaluate)
    nan_values = {
        j: float(m.forward(np.array([np.nan]))[0]) for j, m in enumerate(maps) if m.forward
    }
    trees = tuple(_fold_tree(ens, t, features, maps, bounds, nan_values) for t in ens.trees)
    return replace(
        ens,
        trees=trees,
        features=features,
        op="<",
        cast="float64",
        source=source,
        origin=origin or ens.origin,
        replayer=replayer,
        columns=columns,
    )


def numeric_boundaries(
    ens: Ensemble, maps, evaluate: Evaluate | None = None
) -> dict[int, dict[float, float]]:
    """Per numeric model column: each numeric threshold of the ensemble on it -> its
    boundary in the user's units (one bisection over every column's thresholds, each
    step one ``evaluate`` of all the columns' forwards)."""
    ths: dict[int, set[float]] = {}
    for t in ens.trees:
        for node in np.flatnonzero(t.feature >= 0).tolist():
            j = int(t.feature[node])
            if maps[j].forward is not None and not t.is_categorical(node):
                ths.setdefault(j, set()).add(float(t.threshold[node]))
    if not ths:
        return {}
    cols = list(ths)
    arrs = [np.array(sorted(ths[j])) for j in cols]
    seg = np.concatenate([np.full(len(a), k) for k, a in enumerate(arrs)])
    forwards = [maps[j].forward for j in cols]
    each = evaluate or (lambda pairs: [f(x) for f, x in pairs])

    def forward(x: np.ndarray, which: np.ndarray) -> np.ndarray:  # x[i] of threshold which[i]
        out = np.empty(len(x))
        parts = [(k, np.flatnonzero(seg[which] == k)) for k in np.unique(seg[which]).tolist()]
        values = each([(forwards[k], x[at]) for k, at in parts])
        for (_, at), v in zip(parts, values, strict=True):
            out[at] = v
        return out

    found = _boundaries(ens, forward, np.concatenate(arrs))
    return {
        j: dict(zip(a.tolist(), found[seg == k].tolist()))
        for k, (j, a) in enumerate(zip(cols, arrs, strict=True))
    }


def _fold_tree(ens: Ensemble, t: Tree, features, maps, bounds, nan_values) -> Tree:
    n = t.n_nodes
    feature = t.feature.copy()
    threshold = t.threshold.copy()
    default_left = t.default_left.copy()
    cats: list[frozenset[int] | None] = [None] * n
    by_column: dict[int, list[int]] = {}
    for node in np.flatnonzero(t.feature >= 0).tolist():
        by_column.setdefault(int(t.feature[node]), []).append(node)
    for j, nodes in by_column.items():
        m = maps[j]
        nodes_a = np.asarray(nodes)
        if t.missing is not None and (t.missing[nodes_a] == MISSING_ZERO).any():
            raise UnsupportedModelError(
                "a split that treats zero as missing (LightGBM zero_as_missing) on a "
                "preprocessed column cannot be folded into the user's features"
            )
        feature[nodes_a] = m.user
        if m.forward is None:
            points = (m.constant,) if m.constant is not None else m.values
            routes = node_routes(ens, t, nodes_a, np.asarray(points, dtype=np.float64))
            for k, node in enumerate(nodes):
                yes = np.flatnonzero(routes[:, k])
                if m.constant is not None:
                    _always(features, m.user, bool(yes.size), node, threshold, cats)
                else:
                    cats[node] = frozenset(int(c) for c in yes)
            if m.missing is not None:  # NaN goes where its image goes
                default_left[nodes_a] = node_routes(ens, t, nodes_a, np.array([m.missing]))[0]
            continue
        categorical = [k for k in nodes if t.is_categorical(k)]
        if categorical and m.forward is not identity:
            raise UnsupportedModelError(
                f"the final model splits the column of {features[m.user].name!r} as a category "
                "(HistGradientBoosting's categorical_features), which treesens does not read "
                "through the preprocessing of a numeric input; encode the column in the "
                "pipeline instead (an OrdinalEncoder branch of the ColumnTransformer)"
            )
        for k in categorical:
            cats[k] = t.categories[k]
        numeric = np.asarray([k for k in nodes if cats[k] is None], dtype=np.int64)
        if numeric.size:
            threshold[numeric] = [bounds[j][float(x)] for x in t.threshold[numeric]]
            nan = np.array([nan_values[j]])
            default_left[numeric] = node_routes(ens, t, numeric, nan)[0]
    any_cat = any(c is not None for c in cats)
    return Tree(
        feature,
        threshold,
        t.left,
        t.right,
        default_left,
        t.value,
        t.outputs,
        None,
        tuple(cats) if any_cat else None,
    )


def _always(features, user: int, yes: bool, node: int, threshold, cats) -> None:
    """Make ``node`` (on a constant column) always take one side."""
    if features[user].kind == "categorical":
        cats[node] = frozenset(range(len(features[user].categories or ()))) if yes else frozenset()
    else:
        threshold[node] = np.inf if yes else -np.inf


def _holds(ens: Ensemble, v: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The model's numeric test ``cast(v) op t``, elementwise (v and t broadcast)."""
    v = np.asarray(v, dtype=np.float64)
    if ens.cast == "float32":
        v = v.astype(np.float32).astype(np.float64)
    elif ens.cast == "float64z":
        v = np.where(np.abs(v) <= ZERO_BAND, 0.0, v)
    return v < t if ens.op == "<" else v <= t


def node_routes(ens: Ensemble, t: Tree, nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(len(values), len(nodes)): does model value ``values[i]`` take node ``k``'s "yes"
    (left) side? NaN follows the node's missing-value rule."""
    v = values[:, None]
    th = t.threshold[nodes][None, :]
    yes = _holds(ens, v, th)
    if t.categories is not None:
        for k, node in enumerate(nodes.tolist()):
            c = t.categories[node]
            if c is not None:
                col = values
                ok = ~np.isnan(col) & (np.floor(col) == col)
                yes[:, k] = ok & np.isin(np.where(ok, col, -1), list(c))
    isnan = np.isnan(v) & np.ones_like(th, dtype=bool)
    if t.missing is not None:
        as_zero = isnan & (t.missing[nodes] == MISSING_NONE)[None, :]
        yes = np.where(as_zero, _holds(ens, np.zeros_like(th), th), yes)
        isnan = isnan & ~as_zero
    return np.where(isnan, t.default_left[nodes][None, :], yes)


def _key(d: np.ndarray) -> np.ndarray:
    """Doubles as int64 keys in the doubles' order (an involution)."""
    i = np.asarray(d, dtype=np.float64).view(np.int64)
    return i ^ ((i >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def _double(k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.int64)
    return (k ^ ((k >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))).view(np.float64)


def _boundaries(
    ens: Ensemble, forward: Callable[[np.ndarray, np.ndarray], np.ndarray], thresholds: np.ndarray
) -> np.ndarray:
    """Per threshold t: the first double b where ``cast(forward(x)) op t`` fails, so
    that the test holds exactly for the finite x < b (-inf: it never holds; +inf: it
    always does). ``forward(x, which)``: the map of threshold ``which[i]`` at ``x[i]``,
    each map nondecreasing."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _bisect(ens, forward, np.asarray(thresholds, dtype=np.float64))


def _bisect(ens: Ensemble, forward, t: np.ndarray) -> np.ndarray:
    big = np.finfo(np.float64).max
    lo = np.full(t.shape, _key(np.array(-big))[()], dtype=np.int64)
    hi = np.full(t.shape, _key(np.array(big))[()], dtype=np.int64)
    every = np.arange(t.size)
    ends = forward(_double(np.concatenate([lo, hi])), np.concatenate([every, every]))
    holds_lo = _holds(ens, ends[: t.size], t)
    holds_hi = _holds(ens, ends[t.size :], t)
    out = np.where(holds_hi, np.inf, -np.inf)
    todo = holds_lo & ~holds_hi  # the invariant: holds at lo, fails at hi
    lo, hi, tt, which = lo[todo], hi[todo], t[todo], every[todo]
    while lo.size and (hi > lo + 1).any():
        mid = (lo >> 1) + (hi >> 1) + (lo & hi & 1)  # no overflow: keys span all int64
        h = _holds(ens, forward(_double(mid), which), tt)
        lo = np.where(h, mid, lo)
        hi = np.where(h, hi, mid)
    out[todo] = _double(hi)
    return out


def last_accepted(accepts: Callable[[float], bool], start: float, end: float) -> float:
    """The double farthest from ``start`` toward ``end`` (both finite) such that
    ``accepts`` holds at every double from ``start`` to it, given that it holds at
    ``start`` and that what it holds on is an interval (bisection over the ordered
    doubles: at most 64 calls)."""
    if accepts(end):
        return end
    lo, hi = int(_key(np.array(start))), int(_key(np.array(end)))  # holds at lo, not at hi
    while abs(hi - lo) > 1:
        mid = (lo + hi) // 2
        if accepts(float(_double(np.array(mid)))):
            lo = mid
        else:
            hi = mid
    return float(_double(np.array(lo)))


def check_nondecreasing(forward: Forward, name: str, probes: np.ndarray, where: str) -> None:
    """Refuse a map that decreases somewhere on ``probes`` (the fold needs order)."""
    x = np.sort(np.asarray(probes, dtype=np.float64))
    y = forward(x)
    if np.any(np.diff(y) < 0):
        raise UnsupportedModelError(
            f"the preprocessing of {name!r} is not a nondecreasing map", where
        )
