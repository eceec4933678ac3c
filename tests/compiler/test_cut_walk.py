"""The walk of a recorded tree of cuts (search/cut_walk*.py): a box's Lagrangian bound from
the box it was cut from, against the exact maximum of the pair sum over every point of the
box (test_pair_mplp's small random models, brute-forced), along random chains of cuts; and
the walk over a recorded kernel search, which leaves open every point above its floor; and
the walk of its own cuts (walk_own): each side's bound at L = 0 read off the box's leaves is
the one its own leaves give, and it leaves open every point above its floor."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.search import cut_walk, gap_kernel, gap_kernel_compile
from treesens.search.cut_walk import root_leaves, walk_cuts, walk_own
from treesens.tests.compiler.test_pair_mplp import MODELS, SLACK, Space, _space

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CHAINS = 12
DEPTH = 10
NO_PARENT = (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))


@pytest.fixture(scope="module")
def spaces() -> list[Space]:
    return [s for s in map(_space, MODELS) if s is not None]


def _cut(space: Space, rng, lo, hi):
    """A random child of [lo, hi): one of its columns cut at a random rank, either side;
    None where no column can be cut."""
    cols = [c for c in range(len(lo)) if hi[c] - lo[c] > 1]
    if not cols:
        return None
    c = cols[int(rng.integers(len(cols)))]
    r = int(rng.integers(lo[c] + 1, hi[c]))
    lo2, hi2 = lo.copy(), hi.copy()
    if rng.random() < 0.5:
        hi2[c] = r
    else:
        lo2[c] = r
    return c, lo2, hi2


def _chains(spaces, floor_of, seed=0):
    """Per box of random chains of cuts from the whole space: (space, lo, hi, the box's
    leaves, its bounds (plain, inherited, least), floor2); each box swept 0-3 times at
    ``floor_of(exact maximum, rng)``, from its parent's L."""
    from treesens.search.cut_walk_jit import child_bound, leaves_within

    rng = np.random.default_rng(seed)
    for space in spaces:
        mt = space.mt
        for _ in range(CHAINS):
            lo, hi = np.zeros(len(mt.sizes), np.int32), mt.sizes.astype(np.int32)
            leaves, parent, first = root_leaves(mt), NO_PARENT, 0
            for _ in range(DEPTH):
                floor2 = floor_of(space.exact(lo, hi), rng)
                sweeps = int(rng.integers(0, 4))
                out = child_bound(*leaves, lo, hi, parent, sweeps, floor2, np.inf, first)
                yield space, lo, hi, leaves, out[:3], floor2
                cut = _cut(space, rng, lo, hi)
                if cut is None:
                    break
                first, lo, hi = cut
                leaves, parent = leaves_within(*leaves, lo, hi), out[4]


def _never_closes(exact, rng):
    return -np.inf if rng.random() < 0.5 else exact - 1e-6


def test_the_leaves_filtered_from_the_parents_are_those_a_walk_of_fs_trees_gathers(spaces):
    from treesens.search.pair_mplp_jit import gather

    for space, lo, hi, (ptr, clT, chT, d), _, _ in _chains(spaces, _never_closes):
        mt = space.mt
        want = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
        assert np.array_equal(ptr, want[0])
        got = sorted(map(tuple, np.c_[clT.T, chT.T, d]))
        assert got == sorted(map(tuple, np.c_[want[1], want[2], want[3]]))


def test_the_segments_with_no_parent_are_pair_mplps(spaces):
    from treesens.search.cut_walk_jit import segments_within
    from treesens.search.pair_mplp_jit import gather, segments

    rng = np.random.default_rng(1)
    for space in spaces:
        mt = space.mt
        for _ in range(8):
            lo, hi = space.box(rng)
            ptr, cl, ch, _ = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
            got = segments_within(ptr, cl.T.copy(), ch.T.copy(), lo, hi, NO_PARENT[0])
            for a, b in zip(got, segments(ptr, cl, ch, lo, hi)):
                assert np.array_equal(a, b)


def test_no_bound_from_the_parents_l_falls_under_the_exact_maximum(spaces):
    for space, lo, hi, _, bounds, _ in _chains(spaces, _never_closes):
        assert min(bounds) >= space.exact(lo, hi) - SLACK


def test_a_floor_just_under_the_exact_maximum_is_never_reached(spaces):
    for _, _, _, _, (_, _, least), floor2 in _chains(spaces, lambda e, rng: e - 1e-6, seed=2):
        assert least > floor2


def test_the_parents_l_alone_lowers_the_bound_on_some_boxes(spaces):
    # so that the tests above could fail: the inherited L is not zero everywhere
    lowered = sum(warm < plain - 1e-6 for *_, (plain, warm, _), _ in _chains(spaces, _never_closes))
    assert lowered > 100


def _recorded(space: Space, floor_rows: float) -> np.ndarray:
    """A kernel search's boxes at a fixed floor, recorded to its end (they tile the space)."""
    tab = space.tab
    s = gap_kernel.KernelSearch(tab, np.arange(len(tab.starts)), 1e300, recording=True)
    while s.step(floor_rows, 1 << 16)[0] != gap_kernel.EMPTY:
        pass
    return s.tiling()


def test_the_walk_leaves_open_every_point_above_its_floor(spaces):
    closed = 0
    for space in spaces:
        mt, sums = space.mt, space.sums
        recorded = _recorded(space, mt.rows(np.quantile(sums, 0.9)))
        floor_rows = mt.rows(np.quantile(sums, 0.5))
        walk = walk_cuts(mt, recorded, floor_rows, sweeps=2, gate_rows=np.inf)
        boxes = walk.open_boxes(len(mt.sizes))
        C = len(mt.sizes)
        above = space.points[sums > mt.total(floor_rows)]
        inside = (
            (above[:, None] >= boxes[None, :, :C]) & (above[:, None] < boxes[None, :, C:])
        ).all(2)
        assert inside.sum(1).tolist() == [1] * len(above)
        closed += walk.closed_inherited + walk.closed_swept
    assert closed > 0


def test_a_walk_asked_to_stop_ends_there_marked_stopped(spaces, monkeypatch):
    monkeypatch.setattr(cut_walk, "STOP_EVERY", 1)
    space = spaces[0]
    mt = space.mt
    recorded = _recorded(space, mt.rows(np.quantile(space.sums, 0.9)))
    asked = []
    walk = walk_cuts(mt, recorded, -1e300, stop=lambda w: asked.append(w.visited) or w.visited == 2)
    assert walk.stopped and walk.visited == 2 and asked == [1, 2]


def test_each_sides_bound_read_off_the_box_is_its_own_leaves_bound_at_l0(spaces):
    from treesens.search.cut_walk_jit import bound_and_segments, leaves_within
    from treesens.search.own_cuts_jit import side_bounds
    from treesens.search.pair_mplp_jit import total_of

    rng, sides = np.random.default_rng(3), 0
    for space in spaces:
        for _ in range(4):
            lo, hi = space.box(rng)
            leaves = leaves_within(*root_leaves(space.mt), lo, hi)
            *_, state, s0, s1 = bound_and_segments(*leaves, lo, hi, NO_PARENT, 0, 0.0, 0.0, 0)
            yes, no, _ = side_bounds(leaves[0], leaves[3], *state[:3], s0, s1, lo, hi)
            for c in range(len(lo)):
                for r in range(lo[c] + 1, hi[c]):
                    yes_hi, no_lo = hi.copy(), lo.copy()
                    yes_hi[c], no_lo[c] = r, r
                    want_yes = leaves_within(*leaves, lo, yes_hi)
                    want_no = leaves_within(*leaves, no_lo, hi)
                    assert yes[c, r - lo[c]] == pytest.approx(total_of(want_yes[0], want_yes[3]))
                    assert no[c, r - lo[c]] == pytest.approx(total_of(want_no[0], want_no[3]))
                    sides += 2
    assert sides > 100


def test_the_walk_of_its_own_cuts_leaves_open_every_point_above_its_floor(spaces):
    closed = 0
    for space in spaces:
        mt, sums, C = space.mt, space.sums, len(space.mt.sizes)
        floor_rows = mt.rows(np.quantile(sums, 0.5))
        walk = walk_own(mt, floor_rows, sweeps=2, gate_rows=np.inf)
        boxes = walk.open_boxes(C)
        above = space.points[sums > mt.total(floor_rows)]
        inside = (
            (above[:, None] >= boxes[None, :, :C]) & (above[:, None] < boxes[None, :, C:])
        ).all(2)
        assert inside.sum(1).tolist() == [1] * len(above)
        closed += walk.closed_inherited + walk.closed_swept
    assert closed > 0
