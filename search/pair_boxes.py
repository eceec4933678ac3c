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

Each leaf of the result carries one value per gap row: its weight in each row of x1 (a
binary gap has one, a multiclass gap one per other class), in each row of x2, and in
each *pair-sum* row: a row of x1 plus a row of x2 whose weights are opposite (the binary
gap's two rows; a multiclass gap's "c1 over c2" on x1 and "c2 over c1" on x2). Per tree,
the largest value among the leaves that meet a box bounds that tree's share on the box;
in a pair-sum row, a tree outside F adds the same leaf to both sides, so the opposite
weights cancel exactly (the Aff row of affected_gap.py, tree by tree). box_search.py
searches boxes with these bounds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..compiler.encode import (
    Encoding,
    ensemble_structure,
    gap_row_terms,
    node_yes,
    resolve_features,
    split_rank,
)
from ..compiler.ensemble import MISSING_ZERO, ZERO_BAND, Ensemble
from ..compiler.kinds import prepared, resolve_condition
from ..compiler.query import ANY, Query
from ..compiler.rounding import gap_relaxation

# the pair tables' largest size (lo and hi, 8 bytes per column and leaf): a product of
# deep trees over many columns could otherwise take more memory than the machine has
MAX_TABLE_BYTES = 1 << 30
CLOCK_EVERY = 4096  # pair leaves between two looks at the clock while building


def held_bytes(leaves: int, columns: int, rows: int) -> int:
    """What building tables of this many pair leaves holds at its peak (bytes): each
    leaf's box as two small arrays, its values, its node (Python objects), then the
    tables' arrays. Measured: 963 bytes a leaf over 15 columns and 3 rows (fnlwgt of a
    1,000-tree, 255-leaf LightGBM model: 7.2 million pair leaves, 7.1 GB at the peak),
    where lo and hi alone (``MAX_TABLE_BYTES``' count) are 120."""
    return leaves * (600 + 16 * columns + 40 * rows)


def tables_held(tab: PairTables) -> int:
    """held_bytes of built tables."""
    rows, leaves = tab.values.shape
    return held_bytes(leaves, len(tab.sizes), rows)


# one pair-tree node: (column, R, first leaf, first leaf of the "no" side, end, yes
# child, no child); the leaves of its "yes" side are [first, middle), of its "no" side
# [middle, end); a child is a node index of the same tree, or -1 for a leaf
PairNode = tuple[int, int, int, int, int, int, int]


@dataclass(frozen=True, eq=False)
class PairTables:
    """Every pair tree's leaves as boxes of the pair space, with their values."""

    lo: np.ndarray  # int32[columns, leaves]: a leaf's box is lo <= rank < hi per column
    hi: np.ndarray
    values: np.ndarray  # float64[rows, leaves]: the rows of x1, of x2, the pair sums
    starts: np.ndarray  # int64[trees]: first leaf of each tree (leaves grouped by tree)
    nodes: tuple[tuple[PairNode, ...], ...]  # per tree, in preorder
    thresholds: np.ndarray  # float64[rows]: what each summed value must reach
    sizes: np.ndarray  # int32[columns]: how many valid intervals each column has
    columns: tuple[tuple[int, int | None], ...]  # per column: (feature, copy or None)
    # the pair-sum rows: (first row, row of x1, row of x2) — rows first.. are sums of those
    sums: tuple[tuple[int, int], ...] = ((0, 1),)

    @property
    def first_sum(self) -> int:
        """The index of the first pair-sum row (the number of rows when there is none)."""
        return self.values.shape[0] - len(self.sums)


class PairTablesTooLarge(Exception):
    """The pair tables would exceed ``MAX_TABLE_BYTES`` or the memory a limit leaves; the
    box search is skipped."""


def applies(enc: Encoding) -> bool:
    """Whether the product form describes the query exactly: gap rows on both inputs and
    no class alternatives ("any": one query per class pair), no change through a
    nonlinear link (its rows are an outer approximation), no bounds or relations on the
    inputs and no data-aware mode. Every feature kind takes part: numeric, categorical
    (category codes, one-hot groups), and may be missing (NaN a rank of its own)."""
    q: Query = enc.query
    cond = enc.condition
    if q.bounds or q.relations or q.plan.data_aware != "none" or any(cond.alternatives or ()):
        return False
    if len(cond.pair_rows) > 1:  # a choice between rows over both inputs
        return False
    if cond.link_change is not None:  # an outer approximation, not the condition
        return False
    # a side without rows and no pair row: nothing ties the two inputs' trees together
    return bool(cond.pair_rows) or all(len(rows) > 0 for rows in cond.rows)


def plain_numeric(enc: Encoding) -> bool:
    """Whether every feature the model reads is numeric and never missing, and no node
    has a categorical split or LightGBM's zero band: the tables' ranks are then
    threshold intervals only (what a certificate's "split" states)."""
    ens = enc.ensemble
    st = ensemble_structure(ens)
    if st.zero_mode:
        return False
    for f in st.used:
        if st.domains[f].codes is not None or ens.features[f].may_be_missing:
            return False
    return not any(
        t.categories is not None and any(c is not None for c in t.categories) for t in ens.trees
    )


def pair_encoding(ens: Ensemble, q: Query) -> Encoding:
    """What the pair tables read of an encoded query, without building its Problem."""
    q = prepared(ens, q)
    st = ensemble_structure(ens)
    return Encoding(
        ensemble=ens,
        query=q,
        condition=resolve_condition(ens, q),
        varying=resolve_features(ens, q.vary),
        domains=st.domains,
        pred=({}, {}),
        leaves=((), ()),
        relax=gap_relaxation(ens),
    )


def class_pair_encodings(enc: Encoding) -> list[Encoding] | None:
    """The query as one encoding per pair of classes it allows (c1 or c2 "any": every
    class, the two different), each of which the pair tables describe; None when some
    does not. A pair meets the query if and only if it meets one of them."""
    if applies(enc):
        return [enc]
    ens, q = enc.ensemble, enc.query
    if ens.n_outputs < 2 or not q.classes or ANY not in q.classes:
        return None
    every = range(ens.n_classes)
    sides = [list(every) if c == ANY else [int(c)] for c in q.classes]
    pairs = [(a, b) for a in sides[0] for b in sides[1] if a != b]
    out = [pair_encoding(ens, q.with_(classes=p)) for p in pairs]
    return out if all(applies(e) for e in out) else None


def pair_tables(
    enc: Encoding,
    max_bytes: int | None = None,
    max_held: int | None = None,
    deadline: float | None = None,
) -> PairTables:
    """The pair trees of an encoded query (``applies(enc)`` must hold). Raises
    PairTablesTooLarge as soon as the leaves' boxes pass ``max_bytes`` (default
    ``MAX_TABLE_BYTES``), or what building them holds passes ``max_held`` (held_bytes;
    what a memory limit leaves, None: no such bound), or building them passes
    ``deadline`` (an absolute time; None: none)."""
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
    ranked = [_ranked_tree(ens, st, t) for t in ens.trees]
    rows = _Rows(enc)
    limit = MAX_TABLE_BYTES if max_bytes is None else max_bytes
    max_leaves = limit // max(1, 8 * len(columns))
    too_large = f"the pair tables need more than {limit / 2**20:,.0f} MB"
    per_leaf = held_bytes(1, len(columns), rows.n)
    if max_held is not None and max_held // per_leaf < max_leaves:
        max_leaves = max_held // per_leaf
        too_large = (
            f"the pair tables would hold more than the {max_held / 2**20:,.0f} MB the memory "
            "limit leaves above the model's estimate"
        )
    builder = _Builder(sizes, max_leaves, too_large, deadline)
    for ti, nodes in enumerate(ranked):
        builder.start_tree()
        at = rows.of_tree(ti)
        if any(node[0] in enc.varying for node in nodes.values() if node[0] >= 0):
            builder.product(nodes, col, at)
        else:
            builder.shared(nodes, col[0], at)
    lo, hi, values, starts, nodes = builder.arrays(rows.n)
    return PairTables(
        lo=lo,
        hi=hi,
        values=values,
        starts=starts,
        nodes=nodes,
        thresholds=rows.thresholds,
        sizes=sizes,
        columns=tuple(columns),
        sums=rows.sums,
    )


class _Rows:
    """The gap rows of an encoded query as per-leaf weight vectors: the rows of x1, of
    x2, then the pair sums (a row of x1 plus a row of x2 with opposite weights)."""

    def __init__(self, enc: Encoding):
        ens = enc.ensemble
        cond = enc.condition
        # per row: (copy, per-tree leaf weights); a row over both inputs (copy None)
        # has two, one per input
        self.terms: list[tuple[int | None, tuple[dict, ...]]] = []
        thresholds: list[float] = []
        for c in (0, 1):
            for coefs, rhs in cond.rows[c]:
                per_tree, const = gap_row_terms(ens, coefs)
                self.terms.append((c, (per_tree,)))
                thresholds.append(rhs - const - enc.relax * sum(abs(k) for k in coefs))
        for a, b, rhs in cond.pair_rows:
            (wa, ka), (wb, kb) = gap_row_terms(ens, a), gap_row_terms(ens, b)
            self.terms.append((None, (wa, wb)))
            relax = enc.relax * (sum(abs(k) for k in a) + sum(abs(k) for k in b))
            thresholds.append(rhs - ka - kb - relax)
        n1 = len(cond.rows[0])
        self.sums = tuple((i, n1 + j) for i, j in _opposite_rows(cond))
        for i, j in self.sums:
            thresholds.append(thresholds[i] + thresholds[j])
        self.thresholds = np.array(thresholds)
        self.n = len(thresholds)

    def of_tree(self, ti: int):
        """(leaf of x1, leaf of x2) -> the tree's weight vector over every row."""
        w = [tuple(p.get(ti, {}) for p in weights) for _, weights in self.terms]
        copies = [c for c, _ in self.terms]

        def value(r: int, n1: int, n2: int) -> float:
            if copies[r] is None:
                return w[r][0].get(n1, 0.0) + w[r][1].get(n2, 0.0)
            return w[r][0].get(n1 if copies[r] == 0 else n2, 0.0)

        def at(n1: int, n2: int) -> tuple[float, ...]:
            v = [value(r, n1, n2) for r in range(len(w))]
            return tuple(v + [v[i] + v[j] for i, j in self.sums])

        return at


def _opposite_rows(cond) -> list[tuple[int, int]]:
    """Pairs (row of x1, row of x2) whose coefficients are opposite: in their sum the
    trees that read no varied feature cancel."""
    return [
        (i, j)
        for i, (a, _) in enumerate(cond.rows[0])
        for j, (b, _) in enumerate(cond.rows[1])
        if any(a) and all(x == -y for x, y in zip(a, b))
    ]


# a tree in rank space: node -> (feature, R, yes, no), or (-1, leaf node, 0, 0) on a leaf
RankedTree = dict[int, tuple[int, int, int, int]]


def has_nan_rank(ens: Ensemble, f: int) -> bool:
    """Whether feature f's last rank stands for NaN: it may be missing and a node reads
    it."""
    return ens.features[f].may_be_missing and f in ensemble_structure(ens).used


def n_ranks(ens: Ensemble, f: int) -> int:
    """How many ranks feature f's column has: its valid intervals (or codes), and NaN."""
    return len(ensemble_structure(ens).domains[f].valid) + has_nan_rank(ens, f)


def rank_value(ens: Ensemble, f: int, rank: int) -> float:
    """The input value a rank of feature f stands for: its domain's value, or NaN."""
    dom = ensemble_structure(ens).domains[f]
    return math.nan if rank >= len(dom.valid) else float(dom.reps[dom.valid[rank]])


def _ranked_tree(ens: Ensemble, st, t) -> RankedTree:
    out: RankedTree = {}
    fresh = [len(t.feature)]  # the next node index of a node the runs add
    for n in range(len(t.feature)):
        f = int(t.feature[n])
        if f < 0:
            out[n] = (-1, n, 0, 0)
            continue
        dom = st.domains[f]
        plain = (
            dom.codes is None
            and not has_nan_rank(ens, f)
            and (t.missing is None or t.missing[n] != MISSING_ZERO)
        )
        yes, no = int(t.left[n]), int(t.right[n])
        if plain:
            out[n] = (f, split_rank(dom, float(t.threshold[n])), yes, no)
            continue
        runs = _runs(yes_ranks(ens, st, t, n))
        _run_tree(out, n, f, runs, yes, no, fresh)
    return out


def yes_ranks(ens: Ensemble, st, t, n: int) -> np.ndarray:
    """Per rank of node n's feature, whether the library sends it to "yes" (as
    encode.node_yes; the last rank NaN when the feature has one)."""
    f = int(t.feature[n])
    dom = st.domains[f]
    if dom.codes is not None:
        s = np.array([node_yes(ens, t, n, float(dom.reps[j])) for j in dom.valid], dtype=bool)
    else:
        s = np.arange(len(dom.valid)) < split_rank(dom, float(t.threshold[n]))
        if t.missing is not None and t.missing[n] == MISSING_ZERO:
            band = [r for r, j in enumerate(dom.valid) if abs(dom.reps[j]) <= ZERO_BAND]
            s[band] = bool(t.default_left[n])
    if has_nan_rank(ens, f):
        s = np.append(s, node_yes(ens, t, n, math.nan))
    return s


def _runs(s: np.ndarray) -> list[tuple[int, bool]]:
    """The maximal runs of equal values of ``s``: (end rank, value) each, in order."""
    cuts = np.flatnonzero(s[1:] != s[:-1]) + 1
    ends = [*cuts.tolist(), len(s)]
    return [(e, bool(s[e - 1])) for e in ends]


def _run_tree(out: RankedTree, at: int, f: int, runs, yes: int, no: int, fresh) -> None:
    """Node ``at`` as a balanced tree of tests "rank < end of a run" whose leaves are
    the runs, each the node's ``yes`` or ``no`` child. One run: a test every rank
    passes (R past the last rank) or fails (R = 0); the walk follows it without a
    split."""
    if len(runs) == 1:
        out[at] = (f, runs[0][0] if runs[0][1] else 0, yes, no)
        return
    k = len(runs) // 2

    def side(part) -> int:
        if len(part) == 1:
            return yes if part[0][1] else no
        node = fresh[0]
        fresh[0] += 1
        _run_tree(out, node, f, part, yes, no, fresh)
        return node

    out[at] = (f, runs[k - 1][0], side(runs[:k]), side(runs[k:]))


class _Builder:
    """Collects pair-tree leaves (their boxes and values) and nodes, tree after tree."""

    def __init__(
        self, sizes: np.ndarray, max_leaves: int, too_large: str, deadline: float | None = None
    ):
        self.sizes = sizes
        self.max_leaves = max_leaves
        self.too_large = too_large  # the message past max_leaves
        self.deadline = deadline
        self.lo: list[np.ndarray] = []
        self.hi: list[np.ndarray] = []
        self.vals: list[tuple[float, ...]] = []
        self.starts: list[int] = []
        self.trees: list[tuple[PairNode, ...]] = []
        self._nodes: list = []

    def start_tree(self) -> None:
        if self.starts:
            self.trees.append(tuple(self._nodes))
        self.starts.append(len(self.vals))
        self._nodes = []

    def shared(self, nodes: RankedTree, col: dict[int, int], at) -> None:
        lo, hi = np.zeros(len(self.sizes), dtype=np.int32), self.sizes.copy()
        self._walk(nodes, 0, col, lo, hi, lambda n, lo, hi: self._leaf(lo, hi, at(n, n)))

    def product(self, nodes: RankedTree, col, at) -> None:
        lo, hi = np.zeros(len(self.sizes), dtype=np.int32), self.sizes.copy()

        def second(n1: int, lo: np.ndarray, hi: np.ndarray) -> None:
            self._walk(nodes, 0, col[1], lo, hi, lambda n2, lo, hi: self._leaf(lo, hi, at(n1, n2)))

        self._walk(nodes, 0, col[0], lo, hi, second)

    def _leaf(self, lo, hi, values: tuple[float, ...]) -> None:
        n = len(self.vals)
        if n >= self.max_leaves:
            raise PairTablesTooLarge(self.too_large)
        # a category set or a NaN rank can multiply the leaves: a look at the clock
        if self.deadline is not None and n % CLOCK_EVERY == 0 and time.time() >= self.deadline:
            raise PairTablesTooLarge(
                f"building the pair tables reached the box search's time ({n:,} leaves)"
            )
        self.lo.append(lo.copy())
        self.hi.append(hi.copy())
        self.vals.append(values)

    def _walk(self, nodes: RankedTree, n: int, col, lo, hi, at_leaf) -> None:
        """Copy ``col``'s tree below node n within box [lo, hi): a branch the box
        excludes is skipped (its node too), ``at_leaf(leaf, lo, hi)`` at each leaf."""
        f, r, yes, no = nodes[n]
        if f < 0:
            at_leaf(r, lo, hi)
            return
        c = col[f]
        a, b = int(lo[c]), int(hi[c])
        if r >= b:  # the whole box takes "yes"
            self._walk(nodes, yes, col, lo, hi, at_leaf)
            return
        if r <= a:
            self._walk(nodes, no, col, lo, hi, at_leaf)
            return
        k = len(self._nodes)
        self._nodes.append(None)
        first = len(self.vals)
        hi[c] = r
        self._walk(nodes, yes, col, lo, hi, at_leaf)
        hi[c] = b
        middle, no_node = len(self.vals), len(self._nodes)
        lo[c] = r
        self._walk(nodes, no, col, lo, hi, at_leaf)
        lo[c] = a
        # a side's first node appended is the root of that side
        yes_node = k + 1 if no_node > k + 1 else -1
        no_node = no_node if len(self._nodes) > no_node else -1
        self._nodes[k] = (c, r, first, middle, len(self.vals), yes_node, no_node)

    def arrays(self, n_rows: int):
        self.trees.append(tuple(self._nodes))
        values = np.ascontiguousarray(np.array(self.vals, dtype=np.float64).reshape(-1, n_rows).T)
        lo = np.ascontiguousarray(np.array(self.lo, dtype=np.int32).T)
        hi = np.ascontiguousarray(np.array(self.hi, dtype=np.int32).T)
        return lo, hi, values, np.array(self.starts, dtype=np.int64), tuple(self.trees)
