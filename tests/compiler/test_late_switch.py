"""A timed max-gap search keeping frames goes best first in the last BEST_FIRST_SHARE of
its time only while its upper bound is not on course to reach the floor by the deadline
(search/late_switch.py, gap_boxes._late_best_first): at the pace it fell over the last
share of its time, with CLOSE_MARGIN to spare. Looked at once a step, on a clock one
tick a read."""

from __future__ import annotations

import math

import pytest

from treesens.compiler.query import Gap
from treesens.search import gap_boxes, gap_kernel, gap_kernel_compile
from treesens.search.gap_boxes import largest_gap
from treesens.search.gap_units import gap_bound
from treesens.search.late_switch import UpperFall
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_gap_kernel_frames import _offer, _switches, _Ticks
from treesens.tests.compiler.test_gap_kernel_lazy import FAR, TOLERANCE, _case

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

LIMIT = 100.0  # ticks from the search's start to its deadline
FLOOR = 2.0  # rows


class _Falling:
    """A search keeping frames whose upper bound (rows) is ``course(tick)``."""

    def __init__(self, clock: _Ticks, course):
        self.clock, self.course = clock, course
        self.switched_at: float | None = None

    @property
    def keeps_frames(self) -> bool:
        return self.switched_at is None

    def upper(self) -> float:
        return self.course(self.clock.now)

    def best_first(self, u_floor: float) -> None:
        self.switched_at = self.clock.now


def _run(monkeypatch, course) -> float | None:
    """The tick at which a search on ``course`` went best first, looked at once a tick
    from its start to its deadline or to its bound reaching the floor (None: never)."""
    clock = _Ticks()
    monkeypatch.setattr(gap_boxes, "time", clock)
    search, fall = _Falling(clock, course), UpperFall()
    while clock.now < LIMIT and search.keeps_frames and search.upper() > FLOOR:
        gap_boxes._late_best_first(search, FLOOR, 0.0, LIMIT, fall)
    return search.switched_at


def _closing_at(tick: float):
    """A bound falling at one pace from 10 rows to the floor at ``tick``."""
    return lambda now: 10.0 - (10.0 - FLOOR) * now / tick


def test_a_search_on_course_to_close_by_its_deadline_keeps_its_frames_past_the_share(
    monkeypatch,
):
    # at the pace it fell, it reaches the floor at 80% of its limit: no switch at 70%
    assert _run(monkeypatch, _closing_at(0.8 * LIMIT)) is None


def test_a_search_not_on_course_to_close_switches_where_the_share_begins(monkeypatch):
    assert _run(monkeypatch, _closing_at(1.5 * LIMIT)) == pytest.approx(
        (1 - gap_kernel.BEST_FIRST_SHARE) * LIMIT, abs=1.0
    )


def test_a_search_within_the_margin_of_its_deadline_switches(monkeypatch):
    # on course to reach the floor at 98% of its limit: less than CLOSE_MARGIN to spare
    assert _run(monkeypatch, _closing_at(0.98 * LIMIT)) is not None


def test_a_search_whose_fall_slows_past_the_share_switches_then(monkeypatch):
    # on course at 70% (the floor at 80%), then flat from 75%: it switches within the
    # share, later than where it begins
    def course(now):
        return _closing_at(0.8 * LIMIT)(min(now, 0.75 * LIMIT))

    switched = _run(monkeypatch, course)
    assert switched is not None
    assert (1 - gap_kernel.BEST_FIRST_SHARE) * LIMIT + 1 < switched < LIMIT


def test_a_search_whose_bound_does_not_fall_switches_where_the_share_begins(monkeypatch):
    switched = _run(monkeypatch, lambda now: 10.0)
    assert switched == pytest.approx((1 - gap_kernel.BEST_FIRST_SHARE) * LIMIT, abs=1.0)


def test_the_bracket_of_a_search_that_cannot_close_is_best_first_s_from_the_share(monkeypatch):
    # deadlines at a quarter and a half of the ticks each search closes in (one box a
    # step): the same boxes and bracket as a search switched where the share begins
    # whatever its pace (CLOSE_MARGIN infinite)
    monkeypatch.setattr(gap_kernel, "DIVE_FRAMES", 64)
    monkeypatch.setattr(gap_boxes, "LONGEST_STEP", 1)
    clock = _Ticks()
    monkeypatch.setattr(gap_boxes, "time", clock)
    switched = 0
    for i in range(0, 24, 2):
        ens, q = _case(i)
        enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
        tab = pair_tables(enc)
        clock.now = 0.0
        largest_gap(enc, tab, gap_bound(ens), _offer(ens), TOLERANCE, FAR)
        ticks = clock.now
        for share in (0.25, 0.5):
            out = {}
            for margin in (gap_kernel.CLOSE_MARGIN, math.inf):
                with monkeypatch.context() as m:
                    m.setattr(gap_kernel, "CLOSE_MARGIN", margin)
                    calls = _switches(m)
                    clock.now = 0.0
                    got = largest_gap(
                        enc, tab, gap_bound(ens), _offer(ens), TOLERANCE, share * ticks
                    )
                out[margin] = (got.proven, got.boxes, got.upper, got.lower, calls)
            assert out[gap_kernel.CLOSE_MARGIN] == out[math.inf]
            switched += bool(out[math.inf][4])
    assert switched > 10
