"""A lazy dive's splits leave unwalked the trees that read F whose pair-sum rows no
longer differ over the box (search/gap_kernel.SKIP_CLOSED; gap_kernel_jit.walk_children):
those rows are one value on every sub-box, so the parent's are exact, and the tree's rows
of x1 and x2 stay the parent's maxima and minima, sound bounds, until the dive stops being
lazy and walks them again with the trees outside F. Checked against a fresh walk of every
tree over each box a dive holds, and against the exact largest gap by enumeration."""

from __future__ import annotations

import math
import multiprocessing
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.ensemble import Tree
from treesens.compiler.query import Gap
from treesens.search import gap_kernel, gap_kernel_compile
from treesens.search.gap_boxes import _Bounds, largest_gap
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.compiler.test_gap_kernel_lazy import FAR, TOLERANCE, _case, _search
from treesens.tests.max_gap_oracle import exact_max_gap

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CASES = range(24)


@pytest.mark.parametrize("skip", [True, False])
@pytest.mark.parametrize("i", CASES)
def test_a_lazy_search_skipping_closed_trees_or_not_proves_the_brute_force_largest_gap(
    i, skip, monkeypatch
):
    monkeypatch.setattr(gap_kernel, "SKIP_CLOSED", skip)
    ens, q, _, out = _search(i, True, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def _additive_tree(rng, vary: int, n_features: int, offset: float) -> Tree:
    """A split on F's column ``vary`` at the root over the same depth-2 tree of the other
    features on both sides, ``offset`` added to its leaves on F's yes side: over a box
    that puts x1.F and x2.F on different sides, the tree's pair sums are a nonzero
    constant (+-offset), while its rows of x1 and x2 still differ on the other features."""
    others = [f for f in range(n_features) if f != vary]
    cut = lambda: float(np.float32(rng.uniform(-1.5, 1.5)))  # noqa: E731
    feature, threshold, yes, no, value = [vary], [cut()], [1], [8], [0.0]
    sub_f = [int(rng.choice(others)) for _ in range(3)]
    sub_t = [cut() for _ in range(3)]
    leaves = [float(np.float32(rng.normal(0.0, 1.0))) for _ in range(4)]
    for shift in (offset, 0.0):  # the subtree at 1..7, then at 8..14
        base = len(feature)
        feature += [sub_f[0], sub_f[1], -1, -1, sub_f[2], -1, -1]
        threshold += [sub_t[0], sub_t[1], 0.0, 0.0, sub_t[2], 0.0, 0.0]
        yes += [base + 1, base + 2, -1, -1, base + 5, -1, -1]
        no += [base + 4, base + 3, -1, -1, base + 6, -1, -1]
        value += [0.0, 0.0, leaves[0] + shift, leaves[1] + shift, 0.0]
        value += [leaves[2] + shift, leaves[3] + shift]
    n = len(feature)
    return Tree(feature, threshold, yes, no, [True] * n, np.array(value)[:, None], outputs=(0,))


def _additive_case(i: int):
    """_case(i) with six of its trees made additive on F (_additive_tree): some trees
    closed on the pair sums hold a nonzero pair sum, where the random trees' are 0."""
    ens, q = _case(i)
    rng = np.random.default_rng([4703, i])
    vary = ens.feature_index(q.vary[0])
    trees = list(ens.trees)
    for k in range(6):
        trees[k] = _additive_tree(rng, vary, ens.n_features, float(rng.choice([-1.5, 1.5])))
    return replace(ens, trees=tuple(trees)), q


def _held_boxes(tab, skip: bool, boxes: int = 400):
    """A lazy search with no floor stepped one box at a time: per step whose dive is held,
    (its box's lo, hi, a copy of its per-tree maxima and minima, the trees left stale)."""
    b = _Bounds(tab)
    root = b.upper(b.top(np.ones(b.n, dtype=bool)))
    search = gap_kernel.KernelSearch(tab, b.order, root, lazy=True)
    search.bufs[3][11][2] = int(skip)
    top, low, _opn, scratch = search.bufs
    cols = len(search.ft.sizes)
    out = []
    for _ in range(boxes):
        status, _n, _u = search.step(-math.inf, 1)
        if status == gap_kernel.EMPTY:
            break
        if search.held[0] > 0:
            lo, hi = search.held_box[:cols].copy(), search.held_box[cols:].copy()
            out.append((lo, hi, top.copy(), low.copy(), scratch[12].copy()))
    return search, out


def _walked(search, lo, hi):
    """Every tree walked over the box lo, hi: (maxima, minima) per tree and row."""
    from treesens.search.gap_kernel_jit import walk

    trees, rows = search.bufs[0].shape
    top, low = np.empty((trees, rows)), np.empty((trees, rows))
    opn = np.zeros((trees, len(lo)), dtype=np.bool_)
    stack = np.empty(int(np.diff(search.ft.node_start).max()) + 1, dtype=np.int64)
    for t in range(trees):
        walk(search.arrays, t, lo, hi, top, low, stack, opn)
    return top, low


def _lazy_tables(case=_case):
    """The cases' pair tables (searched lazily by _held_boxes, whatever share of the
    trees reads F)."""
    out = []
    for i in CASES:
        ens, q = case(i)
        out.append(pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0)))))
    return out


def test_some_lazy_dives_leave_trees_of_f_with_closed_pair_sums_unwalked():
    # the cases above exercise the skip
    stale = [held[4].any() for tab in _lazy_tables() for held in _held_boxes(tab, True)[1]]
    assert any(stale)


@pytest.mark.parametrize("case", [_case, _additive_case])
@pytest.mark.parametrize("skip", [True, False])
def test_a_held_dive_s_pair_sums_are_exact_and_its_other_rows_bound_a_fresh_walk(skip, case):
    # the pair-sum rows of every tree are exactly a fresh walk's (a tree left unwalked
    # was closed on them); the rows of x1 and x2 are at least its maxima and at most its
    # minima (a larger box's), and exactly its own for a tree of F not left stale
    checked = 0
    for tab in _lazy_tables(case):
        search, held = _held_boxes(tab, skip)
        first_sum = search.ft.first_sum
        reads_f = search.reads_f
        for lo, hi, top, low, stale in held:
            wtop, wlow = _walked(search, lo, hi)
            assert np.array_equal(top[:, first_sum:], wtop[:, first_sum:])
            assert np.array_equal(low[:, first_sum:], wlow[:, first_sum:])
            assert (top >= wtop).all() and (low <= wlow).all()
            exact = reads_f & ~stale
            assert np.array_equal(top[exact], wtop[exact])
            assert np.array_equal(low[exact], wlow[exact])
            checked += 1
    assert checked


def test_some_trees_left_unwalked_hold_a_pair_sum_other_than_0():
    # the additive cases exercise the skip where a closed pair sum is not 0, so that a
    # skipped tree's pair sums read as 0 (or as a child's never walked) change the bound
    nonzero = 0
    for tab in _lazy_tables(_additive_case):
        search, held = _held_boxes(tab, True)
        for *_box, top, _low, stale in held:
            sums = top[stale, search.ft.first_sum :]
            nonzero += int((sums != 0).any())
    assert nonzero


def _ended_within(seconds: float, run):
    """run() in a forked child: its result, or None when it has not ended within
    ``seconds`` (the child killed: a kernel looping on a tree's wrong rows never looks at
    a clock)."""
    ctx = multiprocessing.get_context("fork")
    got, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=lambda: send.send(run()))
    child.start()
    ended = got.poll(seconds)
    out = got.recv() if ended else None
    child.kill()
    child.join()
    return out


@pytest.mark.parametrize("i", CASES)
def test_a_lazy_search_skipping_closed_trees_proves_the_largest_gap_where_they_add_to_it(
    i, monkeypatch
):
    monkeypatch.setattr(gap_kernel, "LAZY_DIVES", True)
    monkeypatch.setattr(gap_kernel, "LAZY_SHARE", 1.0)
    ens, q = _additive_case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    gap_kernel.prepare()  # compiled before the child starts

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    def search():
        out = largest_gap(enc, tab, gap_bound(ens), offer, TOLERANCE, FAR)
        return out.proven, out.lower, out.upper

    # well under a second each; 15 s, so that a search that never ends fails here
    out = _ended_within(15, search)
    assert out is not None, "the search did not end within 15 s"
    proven, lower, upper = out
    assert proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), lower, upper)
