"""The exact bounds of a rebuilt proof's boxes, walked down its tree (compiled_proof.py).

A certificate states each pruned box's bound: per row, the sum over the trees of the
row's largest value among the leaves meeting the box. Walking every tree for every box
(gap_kernel_tops_jit.box_tops) costs two to five times the search that recorded the
boxes on 1,000-tree tables. Down the proof's tree a box differs from its parent in one
column, so only the trees whose leaves in the parent straddle that column are walked
again (gap_kernel_tops_jit.tiling_tops), as the kernel's own splits do: the same
leaves meet each box, so the bounds are the same numbers, summed in the same order. The
trees that read no varied feature (``lazy_trees``) add exactly 0 to every pair-sum row:
they are walked only at a leaf whose pair sums do not prune it, for its other rows. On
adult xgb_t1000_d8's sex, 4.6x less CPU than a walk of every tree for every box
(bench/reports/scale-tier.md, "A proof's bounds walked down its tree").
"""

from __future__ import annotations

import time

import numpy as np

from .compiled_calls import signals_raised
from .gap_kernel import FlatTables
from .proof_tree import ProofTree

# steps walked between two looks at the clock
CHUNK = 8192
# a proof's steps in preorder, as tiling_tops reads them (gap_kernel_tops_jit.py)
SPLIT, LEAF, REPLAYED = 0, 1, 2
# the events that settle a box without a bound (REPLAYED): a replay, a relation's drop
SETTLED = ("replay", "relation")
# tiling_tops's outcome: steps left, every step done, a leaf no row prunes, the pool full
RUNNING, DONE, NOT_PRUNED, NEED_ROOM = 0, 1, 2, 3


class ProofBounds:
    """The walk of ``tree``'s boxes over the flattened tables ``ft``, from its root down:
    ``run(deadline)`` names, for each box ``("box", i)`` (with ``settle``, for each box
    of the tree), the first row under its threshold and its bound."""

    def __init__(self, ft: FlatTables, tree: ProofTree, settle: bool) -> None:
        from .gap_kernel_tops_jit import preorder_ends  # noqa: PLC0415 - numba when used

        self.settle, self.tree = settle, tree
        if isinstance(tree, TiledTree):  # its arrays are its steps: node i is step i
            self.nodes, kinds, cols, ranks = None, tree.kinds, tree.cols, tree.ranks
        else:
            self.nodes, kinds, cols, ranks = _steps(tree)
        end, depth = preorder_ends(kinds)
        self.steps = (kinds, cols, ranks, end)
        self.ft = ft_arrays(ft)
        self.rows_of = (ft.thresholds, ft.first_sum, lazy_trees(ft))
        self.state = _root_state(ft, depth)
        self.pool = _pool(64 * (depth + 1), ft.values.shape[1], len(ft.sizes))
        self.row = np.full(len(kinds), -1, dtype=np.int64)
        self.bound = np.zeros(len(kinds))
        self.at, self.status = 0, RUNNING

    def __len__(self) -> int:
        return len(self.steps[0])

    def walk(self, steps: int) -> None:
        """At most ``steps`` more steps, the pool grown as a path needs."""
        from .gap_kernel_tops_jit import tiling_tops  # noqa: PLC0415 - numba when used

        stop = min(len(self), self.at + steps)
        while self.status == RUNNING and self.at < stop:
            with signals_raised():
                self.at, self.status = tiling_tops(
                    self.ft, self.steps, self.rows_of, self.settle, self.at,
                    stop - self.at, self.state, self.pool, self.row, self.bound,
                )  # fmt: skip
            if self.status == NEED_ROOM:
                self.pool = _grown(self.pool, self.state[6][1])
                self.status = RUNNING

    @property
    def finished(self) -> bool:
        return self.status != RUNNING

    def run(self, deadline: float) -> bool | None:
        """Walk to the end by ``deadline``: True when every box is pruned (the tree's
        events set), False when a leaf is not, None past the deadline."""
        while not self.finished:
            if time.time() >= deadline:
                return None
            self.walk(CHUNK)
        if self.status != DONE:
            return False
        if isinstance(self.tree, TiledTree):
            self.tree.settle(self.row, self.bound)
            return True
        events = self.tree.events
        for i in np.flatnonzero(self.row >= 0):
            events[self.nodes[i]] = ("prune", int(self.row[i]), float(self.bound[i]))
        return True


class TiledTree:
    """A proof rebuilt from a tiling (compiled_proof.proof_from_boxes) held as the
    tiling's arrays, in preorder: per step its kind (SPLIT, LEAF, REPLAYED), a split's
    column and rank, a leaf's box (its place in the record), the events of the replayed
    boxes by box; once ``ProofBounds`` has walked it (``settle``), per step the row that
    prunes its box (-1: none) and the bound. ``preorder`` gives ProofTree's steps, a
    step at a time: about 40 bytes a step, where ProofTree's tuples and lists hold about
    140 (120 MB for adult xgb_t1000_d8 sex's 430,682 boxes)."""

    dropped = False  # ProofTree's: a tiling is never given up midway

    def __init__(self, kinds, cols, ranks, boxes, replays: dict[int, tuple]) -> None:
        self.kinds, self.cols, self.ranks, self.boxes = kinds.copy(), cols, ranks, boxes
        self.replays = replays
        leaf = np.flatnonzero(kinds == LEAF)
        replayed = [i for i in leaf.tolist() if _replayed(replays.get(int(boxes[i])))]
        self.kinds[replayed] = REPLAYED
        self.row: np.ndarray | None = None
        self.bound: np.ndarray | None = None

    def size(self) -> int:
        """Its boxes, split or not (ProofTree's ``size``)."""
        return len(self.kinds)

    def settle(self, row: np.ndarray, bound: np.ndarray) -> None:
        self.row, self.bound = row, bound

    def preorder(self) -> TiledSteps | None:
        """Its steps as ProofTree's ``preorder`` gives them (None before its bounds are
        walked), converted as they are read."""
        return None if self.row is None else TiledSteps(self)


def _replayed(event: tuple | None) -> bool:
    """Whether a box's event settles it without a bound: a replay, or a relation no pair
    of it meets (relation_boxes.py)."""
    return event is not None and event[0] in SETTLED


class TiledSteps:
    """A TiledTree's steps in preorder, a pruned box's subtree left out; read as often
    as asked, ``CHUNK`` steps converted at a time."""

    def __init__(self, tree: TiledTree) -> None:
        self.tree = tree

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __iter__(self):
        t, skip = self.tree, 0  # skip: subtrees of a pruned box still to leave out
        for start in range(0, len(t.kinds), CHUNK):
            part = slice(start, start + CHUNK)
            arrays = (t.kinds, t.cols, t.ranks, t.row, t.bound, t.boxes)
            for kind, c, r, row, bound, box in zip(*(a[part].tolist() for a in arrays)):
                if skip:
                    skip += 1 if kind == SPLIT else -1
                elif row >= 0:
                    yield ("prune", row, bound)
                    skip = 2 if kind == SPLIT else 0
                elif kind == SPLIT:
                    yield ("split", c, r)
                else:
                    yield t.replays.get(box) or ("box", box)


def lazy_trees(ft: FlatTables) -> np.ndarray:
    """bool[trees]: the trees whose every leaf adds exactly 0 to every pair-sum row (those
    that read no varied feature): a box's pair sums are exact without walking them."""
    rows = ft.values.shape[1]
    trees = len(ft.node_start) - 1
    if ft.first_sum >= rows:
        return np.zeros(trees, dtype=np.bool_)
    nonzero = (ft.values[:, ft.first_sum :] != 0).any(axis=1)
    leaves_per_tree = np.diff(np.r_[ft.leaf_start, len(ft.values)])
    tree_of = np.repeat(np.arange(trees), leaves_per_tree)
    lazy = np.ones(trees, dtype=np.bool_)
    lazy[tree_of[nonzero]] = False
    return lazy


def walked_share(ft: FlatTables) -> float:
    """The share of the tables' nodes in trees that are not lazy: what a walk down a
    proof's tree walks of them, at most, per box."""
    nodes = np.diff(ft.node_start)
    total = int(nodes.sum())
    return 1.0 if total == 0 else float(nodes[~lazy_trees(ft)].sum()) / total


def _steps(tree: ProofTree) -> tuple:
    """The tree's boxes in preorder: node numbers, kinds, split columns and ranks."""
    nodes, kinds, cols, ranks = [], [], [], []
    stack = [ProofTree.ROOT]
    while stack:
        n = stack.pop()
        event = tree.events[n]
        nodes.append(n)
        if event[0] == "split":
            kinds.append(SPLIT)
            cols.append(event[1])
            ranks.append(event[2])
            yes = tree.yes_of[n]
            stack += [yes + 1, yes]
        else:
            kinds.append(REPLAYED if event[0] in SETTLED else LEAF)
            cols.append(0)
            ranks.append(0)
    return (
        nodes,
        np.asarray(kinds, dtype=np.int8),
        np.asarray(cols, dtype=np.int64),
        np.asarray(ranks, dtype=np.int64),
    )


def _root_state(ft: FlatTables, depth: int) -> tuple:
    """The walk's arrays at the root: every tree walked over the whole space."""
    trees, rows, cols = len(ft.node_start) - 1, ft.values.shape[1], len(ft.sizes)
    max_nodes = int(np.diff(ft.node_start).max(initial=0))
    lo, hi = np.zeros(cols, dtype=np.int32), ft.sizes.astype(np.int32)
    top, low = np.empty((trees, rows)), np.empty((trees, rows))
    opn = np.zeros((trees, cols), dtype=np.bool_)
    stack = np.empty(max_nodes + 1, dtype=np.int64)
    from .gap_kernel_tops_jit import walk_all_trees  # noqa: PLC0415 - numba when used

    walk_all_trees(ft_arrays(ft), lo, hi, top, low, stack, opn)
    entry = ft.node_start[:-1].astype(np.int64)
    frames = np.zeros((depth + 1, 7), dtype=np.int64)
    fp = np.zeros(2, dtype=np.int64)
    scratch = (
        np.empty((trees, rows)),
        np.empty((trees, rows)),
        np.empty((trees, rows)),
        np.empty((trees, rows)),
        np.zeros((trees, cols), dtype=np.bool_),
        np.zeros((trees, cols), dtype=np.bool_),
        stack,
        np.empty(max_nodes + 1, dtype=np.int8),
    )
    return lo, hi, top, opn, entry, frames, fp, scratch


def ft_arrays(ft: FlatTables) -> tuple:
    return (ft.values, ft.node_start, ft.leaf_start, ft.nodes)


def _pool(cap: int, rows: int, cols: int) -> tuple:
    """Room for ``cap`` trees' arrays saved down a path (tiling_tops's ``pool``)."""
    return (
        np.empty(cap, dtype=np.int64),
        np.empty((cap, rows)),
        np.empty((cap, cols), dtype=np.bool_),
        np.empty(cap, dtype=np.int64),
        np.empty((cap, rows)),
        np.empty((cap, cols), dtype=np.bool_),
    )


def _grown(pool: tuple, used: int) -> tuple:
    """``pool`` with twice the room, its first ``used`` entries kept."""
    cap = len(pool[0])
    grown = _pool(2 * cap, pool[1].shape[1], pool[2].shape[1])
    for old, new in zip(pool, grown, strict=True):
        new[:used] = old[:used]
    return grown
