"""Map a solver's values back to two concrete inputs x1, x2.

For each feature and copy the chosen predicates give a threshold interval; the value
is one the ORIGINAL library routes into that interval (domain.py checks with the
library's own comparison), integral for integer features, inside declared bounds.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from .domain import choose_value
from .encode import Encoding
from .passes.feature_constraints import choose_constrained


@dataclass(frozen=True)
class Witness:
    x1: np.ndarray
    x2: np.ndarray
    intervals: tuple[dict[int, int], dict[int, int]]  # per copy: feature -> interval index
    leaves: tuple[np.ndarray, np.ndarray]  # per copy: leaf node chosen in each tree


def chosen_rank(values: np.ndarray, qs: tuple[int, ...]) -> int:
    """q_r is true iff the value lies in one of the first r valid intervals."""
    rank = 0
    for v in qs:
        if values[v] > 0.5:
            break
        rank += 1
    return rank


def chosen_leaves(enc: Encoding, values: np.ndarray, copy: int) -> np.ndarray:
    out = np.full(len(enc.leaves[copy]), -1, dtype=np.int32)
    for ti, lv in enumerate(enc.leaves[copy]):
        for n, v in lv.items():
            if values[v] > 0.5:
                out[ti] = n
                break
    return out


def invert(enc: Encoding, values: np.ndarray, prefer=None) -> Witness:
    """``prefer``: optional per-feature sequences of values to use when they fit."""
    ens = enc.ensemble
    xs = [np.empty(ens.n_features), np.empty(ens.n_features)]
    intervals: tuple[dict[int, int], dict[int, int]] = ({}, {})
    for f, dom in enc.domains.items():
        feat = ens.features[f]
        pf = prefer.get(f) if prefer else None
        for copy in (0, 1):
            if copy == 1 and f not in enc.varying:
                xs[1][f] = xs[0][f]
                intervals[1][f] = intervals[0][f]
                continue
            m = enc.nan[copy].get(f)
            if m is not None and values[m] > 0.5:
                intervals[copy][f] = -1  # NaN
                xs[copy][f] = np.nan
                continue
            hots = enc.onehot[copy].get(f)
            if hots is not None:  # categorical: the chosen category code
                j = next((i for i, v in enumerate(hots) if values[v] > 0.5), 0)
            else:
                rank = chosen_rank(values, enc.pred[copy][f])
                j = dom.interval_of_rank(rank)
            intervals[copy][f] = j
            xs[copy][f] = choose_value(ens, feat, dom, j, pf)
    choose_constrained(enc, xs, intervals, prefer)  # the query's bounds / relations on x1, x2
    leaves = (chosen_leaves(enc, values, 0), chosen_leaves(enc, values, 1))
    return Witness(xs[0], xs[1], intervals, leaves)


def values_for_pair(enc: Encoding, x1: np.ndarray, x2: np.ndarray, n_vars: int) -> np.ndarray:
    """The encoding's variable values for a concrete pair (e.g. a solver hint)."""
    ens = enc.ensemble
    vals = np.zeros(n_vars)
    for copy, x in ((0, x1), (1, x2)):
        for f, dom in enc.domains.items():
            v = float(x[f])
            m = enc.nan[copy].get(f)
            if m is not None and np.isnan(v):
                vals[m] = 1.0
            hots = enc.onehot[copy].get(f)
            if hots is not None:
                for c, var in zip(dom.codes, hots):
                    vals[var] = 1.0 if v == c else 0.0
                continue
            qs = enc.pred[copy][f]
            if not qs:
                continue
            # interval index: the number of thresholds whose test fails
            j = sum(1 for t in dom.thresholds if not ens.test_holds(v, t))
            rank = bisect.bisect_left(dom.valid, j)
            for r, var in enumerate(qs, start=1):
                vals[var] = 1.0 if rank < r else 0.0
        leaves = ens.leaf_indices(x[None, :])[0]
        for ti, n in enumerate(leaves):
            vals[enc.leaves[copy][ti][int(n)]] = 1.0
    return vals


def witness_from_pair(enc: Encoding, x1: np.ndarray, x2: np.ndarray) -> Witness:
    """A Witness for a concrete pair found without a solver."""
    ens = enc.ensemble
    leaves = ens.leaf_indices(np.stack([x1, x2]))
    intervals: tuple[dict[int, int], dict[int, int]] = ({}, {})
    for copy, x in ((0, x1), (1, x2)):
        for f, dom in enc.domains.items():
            v = float(x[f])
            if np.isnan(v):
                intervals[copy][f] = -1  # NaN, as in invert()
            elif dom.codes is not None:
                intervals[copy][f] = (
                    dom.codes.index(int(v)) if v.is_integer() and int(v) in dom.codes else -1
                )
            else:
                intervals[copy][f] = sum(1 for t in dom.thresholds if not ens.test_holds(v, t))
    return Witness(np.asarray(x1, float), np.asarray(x2, float), intervals, (leaves[0], leaves[1]))
