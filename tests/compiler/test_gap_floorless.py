"""The floorless seed (search/gap_floorless.py): where the seed's best pair comes near the
saturation slack and misses it, the pairs a short box search with no floor resolves,
polished, are offered before the search proper. Only ever pairs: the upper bound is
still the search's alone."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from treesens.answers.work import Work
from treesens.compiler.query import Gap
from treesens.search import gap_floorless, gap_kernel, gap_kernel_compile, gap_search, gap_units
from treesens.search.gap_floorless import floorless_seed, missed
from treesens.search.gap_search import box_largest_gap
from treesens.search.gap_seed import saturation_slack
from treesens.search.gap_units import BestPair, achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.search.tolerance import Tolerance
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.compiler.test_gap_late_polish import SEEDED
from treesens.tests.compiler.test_gap_seed import TOLERANCE
from treesens.tests.compiler.test_gap_seed import _case as _seeded_case
from treesens.tests.max_gap_oracle import exact_max_gap

FAR = 1e9

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")


def _encoding(i: int):
    ens, q = _seeded_case(i)
    return ens, q, pair_encoding(ens, q.with_(gap=Gap(0.0)))


def _saturation(ens) -> float:
    return saturation_slack(gap_bound(ens), TOLERANCE)


def test_the_floorless_seed_runs_only_where_the_seeds_pair_is_near_the_saturation_slack():
    ens, _q, enc = _encoding(SEEDED[0])
    tol, sat = Tolerance(TOLERANCE), _saturation(ens)
    near = 1.0 / (1.0 + math.exp(-(sat - gap_floorless.FLOORLESS_NEAR / 2))) - 0.5
    assert missed(enc, near, tol, sat)
    assert not missed(enc, 0.5 - TOLERANCE, tol, sat)  # saturated: the seed's pair ends it
    assert not missed(enc, 0.3, tol, sat)  # far below: the search resolves pairs itself
    assert not missed(enc, -math.inf, tol, sat)  # no pair at all: neither


def test_the_floorless_seed_does_not_run_with_the_heuristic_off():
    ens, q = _seeded_case(SEEDED[0])
    off = q.planned(options=q.plan.options.with_(heuristic=False))
    enc = pair_encoding(ens, off.with_(gap=Gap(0.0)))
    near = 0.5 - 2 * TOLERANCE
    assert not missed(enc, near, Tolerance(TOLERANCE), _saturation(ens))


def _floorless(ens, enc, best):
    """The floorless seed of ``enc``, offering to ``best``, with time to spare."""
    tolerance = Tolerance(TOLERANCE)
    offer = best.offer_for(enc)
    return floorless_seed(
        enc, pair_tables(enc), offer, tolerance, _saturation(ens), time.time() + FAR
    )


def test_the_floorless_seeds_pairs_are_replayed_offers():
    ens, q, enc = _encoding(SEEDED[0])
    best = BestPair(ens, q)
    fl = _floorless(ens, enc, best)
    assert fl.pairs > 0 and best.offered == fl.pairs + fl.polished
    p = ens.proba(np.stack(best.pair))[:, 1]
    assert best.gap == achieved_gap(p[0], p[1])


def test_the_floorless_search_stops_at_its_pairs(monkeypatch):
    monkeypatch.setattr(gap_floorless, "FLOORLESS_PAIRS", 2)
    ens, q, enc = _encoding(SEEDED[0])
    best = BestPair(ens, q)
    fl = _floorless(ens, enc, best)
    assert fl.pairs == 2


def _polishes(monkeypatch, raise_by: float) -> tuple[int, int]:
    """The floorless seed's resolved pairs and polishes offered on SEEDED[0], each
    polish returning its start pair, offered at its gap plus ``raise_by``."""
    ens, q, enc = _encoding(SEEDED[0])
    best = BestPair(ens, q)
    offer, polishing = best.offer_for(enc), [False]

    def unchanged(_enc, x1, x2, *_a, **_k):
        polishing[0] = True
        return x1, x2, 0.0

    def offered(x1, x2):
        got = offer(x1, x2)
        bump = raise_by if polishing[0] else 0.0
        polishing[0] = False
        return None if got is None else got + bump

    monkeypatch.setattr(gap_floorless, "polish_pair", unchanged)
    fl = floorless_seed(
        enc, pair_tables(enc), offered, Tolerance(TOLERANCE), _saturation(ens), time.time() + FAR
    )
    return fl.pairs, fl.polished


def test_no_pair_is_polished_past_the_first_where_the_first_raises_nothing(monkeypatch):
    pairs, polished = _polishes(monkeypatch, raise_by=0.0)
    assert pairs >= 2 and polished == 1


def test_the_best_pairs_are_each_polished_while_the_first_raises_the_best_gap(monkeypatch):
    pairs, polished = _polishes(monkeypatch, raise_by=1e-3)
    assert polished == min(pairs, gap_floorless.FLOORLESS_POLISHED) >= 2


@pytest.mark.parametrize("i", SEEDED)
def test_each_pair_the_floorless_search_resolves_beats_the_last_by_the_tolerance(i):
    ens, q, enc = _encoding(i)
    best = BestPair(ens, q)
    tol = Tolerance(TOLERANCE)
    found, _boxes = gap_floorless._resolved(
        enc, pair_tables(enc), best.offer_for(enc), tol, time.time() + FAR
    )
    gaps = [g for g, _pair in found]
    assert all(b >= a + TOLERANCE for a, b in zip(gaps, gaps[1:]))


def _resolved(i: int, until: float) -> tuple[int, int]:
    """The floorless search's resolved pairs and boxes on SEEDED case ``i``."""
    ens, q, enc = _encoding(i)
    best = BestPair(ens, q)
    found, boxes = gap_floorless._resolved(
        enc, pair_tables(enc), best.offer_for(enc), Tolerance(TOLERANCE), until
    )
    return len(found), boxes


def test_the_floorless_search_stops_its_stall_in_boxes_past_its_last_pair(monkeypatch):
    monkeypatch.setattr(gap_floorless, "FLOORLESS_STALL", 10**9)
    every, _boxes = _resolved(SEEDED[0], time.time() + FAR)
    monkeypatch.setattr(gap_floorless, "FLOORLESS_STALL", 20)
    pairs, boxes = _resolved(SEEDED[0], time.time() + FAR)
    assert 0 < pairs < every  # the stall ended it, not the pairs' cap or the heap
    monkeypatch.setattr(gap_floorless, "FLOORLESS_PAIRS", pairs)
    _pairs, at_last = _resolved(SEEDED[0], time.time() + FAR)
    assert boxes == at_last + 20


def test_the_clock_caps_a_floorless_search_whose_pairs_keep_coming(monkeypatch):
    monkeypatch.setattr(gap_floorless, "FLOORLESS_STALL", 10**9)
    every, _boxes = _resolved(SEEDED[0], time.time() + FAR)
    clock = iter(range(10**9))  # each look at the clock a second later than the last
    monkeypatch.setattr(gap_floorless.time, "time", lambda: float(next(clock)))
    pairs, _boxes = _resolved(SEEDED[0], 8.0)
    assert pairs < every


def _floorless_forced(monkeypatch):
    """The floorless seed run whatever the seed's pair."""
    monkeypatch.setattr(gap_search, "missed", lambda *a: True)


@pytest.mark.parametrize("i", SEEDED)
def test_a_max_gap_with_the_floorless_seed_brackets_the_exact_gap(i, monkeypatch):
    _floorless_forced(monkeypatch)
    ens, q = _seeded_case(i)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert res.stats["box_search"]["seed"]["floorless"]["pairs"] > 0
    assert out.proven and not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_a_search_whose_seeds_pair_is_far_below_saturation_runs_no_floorless_seed():
    ens, q = _seeded_case(SEEDED[0])
    assert exact_max_gap(ens, q.vary) < 0.49
    res, _out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert res.stats["box_search"]["seed"]["floorless"] is None


def test_a_work_budgets_search_runs_no_floorless_seed_and_its_answer_does_not_depend_on_the_clock(
    monkeypatch,
):
    _floorless_forced(monkeypatch)
    ens, q = _seeded_case(SEEDED[0])
    answers = []
    clock, deadline = iter(range(10**9)), time.time() + FAR
    for slow in (False, True):
        if slow:  # each look at the clock a second later than the last
            monkeypatch.setattr(gap_search.time, "time", lambda: float(next(clock)))
        res, out = box_largest_gap(ens, q, TOLERANCE, deadline, work=Work(10**6))
        assert res.stats["box_search"]["seed"]["floorless"] is None
        answers.append((out.lower, out.upper, out.boxes, gap_units.shown_gap(ens, out.lower)))
    assert answers[0] == answers[1]


def test_the_floorless_search_goes_on_from_the_best_box_as_often_as_a_search_for_pairs(
    monkeypatch,
):
    # its pairs are the boxes it resolves: best first resolves the highest; a proof's search
    # leaves its dives for the best box far less often (gap_kernel.DIVE_CHECK)
    checks = []
    made = gap_kernel.KernelSearch

    def recorded(*args, **kwargs):
        search = made(*args, **kwargs)
        checks.append(int(search.frames[7][1]))
        return search

    monkeypatch.setattr(gap_kernel, "KernelSearch", recorded)
    ens, q, enc = _encoding(SEEDED[0])
    _floorless(ens, enc, BestPair(ens, q))
    assert checks == [gap_kernel.PAIRS_DIVE_CHECK]
    assert gap_kernel.PAIRS_DIVE_CHECK < gap_kernel.DIVE_CHECK
