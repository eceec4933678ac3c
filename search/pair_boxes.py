"""The pair ensemble in product form: one tree per tree of the model, over the pair space.

The pair space has one column per feature outside the varied set F (both inputs read
it) and two per feature of F (one per input). Every feature is read in *rank space*: the
index of its valid threshold interval (domain.py), or of its category code, and one
rank more, the last, for NaN when the feature may be missing. A node's test is "rank <
R"; a node that sends a set of ranks that is no such prefix to "yes" (a categorical
split, a NaN routed left, LightGBM's zero band routed to its default side) becomes a
small tree of such tests over the runs of that set (``_RankedTrees``), each leaf of
which is the node's "yes" or "no" child: a box stays a product of rank intervals.

* A tree that reads no feature of F is the same tree for both inputs: its leaves keep
  their place and carry both gap rows' weights.
* A tree that reads F becomes the product of its two copies: copy 1's tree, with each
  leaf replaced by copy 2's tree restricted to that leaf's box. Only leaf pairs the two
  inputs can reach together remain (they share every column outside F).

A bound on one input of a varied feature (``where x1.age in [30, 40]``, a pin of x1)
restricts that input's column to the ranks whose interval holds an admissible value
within it (``input_rank_ranges``, decided by feature_constraints.admissible_ranks as
the solvers' encoding decides it): a run of ranks [a, b), never NaN's. The trees are walked from
that restricted root, and the column's ranks are then renumbered from a (``offsets``),
so that every search reads its tables' space as it reads any other, the whole of
[0, sizes) being the pairs within the bounds. Bounds that hold for both inputs alike
are read as the features' domains first (compiler/bounds_as_domains.py). Relations
between the inputs are no part of the tables: a box search (a check's, a max gap's)
drops the boxes no pair of whose ranks meets them (relation_boxes.py).

Each leaf of the result carries one value per gap row: its weight in each row of x1 (a
binary gap has one, a multiclass gap one per other class), in each row of x2, and in
each *pair-sum* row: a row of x1 plus a row of x2 whose weights are opposite (the binary
gap's two rows; a multiclass gap's "c1 over c2" on x1 and "c2 over c1" on x2). Per tree,
the largest value among the leaves that meet a box bounds that tree's share on the box;
in a pair-sum row, a tree outside F adds the same leaf to both sides, so the opposite
weights cancel exactly (the Aff row of affected_gap.py, tree by tree). box_search.py
searches boxes with these bounds. Which queries the tables describe, and the encodings
they are built from, is pair_scope.py's.
"""

from __future__ import annotations

import time
from array import array
from dataclasses import dataclass
from functools import cached_property, partial

import numpy as np

from ..compiler.encode import (
    Encoding,
    ensemble_structure,
    tree_row_terms,
)
from ..compiler.ensemble import Ensemble
from .anchored_boxes import (
    anchored_root,
    is_anchored,
    ranked_arrays_of,
    ranked_tree_of,
)
from .compiled_calls import signals_raised
from .pair_scope import input_rank_ranges
from .ranked_trees import RankedTree, n_ranks
from .ranked_trees import ranked_tree as _ranked_tree

# the pair tables' largest size (lo and hi, 8 bytes per column and leaf): a product of
# deep trees over many columns could otherwise take more memory than the machine has
MAX_TABLE_BYTES = 1 << 30
CLOCK_EVERY = 4096  # pair leaves between two looks at the clock while building
# a pair tree's node: (column, R, first leaf, first leaf of the "no" side, end, yes child,
# no child); the leaves of its "yes" side are [first, middle), of its "no" side [middle,
# end); a child is a node index of the same tree, or -1 for a leaf
NODE_FIELDS = 7


def held_bytes(leaves: int, columns: int, rows: int, boxes: bool = True) -> int:
    """What tables of this many pair leaves hold at their peak (bytes), per leaf: its
    values (8 per row) twice (the build's buffer and the array), about one node (4 per
    field), and with ``boxes`` its box (lo and hi: 8 per column) twice likewise; without
    (a max gap's compiled search walks the nodes instead), the search's packed node and
    pseudo-costs (48, gap_kernel.search_bytes); 10% for the buffers' growth."""
    per_leaf = 2 * 8 * rows + 4 * NODE_FIELDS + (2 * 8 * columns if boxes else 48)
    return int(leaves * per_leaf * 1.1)


def tables_held(tab: PairTables) -> int:
    """What built tables hold (bytes): their arrays."""
    held = tab.values.nbytes + tab.node_table.nbytes
    if tab.boxes is not None or "lo" in tab.__dict__:  # the boxes, recorded or derived
        held += 8 * tab.values.shape[1] * len(tab.sizes)
    return held


@dataclass(frozen=True, eq=False)
class PairTables:
    """Every pair tree's leaves as boxes of the pair space, with their values."""

    values: np.ndarray  # float64[rows, leaves]: the rows of x1, of x2, the pair sums
    starts: np.ndarray  # int64[trees]: first leaf of each tree (leaves grouped by tree)
    # int32[nodes, NODE_FIELDS]: every tree's nodes, tree after tree, each tree's in
    # preorder; tree t's are rows node_starts[t]:node_starts[t + 1]
    node_table: np.ndarray
    node_starts: np.ndarray  # int64[trees + 1]
    thresholds: np.ndarray  # float64[rows]: what each summed value must reach
    sizes: np.ndarray  # int32[columns]: how many valid intervals each column has
    columns: tuple[tuple[int, int | None], ...]  # per column: (feature, copy or None)
    # the pair-sum rows: (first row, row of x1, row of x2) — rows first.. are sums of those
    sums: tuple[tuple[int, int], ...] = ((0, 1),)
    # (lo, hi) as the build recorded them; None: derived from the nodes when first read
    # (a max gap's compiled search never reads them)
    boxes: tuple[np.ndarray, np.ndarray] | None = None
    # int32[columns]: the feature's rank each column's rank 0 stands for (a bound on one
    # input of a varied feature: input_rank_ranges); None: 0 in every column
    offsets: np.ndarray | None = None
    # bool[trees], with offsets: whether each tree reads a varied feature in the model;
    # one may have no node on a varied column in the tables (both inputs' columns held to
    # one rank each), yet give the two inputs other leaves (gap_kernel.reads_varied)
    reads_varied: np.ndarray | None = None

    def domain_rank(self, column: int, rank: int) -> int:
        """A column's rank as its feature's rank (an index of its domain's valid
        intervals or codes, or its NaN rank)."""
        return rank if self.offsets is None else rank + int(self.offsets[column])

    @property
    def first_sum(self) -> int:
        """The index of the first pair-sum row (the number of rows when there is none)."""
        return self.values.shape[0] - len(self.sums)

    @cached_property
    def nodes(self) -> tuple[np.ndarray, ...]:
        """Per tree, its rows of ``node_table`` (views)."""
        s = self.node_starts
        return tuple(self.node_table[s[t] : s[t + 1]] for t in range(len(self.starts)))

    @cached_property
    def lo(self) -> np.ndarray:
        """int32[columns, leaves]: a leaf's box is lo <= rank < hi per column."""
        return self._boxes()[0]

    @cached_property
    def hi(self) -> np.ndarray:
        return self._boxes()[1]

    def _boxes(self) -> tuple[np.ndarray, np.ndarray]:
        if self.boxes is not None:
            return self.boxes
        return boxes_of_nodes(self.node_table, self.sizes, self.values.shape[1])


def boxes_of_nodes(node_table: np.ndarray, sizes: np.ndarray, leaves: int):
    """(lo, hi) of every leaf from the nodes above it: a node's "yes" side has rank < R
    on its column, its "no" side rank >= R. Nodes are in preorder, and a node below
    another on the same column splits inside its side, so the last node written is the
    tightest."""
    lo = np.zeros((len(sizes), leaves), dtype=np.int32)
    hi = np.repeat(sizes.astype(np.int32)[:, None], leaves, axis=1)
    for c, r, first, middle, end, _yes, _no in node_table.tolist():
        hi[c, first:middle] = r
        lo[c, middle:end] = r
    return lo, hi


class PairTablesTooLarge(Exception):
    """The pair tables would exceed ``MAX_TABLE_BYTES`` or the memory a limit leaves; the
    box search is skipped."""


class PairTablesPastDeadline(PairTablesTooLarge):
    """Building the pair tables reached the deadline it was given, after ``leaves`` pair
    leaves of the first ``trees`` trees (their tables whole): a max gap ends "unknown" (no
    time is left to bisect), a check's box stage is skipped."""

    def __init__(self, leaves: int, trees: int = 0):
        self.leaves, self.trees = leaves, trees
        super().__init__(f"building the pair tables reached the time limit ({leaves:,} leaves)")


def pair_tables(
    enc: Encoding,
    max_bytes: int | None = None,
    max_held: int | None = None,
    deadline: float | None = None,
    boxes: bool = True,
) -> PairTables:
    """The pair trees of an encoded query (``applies(enc)`` must hold). Raises
    PairTablesTooLarge as soon as the leaves' boxes pass ``max_bytes`` (default
    ``MAX_TABLE_BYTES``), or what building them holds passes ``max_held`` (held_bytes;
    what a memory limit leaves, None: no such bound), or building them passes
    ``deadline`` (an absolute time; None: none). ``boxes``: record each leaf's box while
    building (else ``lo`` and ``hi`` are derived from the nodes if ever read)."""
    ens = enc.ensemble
    st = ensemble_structure(ens)
    columns: list[tuple[int, int | None]] = []
    col: tuple[dict[int, int], dict[int, int]] = ({}, {})
    for f in range(ens.n_features):
        copies = (0, 1) if f in enc.varying else (None,)
        for c in copies:
            for k in (0, 1) if c is None else (c,):
                col[k][f] = len(columns)
            columns.append((f, c))
    sizes = np.array([n_ranks(ens, f) for f, _ in columns], dtype=np.int32)
    root = _root(enc, columns, sizes)
    rows = _Rows(enc)
    builder = _Builder(
        sizes, *leaf_bound(len(columns), rows.n, max_bytes, max_held, boxes), boxes, deadline
    )
    builder.root = root
    # without boxes to record (a max gap's compiled search), the walks run compiled
    walk = None if boxes else compiled_walk()
    cols = _column_array(col, ens.n_features)
    products = np.zeros(len(ens.trees), dtype=np.bool_)
    anchored = is_anchored(enc.query)
    kept = walk is not None and anchored  # its model's rows: trees kept
    for ti, t in enumerate(ens.trees):
        builder.start_tree()  # looks at the clock
        if kept:
            tree, reads = ranked_arrays_of(ens, ti)
            products[ti] = not reads.isdisjoint(enc.varying)
            builder.compiled(walk, tree, cols, products[ti], partial(rows.values, ti), True)
            continue
        # tree by tree: within the clock's sight; an audit's rows share their model's
        nodes = ranked_tree_of(ens, ti) if anchored else _ranked_tree(ens, st, t)
        product = any(node[0] in enc.varying for node in nodes.values() if node[0] >= 0)
        products[ti] = product
        if walk is not None:
            builder.compiled(walk, nodes, cols, product, partial(rows.values, ti))
        elif product:
            builder.product(nodes, col, rows.of_tree(ti))
        else:
            builder.shared(nodes, col[0], rows.of_tree(ti))
    values, starts, node_table, node_starts, recorded = builder.arrays(rows.n)
    offsets = None
    if root is not None:  # the restricted columns' ranks from their first
        offsets, sizes = root[0], root[1] - root[0]
        node_table[:, 1] -= offsets[node_table[:, 0]]
        if recorded is not None:
            recorded = (recorded[0] - offsets[:, None], recorded[1] - offsets[:, None])
    return PairTables(
        values=values,
        starts=starts,
        node_table=node_table,
        node_starts=node_starts,
        thresholds=rows.thresholds,
        sizes=sizes,
        columns=tuple(columns),
        sums=rows.sums,
        boxes=recorded,
        offsets=offsets,
        reads_varied=None if root is None else products,
    )


def _root(enc: Encoding, columns, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The pair space's root box, lo and hi per column, where a bound on one input of a
    varied feature restricts its column (``input_rank_ranges``), an anchored question's
    row every column but x2's of F (anchored_boxes.py); None where none does."""
    if is_anchored(enc.query):
        return anchored_root(enc, columns, sizes)
    ranges = input_rank_ranges(enc) if enc.query.bounds else None
    if not ranges:
        return None
    lo, hi = np.zeros(len(columns), dtype=np.int32), sizes.copy()
    for j, (f, copy) in enumerate(columns):
        if (f, copy) in ranges:
            lo[j], hi[j] = ranges[(f, copy)]
    return lo, hi


def leaf_bound(
    columns: int, rows: int, max_bytes: int | None, max_held: int | None, boxes: bool = True
) -> tuple[int, str]:
    """How many pair leaves tables over ``columns`` columns and ``rows`` rows may have,
    and the message past it: their boxes within ``max_bytes`` (default
    ``MAX_TABLE_BYTES``), what building them holds within ``max_held`` (None: no such
    bound), their leaf indices within int32."""
    limit = MAX_TABLE_BYTES if max_bytes is None else max_bytes
    max_leaves = min(limit // max(1, 8 * columns), 2**31 - 1)
    too_large = f"the pair tables need more than {limit / 2**20:,.0f} MB"
    per_leaf = held_bytes(1, columns, rows, boxes)
    if max_held is not None and max_held // per_leaf < max_leaves:
        max_leaves = max_held // per_leaf
        too_large = (
            f"the pair tables would hold more than the {max_held / 2**20:,.0f} MB the memory "
            "limit leaves above the model's estimate"
        )
    return max_leaves, too_large


class _Rows:
    """The gap rows of an encoded query as per-leaf weight vectors: the rows of x1, of
    x2, then the pair sums (a row of x1 plus a row of x2 with opposite weights)."""

    def __init__(self, enc: Encoding):
        ens = enc.ensemble
        cond = enc.condition
        self.ens = ens
        # per row: (copy, its coefficients); a row over both inputs (copy None) has two
        # sets, one per input. Each tree's leaf weights are worked out as the build
        # reaches it (``_weights``), within its looks at the clock: all at once, before
        # the first tree, they took 0.3 CPU s (2.4 s on a loaded machine) on a 1,000-tree
        # model, past a 2 s time limit before the first look
        self.terms: list[tuple[int | None, tuple[tuple[float, ...], ...]]] = []
        thresholds: list[float] = []
        for c in (0, 1):
            for coefs, rhs in cond.rows[c]:
                self.terms.append((c, (tuple(coefs),)))
                const = _row_constant(ens, coefs)
                thresholds.append(rhs - const - enc.relax * sum(abs(k) for k in coefs))
        for a, b, rhs in cond.pair_rows:
            ka, kb = _row_constant(ens, a), _row_constant(ens, b)
            self.terms.append((None, (tuple(a), tuple(b))))
            relax = enc.relax * (sum(abs(k) for k in a) + sum(abs(k) for k in b))
            thresholds.append(rhs - ka - kb - relax)
        n1 = len(cond.rows[0])
        self.sums = tuple((i, n1 + j) for i, j in _opposite_rows(cond))
        for i, j in self.sums:
            thresholds.append(thresholds[i] + thresholds[j])
        self.thresholds = np.array(thresholds)
        self.n = len(thresholds)

    def _weights(self, ti: int) -> list[tuple[dict, ...]]:
        """Per row, tree ti's leaf weights (gap_row_terms' for the tree; {}: none)."""
        return [
            tuple(tree_row_terms(self.ens, ti, coefs) or {} for coefs in sets)
            for _, sets in self.terms
        ]

    def values(self, ti: int, n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
        """float64[leaves, rows]: of_tree's values for the leaf pairs (n1[i], n2[i]) of
        tree ti, at once (the same sums, so the same floats)."""
        out = []
        for (copy, _), weights in zip(self.terms, self._weights(ti), strict=True):
            w = [_dense(p, n1, n2) for p in weights]
            if copy is None:
                out.append(w[0][n1] + w[1][n2])
            else:
                out.append(w[0][n1 if copy == 0 else n2])
        out += [out[i] + out[j] for i, j in self.sums]
        return np.stack(out, axis=1)

    def of_tree(self, ti: int):
        """(leaf of x1, leaf of x2) -> the tree's weight vector over every row."""
        w = self._weights(ti)
        copies = [c for c, _ in self.terms]

        def value(r: int, n1: int, n2: int) -> float:
            if copies[r] is None:
                return w[r][0].get(n1, 0.0) + w[r][1].get(n2, 0.0)
            return w[r][0].get(n1 if copies[r] == 0 else n2, 0.0)

        def at(n1: int, n2: int) -> tuple[float, ...]:
            v = [value(r, n1, n2) for r in range(len(w))]
            return tuple(v + [v[i] + v[j] for i, j in self.sums])

        return at


def _row_constant(ens: Ensemble, coefs) -> float:
    """What the intercepts add to a gap row (gap_row_terms' constant)."""
    return sum(c * ens.intercept[k] for k, c in enumerate(coefs))


def _dense(weights: dict, n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """A tree's leaf weights (leaf node -> weight) as an array over its nodes, 0 where
    none is given, long enough for every index of n1 and n2."""
    size = max(max(weights, default=-1), int(n1.max(initial=-1)), int(n2.max(initial=-1))) + 1
    out = np.zeros(size)
    if weights:
        out[np.fromiter(weights.keys(), dtype=np.int64)] = list(weights.values())
    return out


def _column_array(col: tuple[dict[int, int], dict[int, int]], n_features: int) -> np.ndarray:
    """int64[features, 2]: each feature's column for x1 and for x2 (-1: none)."""
    out = np.full((n_features, 2), -1, dtype=np.int64)
    for k in (0, 1):
        for f, c in col[k].items():
            out[f, k] = c
    return out


def compiled_walk():
    """pair_walk_jit's walk_tree, or None where numba does not install (the Python walk
    then builds the tables)."""
    try:
        from .pair_walk_jit import walk_tree  # noqa: PLC0415 - numba only when building
    except ImportError:
        return None
    return walk_tree


def _opposite_rows(cond) -> list[tuple[int, int]]:
    """Pairs (row of x1, row of x2) whose coefficients are opposite: in their sum the
    trees that read no varied feature cancel."""
    return [
        (i, j)
        for i, (a, _) in enumerate(cond.rows[0])
        for j, (b, _) in enumerate(cond.rows[1])
        if any(a) and all(x == -y for x, y in zip(a, b))
    ]


class _Builder:
    """Collects pair-tree leaves (their values, their boxes if asked) and nodes, tree
    after tree, into flat buffers (array.array: 8 bytes a value, 4 a rank or a node
    field, where Python objects per leaf took about 1 KB)."""

    def __init__(
        self,
        sizes: np.ndarray,
        max_leaves: int,
        too_large: str,
        boxes: bool = True,
        deadline: float | None = None,
    ):
        self.sizes = [int(s) for s in sizes]
        # the walks' root box (lo, hi); None: the whole pair space
        self.root: tuple[np.ndarray, np.ndarray] | None = None
        self.max_leaves = max_leaves
        self.too_large = too_large  # the message past max_leaves
        self.boxes = boxes  # record each leaf's lo and hi
        self.deadline = deadline
        self.lo = array("i")
        self.hi = array("i")
        self.vals = array("d")
        self.n_leaves = 0
        self.nodes = array("i")  # NODE_FIELDS per node
        self.n_nodes = 0
        self.starts: list[int] = []
        self.node_starts: list[int] = []

    def start_tree(self) -> None:
        if self.deadline is not None and time.time() >= self.deadline:
            raise PairTablesPastDeadline(self.n_leaves, len(self.starts))
        self.starts.append(self.n_leaves)
        self.node_starts.append(self.n_nodes)

    def _root_box(self) -> tuple[list[int], list[int]]:
        if self.root is None:
            return [0] * len(self.sizes), list(self.sizes)
        return self.root[0].tolist(), self.root[1].tolist()

    def shared(self, nodes: RankedTree, col: dict[int, int], at) -> None:
        lo, hi = self._root_box()
        self._walk(nodes, 0, col, lo, hi, lambda n, lo, hi: self._leaf(lo, hi, at(n, n)))

    def product(self, nodes: RankedTree, col, at) -> None:
        lo, hi = self._root_box()

        def second(n1: int, lo: list[int], hi: list[int]) -> None:
            self._walk(nodes, 0, col[1], lo, hi, lambda n2, lo, hi: self._leaf(lo, hi, at(n1, n2)))

        self._walk(nodes, 0, col[0], lo, hi, second)

    def compiled(self, walk, nodes, cols: np.ndarray, product: bool, values, pinned=False):
        """``shared`` or ``product`` by pair_walk_jit.walk_tree: the same nodes and leaves
        in the same order, the leaves' values from ``values(n1, n2)`` (x1's and x2's
        leaves) at once; buffers sized to the tree's leaves (squared for a product, but
        where x1 is ``pinned`` to one leaf), grown when full. ``nodes``: a RankedTree, or
        its ranked_arrays."""
        from .pair_walk_jit import FRAME, ranked_arrays  # noqa: PLC0415 - numba only here

        tree = nodes if isinstance(nodes, np.ndarray) else ranked_arrays(nodes)
        n_tree_leaves = int((tree[0] < 0).sum())
        room = self.max_leaves - self.n_leaves
        square = product and not pinned
        cap = max(1, min(n_tree_leaves**2 if square else n_tree_leaves, room + 1))
        stack = np.zeros((2 * tree.shape[1] + 4, FRAME), dtype=np.int64)
        while True:
            lo, hi = (np.array(a, np.int64) for a in self._root_box())
            node_buf = np.zeros((cap, NODE_FIELDS), dtype=np.int32)
            pairs = np.zeros((cap, 2), dtype=np.int64)
            # the walk numbers nodes and leaves within the tree; made global below
            with signals_raised():
                got = walk(tree, cols, product, lo, hi, 0, node_buf, 0, pairs, 0, stack)
            if got[0] >= 0:
                break
            if cap > room:
                raise PairTablesTooLarge(self.too_large)
            cap *= 2
        n_nodes, n_leaves = got
        if self.n_leaves + n_leaves > self.max_leaves:
            raise PairTablesTooLarge(self.too_large)
        node_buf = node_buf[:n_nodes]
        node_buf[:, 2:5] += self.n_leaves  # first, middle, end: global leaf indices
        self.nodes.frombytes(node_buf.tobytes())
        self.n_nodes += n_nodes
        vals = values(pairs[:n_leaves, 0], pairs[:n_leaves, 1])
        self.vals.frombytes(np.ascontiguousarray(vals, dtype=np.float64).tobytes())
        self.n_leaves += n_leaves

    def _leaf(self, lo: list[int], hi: list[int], values: tuple[float, ...]) -> None:
        n = self.n_leaves
        if n >= self.max_leaves:
            raise PairTablesTooLarge(self.too_large)
        # a look at the clock: deep trees, a category set or a NaN rank can make
        # millions of leaves (seconds to minutes of building)
        if self.deadline is not None and n % CLOCK_EVERY == 0 and time.time() >= self.deadline:
            raise PairTablesPastDeadline(n, len(self.starts) - 1)
        if self.boxes:
            self.lo.extend(lo)
            self.hi.extend(hi)
        self.vals.extend(values)
        self.n_leaves += 1

    def _walk(self, nodes: RankedTree, n: int, col, lo: list[int], hi: list[int], at_leaf) -> None:
        """Copy ``col``'s tree below node n within box [lo, hi): a branch the box
        excludes is skipped (its node too), ``at_leaf(leaf, lo, hi)`` at each leaf."""
        f, r, yes, no = nodes[n]
        if f < 0:
            at_leaf(r, lo, hi)
            return
        c = col[f]
        a, b = lo[c], hi[c]
        if r >= b:  # the whole box takes "yes"
            self._walk(nodes, yes, col, lo, hi, at_leaf)
            return
        if r <= a:
            self._walk(nodes, no, col, lo, hi, at_leaf)
            return
        k = self.n_nodes
        self.n_nodes += 1
        self.nodes.extend(_PLACEHOLDER)
        first = self.n_leaves
        hi[c] = r
        self._walk(nodes, yes, col, lo, hi, at_leaf)
        hi[c] = b
        middle, no_node = self.n_leaves, self.n_nodes
        lo[c] = r
        self._walk(nodes, no, col, lo, hi, at_leaf)
        lo[c] = a
        # a side's first node appended is the root of that side; children are numbered
        # within the tree
        base = self.node_starts[-1]
        yes_node = k + 1 - base if no_node > k + 1 else -1
        no_node = no_node - base if self.n_nodes > no_node else -1
        at = NODE_FIELDS * k
        self.nodes[at : at + NODE_FIELDS] = array(
            "i", (c, r, first, middle, self.n_leaves, yes_node, no_node)
        )

    def arrays(self, n_rows: int):
        """(values, starts, node_table, node_starts, (lo, hi) or None), each buffer let
        go once turned into its array."""
        values = _rows_first(self.vals, n_rows)
        self.vals = array("d")
        recorded = None
        if self.boxes:
            lo = _rows_first(self.lo, len(self.sizes))
            self.lo = array("i")
            hi = _rows_first(self.hi, len(self.sizes))
            self.hi = array("i")
            recorded = (lo, hi)
        node_table = np.frombuffer(self.nodes, dtype=np.int32).reshape(-1, NODE_FIELDS)
        node_starts = np.array(self.node_starts + [self.n_nodes], dtype=np.int64)
        return values, np.array(self.starts, dtype=np.int64), node_table, node_starts, recorded


_PLACEHOLDER = array("i", [0] * NODE_FIELDS)


def _rows_first(buf: array, width: int) -> np.ndarray:
    """A buffer of records of ``width`` items as a contiguous [width, records] array."""
    flat = np.frombuffer(buf, dtype=np.int32 if buf.typecode == "i" else np.float64)
    return np.ascontiguousarray(flat.reshape(-1, width).T)
