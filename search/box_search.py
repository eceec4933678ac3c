"""A depth-first branch and bound over boxes of the pair space (pair_boxes.py).

Every box of the search has, per pair tree, the set of leaves that meet it. An upper
bound on each gap row holds for every pair in the box: per tree the largest weight of
that row among those leaves, summed; likewise for the pair-sum rows (where the trees
outside F cancel). A box where one bound is below its row's threshold holds no
pair and is dropped; otherwise it is split in two along the first node of one pair tree
that still has leaves on both sides. When every tree's remaining leaves agree on every
row, the box's values are exact: it holds pairs, and its lower corner is one.

The target is fixed, so a proof visits the same boxes in any order (they depend only on
the choice of splits); the order decides how soon a pair is found. Of a split's two
boxes the one with more room above the rows' thresholds (its tightest row's) is searched
first; a recorded proof keeps the "yes" side first, the order a certificate is read in.
The tree to split is the first of a fixed order (largest
spread of summed values first) whose remaining leaves still differ in the sum; then one
whose leaves differ in a row. Each split resolves one node of that tree, so the search
finishes; a time limit makes it give up ("unknown").

Sound as the encoding is: the thresholds are relaxed by the encoding's float32 margin
(``Encoding.relax``), and a found pair goes through the library's replay check.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..compiler.encode import Encoding
from ..compiler.passes.feature_constraints import choose_constrained
from .anchored_boxes import anchored_corner, is_anchored
from .pair_boxes import PairTables
from .proof_tree import ProofTree
from .ranked_trees import rank_value
from .relation_boxes import RankRelations, box_meets, dropped_by, rank_relations, relation_ranks

PROVED, FOUND, GAVE_UP = "proved", "found", "gave up"
_LOW = -1e300  # stands for "no leaf" in a per-tree maximum
CHECK_EVERY = 64  # boxes between two looks at the clock
# boxes searched "yes" side first before the child with more room above the rows'
# thresholds goes first: either order alone misses some pairs the other finds at once
# (churn_t500_d6 Partner g=0.3: yes first, 3,394 boxes; room first, none in 141,696;
# 30 tiny queries: room first 695 boxes in all, yes first 1,248)
PROBE_BOXES = 4096


@dataclass(frozen=True)
class BoxOutcome:
    status: str  # PROVED (no pair), FOUND (a pair, in ``pair``), GAVE_UP (time limit)
    boxes: int  # boxes visited
    pair: tuple[np.ndarray, np.ndarray] | None = None
    box: tuple[np.ndarray, np.ndarray] | None = None  # FOUND: its box's lo, hi ranks


def box_search(
    enc: Encoding,
    tables: PairTables,
    deadline: float,
    record: list | None = None,
    stop: Callable[[], bool] | None = None,
) -> BoxOutcome:
    """Search the pair space until a proof, a pair or ``deadline`` (absolute time).
    ``record``: each box visited is appended in the order of the search (preorder, the
    "yes" side of a split first): ``("split", column, R)``, ``("prune", row, bound)`` or
    ``("relation", feature, op)`` (relation_boxes.dropped_by), the proof a certificate
    writes out. ``stop``:
    asked between boxes, True ends the search as the deadline does."""
    return BoxSearch(enc, tables, record, stop).run(deadline)


class BoxSearch:
    """One search, which may be run in turns: a turn that gives up at its deadline keeps
    the boxes still to search, and the next ``run`` goes on from them."""

    def __init__(
        self,
        enc: Encoding,
        tables: PairTables,
        record: list | None = None,
        stop: Callable[[], bool] | None = None,
        proof: ProofTree | None = None,
        least: Callable[[np.ndarray, np.ndarray], float] | None = None,
    ):
        self.enc, self.tab, self.record, self.stop = enc, tables, record, stop
        # ``least``: a lower bound on what a box's pairs cost (an audit row's change on F,
        # questions/audit_nearest.py); a box whose bound is above ``cap`` is dropped, and
        # of a split's two boxes the cheaper is searched first. No proof is recorded.
        self.least, self.cap = least, math.inf
        assert least is None or (record is None and proof is None)
        self.boxes = 0  # visited, over every turn
        # a work budget's (answers/work.py): ``run`` gives up once ``boxes`` reaches it
        self.box_limit: float = float("inf")
        # ``proof``: each box visited recorded under its number (search/proof_tree.py),
        # in any order of the search; ``ids`` the numbers of the boxes on ``stack``, and
        # ``found`` that of the box of the last pair found
        self.proof, self.ids, self.found = proof, [ProofTree.ROOT], ProofTree.ROOT
        n_leaves = tables.values.shape[1]
        # relations between the inputs: a box no pair of whose ranks meets them is
        # dropped ("relation"), never bounded (relation_boxes.py)
        self.rel = rank_relations(enc, tables)
        self.stack: list = []
        if n_leaves:
            self.order = tree_order(tables)
            root = np.ones(n_leaves, dtype=bool)
            self.stack.append(
                (root, np.zeros_like(tables.sizes), tables.sizes.copy(), leaf_top(tables, root))
            )

    def run(self, deadline: float) -> BoxOutcome:
        """Go on until a proof, a pair, ``deadline`` or the stop request."""
        tab, record, stack, stop, proof = self.tab, self.record, self.stack, self.stop, self.proof
        first = True
        while stack:
            if self.boxes >= self.box_limit:
                return BoxOutcome(GAVE_UP, self.boxes)
            if (self.boxes % CHECK_EVERY == 0 or first) and (
                time.time() >= deadline or (stop and stop())
            ):
                return BoxOutcome(GAVE_UP, self.boxes)
            first = False
            live, lo, hi, top = stack.pop()
            box = self.ids.pop() if proof is not None else ProofTree.ROOT
            self.boxes += 1
            if self.least is not None and self.least(lo, hi) > self.cap:
                continue  # every pair in it costs more than the cap
            if isinstance(top, tuple):  # no pair of its ranks meets a relation: its step
                if record is not None:
                    record.append(top)
                if proof is not None:
                    proof.leaf(box, top)
                continue
            below = top.sum(axis=1) < tab.thresholds
            if below.any():
                if record is not None or proof is not None:
                    row = int(np.argmax(below))
                    pruned = ("prune", row, float(top[row].sum()))
                    if record is not None:
                        record.append(pruned)
                    if proof is not None:
                        proof.leaf(box, pruned)
                continue
            tree = tree_to_split(top - leaf_low(tab, live), self.order, tab.first_sum)
            if tree < 0:  # every tree's value is fixed on the box, and meets the gap
                self.found = box
                pair = corner_pair(self.enc, tab, lo, hi, self.rel)
                return BoxOutcome(FOUND, self.boxes, pair, (lo, hi))
            c, r = split_node(tab.nodes[tree], live)
            if record is not None:
                record.append(("split", int(c), int(r)))
            if proof is not None:
                yes_id, no_id = proof.split(box, int(c), int(r))
            yes_hi, no_lo = hi.copy(), lo.copy()
            yes_hi[c], no_lo[c] = r, r
            yes_live, no_live = live & (tab.lo[c] < r), live & (tab.hi[c] > r)
            yes = (yes_live, lo, yes_hi, self._top(yes_live, lo, yes_hi))
            no = (no_live, no_lo, hi, self._top(no_live, no_lo, hi))
            # the "yes" side first for the first PROBE_BOXES boxes, then the child closer
            # to a pair (the last pushed); a recorded proof keeps the "yes" side first, the
            # order its certificate is read in. A proof visits the same boxes either way.
            if self.least is not None:  # the cheaper first
                first_no = self.least(no[1], no[2]) < self.least(yes[1], yes[2])
            else:
                first_no = (
                    record is None
                    and self.boxes > PROBE_BOXES
                    and _promise(tab, no[3]) > _promise(tab, yes[3])
                )
            stack.extend((yes, no) if first_no else (no, yes))
            if proof is not None:
                self.ids += (yes_id, no_id) if first_no else (no_id, yes_id)
        return BoxOutcome(PROVED, self.boxes)

    def frontier(self) -> float:
        """The least cost (``least``) of the boxes still to search (inf: none left)."""
        return min((self.least(lo, hi) for _, lo, hi, _ in self.stack), default=math.inf)

    def _top(self, live: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray | tuple:
        """A child box's ``leaf_top``, or where no pair of its ranks meets a relation the
        step that drops it (relation_boxes.dropped_by: dropped when popped, in the order
        a certificate reads its boxes)."""
        if box_meets(self.rel, lo, hi):
            return leaf_top(self.tab, live)
        return dropped_by(self.rel, lo, hi)


def leaf_top(tab: PairTables, live: np.ndarray) -> np.ndarray:
    """Per row and tree, the largest value of the leaves left (rows x trees)."""
    return np.maximum.reduceat(np.where(live, tab.values, _LOW), tab.starts, axis=1)


def leaf_low(tab: PairTables, live: np.ndarray) -> np.ndarray:
    """Per row and tree, the smallest value of the leaves left (rows x trees)."""
    return np.minimum.reduceat(np.where(live, tab.values, -_LOW), tab.starts, axis=1)


def tree_order(tab: PairTables) -> np.ndarray:
    """The order trees are split in (``split_order`` over every leaf's spread)."""
    span = np.maximum.reduceat(tab.values, tab.starts, axis=1) - np.minimum.reduceat(
        tab.values, tab.starts, axis=1
    )
    return split_order(tab, span)


def _promise(tab: PairTables, top: np.ndarray | tuple) -> float:
    """How far a box's bounds are above the rows' thresholds, the tightest row's: the
    larger, the more room the box leaves for a pair (-inf: a box the relations drop)."""
    if isinstance(top, tuple):
        return -np.inf
    return float((top.sum(axis=1) - tab.thresholds).min())


def split_order(tab: PairTables, span: np.ndarray) -> np.ndarray:
    """Trees by the spread of their values in the pair-sum rows (else in every row),
    largest first."""
    rows = span[tab.first_sum :] if tab.sums else span
    return np.argsort(-rows.sum(axis=0), kind="stable")


def tree_to_split(spread: np.ndarray, order: np.ndarray, first_sum: int) -> int:
    """The first tree of ``order`` whose leaves left still differ in a pair-sum row,
    else in any row; -1 if none."""
    for row in (spread[first_sum:].sum(axis=0), spread.sum(axis=0)):
        differ = row[order] > 0
        if differ.any():
            return int(order[int(np.argmax(differ))])
    return -1


def split_node(nodes, live: np.ndarray) -> tuple[int, int]:
    """(column, R) of the topmost node of a pair tree with leaves left on both sides."""
    c, r, *_ = nodes[split_index(nodes, live)]
    return c, r


def split_index(nodes, live: np.ndarray) -> int:
    """The index (in ``nodes``) of the topmost node of a pair tree with leaves left on
    both sides."""
    k = 0
    while True:
        _c, _r, first, middle, end, yes, no = nodes[k]
        on_yes, on_no = live[first:middle].any(), live[middle:end].any()
        if on_yes and on_no:
            return int(k)
        k = yes if on_yes else no


def corner_pair(
    enc: Encoding,
    tab: PairTables,
    lo: np.ndarray,
    hi: np.ndarray | None = None,
    rel: RankRelations | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The box's lower corner as two inputs: each feature at its domain's value for the
    rank, NaN at a feature's NaN rank (columns outside F go to both inputs). Under a
    bound on one input (pair_scope.input_rank_ranges), that input's value is one of its
    interval's within the bound (feature_constraints.choose_constrained), not
    necessarily the interval's representative: the same leaves, within the bounds. An
    anchored question's x1 is its row, x2 the row but on F (anchored_boxes.py). With
    relations ``rel``, the ranks of the box lo, hi that meet them (a resolved box: every
    pair in it reaches the same leaves), their values chosen in order likewise."""
    if is_anchored(enc.query):
        return anchored_corner(enc, tab, lo)
    if rel is not None:
        lo = relation_ranks(rel, lo, hi)
    ens = enc.ensemble
    xs = (np.zeros(ens.n_features), np.zeros(ens.n_features))
    intervals: tuple[dict[int, int], dict[int, int]] = ({}, {})
    for j, (f, copy) in enumerate(tab.columns):
        rank = tab.domain_rank(j, int(lo[j]))
        v = rank_value(ens, f, rank)
        dom = enc.domains[f]
        for c in (0, 1) if copy is None else (copy,):
            xs[c][f] = v
            intervals[c][f] = -1 if rank >= len(dom.valid) else dom.valid[rank]
    if enc.query.bounds or enc.query.relations:
        choose_constrained(enc, xs, intervals)
    return xs
