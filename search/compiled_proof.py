"""The proof of a check the compiled search answered "insensitive" (compiled_check.py), as
a certificate states it: a tree of splits whose every leaf is pruned or ruled out by a
replay (proof_tree.py), rebuilt from the boxes the kernel dropped under its floor or
resolved (gap_kernel.KernelSearch's ``recorded``). Those boxes tile the pair space, since
the search splits boxes in two and drops or resolves every box it does not split; any
cut that no box straddles splits them into two such tilings, so the tree is rebuilt cut
by cut. Each pruned leaf's row and bound are computed from the leaves meeting it (walked by the
kernel's box_tops), as box_search.py computes them; the kernel's own bound on a box may be looser (a lazy dive
keeps a larger box's maxima), never tighter. Nothing here needs to be trusted: the
checker recomputes every bound (verify/), and a tiling with a gap or an overlap, or a box
with no row under its threshold, yields no proof.
"""

from __future__ import annotations

import numpy as np

from .pair_boxes import PairTables
from .proof_tree import ProofTree


def proof_from_boxes(
    tab: PairTables,
    boxes: np.ndarray,
    replays: dict[int, tuple],
    tops: np.ndarray,
    capped: bool = True,
) -> ProofTree | None:
    """The proof over ``tab``'s pair space whose leaves are ``boxes`` (rows lo | hi, as
    recorded), the boxes of ``replays`` (index: ``("replay", x1, x2)``) ruled out by
    their replay and the others pruned by the first row whose bound in ``tops`` (per box
    and row: the sum over the trees of the row's largest value among the leaves meeting
    the box, gap_kernel_jit.box_tops) is under its threshold; None where they do not tile
    the space or a box has no row under its threshold (``capped``: or past
    proof_tree.MAX_RECORDED boxes)."""
    cols = len(tab.sizes)
    lo, hi = boxes[:, :cols], boxes[:, cols:]
    tree = ProofTree(capped)
    stack = [
        (
            ProofTree.ROOT,
            np.arange(len(boxes)),
            np.zeros(cols, np.int64),
            tab.sizes.astype(np.int64),
        )
    ]
    while stack:
        node, idx, rlo, rhi = stack.pop()
        if len(idx) == 0:
            return None  # a part of the space no box covers
        if len(idx) == 1:
            i = int(idx[0])
            if not (np.array_equal(lo[i], rlo) and np.array_equal(hi[i], rhi)):
                return None
            event = replays.get(i) or _pruned(tab, tops[i])
            if event is None:
                return None
            tree.leaf(node, event)
            continue
        cut = _cut(lo[idx], hi[idx], rlo)
        if cut is None:
            return None  # boxes that overlap, or straddle every cut
        c, r = cut
        below = hi[idx, c] <= r
        yes, no = tree.split(node, c, r)
        yes_hi, no_lo = rhi.copy(), rlo.copy()
        yes_hi[c], no_lo[c] = r, r
        stack.append((no, idx[~below], no_lo, rhi))
        stack.append((yes, idx[below], rlo, yes_hi))
    return None if tree.dropped else tree


def _cut(lo: np.ndarray, hi: np.ndarray, rlo: np.ndarray) -> tuple[int, int] | None:
    """A (column, rank) inside the region that no box straddles: every box ends at or
    below it or starts at or above it."""
    for c in range(lo.shape[1]):
        order = np.argsort(lo[:, c], kind="stable")
        starts, ends = lo[order, c], np.maximum.accumulate(hi[order, c])
        # between the k-th box and the next: the next starts where all before it end
        ok = (starts[1:] >= ends[:-1]) & (starts[1:] > rlo[c])
        if ok.any():
            return c, int(starts[1:][ok][0])
    return None


def _pruned(tab: PairTables, tops: np.ndarray) -> tuple | None:
    """The box's ``("prune", row, bound)`` as box_search.py records it: the first row
    whose summed per-tree maxima over the leaves meeting the box are under its threshold."""
    below = tops < tab.thresholds
    if not below.any():
        return None
    row = int(np.argmax(below))
    return ("prune", row, float(tops[row]))
