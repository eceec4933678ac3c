"""The proof of a check the compiled search answered "insensitive" (compiled_check.py), as
a certificate states it: a tree of splits whose every leaf is pruned or ruled out by a
replay (proof_tree.py), rebuilt from the boxes the kernel dropped under its floor or
resolved (gap_kernel.KernelSearch's ``recorded``). Those boxes tile the pair space, since
the search splits boxes in two and drops or resolves every box it does not split; any
cut that no box straddles splits them into two such tilings, so the tree is rebuilt cut
by cut. Each pruned leaf's row and bound are computed from the leaves meeting it, walked
down the rebuilt tree (proof_bounds.py), as box_search.py computes them; the kernel's own
bound on a box may be looser (a lazy dive keeps a larger box's maxima), never tighter.
Nothing here needs to be trusted: the checker recomputes every bound (verify/), and a
tiling with a gap or an overlap, or a box with no row under its threshold, yields no
proof.

The rebuild is bounded by the search's deadline (a certificate's budget, or the query's
time limit). Its bounds cost up to a walk of the trees a box, so ``rebuilt_within``
estimates them from a sample of the record first and gives the proof up at once, saying
so, when the rest would not end before the deadline; past the deadline midway it gives
up too. An answer's proof given up for want
of the query's time is kept unbuilt (``UnbuiltProof``): its certificate rebuilds it
within the certificate's budget, the answer not waiting for it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import gap_kernel, gap_kernel_compile
from .compiled_calls import signals_raised
from .gap_kernel import FlatTables
from .pair_boxes import PairTables
from .proof_bounds import SPLIT, ProofBounds, TiledTree, walked_share
from .proof_tree import MAX_RECORDED, ProofTree

# boxes of a record whose exact bounds are timed before its rebuild, spread over it: the
# rebuild's cost is estimated from them (a record of fewer than twice as many is rebuilt
# without an estimate)
REBUILD_SAMPLE = 256
# the tiling's cost (proof_from_boxes), and the certificate's writing after it, over a
# walk of every tree for every box (box_tops): 0.2-0.3 s and 0.1 s against 8-17 s on adult
# xgb_t1000_d8's 17,987 boxes of sex at gap 0.499
TILING_SHARE = 0.05
# a walk down the proof's tree over a walk of the same trees for every box: 0.43 on those
# boxes (4.6 s against 17.6 s for every tree, 60% of the nodes in trees that are not
# lazy), 0.8-1.2 on random ensembles of 200-300 trees of depth 6-7 that almost all read F
DOWN_THE_TREE = 0.75
# why a record gives no proof: a box lost from it, or boxes that do not tile the space
INCOMPLETE = "its record of the boxes it dropped is incomplete"
NOT_A_PROOF = "its boxes do not rebuild a proof"


def rebuild_estimate(boxes: np.ndarray, ft: FlatTables) -> float | None:
    """The seconds a rebuild of ``boxes`` would take, from a walk of every tree for
    ``REBUILD_SAMPLE`` of them, timed: the walk down its tree (proof_bounds.py) walks
    only the trees that are not lazy, and of those only the ones a split changes; None
    for a record of fewer than twice as many (rebuilt without an estimate)."""
    n = len(boxes)
    if n < 2 * REBUILD_SAMPLE:
        return None
    gap_kernel.flat_box_tops(ft, boxes[:1])  # loaded (or compiled) before the clock runs
    t0 = time.time()
    sample = boxes[:: n // REBUILD_SAMPLE]
    gap_kernel.flat_box_tops(ft, sample)
    share = DOWN_THE_TREE * walked_share(ft) + TILING_SHARE
    return (time.time() - t0) / len(sample) * n * share


def too_long(
    boxes: int, estimate: float, left: float, share: float | None = None, spent: float = 0.0
) -> str:
    """Why a rebuild estimated at ``estimate`` seconds is not started, ``left`` to go;
    ``share``: the rebuild is a certificate's, given that share of its budget after the
    ``spent`` seconds of it before the rebuild, and the line names the budget to ask for
    (``budget_for``)."""
    why = (
        f"rebuilding its proof from {boxes:,} boxes would take about {estimate:.0f}s, "
        f"{max(left, 0):.0f}s left before its deadline"
    )
    if share is None:
        return why
    asked = budget_for(estimate, share, spent)
    return f"{why}: ask for --certify-budget {asked} (certify_budget={asked}) or more"


# an estimate is timed on a sample (REBUILD_SAMPLE boxes), and the walk down the tree costs
# 0.8-1.2 times the share it assumes (DOWN_THE_TREE): the budget a certificate is told to
# ask for leaves this much more
ESTIMATE_MARGIN = 1.25


def budget_for(estimate: float, share: float, spent: float = 0.0) -> int:
    """The certificate budget, whole tens of seconds, whose ``share`` holds a rebuild
    estimated at ``estimate`` seconds with ``ESTIMATE_MARGIN`` to spare, after the
    ``spent`` seconds of it before the rebuild (a certificate's own search)."""
    return int(-(-(estimate * ESTIMATE_MARGIN / max(share, 1e-9) + spent) // 10) * 10)


def rebuilt_within(
    boxes: np.ndarray | None,
    ft: FlatTables,
    tab: PairTables,
    replays: dict[int, tuple],
    capped: bool,
    deadline: float,
    estimate: float | None = None,
    from_the_root: bool = False,
    share: float | None = None,
    spent: float = 0.0,
    by_work: bool = False,
) -> tuple[ProofTree | TiledTree | None, str]:
    """The proof from the ``boxes`` a compiled search recorded (None: its record is
    incomplete), over its flattened tables ``ft``, rebuilt by ``deadline``: (proof, "")
    or (None, why not): the record incomplete, its rebuild estimated
    (``rebuild_estimate``, unless ``estimate`` is given) to end past the deadline
    (before it starts) or past it midway, or the boxes not a proof (``NOT_A_PROOF``).
    ``from_the_root``: a box above the leaves whose pair sums are under a threshold is
    pruned there, its subtree with it (one box where the search left several: below U',
    a max gap's boxes often are). ``share``: a certificate's rebuild, given that share of
    its budget after ``spent`` seconds of it (``too_long`` names the budget to ask for).
    ``by_work``: a certificate's under a work budget, rebuilt whatever its estimate (timed,
    so the load's), ``deadline`` only the net midway: whether it is written then follows
    the model and the query, not the load."""
    if boxes is None:
        return None, INCOMPLETE
    n = len(boxes)
    if not by_work:
        estimate = rebuild_estimate(boxes, ft) if estimate is None else estimate
    if not by_work and estimate is not None and estimate > deadline - time.time():
        return None, too_long(n, estimate, deadline - time.time(), share, spent)
    late = f"rebuilding its proof from {n:,} boxes ran past its deadline"
    tree = proof_from_boxes(tab, boxes, replays, None, capped, deadline)
    if tree is None:
        return None, late if time.time() >= deadline else NOT_A_PROOF
    pruned = ProofBounds(ft, tree, settle=from_the_root).run(deadline)
    if pruned is None:
        return None, late
    return (tree, "") if pruned else (None, NOT_A_PROOF)


def ready_rebuild() -> None:
    """Load the kernels a rebuild calls (gap_kernel_tops_jit.py) into this process,
    compiling them where numba's cache has none (gap_kernel.prepare's ``rebuild``): by
    the rebuild of a record of one box, the whole space of a one-node table, whose arrays
    have the types of every rebuild's, and its estimate's bounds."""
    tab = gap_kernel_compile.ONE_NODE
    ft = gap_kernel.flatten(tab, np.zeros(1, dtype=np.int64))
    whole = np.concatenate([np.zeros_like(tab.sizes), tab.sizes])[None, :].astype(np.int32)
    gap_kernel.flat_box_tops(ft, whole)
    rebuilt_within(whole, ft, tab, {}, False, float("inf"))


@dataclass
class UnbuiltProof:
    """An answer's proof ``rebuilt_within`` gave up for want of the query's time, kept
    for its certificate, which rebuilds it within its own budget
    (questions/certify_recorded.py): the compiled search's record and what its rebuild
    reads (the kernel's flat copy of the tables, not its heap). It holds the record the search held, counted against the
    memory limit as it ran (compiled_check.recording_within), and is dropped once the
    certificate is written or refused."""

    boxes: np.ndarray
    ft: FlatTables
    tab: PairTables
    replays: dict[int, tuple]
    capped: bool
    dropped = False  # a recording given up (ProofTree's): this one is kept whole

    def estimate(self) -> float | None:
        """``rebuild_estimate``'s seconds for its boxes."""
        return rebuild_estimate(self.boxes, self.ft)

    def preorder(self) -> None:
        """No steps until it is rebuilt (ProofTree's)."""
        return None

    def rebuilt(
        self, deadline: float, estimate: float | None, by_work: bool = False
    ) -> tuple[ProofTree | TiledTree | None, str]:
        """``rebuilt_within`` by ``deadline``, from the ``estimate`` already made: a
        certificate's rebuild, with its whole budget (a refusal names the one to ask for;
        ``by_work``: rebuilt_within's)."""
        return rebuilt_within(
            self.boxes,
            self.ft,
            self.tab,
            self.replays,
            self.capped,
            deadline,
            estimate,
            share=1.0,
            by_work=by_work,
        )


def root_proof(tab: PairTables) -> ProofTree | None:
    """The proof of one box, the whole pair space, pruned by the first row whose summed
    per-tree maxima are under its threshold; None where no row is (a tiling's boxes then
    need their rebuild). Numpy only: no compiled code to load or compile."""
    tree = ProofTree(capped=False)
    event = _pruned(tab, np.maximum.reduceat(tab.values, tab.starts, axis=1).sum(axis=1))
    if event is None:
        return None
    tree.leaf(ProofTree.ROOT, event)
    return tree


def proof_from_boxes(
    tab: PairTables,
    boxes: np.ndarray,
    replays: dict[int, tuple],
    tops: np.ndarray | None,
    capped: bool = True,
    deadline: float = float("inf"),
) -> ProofTree | TiledTree | None:
    """The proof over ``tab``'s pair space whose leaves are ``boxes`` (rows lo | hi, as
    recorded), the boxes of ``replays`` (index: ``("replay", x1, x2)``) ruled out by
    their replay and the others pruned by the first row whose bound in ``tops`` (per box
    and row: the sum over the trees of the row's largest value among the leaves meeting
    the box, gap_kernel_jit.box_tops) is under its threshold; None where they do not tile
    the space or a box has no row under its threshold (``capped``: or past
    proof_tree.MAX_RECORDED boxes), or once the clock passes ``deadline``. Without
    ``tops``, a box not replayed is left as ``("box", i)``, for proof_bounds.py, and
    the tree is the tiling's arrays (proof_bounds.TiledTree)."""
    from .gap_kernel_tops_jit import tile  # noqa: PLC0415 - numba only when used

    if time.time() >= deadline:
        return None
    with signals_raised():
        kinds, cols, ranks, leaf_box, tiled = tile(  # the record's int32 as it is: an
            # int64 copy of it took 100 MB on adult xgb_t1000_d8 sex's 430,682 boxes
            np.ascontiguousarray(boxes, dtype=np.int32),
            tab.sizes.astype(np.int64),
        )
    if not tiled:
        return None  # boxes that overlap, or leave part of the space uncovered
    if tops is None:  # its boxes' bounds walked by proof_bounds.py: held as arrays
        if capped and len(kinds) > MAX_RECORDED:
            return None
        return TiledTree(kinds, cols, ranks, leaf_box, replays)
    tree = ProofTree(capped)
    pending = [ProofTree.ROOT]
    for kind, c, r, i in zip(kinds.tolist(), cols.tolist(), ranks.tolist(), leaf_box.tolist()):
        node = pending.pop()
        if kind == SPLIT:
            yes, no = tree.split(node, c, r)
            if tree.dropped:
                return None
            pending += [no, yes]
            continue
        event = replays.get(i) or (("box", i) if tops is None else _pruned(tab, tops[i]))
        if event is None:
            return None
        tree.leaf(node, event)
    return None if tree.dropped else tree


def _pruned(tab: PairTables, tops: np.ndarray) -> tuple | None:
    """The box's ``("prune", row, bound)`` as box_search.py records it: the first row
    whose summed per-tree maxima over the leaves meeting the box are under its threshold."""
    below = tops < tab.thresholds
    if not below.any():
        return None
    row = int(np.argmax(below))
    return ("prune", row, float(tops[row]))
