"""A max gap's dives keep the children they do not enter, with their per-tree arrays
(search/gap_kernel.DIVE_FRAMES; gap_kernel_jit.save_frame), and go on from the last kept
once their box is dropped, rather than push them on the heap and walk them again when
popped. A kept child's arrays are what entering it would have made of the parent's, so
they bound a fresh walk over its box as a dive's do; kept from one step to the next, they
count among the open boxes. Only the children whose bound is low enough are kept (the
others go on the heap, best first: gap_kernel.DIVE_LINE). Checked against a fresh walk of
every tree over each kept box, and against the exact largest gap by enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treesens.compiler.query import Gap
from treesens.search import gap_boxes, gap_kernel, gap_kernel_compile
from treesens.search.gap_boxes import _Bounds, largest_gap
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.compiler.test_gap_kernel_lazy import FAR, TOLERANCE, _case, _search
from treesens.tests.compiler.test_gap_kernel_skip_closed import _additive_case, _walked
from treesens.tests.max_gap_oracle import exact_max_gap

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CASES = range(24)


@pytest.mark.parametrize("frames", [1, 64])
@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("i", CASES)
def test_a_search_keeping_the_children_its_dives_leave_proves_the_brute_force_largest_gap(
    i, lazy, frames, monkeypatch
):
    monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", frames)
    ens, q, _, out = _search(i, lazy, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


@pytest.mark.parametrize("line", [0.0, 0.25, 1.0, 1000.0])
@pytest.mark.parametrize("i", CASES)
def test_a_search_keeping_only_the_children_below_a_line_proves_the_brute_force_largest_gap(
    i, line, monkeypatch
):
    # line 0: only children under the floor, or any where the heap is empty; 1000: any
    monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", 64)
    monkeypatch.setattr(gap_kernel, "DIVE_LINE", line)
    ens, q, _, out = _search(i, True, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


@pytest.mark.parametrize("check", [1, 8])
@pytest.mark.parametrize("i", CASES)
def test_a_search_going_on_from_the_best_box_open_every_few_boxes_proves_the_brute_force_gap(
    i, check, monkeypatch
):
    # DIVE_CHECK boxes after it last did, a search leaves its dive for the best box open,
    # on the heap or kept, keeping the others
    monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", 64)
    monkeypatch.setattr(gap_kernel, "DIVE_CHECK", check)
    ens, q, _, out = _search(i, True, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


@pytest.mark.parametrize("i", range(0, 24, 3))
def test_a_search_stopped_after_any_number_of_boxes_bounds_the_brute_force_largest_gap(i):
    # the upper bound a work budget reports, whatever its box limit
    ens, q = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    exact = exact_max_gap(ens, q.vary)
    for limit in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144):
        out = largest_gap(enc, tab, gap_bound(ens), _offer(ens), TOLERANCE, FAR, box_limit=limit)
        assert out.upper >= exact - 1e-9


def _search_of(tab, frames: int, lazy: bool = True) -> gap_kernel.KernelSearch:
    b = _Bounds(tab)
    root = b.upper(b.top(np.ones(b.n, dtype=bool)))
    return gap_kernel.KernelSearch(tab, b.order, root, lazy=lazy, frames=frames)


def _tables(case=_case):
    out = []
    for i in CASES:
        ens, q = case(i)
        out.append(pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0)))))
    return out


def _kept_bounds(search) -> list[tuple]:
    """The children kept, each as (its bound, its box's bytes)."""
    kept = int(search.frames[7][0])
    return [(float(search.frames[0][d]), search.frames[1][d].tobytes()) for d in range(kept)]


def _kept(search) -> list[tuple]:
    """The children kept: (lo, hi, their maxima, minima, trees left stale)."""
    _fu, fbox, fstate, _fopn, _fentry, fstale, _flazy, depth = search.frames
    cols = fbox.shape[1] // 2
    return [
        (fbox[d, :cols], fbox[d, cols:], fstate[d, 0], fstate[d, 1], fstale[d])
        for d in range(int(depth[0]))
    ]


@pytest.mark.parametrize("case", [_case, _additive_case])
@pytest.mark.parametrize("lazy", [True, False])
def test_a_kept_child_s_pair_sums_are_exact_and_its_other_rows_bound_a_fresh_walk(case, lazy):
    # as a held dive's: the pair-sum rows of every tree are a fresh walk's over the kept
    # box, the rows of x1 and x2 at least its maxima and at most its minima, and exactly
    # its own for a tree of F not left stale (the other child's rows kept instead fail)
    checked = 0
    for tab in _tables(case):
        search = _search_of(tab, 64, lazy)
        first_sum = search.ft.first_sum
        for _ in range(150):
            if search.step(-math.inf, 1)[0] == gap_kernel.EMPTY:
                break
            # the last kept: a step of one box keeps at most one child, so each is checked
            for lo, hi, top, low, stale in _kept(search)[-1:]:
                wtop, wlow = _walked(search, lo, hi)
                assert np.array_equal(top[:, first_sum:], wtop[:, first_sum:])
                assert np.array_equal(low[:, first_sum:], wlow[:, first_sum:])
                assert (top >= wtop).all() and (low <= wlow).all()
                exact = search.reads_f & ~stale
                assert np.array_equal(top[exact], wtop[exact])
                assert np.array_equal(low[exact], wlow[exact])
                checked += 1
    assert checked > 500


def _resolved(tab, budget: int, frames: int) -> list[tuple]:
    """A search with no floor stepped ``budget`` boxes at a time until it empties: each
    resolved box's (boxes so far, bound, lower corner), and its boxes in all."""
    search = _search_of(tab, frames)
    out, boxes, status = [], 0, gap_kernel.BUDGET
    while status != gap_kernel.EMPTY:
        status, n, u = search.step(-math.inf, budget)
        boxes += n
        if status == gap_kernel.RESOLVED:
            out.append((boxes, u, tuple(search.corner)))
    return out + [boxes]


@pytest.mark.parametrize("i", [4, 9, 11, 16])
def test_a_search_one_box_a_step_keeps_its_children_and_resolves_what_one_long_step_does(i):
    # the kept children stay kept from one step to the next, so a search's boxes do not
    # depend on its steps (a work budget counts the same boxes whatever the clock)
    tab = _tables()[i]
    assert _resolved(tab, 1, 64) == _resolved(tab, 1 << 30, 64)


def test_the_open_boxes_count_the_kept_children_and_the_upper_bound_their_bounds():
    found = 0
    for tab in _tables():
        search = _search_of(tab, 64)
        for _ in range(200):
            if search.step(-math.inf, 1)[0] == gap_kernel.EMPTY:
                break
            kept = int(search.frames[7][0])
            if not kept:
                continue
            found += 1
            held = int(search.held[0] > 0)
            assert len(search.open_boxes()) == search.hn + held + kept
            assert search.upper() >= search.frames[0][:kept].max()
    assert found


def test_a_search_looking_at_every_box_holds_a_dive_only_at_the_best_box_open(monkeypatch):
    # DIVE_CHECK 1: after each box the dive goes on only where its box has the largest
    # bound open (a frame's or the heap's best is no larger), so the box that holds the
    # upper bound is split next, as best first splits it (1024 fails: held below a frame)
    monkeypatch.setattr(gap_kernel, "DIVE_CHECK", 1)
    held = 0
    for tab in _tables():
        search = _search_of(tab, 64)
        for _ in range(200):
            if search.step(-math.inf, 1)[0] == gap_kernel.EMPTY:
                break
            if search.held[0] > 0:
                kept = int(search.frames[7][0])
                heap = [float(search.hb[0])] if search.hn else []
                elsewhere = max(heap + list(search.frames[0][:kept]), default=-math.inf)
                assert search.held[1] >= elsewhere - 1e-12
                held += 1
    assert held > 100


def test_a_search_keeping_one_child_at_most_pushes_the_others_on_the_heap():
    # frames 1: the dives fill the one frame and push the rest, as frames 0 pushes all
    tab = _tables()[4]
    counts = {}
    for frames in (0, 1, 64):
        search = _search_of(tab, frames)
        heap = 0
        for _ in range(200):
            if search.step(-math.inf, 1)[0] == gap_kernel.EMPTY:
                break
            heap = max(heap, search.hn)
        counts[frames] = heap
    assert counts[0] >= counts[1] >= counts[64]
    assert counts[0] > counts[64]


def test_the_children_kept_take_at_most_the_frames_bytes(monkeypatch):
    monkeypatch.setattr(gap_kernel, "FRAME_BYTES", 1)
    search = _search_of(_tables()[0], 64)
    assert search.frames[0].shape[0] == 0


def test_a_heap_of_a_few_boxes_keeps_no_children():
    # the frames come out of the heap's bytes: a search under a tiny memory budget sheds
    # boxes as it did (tests/compiler/test_gap_kernel.py's shed searches)
    tab = _tables()[0]
    b = _Bounds(tab)
    search = gap_kernel.KernelSearch(tab, b.order, 0.0, heap_bytes=1, frames=64)
    assert search.frames[0].shape[0] == 0


@pytest.mark.parametrize("line", [0.25, 0.5, 1.0])
def test_a_child_kept_is_at_most_the_line_from_the_floor_to_the_heap_s_best_bound(
    line, monkeypatch
):
    # the others go on the heap (and so does a dive's box left at a check above it), so
    # the boxes kept do not hold the upper bound above what a best-first search reports
    # at the same stop (2 frames: these small searches keep every child in 64 and their
    # heaps stay empty, where any child is kept)
    monkeypatch.setattr(gap_kernel, "DIVE_LINE", line)
    checked = 0
    for tab in _tables():
        for share in (0.0, 0.5):
            floor = share * _search_of(tab, 2).upper()
            search = _search_of(tab, 2)
            for _ in range(300):
                hn, before = search.hn, set(_kept_bounds(search))
                if search.step(floor, 1)[0] == gap_kernel.EMPTY:
                    break
                # a step of one box keeps at most one child, popping first if it pops
                for u, _box in set(_kept_bounds(search)) - before:
                    if hn >= 2:
                        assert u <= floor + line * (search.hb[0] - floor) + 1e-9
                        checked += 1
    assert checked > 100


def _offer(ens):
    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    return offer


def _switches(monkeypatch) -> list[int]:
    """Each best_first call's children kept, as the search makes them (a list filled in)."""
    calls: list[int] = []
    flush = gap_kernel.KernelSearch.best_first

    def counted(self, u_floor):
        calls.append(int(self.frames[7][0]))
        flush(self, u_floor)

    monkeypatch.setattr(gap_kernel.KernelSearch, "best_first", counted)
    return calls


class _Ticks:
    """A clock one tick a read: a deadline in ticks, however loaded the machine."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("i", CASES)
def test_a_search_switched_to_best_first_mid_way_proves_the_brute_force_largest_gap(i, monkeypatch):
    # one box a step, its deadline four times the clock's reads it closes in, the last
    # seven eighths best first: the frames go on the heap about half way to its closure
    monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", 64)
    monkeypatch.setattr(gap_boxes, "LONGEST_STEP", 1)
    clock = _Ticks()
    monkeypatch.setattr(gap_boxes, "time", clock)
    ens, q = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    if largest_gap(enc, tab, gap_bound(ens), _offer(ens), TOLERANCE, FAR).boxes == 0:
        pytest.skip("the root's bound is the answer: no box searched")
    ticks, clock.now = clock.now, 0.0
    monkeypatch.setattr(gap_kernel, "BEST_FIRST_SHARE", 0.875)
    monkeypatch.setattr(gap_kernel, "CLOSE_MARGIN", math.inf)  # switched whatever its pace
    calls = _switches(monkeypatch)
    out = largest_gap(enc, tab, gap_bound(ens), _offer(ens), TOLERANCE, 4 * ticks)
    assert out.proven
    assert calls
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_a_search_with_neither_a_deadline_nor_a_box_limit_keeps_its_frames(monkeypatch):
    monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", 64)
    calls = _switches(monkeypatch)
    for i in range(0, 24, 3):
        ens, q = _case(i)
        enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
        largest_gap(enc, pair_tables(enc), gap_bound(ens), _offer(ens), TOLERANCE, FAR)
    assert calls == []


def _rows(boxes: np.ndarray) -> list[bytes]:
    return sorted(row.tobytes() for row in boxes)


def test_the_flush_to_best_first_keeps_every_open_box_and_the_upper_bound():
    # the children kept go on the heap: the same open boxes and upper bound, none kept
    flushed = 0
    for tab in _tables():
        search = _search_of(tab, 64)
        for _ in range(40):
            if search.step(-math.inf, 1)[0] == gap_kernel.EMPTY:
                break
        if not int(search.frames[7][0]):
            continue
        boxes, upper = _rows(search.open_boxes()), search.upper()
        search.best_first(-math.inf)
        assert not search.keeps_frames
        assert _rows(search.open_boxes()) == boxes
        assert search.upper() == upper
        flushed += 1
    assert flushed > 5


def test_a_certificate_s_tiling_counts_the_boxes_flushed_to_the_heap():
    # the boxes recorded and those open tile the pair space before and after the flush
    flushed = 0
    for tab in _tables():
        b = _Bounds(tab)
        root = b.upper(b.top(np.ones(b.n, dtype=bool)))
        search = gap_kernel.KernelSearch(tab, b.order, root, recording=True, frames=64)
        for _ in range(40):
            if search.step(-math.inf, 1)[0] == gap_kernel.EMPTY:
                break
        if not int(search.frames[7][0]):
            continue
        before = _rows(search.tiling())
        search.best_first(-math.inf)
        assert _rows(search.tiling()) == before
        while search.step(-math.inf, 64)[0] != gap_kernel.EMPTY:
            pass
        assert len(search.open_boxes()) == 0 and len(search.tiling()) >= len(before)
        flushed += 1
    assert flushed > 5


@pytest.mark.parametrize("i", [4, 9, 11, 16])
def test_a_work_budget_s_search_is_best_first_s_whatever_the_frames_and_the_steps(i, monkeypatch):
    # a work budget's search keeps no children (its bracket at N boxes must not move with
    # DIVE_FRAMES): one box a step or the usual steps, best first's boxes and bracket
    ens, q = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    calls = _switches(monkeypatch)
    out = set()
    for frames, longest in ((0, 1 << 22), (64, 1), (64, 1 << 22)):
        monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", frames)
        monkeypatch.setattr(gap_boxes, "LONGEST_STEP", longest)
        got = largest_gap(enc, tab, gap_bound(ens), _offer(ens), TOLERANCE, FAR, box_limit=60)
        out.add((got.boxes, got.upper, got.lower))
    assert len(out) == 1 and out.pop()[0] == 60
    assert calls == []
