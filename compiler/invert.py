"""Map a solver's values back to two concrete inputs x1, x2.

For each feature and copy the chosen predicates give a threshold interval; the value
is one the ORIGINAL library routes into that interval (domain.py checks with the
library's own comparison), integral for integer features, inside declared bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .domain import choose_value
from .encode import Encoding


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
            rank = chosen_rank(values, enc.pred[copy][f])
            j = dom.interval_of_rank(rank)
            intervals[copy][f] = j
            xs[copy][f] = choose_value(ens, feat, dom, j, pf)
    leaves = (chosen_leaves(enc, values, 0), chosen_leaves(enc, values, 1))
    return Witness(xs[0], xs[1], intervals, leaves)
