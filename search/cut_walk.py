"""A second phase for the max-gap search: the tree of cuts of a recorded kernel search (its
boxes, ``KernelSearch.tiling``, recorded at a floor above the one to prove) walked top-down
at the floor to prove, each box bounded by the Lagrangian bound on its pair-sum row, its L
inherited from the box it was cut from (cut_walk_jit). A box whose bound is at most the floor
is closed with all it holds; a recorded box reached and not closed is left open, for a
search of its own (the record's cuts end there). ``walk_own`` needs no record: it cuts a box
not closed where the kernel's rule says (own_cuts_jit), and leaves open only a box no rank
cuts (every tree of F has one leaf in it).

Sound by construction: a box is closed only by a bound on every pair it holds (the kernel's
own term at L = 0, or a zero-sum L's), and the boxes closed and those left open tile the
pair space (the record's boxes do, and a cut's two sides tile their box).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .pair_mplp import MplpTables
from .proof_bounds import SPLIT

# a walk asks its ``stop`` every this many boxes (about 0.5 s at 2 ms a box)
STOP_EVERY = 256


@dataclass
class CutWalk:
    """What a walk closed, and the recorded boxes it reached open (rows lo | hi)."""

    visited: int = 0
    closed_plain: int = 0  # at L = 0 (the kernel's own bound)
    closed_inherited: int = 0  # by the parent's L, with no sweep
    closed_swept: int = 0  # after MPLP column updates on the box
    columns: int = 0  # MPLP column updates run
    open: list = field(default_factory=list)
    reached: int = 0  # recorded boxes reached, closed or left open
    stopped: bool = False  # by ``stop``: the boxes left on its stack are in neither
    closed_top: float = -math.inf  # the largest bound a box was closed by (pair-sum units)
    # walk_own: the share of its tree of cuts done, a box closed or left open at depth d
    # counting 2^-d (1 once the walk has ended unstopped)
    done: float = 0.0

    def open_boxes(self, columns: int) -> np.ndarray:
        return np.array(self.open, dtype=np.int32).reshape(-1, 2 * columns)


def root_box(mt: MplpTables) -> tuple:
    """The whole pair space's box (cut_walk_jit's Box), its leaves gathered from F's trees."""
    from .cut_walk_jit import root_box as box  # noqa: PLC0415 - numba only when the walk runs
    from .pair_mplp_jit import gather  # noqa: PLC0415

    lo, hi = np.zeros(len(mt.sizes), np.int32), mt.sizes.astype(np.int32)
    return box(*gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth), lo, hi)


def split_box(lo: np.ndarray, hi: np.ndarray, c: int, r: int) -> list:
    """walk_own's two sides of [lo, hi) cut on column c at rank r, (lo, hi) each: no, then
    yes (ranks < r; popped first from a stack)."""
    yes_hi, no_lo = hi.copy(), lo.copy()
    yes_hi[c], no_lo[c] = r, r
    return [(no_lo, hi), (lo, yes_hi)]


def _stopped(out: CutWalk, stop: Callable[[CutWalk], bool] | None) -> bool:
    """One more box visited; whether ``stop`` (asked every STOP_EVERY boxes) ends the walk."""
    out.visited += 1
    out.stopped = stop is not None and out.visited % STOP_EVERY == 0 and stop(out)
    return out.stopped


def _tally(out: CutWalk, plain: float, warm: float, best: float, floor2: float) -> bool:
    """Counts a box closed at floor2 by its bounds (at L = 0, inherited, least found);
    whether it closed."""
    shut = plain if plain <= floor2 else warm if warm <= floor2 else best
    if shut > floor2:
        return False
    out.closed_top = max(out.closed_top, shut)
    if plain <= floor2:
        out.closed_plain += 1
    elif warm <= floor2:
        out.closed_inherited += 1
    else:
        out.closed_swept += 1
    return True


def walk_cuts(
    mt: MplpTables,
    recorded: np.ndarray,
    floor_rows: float,
    sweeps: int = 3,
    gate_rows: float = 9.0,
    stop: Callable[[CutWalk], bool] | None = None,
) -> CutWalk:
    """The tree of cuts over ``recorded`` (boxes tiling the pair space, rows lo | hi) walked
    at ``floor_rows`` (the kernel's row units), depth first, "yes" side first; MPLP sweeps
    (at most ``sweeps``) only on a box whose bound at L = 0 is within ``gate_rows`` of it.
    ``stop``: asked every STOP_EVERY boxes with the walk so far; True ends the walk
    (``stopped``)."""
    from .cut_walk_jit import box_bounds, child_box  # noqa: PLC0415
    from .gap_kernel_tops_jit import preorder_ends, tile  # noqa: PLC0415

    C = len(mt.sizes)
    kind, col, rank, _, ok = tile(np.ascontiguousarray(recorded, dtype=np.int32), mt.sizes)
    if not ok:
        raise ValueError("the recorded boxes do not tile the pair space")
    end, _ = preorder_ends(kind)
    floor2 = mt.total(floor_rows)
    gate2 = 2.0 * gate_rows if math.isfinite(gate_rows) else math.inf
    lo0, hi0 = np.zeros(C, np.int32), mt.sizes.astype(np.int32)
    out = CutWalk()
    stack = [(0, lo0, hi0, root_box(mt), 0)]
    while stack:
        i, lo, hi, box, first = stack.pop()
        if _stopped(out, stop):
            break
        if i > 0:
            box = child_box(box, first, lo, hi)  # ``box``: the parent's until here
        plain, warm, best, cols = box_bounds(box, lo, hi, sweeps, floor2, gate2, first)
        out.columns += cols
        out.reached += int(kind[i] != SPLIT)
        if _tally(out, plain, warm, best, floor2):
            continue
        if kind[i] != SPLIT:  # a recorded box: the record's cuts end here
            out.open.append(np.concatenate([lo, hi]))
            continue
        no, yes = split_box(lo, hi, col[i], rank[i])
        stack += [(end[i + 1], *no, box, col[i]), (i + 1, *yes, box, col[i])]
    return out


def walk_own(
    mt: MplpTables,
    floor_rows: float,
    sweeps: int = 3,
    gate_rows: float = math.inf,
    stop: Callable[[CutWalk], bool] | None = None,
    closed: list | None = None,
) -> CutWalk:
    """The pair space walked at ``floor_rows`` depth first, as walk_cuts but with no record:
    a box not closed is cut where own_cuts_jit.kernel_cut says, and left open only where no
    rank cuts a leaf of it. Every box is swept by default (no gate): a box far above the floor
    closes nothing itself, but its sub-boxes start from its L (bench/reports/scale-tier.md,
    "The cut walk's CPU per box"). ``closed``: where given, each box closed is appended to it as
    (lo, hi, the least bound found: pair-sum units)."""
    from .cut_walk_jit import box_bounds, child_box  # noqa: PLC0415
    from .own_cuts_jit import kernel_cut, side_bounds  # noqa: PLC0415

    floor2 = mt.total(floor_rows)
    gate2 = 2.0 * gate_rows if math.isfinite(gate_rows) else math.inf
    out = CutWalk()
    stack = [(np.zeros(len(mt.sizes), np.int32), mt.sizes.astype(np.int32), None, 0, 1.0)]
    while stack:
        lo, hi, box, first, share = stack.pop()
        if _stopped(out, stop):
            break
        box = root_box(mt) if box is None else child_box(box, first, lo, hi)
        plain, warm, best, cols = box_bounds(box, lo, hi, sweeps, floor2, gate2, first)
        out.columns += cols
        if _tally(out, plain, warm, best, floor2):
            if closed is not None:
                closed.append((lo, hi, min(plain, warm, best)))
            out.done += share
            continue
        yes, no, cuts = side_bounds(box, lo, hi)
        c, r = kernel_cut(yes, no, cuts, lo, hi, plain)
        if c < 0:  # every tree of F has one leaf here: its bound is exact
            out.open.append(np.concatenate([lo, hi]))
            out.done += share
            continue
        stack += [(*side, box, c, share / 2) for side in split_box(lo, hi, c, r)]
    return out
