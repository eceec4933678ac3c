"""The solver's bound on a box's pair-sum row (search/box_milp.py): its LP relaxation and
its MILP (HiGHS) over the trees that read F, never below the largest pair sum the box
holds (enumerated rank by rank), never above the per-tree maxima the kernel sums; and
searches that lower their best boxes by it still bracket the exact largest gap."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.search import box_milp, gap_boxes, gap_kernel
from treesens.search.gap_boxes import largest_gap
from treesens.search.gap_search import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_encoding, pair_tables
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

FAR = 1e18
TOLERANCE = 1e-4

pytestmark = [
    pytest.mark.skipif(not box_milp.available(), reason="highspy is not installed"),
    pytest.mark.skipif(not gap_kernel.available(), reason="numba is not installed"),
]


def _case(i: int):
    """Ten to sixteen trees of depth 2-4 over four or five features, one varied."""
    rng = np.random.default_rng([4703, i])
    ens = random_ensemble(
        rng,
        int(rng.integers(10, 17)),
        int(rng.integers(2, 5)),
        int(rng.integers(4, 6)),
        3,
        leaf_scale=1.0,
        bounded=bool(rng.random() < 0.5),
    )
    vary = (str(rng.choice(ens.feature_names)),)
    q = Query(vary=vary)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    return ens, q, enc, pair_tables(enc), rng


def _boxes(tab, rng, n: int):
    """The whole pair space, and n boxes at most three ranks wide on each column."""
    sizes = np.asarray(tab.sizes, dtype=np.int32)
    yield np.zeros_like(sizes), sizes.copy()
    for _ in range(n):
        lo = np.array([rng.integers(0, s) for s in sizes], dtype=np.int32)
        hi = np.minimum(lo + rng.integers(1, 4, size=len(sizes)), sizes).astype(np.int32)
        yield lo, hi


def _largest_pair_sum(tab, lo, hi) -> float:
    """The largest pair-sum row over the box, rank vector by rank vector (row units)."""
    values = tab.values[tab.first_sum]
    best = -np.inf
    for x in itertools.product(*(range(a, b) for a, b in zip(lo, hi))):
        x = np.asarray(x)[:, None]
        meets = np.all((tab.lo <= x) & (x < tab.hi), axis=0)
        best = max(best, float(values[meets].sum()))
    return (best - float(tab.thresholds[tab.first_sum])) / 2.0


def _small_grid(tab) -> bool:
    return int(np.prod(np.asarray(tab.sizes, dtype=np.int64))) <= 4096


CASES = [i for i in range(40) if _small_grid(_case(i)[3])][:16]


@pytest.mark.parametrize("integer", [False, True], ids=["lp", "milp"])
@pytest.mark.parametrize("i", CASES)
def test_solver_bound_of_a_box_is_never_below_its_largest_pair_sum(i, integer):
    _, _, _, tab, rng = _case(i)
    b = box_milp.PairSumBound(tab)
    for lo, hi in _boxes(tab, rng, 6):
        exact = _largest_pair_sum(tab, lo, hi)
        got = b.bound(lo, hi, integer=integer, seconds=30.0)
        assert got is not None
        assert got >= exact - 1e-12, (lo, hi, got, exact)


@pytest.mark.parametrize("i", CASES)
def test_solver_bound_of_a_box_is_never_above_the_per_tree_maxima(i):
    _, _, _, tab, rng = _case(i)
    b = box_milp.PairSumBound(tab)
    for lo, hi in _boxes(tab, rng, 6):
        per_tree = b.per_tree(lo, hi)
        for integer in (False, True):
            assert b.bound(lo, hi, integer=integer, seconds=30.0) <= per_tree + 1e-5


def test_milp_bound_of_the_whole_space_is_its_largest_pair_sum_on_some_cases():
    # solved to optimality the MILP is exact (up to its slack): the bound is tight
    tight = below_per_tree = 0
    for i in CASES:
        tab = _case(i)[3]
        b = box_milp.PairSumBound(tab)
        lo, hi = next(_boxes(tab, np.random.default_rng(0), 0))
        got = b.bound(lo, hi, integer=True, seconds=30.0)
        tight += abs(got - _largest_pair_sum(tab, lo, hi)) < 1e-4
        below_per_tree += got < b.per_tree(lo, hi) - 1e-3
    assert tight >= len(CASES) // 2
    assert below_per_tree >= 1


def _search_with_solver(i: int, monkeypatch):
    """Case i's largest gap by the compiled search, the solver on every step's best box
    (steps of one box). Returns the case, the outcome and the SolverOnTop."""
    monkeypatch.setattr(box_milp, "SOLVER_ON_TOP", True)
    monkeypatch.setattr(box_milp, "SOLVER_SHARE", 1e9)
    monkeypatch.setattr(gap_boxes, "next_step", lambda *_: 1)
    ens, q, enc, tab, _ = _case(i)
    solvers: list = []
    monkeypatch.setattr(box_milp, "SolverOnTop", _recording(box_milp.SolverOnTop, solvers))

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(enc, tab, gap_bound(ens), offer, TOLERANCE, FAR)
    return ens, q, out, (solvers[0] if solvers else None)


@pytest.mark.parametrize("i", range(12))
def test_searches_with_the_solver_on_the_best_boxes_bracket_the_brute_force_gap(i, monkeypatch):
    ens, q, out, _ = _search_with_solver(i, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_the_solver_bounds_and_drops_best_boxes_in_those_searches(monkeypatch):
    # the cases above exercise it: some best boxes bounded, one at least dropped
    solvers = [_search_with_solver(i, monkeypatch)[3] for i in range(12)]
    assert sum(s.solves for s in solvers if s is not None) >= 10
    assert sum(s.dropped for s in solvers if s is not None) >= 1


def _recording(cls, into: list):
    def make(*args, **kw):
        s = cls(*args, **kw)
        into.append(s)
        return s

    return make


def _search_with_heap(bounds: list[float]):
    tab = _case(0)[3]
    s = gap_kernel.KernelSearch(tab, np.arange(len(tab.starts)), bounds[0])
    cols = len(tab.sizes)
    for k, u in enumerate(bounds):
        s.hb[k] = u
        s.hx[k, :cols] = k
        s.hx[k, cols:] = k + 1
    s.hn = len(bounds)
    return s


def test_lower_top_moves_the_best_box_down_to_its_place_in_the_heap():
    s = _search_with_heap([9.0, 8.0, 7.0, 6.0, 5.0])
    s.lower_top(6.5, 0.0)
    assert s.hn == 5
    assert float(s.hb[0]) == 8.0
    assert sorted(s.hb[: s.hn].tolist(), reverse=True) == [8.0, 7.0, 6.5, 6.0, 5.0]
    assert 0 in [int(s.hx[k, 0]) for k in range(s.hn) if float(s.hb[k]) == 6.5]


def test_lower_top_drops_the_best_box_under_the_floor_and_keeps_its_bound():
    s = _search_with_heap([9.0, 8.0, 7.0])
    s.lower_top(1.0, 2.0)
    assert s.hn == 2
    assert float(s.hb[0]) == 8.0
    assert s.dropped == 1.0


def test_lower_top_never_raises_a_bound():
    s = _search_with_heap([9.0, 8.0])
    s.lower_top(10.0, 0.0)
    assert float(s.hb[0]) == 9.0 and s.hn == 2
