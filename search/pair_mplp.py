"""A box's pair-sum bound tightened by a Lagrangian (consensus) decomposition over the
trees reading F, optimised per box by MPLP (pair_mplp_jit). The kernel's search runs it
only where gap_kernel.MPLP_BOUND asks for it (``kernel_lag``).

Units: pair-sum totals (the sum over F's trees of their pair-leaf values, the kernel's
pair-sum row before its threshold); ``rows`` turns one into the kernel's row term.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .gap_kernel import FlatTables


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


def mplp_tables(ft: FlatTables, reads_f: np.ndarray) -> MplpTables:
    """The bound's view of the kernel's tables (its first pair-sum row), over the trees
    of F (``reads_f``: gap_kernel.reads_varied)."""
    trees = np.flatnonzero(reads_f)
    start = ft.node_start
    has = start[trees + 1] > start[trees]
    roots = np.where(has, start[trees], -1 - ft.leaf_start[trees])
    return MplpTables(
        packed=np.ascontiguousarray(ft.nodes, dtype=np.int32),
        roots=np.ascontiguousarray(roots, dtype=np.int64),
        values=np.ascontiguousarray(ft.values[:, ft.first_sum], dtype=np.float64),
        threshold=float(ft.thresholds[ft.first_sum]),
        depth=int(np.diff(start).max(initial=0)) + 2,
        sizes=np.ascontiguousarray(ft.sizes, dtype=np.int32),
    )


def mplp_setting(text: str) -> tuple[int, float] | None:
    """TREESENS_MPLP_BOUND's "sweeps,gate" as (sweeps, gate); None where empty or not
    two such numbers."""
    try:
        sweeps, gate = text.split(",")
        return int(sweeps), float(gate)
    except ValueError:
        return None


def kernel_lag(
    ft: FlatTables, reads_f: np.ndarray, setting: tuple[int, float] | None
) -> tuple | None:
    """What the kernel's run takes to apply the bound (pair_mplp_jit.lag_rows):
    ``setting`` (sweeps, gate in row units); None: off (the kernel compiled without it),
    as where the tables have no pair-sum row (a regressor's change: its one row is over
    both inputs, f(x1) - f(x2))."""
    if setting is None or ft.first_sum >= ft.values.shape[1]:
        return None
    mt = mplp_tables(ft, reads_f)
    sweeps, gate = setting
    return (mt.packed, mt.roots, mt.values, mt.depth, int(sweeps), float(gate), mt.threshold)


def box_bound(
    mt: MplpTables,
    lo: np.ndarray,
    hi: np.ndarray,
    sweeps: int = 3,
    floor: float = -math.inf,
    warm: MplpState | None = None,
    gate: float = math.inf,
) -> MplpBound:
    """The box [lo, hi)'s bound: its leaves gathered by a walk of F's trees, at most
    ``sweeps`` MPLP sweeps from ``warm`` (a parent box's state) or from L = 0, stopping once
    at most ``floor``; no sweep where the bound at L = 0 is more than ``gate`` above it
    (pair-sum units)."""
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
    if plain > floor and plain - floor <= gate and sweeps > 0:
        out = mplp(ptr, d, segoff, sega, segb, s0, s1, lval, lo, hi, sweeps, floor)
    return MplpBound(plain, out, MplpState(segoff, sega, segb, lval), len(d))
