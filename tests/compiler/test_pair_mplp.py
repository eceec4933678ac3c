"""The Lagrangian (MPLP) bound on a box's pair-sum row (search/pair_mplp*.py), against the
exact maximum of the pair sum over every point of random sub-boxes of small random
models' pair spaces (each tree of F's one leaf holding the point)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.search import gap_kernel_compile
from treesens.search.gap_kernel import flatten, reads_varied
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_mplp import MplpTables, box_bound, mplp_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.oracle import random_ensemble

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

MODELS = range(16)
BOXES = 8
SLACK = 1e-9


@dataclass
class Space:
    """A small model's pair space: its bound's tables, every point and its pair sum."""

    tab: object  # pair_boxes.PairTables
    mt: MplpTables
    lo: np.ndarray  # int32[leaves of F, columns]
    hi: np.ndarray
    points: np.ndarray  # int32[points, columns]
    sums: np.ndarray  # float64[points]

    def box(self, rng) -> tuple[np.ndarray, np.ndarray]:
        lo = np.array([rng.integers(0, s) for s in self.mt.sizes], np.int32)
        hi = np.array([rng.integers(a + 1, s + 1) for a, s in zip(lo, self.mt.sizes)], np.int32)
        return lo, hi

    def exact(self, lo, hi) -> float:
        inside = ((self.points >= lo) & (self.points < hi)).all(1)
        return float(self.sums[inside].max())


def _space(i: int) -> Space | None:
    rng = np.random.default_rng([47, i])
    nf = int(rng.integers(2, 4))
    ens = random_ensemble(
        rng,
        int(rng.integers(3, 12)),
        int(rng.integers(2, 4)),
        nf,
        int(rng.integers(2, 6)),
        leaf_scale=1.0,
    )
    vary = (ens.feature_names[int(rng.integers(nf))],)
    tab = pair_tables(pair_encoding(ens, Query(vary=vary).with_(gap=Gap(0.0))))
    reads_f = reads_varied(tab)
    if not reads_f.any():
        return None
    mt = mplp_tables(flatten(tab, np.arange(len(tab.starts))), reads_f)
    lo, hi = (np.ascontiguousarray(a.T) for a in tab.boxes)
    ends = np.append(np.asarray(tab.starts)[1:], tab.values.shape[1])
    points = np.array(list(itertools.product(*[range(s) for s in mt.sizes])), np.int32)
    sums = np.zeros(len(points))
    keep = np.zeros(len(mt.values), bool)
    for t in np.flatnonzero(reads_f):
        a, b = tab.starts[t], ends[t]
        keep[a:b] = True
        holds = ((lo[a:b][None] <= points[:, None]) & (points[:, None] < hi[a:b][None])).all(2)
        sums += mt.values[a:b][holds.argmax(1)]
    return Space(tab, mt, lo[keep], hi[keep], points, sums)


@pytest.fixture(scope="module")
def spaces() -> list[Space]:
    return [s for s in map(_space, MODELS) if s is not None]


def _boxes(spaces, seed=0):
    rng = np.random.default_rng(seed)
    for space in spaces:
        for _ in range(BOXES):
            yield space, *space.box(rng)


def test_the_walk_gathers_exactly_the_leaves_meeting_the_box_clipped_to_it(spaces):
    from treesens.search.pair_mplp_jit import gather

    for space, lo, hi in _boxes(spaces):
        mt = space.mt
        ptr, cl, ch, d = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
        meets = ((space.lo < hi) & (space.hi > lo)).all(1)
        want = np.concatenate([np.maximum(space.lo, lo), np.minimum(space.hi, hi)], 1)[meets]
        got = np.concatenate([cl, ch], 1)
        assert sorted(map(tuple, got)) == sorted(map(tuple, want))
        assert ptr[-1] == len(d) == meets.sum()


def test_the_bound_at_l_zero_is_each_trees_own_maximum_summed(spaces):
    for space, lo, hi in _boxes(spaces):
        b = box_bound(space.mt, lo, hi, sweeps=0)
        assert b.plain >= space.exact(lo, hi) - SLACK
        assert len(b.sweeps) == 0


def test_mplp_from_zero_never_falls_below_the_exact_maximum(spaces):
    for space, lo, hi in _boxes(spaces):
        b = box_bound(space.mt, lo, hi, sweeps=30)
        assert b.sweeps.min() >= space.exact(lo, hi) - SLACK


def test_mplp_never_rises_from_sweep_to_sweep_from_zero(spaces):
    for space, lo, hi in _boxes(spaces):
        h = np.concatenate(
            [
                [box_bound(space.mt, lo, hi, sweeps=0).plain],
                box_bound(space.mt, lo, hi, sweeps=30).sweeps,
            ]
        )
        assert (np.diff(h) <= SLACK).all()


def test_mplp_closes_most_of_the_distance_from_the_plain_bound_to_the_exact_maximum(spaces):
    plain = tight = 0.0
    for space, lo, hi in _boxes(spaces):
        b, exact = box_bound(space.mt, lo, hi, sweeps=30), space.exact(lo, hi)
        plain += b.plain - exact
        tight += b.total - exact
    assert plain > 1.0 and tight < 0.1 * plain


def test_a_warm_start_from_a_parents_multipliers_stays_above_the_exact_maximum_of_a_sub_box(spaces):
    rng = np.random.default_rng(1)
    for space, lo, hi in _boxes(spaces):
        parent = box_bound(space.mt, lo, hi, sweeps=5)
        sub_lo = np.array([rng.integers(a, b) for a, b in zip(lo, hi)], np.int32)
        sub_hi = np.array([rng.integers(a + 1, b + 1) for a, b in zip(sub_lo, hi)], np.int32)
        for sweeps in (1, 3):
            b = box_bound(space.mt, sub_lo, sub_hi, sweeps=sweeps, warm=parent.state)
            assert b.sweeps.min() >= space.exact(sub_lo, sub_hi) - SLACK


def _fixed_l_bound(space: Space, lo, hi, rng, shift: float) -> float:
    """The bound at a random L, zero-sum over the trees reading each column at every rank
    of the box (shifted by ``shift`` per tree), kept as its maximum over each segment."""
    from treesens.search import pair_mplp_jit as jit

    mt = space.mt
    ptr, cl, ch, d = jit.gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
    segoff, sega, segb, s0, s1 = jit.segments(ptr, cl, ch, lo, hi)
    K, C = len(mt.roots), len(lo)
    lval = np.zeros(len(sega))
    for c in range(C):
        readers = [k for k in range(K) if segoff[k * C + c + 1] > segoff[k * C + c]]
        if len(readers) < 2:
            continue
        L = rng.normal(0.0, 2.0, (len(readers), hi[c] - lo[c]))
        L -= L.mean(0) + shift
        for L_k, k in zip(L, readers):
            for g in range(segoff[k * C + c], segoff[k * C + c + 1]):
                lval[g] = L_k[sega[g] - lo[c] : segb[g] - lo[c]].max()
    return jit.total_of(ptr, jit.leaf_terms(ptr, d, s0, s1, lval)[1])


def test_a_random_zero_sum_l_never_falls_below_the_exact_maximum(spaces):
    rng = np.random.default_rng(2)
    for space, lo, hi in _boxes(spaces):
        assert _fixed_l_bound(space, lo, hi, rng, 0.0) >= space.exact(lo, hi) - SLACK


def test_an_l_summing_below_zero_falls_below_the_exact_maximum_on_some_box(spaces):
    """What the soundness tests above catch: multipliers not summing to (at least) zero."""
    rng = np.random.default_rng(2)
    under = [
        _fixed_l_bound(s, lo, hi, rng, 1.0) < s.exact(lo, hi) - SLACK
        for s, lo, hi in _boxes(spaces)
    ]
    assert any(under)


def test_mplp_sweeps_on_no_further_once_at_most_the_floor(spaces):
    for space, lo, hi in _boxes(spaces):
        full = box_bound(space.mt, lo, hi, sweeps=10).sweeps
        if full[0] - full[-1] < 1e-6:
            continue
        floor = (full[0] + full[-1]) / 2
        stopped = box_bound(space.mt, lo, hi, sweeps=10, floor=floor).sweeps
        assert (stopped == full[: len(stopped)]).all() and (stopped[:-1] > floor).all()


def test_no_sweep_runs_where_the_plain_bound_is_more_than_the_gate_above_the_floor(spaces):
    for space, lo, hi in _boxes(spaces):
        plain = box_bound(space.mt, lo, hi, sweeps=0).plain
        assert len(box_bound(space.mt, lo, hi, sweeps=3, floor=plain - 2.0, gate=1.0).sweeps) == 0
        assert len(box_bound(space.mt, lo, hi, sweeps=3, floor=plain - 2.0, gate=3.0).sweeps) > 0


def test_mplp_stops_once_the_last_fall_repeated_over_the_sweeps_left_cannot_reach_the_floor(spaces):
    stopped = 0
    for space, lo, hi in _boxes(spaces):
        full = box_bound(space.mt, lo, hi, sweeps=10).sweeps
        floor = full[-1] - 1.0  # under every sweep's total
        out = box_bound(space.mt, lo, hi, sweeps=10, floor=floor).sweeps
        reach = [(full[i - 1] - full[i]) * (9 - i) >= full[i] - floor for i in range(1, len(out))]
        assert all(reach[:-1]) and (len(out) == len(full) or not reach[-1])
        stopped += len(out) < len(full)
    assert stopped > 0
