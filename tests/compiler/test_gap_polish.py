"""The saturation ask's polish (search/gap_polish.py): from the heuristic's best pair, an
iterated local search on the smaller slack reaches pairs the ascent's own restarts do not
(the scale tier's saturated features stopped 0.01-0.2 in margin short of the saturation
slack), within a work bound that makes it deterministic."""

from __future__ import annotations

import time

import numpy as np

from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, GapKind, Query
from treesens.search import gap_polish
from treesens.search.gap_polish import polish_pair
from treesens.search.heuristic import find_witness, pair_ascent
from treesens.search.pair_scope import pair_encoding
from treesens.tests.oracle import random_ensemble

FAR = 1e9
SATURATION = 6.92  # the saturation slack at tolerance 1e-3, plus a float32 relaxation
ASCENT_WORK = 3000
POLISH_WORK = 20000


def _stuck_case():
    """30 trees over 5 features whose ascent stops at a smaller slack of 5.86 with
    3,000 row-tree evaluations and still with 23,000."""
    rng = np.random.default_rng([4752, 47])
    ens = random_ensemble(rng, 30, 3, 5, 8, leaf_scale=1.5)
    q = Query(vary=(ens.feature_names[0],), plan=Plan(timeout=60.0))
    return pair_encoding(ens, q.with_(gap=Gap(0.0, GapKind.PROB)))


def _smaller_slack(enc, x1: np.ndarray, x2: np.ndarray) -> float:
    a = pair_ascent(enc, 0, FAR, 0.0, None)
    return min(a.slacks([a.full_contrib(x1), a.full_contrib(x2)])[1])


def _ascent(enc, work: int):
    return find_witness(enc, FAR, seed=0, margin=SATURATION, work=work)


def test_the_polish_reaches_the_saturation_slack_where_the_ascent_stops_short():
    enc = _stuck_case()
    x1, x2, met = _ascent(enc, ASCENT_WORK)
    assert not met
    _p1, _p2, slack = polish_pair(enc, x1, x2, SATURATION, POLISH_WORK, time.time() + FAR)
    assert slack >= SATURATION > _smaller_slack(enc, x1, x2)


def test_the_ascent_given_the_polishs_work_too_still_stops_short():
    enc = _stuck_case()
    x1, x2, met = _ascent(enc, ASCENT_WORK + POLISH_WORK)
    assert not met and _smaller_slack(enc, x1, x2) < SATURATION - 1.0


def test_the_polished_slack_is_the_pairs_own():
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    p1, p2, slack = polish_pair(enc, x1, x2, SATURATION, POLISH_WORK, time.time() + FAR)
    assert slack == _smaller_slack(enc, p1, p2)


def test_the_polished_pair_differs_only_in_the_varied_feature():
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    p1, p2, _slack = polish_pair(enc, x1, x2, SATURATION, POLISH_WORK, time.time() + FAR)
    shared = [f for f in range(len(p1)) if f not in enc.varying]
    assert np.array_equal(p1[shared], p2[shared])


def test_the_polish_is_deterministic_for_a_given_work_bound():
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    out = [
        polish_pair(enc, x1.copy(), x2.copy(), 50.0, POLISH_WORK, time.time() + FAR)
        for _ in range(2)
    ]
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2]


def test_the_polish_never_returns_a_pair_below_its_start():
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    _p1, _p2, slack = polish_pair(enc, x1, x2, 50.0, 2000, time.time() + FAR)
    assert slack >= _smaller_slack(enc, x1, x2)


def _seeds_of_rounds(monkeypatch) -> list[int]:
    """The random streams the polish's rounds ask pair_ascent for, in order."""
    seeds: list[int] = []
    real = gap_polish.pair_ascent

    def recorded(enc, seed, *args):
        seeds.append(seed)
        return real(enc, seed, *args)

    monkeypatch.setattr(gap_polish, "pair_ascent", recorded)
    return seeds


def test_a_round_that_raised_the_smaller_slack_is_followed_by_one_with_its_own_stream(
    monkeypatch,
):
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    seeds = _seeds_of_rounds(monkeypatch)
    # the first round raises the smaller slack from 5.86 to 7.14, within FAR_BELOW of 8
    polish_pair(enc, x1, x2, 8.0, POLISH_WORK, time.time() + FAR, seed=0)
    assert seeds == [0, 1]


def test_a_polish_far_below_its_ask_runs_one_round(monkeypatch):
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    seeds = _seeds_of_rounds(monkeypatch)
    polish_pair(enc, x1, x2, 50.0, POLISH_WORK, time.time() + FAR, seed=0)
    assert seeds == [0]


def test_the_polish_runs_at_most_its_rounds(monkeypatch):
    enc = _stuck_case()
    x1, x2, _met = _ascent(enc, ASCENT_WORK)
    seeds = _seeds_of_rounds(monkeypatch)

    def raising(climb, best, margin, stall=None):  # every round raises the smaller slack by 1
        s = 10.0 + len(seeds)
        return gap_polish._Point(best.x, best.c, best.raw, [s, s])

    monkeypatch.setattr(gap_polish, "_round", raising)
    monkeypatch.setattr(gap_polish, "FAR_BELOW", FAR)
    polish_pair(enc, x1, x2, 50.0, POLISH_WORK, time.time() + FAR)
    assert seeds == list(range(gap_polish.ROUNDS))
