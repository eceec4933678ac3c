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
from treesens.search.cut_walk import root_box, walk_cuts, walk_own
from treesens.tests.compiler.test_pair_mplp import MODELS, SLACK, Space, _space

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CHAINS = 12
DEPTH = 10


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
    """Per box of random chains of cuts from the whole space: (space, lo, hi, the box as
    built from its parent's (cut_walk_jit's Box, before its sweeps), its bounds (plain,
    inherited, least), floor2); each box swept 0-3 times at ``floor_of(exact maximum, rng)``,
    from its parent's L."""
    from treesens.search.cut_walk_jit import box_bounds, child_box

    rng = np.random.default_rng(seed)
    for space in spaces:
        mt = space.mt
        for _ in range(CHAINS):
            lo, hi = np.zeros(len(mt.sizes), np.int32), mt.sizes.astype(np.int32)
            box, first = root_box(mt), 0
            for _ in range(DEPTH):
                floor2 = floor_of(space.exact(lo, hi), rng)
                sweeps = int(rng.integers(0, 4))
                built = tuple(a.copy() for a in box)
                bounds = box_bounds(box, lo, hi, sweeps, floor2, np.inf, first)
                yield space, lo, hi, built, bounds[:3], floor2
                cut = _cut(space, rng, lo, hi)
                if cut is None:
                    break
                first, lo, hi = cut
                box = child_box(box, first, lo, hi)


def _never_closes(exact, rng):
    return -np.inf if rng.random() < 0.5 else exact - 1e-6


def _leaf_intervals(box, lo, hi):
    """Each leaf's interval per column (leaves x columns, lo and hi): its segments' span on
    a column its tree reads, else the box's."""
    ptr, _, segoff, sega, segb, _, boff, s0, s1, _, _ = box
    C = len(lo)
    cl, ch = np.tile(lo, (len(box[1]), 1)), np.tile(hi, (len(box[1]), 1))
    for k in range(len(ptr) - 1):
        for c in range(C):
            q = k * C + c
            if segoff[q + 1] > segoff[q]:
                slots = boff[q] + np.arange(ptr[k], ptr[k + 1])
                cl[ptr[k] : ptr[k + 1], c] = sega[s0[slots]]
                ch[ptr[k] : ptr[k + 1], c] = segb[s1[slots] - 1]
    return cl, ch


def test_the_leaves_filtered_from_the_parents_are_those_a_walk_of_fs_trees_gathers(spaces):
    from treesens.search.pair_mplp_jit import gather

    for space, lo, hi, box, _, _ in _chains(spaces, _never_closes):
        mt = space.mt
        ptr, cl, ch, d = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
        assert np.array_equal(box[0], ptr) and np.array_equal(box[1], d)
        got = _leaf_intervals(box, lo, hi)
        assert np.array_equal(got[0], cl) and np.array_equal(got[1], ch)


def test_a_childs_segments_from_its_parents_are_its_own_leaves_cuts(spaces):
    from treesens.search.pair_mplp_jit import gather, segments

    for space, lo, hi, box, _, _ in _chains(spaces, _never_closes):
        mt = space.mt
        ptr, cl, ch, _ = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
        segoff, sega, segb, s0, s1 = segments(ptr, cl, ch, lo, hi)
        assert np.array_equal(box[2], segoff)
        assert np.array_equal(box[3], sega) and np.array_equal(box[4], segb)
        C, boff = len(lo), box[6]
        for k in range(len(ptr) - 1):
            for c in range(C):
                if segoff[k * C + c + 1] > segoff[k * C + c]:
                    slots = boff[k * C + c] + np.arange(ptr[k], ptr[k + 1])
                    assert np.array_equal(box[7][slots], s0[c, ptr[k] : ptr[k + 1]])
                    assert np.array_equal(box[8][slots], s1[c, ptr[k] : ptr[k + 1]])


def test_a_childs_leaf_terms_kept_from_its_parent_are_its_ls_maxima_over_each_leaf(spaces):
    for _, _, _, box, _, _ in _chains(spaces, _never_closes):
        ptr, d, segoff, _, _, lval, boff, s0, s1, ml, s = box
        C = len(segoff) // max(len(ptr) - 1, 1)
        want = d.copy()
        for k in range(len(ptr) - 1):
            for c in range(C):
                if segoff[k * C + c + 1] > segoff[k * C + c]:
                    for p in range(ptr[k], ptr[k + 1]):
                        i = boff[k * C + c] + p
                        assert ml[i] == lval[s0[i] : s1[i]].max()
                        want[p] += ml[i]
        assert np.array_equal(s, want)


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
        _assert_every_point_above_in_one_open_box(space, walk, floor_rows)
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
    from treesens.search.own_cuts_jit import side_bounds
    from treesens.search.pair_mplp_jit import gather, total_of

    def bound(mt, lo, hi):
        ptr, _, _, d = gather(mt.packed, mt.roots, mt.values, lo, hi, mt.depth)
        return total_of(ptr, d)

    sides = 0
    for n, (space, lo, hi, box, _, _) in enumerate(_chains(spaces, _never_closes, seed=3)):
        if n % 4:
            continue  # a quarter of the chains' boxes: roots and children alike
        yes, no, _ = side_bounds(box, lo, hi)
        for c in range(len(lo)):
            for r in range(lo[c] + 1, hi[c]):
                yes_hi, no_lo = hi.copy(), lo.copy()
                yes_hi[c], no_lo[c] = r, r
                assert yes[c, r - lo[c]] == pytest.approx(bound(space.mt, lo, yes_hi))
                assert no[c, r - lo[c]] == pytest.approx(bound(space.mt, no_lo, hi))
                sides += 2
    assert sides > 100


def test_the_walk_of_its_own_cuts_leaves_open_every_point_above_its_floor(spaces):
    closed = 0
    for space in spaces:
        mt, sums = space.mt, space.sums
        floor_rows = mt.rows(np.quantile(sums, 0.5))
        walk = walk_own(mt, floor_rows, sweeps=2, gate_rows=np.inf)
        _assert_every_point_above_in_one_open_box(space, walk, floor_rows)
        closed += walk.closed_inherited + walk.closed_swept
    assert closed > 0


def test_every_box_the_own_walk_closes_holds_no_pair_sum_above_its_floor(spaces):
    checked = 0
    for space in spaces:
        mt = space.mt
        for share in (0.3, 0.6, 0.9, 1.0):
            floor2 = np.quantile(space.sums, share) - (1e-6 if share == 1.0 else 0.0)
            closed = []
            walk_own(mt, mt.rows(floor2), sweeps=3, gate_rows=np.inf, closed=closed)
            for lo, hi, bound in closed:
                exact = space.exact(lo, hi)
                assert exact <= floor2 + SLACK and bound >= exact - SLACK
                checked += 1
    assert checked > 100


def test_an_own_walk_that_ends_unstopped_has_done_its_whole_tree_of_cuts(spaces):
    for space in spaces:
        walk = walk_own(space.mt, space.mt.rows(np.quantile(space.sums, 0.5)))
        assert not walk.stopped and walk.done == pytest.approx(1.0)


def test_an_own_walk_stopped_early_has_done_a_share_of_its_tree_under_one(spaces, monkeypatch):
    monkeypatch.setattr(cut_walk, "STOP_EVERY", 1)
    shares = []
    for space in spaces:
        floor_rows = space.mt.rows(np.quantile(space.sums, 0.5))
        walk = walk_own(space.mt, floor_rows, stop=lambda w: w.visited == 4)
        if walk.stopped:
            shares.append(walk.done)
    assert shares and all(0.0 <= done < 1.0 for done in shares)


def _assert_every_point_above_in_one_open_box(space, walk, floor_rows: float) -> None:
    mt, C = space.mt, len(space.mt.sizes)
    boxes = walk.open_boxes(C)
    above = space.points[space.sums > mt.total(floor_rows)]
    inside = ((above[:, None] >= boxes[None, :, :C]) & (above[:, None] < boxes[None, :, C:])).all(2)
    assert inside.sum(1).tolist() == [1] * len(above)
