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

The rebuild is bounded by the search's deadline (a certificate's budget, or the query's
time limit): its exact bounds cost about a full walk of the trees a box (0.5-0.9 ms on
adult xgb_t1000_d8's tables: sex at gap 0.4963, 301,188 boxes rebuilt in 151 s), so
``rebuilt_within`` times them on a sample of the record first (there: 153 s estimated)
and gives the proof up at once, saying so, when the rest would not end before the
deadline; past the deadline midway it gives up too. An answer's proof given up for want
of the query's time is kept unbuilt (``UnbuiltProof``): its certificate rebuilds it
within the certificate's budget, the answer not waiting for it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .pair_boxes import PairTables
from .proof_tree import ProofTree

# boxes of a record whose exact bounds are timed before its rebuild, spread over it: the
# rebuild's cost is estimated from them (a record of fewer than twice as many is rebuilt
# without an estimate)
REBUILD_SAMPLE = 256
# the tiling's cost (proof_from_boxes), and the certificate's writing after it, over the
# exact bounds' (box_tops): 1.6 s and 0.1 s against 12 s on adult xgb_t1000_d8's 17,950
# boxes of sex at gap 0.499
TILING_SHARE = 0.15
# boxes whose exact bounds are walked between two looks at the clock
REBUILD_CHUNK = 4096
# why a record gives no proof: a box lost from it, or boxes that do not tile the space
INCOMPLETE = "its record of the boxes it dropped is incomplete"
NOT_A_PROOF = "its boxes do not rebuild a proof"


def rebuild_estimate(
    boxes: np.ndarray, box_tops: Callable[[np.ndarray], np.ndarray]
) -> float | None:
    """The seconds a rebuild of ``boxes`` would take, timed on ``REBUILD_SAMPLE`` of
    them; None for a record of fewer than twice as many (rebuilt without an estimate)."""
    n = len(boxes)
    if n < 2 * REBUILD_SAMPLE:
        return None
    box_tops(boxes[:1])  # loaded (or compiled) before the clock runs
    t0 = time.time()
    sample = boxes[:: n // REBUILD_SAMPLE]
    box_tops(sample)
    return (time.time() - t0) / len(sample) * n * (1 + TILING_SHARE)


def too_long(boxes: int, estimate: float, left: float) -> str:
    """Why a rebuild estimated at ``estimate`` seconds is not started, ``left`` to go."""
    return (
        f"rebuilding its proof from {boxes:,} boxes would take about {estimate:.0f}s, "
        f"{max(left, 0):.0f}s left before its deadline"
    )


def rebuilt_within(
    boxes: np.ndarray | None,
    box_tops: Callable[[np.ndarray], np.ndarray],
    tab: PairTables,
    replays: dict[int, tuple],
    capped: bool,
    deadline: float,
    estimate: float | None = None,
    from_the_root: bool = False,
) -> tuple[ProofTree | None, str]:
    """The proof from the ``boxes`` a compiled search recorded (None: its record is
    incomplete), each box's exact bounds by ``box_tops`` (gap_kernel.KernelSearch's),
    rebuilt by ``deadline``: (proof, "") or (None, why not): the record incomplete, its
    rebuild estimated (``rebuild_estimate``, unless ``estimate`` is given) to end past
    the deadline (before it starts) or past it midway, or the boxes not a proof
    (``NOT_A_PROOF``). ``from_the_root``: the bounds are computed from the whole space
    down (settled_from_the_root), a box under a threshold ending its subtree."""
    if boxes is None:
        return None, INCOMPLETE
    n = len(boxes)
    estimate = rebuild_estimate(boxes, box_tops) if estimate is None else estimate
    if estimate is not None and estimate > deadline - time.time():
        return None, too_long(n, estimate, deadline - time.time())
    late = f"rebuilding its proof from {n:,} boxes ran past its deadline"
    if from_the_root:
        tree = proof_from_boxes(tab, boxes, replays, None, capped, deadline)
        settled = None if tree is None else settled_from_the_root(tree, tab, box_tops, deadline)
        if not settled:
            return None, late if time.time() >= deadline else NOT_A_PROOF
        return tree, ""
    tops = np.empty((n, len(tab.thresholds)))
    for start in range(0, n, REBUILD_CHUNK):
        if time.time() >= deadline:
            return None, late
        tops[start : start + REBUILD_CHUNK] = box_tops(boxes[start : start + REBUILD_CHUNK])
    tree = proof_from_boxes(tab, boxes, replays, tops, capped, deadline)
    if tree is None:
        return None, late if time.time() >= deadline else NOT_A_PROOF
    return tree, ""


@dataclass
class UnbuiltProof:
    """An answer's proof ``rebuilt_within`` gave up for want of the query's time, kept
    for its certificate, which rebuilds it within its own budget
    (questions/certify_recorded.py): the compiled search's record and what its rebuild
    reads (its boxes' exact bounds by ``box_tops``, over the kernel's flat copy of the
    tables, not its heap). It holds the record the search held, counted against the
    memory limit as it ran (compiled_check.recording_within), and is dropped once the
    certificate is written or refused."""

    boxes: np.ndarray
    box_tops: Callable[[np.ndarray], np.ndarray]
    tab: PairTables
    replays: dict[int, tuple]
    capped: bool
    dropped = False  # a recording given up (ProofTree's): this one is kept whole

    def estimate(self) -> float | None:
        """``rebuild_estimate``'s seconds for its boxes."""
        return rebuild_estimate(self.boxes, self.box_tops)

    def preorder(self) -> None:
        """No steps until it is rebuilt (ProofTree's)."""
        return None

    def rebuilt(self, deadline: float, estimate: float | None) -> tuple[ProofTree | None, str]:
        """``rebuilt_within`` by ``deadline``, from the ``estimate`` already made."""
        return rebuilt_within(
            self.boxes, self.box_tops, self.tab, self.replays, self.capped, deadline, estimate
        )


def proof_from_boxes(
    tab: PairTables,
    boxes: np.ndarray,
    replays: dict[int, tuple],
    tops: np.ndarray | None,
    capped: bool = True,
    deadline: float = float("inf"),
) -> ProofTree | None:
    """The proof over ``tab``'s pair space whose leaves are ``boxes`` (rows lo | hi, as
    recorded), the boxes of ``replays`` (index: ``("replay", x1, x2)``) ruled out by
    their replay and the others pruned by the first row whose bound in ``tops`` (per box
    and row: the sum over the trees of the row's largest value among the leaves meeting
    the box, gap_kernel_jit.box_tops) is under its threshold; None where they do not tile
    the space or a box has no row under its threshold (``capped``: or past
    proof_tree.MAX_RECORDED boxes), or once the clock passes ``deadline``. Without
    ``tops``, a box not replayed is left as ``("box", i)``, for settled_from_the_root."""
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
    steps = 0
    while stack:
        steps += 1
        if steps % 1024 == 0 and time.time() >= deadline:
            return None
        node, idx, rlo, rhi = stack.pop()
        if len(idx) == 0:
            return None  # a part of the space no box covers
        if len(idx) == 1:
            i = int(idx[0])
            if not (np.array_equal(lo[i], rlo) and np.array_equal(hi[i], rhi)):
                return None
            event = replays.get(i) or (("box", i) if tops is None else _pruned(tab, tops[i]))
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


def settled_from_the_root(
    tree: ProofTree, tab: PairTables, box_tops: Callable[[np.ndarray], np.ndarray], deadline
) -> bool:
    """Settle ``tree``'s leaves ``("box", i)`` (proof_from_boxes without bounds) from the
    whole space down, a depth at a time: a box (a leaf, or a split's) with a row under
    its threshold is pruned there, a split's subtree with it (one box where the search
    left several: below U', a max gap's boxes often are); False where a leaf has no such
    row, or at ``deadline``."""
    cols = len(tab.sizes)
    sizes = tab.sizes.astype(np.int64)
    level = [(ProofTree.ROOT, np.zeros(cols, np.int64), sizes)]
    while level:
        todo = [x for x in level if tree.events[x[0]][0] != "replay"]
        bounds = np.empty((len(todo), len(tab.thresholds)))
        for a in range(0, len(todo), REBUILD_CHUNK):
            if time.time() >= deadline:
                return False
            chunk = todo[a : a + REBUILD_CHUNK]
            bounds[a : a + len(chunk)] = box_tops(np.array([np.r_[lo, hi] for _, lo, hi in chunk]))
        level = []
        for (n, lo, hi), top in zip(todo, bounds, strict=True):
            event, pruned = tree.events[n], _pruned(tab, top)
            if pruned is not None:
                tree.events[n] = pruned
            elif event[0] != "split":
                return False
            else:
                c, r, yes = event[1], event[2], tree.yes_of[n]
                yes_hi, no_lo = hi.copy(), lo.copy()
                yes_hi[c], no_lo[c] = r, r
                level += [(yes, lo, yes_hi), (yes + 1, no_lo, hi)]
    return True


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
