"""A box's pair-sum bound tightened by a Lagrangian (consensus) decomposition over the
trees reading F, optimised per box by MPLP (pair_mplp_jit). Not used by the kernel's
search yet.

Units: pair-sum totals (the sum over F's trees of their pair-leaf values, the kernel's
pair-sum row before its threshold); ``rows`` turns one into the kernel's row term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .gap_kernel import packed_nodes, reads_varied
from .pair_boxes import PairTables


@dataclass(frozen=True)
class MplpTables:
    """What the bound reads of the pair tables: the trees of F as roots of ``packed``."""

    packed: np.ndarray  # int32[nodes, 4] (gap_kernel.packed_nodes)
    roots: np.ndarray  # int64[trees of F]: a node, or -1 - leaf for a tree of one leaf
    values: np.ndarray  # float64[leaves]: the pair-sum row
    threshold: float
    depth: int  # the walk's stack: the deepest tree's depth plus 2
    sizes: np.ndarray  # int32[columns]

    def rows(self, total: float) -> float:
        """A pair-sum total as the kernel's row term."""
        return (total - self.threshold) / 2.0

    def total(self, rows: float) -> float:
        return 2.0 * rows + self.threshold


@dataclass(frozen=True)
class MplpState:
    """A box's multipliers, per tree and column segment (to warm-start its sub-boxes)."""

    segoff: np.ndarray
    sega: np.ndarray
    segb: np.ndarray
    lval: np.ndarray


@dataclass(frozen=True)
class MplpBound:
    """A box's pair-sum bound: at L = 0 (the kernel's term) and after each sweep."""

    plain: float
    sweeps: np.ndarray  # float64[sweeps run]
    state: MplpState
    leaves: int

    @property
    def total(self) -> float:
        """The least sound bound found (pair-sum units)."""
        return min(self.plain, float(self.sweeps.min())) if len(self.sweeps) else self.plain


def mplp_tables(tab: PairTables, reads_f: np.ndarray | None = None) -> MplpTables:
    """The bound's view of ``tab`` (its first pair-sum row), over the trees of F."""
    if reads_f is None:
        reads_f = reads_varied(tab)
    trees = np.flatnonzero(reads_f)
    start = np.asarray(tab.node_starts, dtype=np.int64)
    has = start[trees + 1] > start[trees]
    roots = np.where(has, start[trees], -1 - np.asarray(tab.starts, np.int64)[trees])
    fs = tab.first_sum
    return MplpTables(
        packed=np.ascontiguousarray(packed_nodes(tab)),
        roots=roots.astype(np.int64),
        values=np.ascontiguousarray(tab.values[fs], dtype=np.float64),
        threshold=float(tab.thresholds[fs]),
        depth=int(np.diff(start).max(initial=0)) + 2,
        sizes=np.asarray(tab.sizes, dtype=np.int32),
    )


def box_bound(
    mt: MplpTables,
    lo: np.ndarray,
    hi: np.ndarray,
    sweeps: int = 3,
    floor: float = -math.inf,
    warm: MplpState | None = None,
) -> MplpBound:
    """The box [lo, hi)'s bound: its leaves gathered by a walk of F's trees, at most
    ``sweeps`` MPLP sweeps from ``warm`` (a parent box's state) or from L = 0, stopping once
    at most ``floor`` (pair-sum units)."""
    from .pair_mplp_jit import gather, mplp, segments, total_of, warm_values  # noqa: PLC0415

    lo = np.ascontiguousarray(lo, dtype=np.int32)
    hi = np.ascontiguousarray(hi, dtype=np.int32)
    ptr, cl, ch, d = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
    plain = total_of(ptr, d)
    segoff, sega, segb, s0, s1 = segments(ptr, cl, ch, lo, hi)
    K, C = len(mt.roots), len(lo)
    if warm is None:
        lval = np.zeros(len(sega))
    else:
        lval = warm_values(K, C, segoff, sega, segb, warm.segoff, warm.sega, warm.segb, warm.lval)
    out = np.empty(0)
    if plain > floor and sweeps > 0:
        out = mplp(ptr, d, segoff, sega, segb, s0, s1, lval, lo, hi, sweeps, floor)
    return MplpBound(plain, out, MplpState(segoff, sega, segb, lval), len(d))
