"""A lazy dive's splits leave unwalked the trees that read F whose pair-sum rows no
longer differ over the box (search/gap_kernel.SKIP_CLOSED; gap_kernel_jit.walk_children):
those rows are one value on every sub-box, so the parent's are exact, and the tree's rows
of x1 and x2 stay the parent's maxima and minima, sound bounds, until the dive stops being
lazy and walks them again with the trees outside F. Checked against a fresh walk of every
tree over each box a dive holds, and against the exact largest gap by enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treesens.compiler.query import Gap
from treesens.search import gap_kernel
from treesens.search.gap_boxes import _Bounds
from treesens.search.pair_boxes import pair_encoding, pair_tables
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.compiler.test_gap_kernel_lazy import _case, _search
from treesens.tests.max_gap_oracle import exact_max_gap

pytestmark = pytest.mark.skipif(not gap_kernel.available(), reason="numba is not installed")

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


def _lazy_tables():
    """The cases' pair tables (searched lazily by _held_boxes, whatever share of the
    trees reads F)."""
    out = []
    for i in CASES:
        ens, q = _case(i)
        out.append(pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0)))))
    return out


def test_some_lazy_dives_leave_trees_of_f_with_closed_pair_sums_unwalked():
    # the cases above exercise the skip
    stale = [held[4].any() for tab in _lazy_tables() for held in _held_boxes(tab, True)[1]]
    assert any(stale)


@pytest.mark.parametrize("skip", [True, False])
def test_a_held_dive_s_pair_sums_are_exact_and_its_other_rows_bound_a_fresh_walk(skip, monkeypatch):
    # the pair-sum rows of every tree are exactly a fresh walk's (a tree left unwalked
    # was closed on them); the rows of x1 and x2 are at least its maxima and at most its
    # minima (a larger box's), and exactly its own for a tree of F not left stale
    checked = 0
    for tab in _lazy_tables():
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
