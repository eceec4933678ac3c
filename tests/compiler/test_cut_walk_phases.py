"""The cut walk wired into the max-gap search (cut_walk_phases.py, TREESENS_CUT_WALK): off
unless asked for, and off while recording; on after a box at one floor, its three phases
(a recording search at a higher floor, the walk of its cuts, a search from the boxes the
walk left open) prove the brute-force largest gap; a walk that loses its open boxes does not;
out of their share of the time left they leave the rest to the main search. With
TREESENS_CUT_WALK_OWN (no phase 1, the walk cutting where the kernel's rule says) as well,
the same; a walk whose cuts drop a side does not; and a walk too slow for its share gives
up to the main search, which proves the gap, where taken as done it would not. Ctrl-C in
the walk's compiled code ends the search interrupted, as in the main search's."""

from __future__ import annotations

import math
import os
import time
from types import SimpleNamespace

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.compiler.query import Gap
from treesens.search import cut_walk, cut_walk_phases, gap_kernel_compile, walk_setting
from treesens.search.cut_walk import CutWalk
from treesens.search.gap_boxes import largest_gap
from treesens.search.gap_search import box_largest_gap
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_compiled_calls import _as_numba_raises
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.compiler.test_gap_kernel_lazy import (
    FAR,
    TOLERANCE,
    _case,
    _proven_brute_force,
    _search,
)
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import brute_force_largest_change

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CASES = range(12)
AT_ONCE = (1.0, 1)  # rise_rows, after_boxes: the phases run after the first box
WALKED = 2  # a case whose phases reach the walk, recorded or its own


def _proves_brute_force(i: int, monkeypatch):
    return _proven_brute_force(i, True, monkeypatch)


def _brute_force_problems(monkeypatch) -> list:
    """Every case's bracket's problems against the brute-force largest gap."""
    problems = []
    for i in CASES:
        ens, q, _, out = _search(i, True, monkeypatch)
        problems += _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)
    return problems


def test_the_walk_is_off_where_treesens_cut_walk_says_off_0_or_empty():
    for off in ("", "0", "off", " OFF "):
        assert walk_setting.cut_walk_setting(off) is None


def test_a_cut_walk_setting_of_rise_and_boxes_walks_a_feature_of_any_number_of_values():
    assert walk_setting.cut_walk_setting("4.4,200000") == (4.4, 200000, 0)


def test_a_cut_walk_setting_may_name_the_fewest_values_a_walked_feature_has():
    assert walk_setting.cut_walk_setting("4.4,200000,8") == (4.4, 200000, 8)


def test_the_walk_is_on_by_default_with_its_own_cuts_over_features_of_8_values_or_more(
    monkeypatch,
):
    monkeypatch.delenv("TREESENS_CUT_WALK", raising=False)
    monkeypatch.delenv("TREESENS_CUT_WALK_OWN", raising=False)
    assert walk_setting.cut_walk() == (4.4, 200_000, 8) and walk_setting.own_cuts()


@pytest.mark.parametrize(
    "text", ["4.4", "4.4,many", "on", "4.4,200000,1,2", "4.4,200000,-1", "-1,5", "nan,5"]
)
def test_a_cut_walk_setting_that_does_not_parse_is_refused_not_taken_as_off(text):
    with pytest.raises(InputError, match='TREESENS_CUT_WALK=.*expected "rise_rows,after_boxes"'):
        walk_setting.cut_walk_setting(text)


def test_the_setting_is_read_where_a_search_starts_the_default_where_unset(monkeypatch):
    monkeypatch.delenv("TREESENS_CUT_WALK", raising=False)
    monkeypatch.setattr(walk_setting, "CUT_WALK_DEFAULT", (2.0, 7))
    assert walk_setting.cut_walk() == (2.0, 7)
    monkeypatch.setenv("TREESENS_CUT_WALK", "off")
    assert walk_setting.cut_walk() is None


def test_the_walk_cuts_its_own_boxes_for_1_or_on_and_not_for_0_off_or_empty():
    for on in ("1", "on", " ON "):
        assert walk_setting.own_cuts_setting(on) is True
    for off in ("", "0", "off", " OFF "):
        assert walk_setting.own_cuts_setting(off) is False


@pytest.mark.parametrize("text", ["2", "yes", "true", "4.4,200000"])
def test_an_own_cuts_setting_that_does_not_parse_is_refused_not_taken_as_off(text):
    with pytest.raises(InputError, match='TREESENS_CUT_WALK_OWN=.*expected "1" or "on"'):
        walk_setting.own_cuts_setting(text)


def test_the_own_cuts_setting_is_read_when_asked_the_default_where_unset(
    monkeypatch,
):
    monkeypatch.delenv("TREESENS_CUT_WALK_OWN", raising=False)
    monkeypatch.setattr(walk_setting, "OWN_CUTS_DEFAULT", True)
    assert walk_setting.own_cuts() is True
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "off")
    assert walk_setting.own_cuts() is False


def test_the_switch_is_due_once_after_boxes_at_one_floor():
    switch = cut_walk_phases.WalkSwitch((1.0, 10))
    assert not switch.due(0.5, 0, -1)
    assert not switch.due(0.6, 9, -1)  # a new floor: counted again from box 9
    assert not switch.due(0.6, 18, -1)
    assert switch.due(0.6, 19, -1)
    assert not switch.due(0.6, 40, -1)


def _phases_run(monkeypatch) -> list:
    ends = []
    run = cut_walk_phases.run_phases

    def spy(*args, **kw):
        out = run(*args, **kw)
        ends.append(out[0])
        return out

    monkeypatch.setattr(cut_walk_phases, "run_phases", spy)
    monkeypatch.setenv("TREESENS_CUT_WALK", "{},{}".format(*AT_ONCE))
    if "TREESENS_CUT_WALK_OWN" not in os.environ:  # a record's cuts, unless a test asks
        monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "0")
    return ends


@pytest.mark.parametrize("i", CASES)
def test_the_phases_prove_the_brute_force_largest_gap(i, monkeypatch):
    ends = _phases_run(monkeypatch)
    out = _proves_brute_force(i, monkeypatch)
    assert out.boxes <= 1 or (ends and ends[0] is not None and ends[0].complete)


def test_the_walk_leaves_boxes_open_for_phase_3(monkeypatch):
    _phases_run(monkeypatch)
    walk, left = cut_walk_phases.walk_cuts, []

    def spy(*args, **kw):
        out = walk(*args, **kw)
        left.append(len(out.open))
        return out

    monkeypatch.setattr(cut_walk_phases, "walk_cuts", spy)
    for i in CASES:
        _search(i, True, monkeypatch)
    assert sum(left) > 0


def test_a_walk_that_loses_its_open_boxes_fails_brute_force(monkeypatch):
    _phases_run(monkeypatch)
    walk = cut_walk_phases.walk_cuts

    def unsound(*args, **kw):
        out = walk(*args, **kw)
        out.open.clear()  # phase 3 never searches them
        return out

    monkeypatch.setattr(cut_walk_phases, "walk_cuts", unsound)
    assert _brute_force_problems(monkeypatch)


def test_a_recording_search_runs_no_phases_its_certificate_is_the_main_search_s(monkeypatch):
    ends = _phases_run(monkeypatch)
    ens, q = _case(2)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(enc, pair_tables(enc), gap_bound(ens), offer, TOLERANCE, FAR, recording=True)
    assert out.proven and out.tiling is not None
    assert ends == []


def test_the_phases_upper_bound_is_the_largest_bound_closed_not_the_walks_floor(monkeypatch):
    # the floor's is the best gap plus the tolerance and the rows' rounding allowance
    ends = _phases_run(monkeypatch)
    walk, floors = cut_walk_phases.walk_cuts, []

    def spy(mt, recorded, floor_rows, **kw):
        floors.append(floor_rows)
        return walk(mt, recorded, floor_rows, **kw)

    monkeypatch.setattr(cut_walk_phases, "walk_cuts", spy)
    for i in CASES:
        _search(i, True, monkeypatch)
    assert any(end.upper < floor for end, floor in zip(ends, floors, strict=True))


@pytest.mark.parametrize("past, stops", [(-0.01, False), (0.01, True)])
def test_the_walk_stops_at_the_phases_share_of_the_time_left(past, stops, monkeypatch):
    # a walk that will not close must not eat the deadline: the main search keeps the rest
    _phases_run(monkeypatch)
    start, offset = time.time(), [0.0]
    monkeypatch.setattr(cut_walk_phases, "time", SimpleNamespace(time=lambda: start + offset[0]))
    walk, asked = cut_walk_phases.walk_cuts, []

    def spy(*args, stop, **kw):
        offset[0] = (cut_walk_phases.PHASES_SHARE + past) * (FAR - start)
        asked.append(stop(CutWalk()))
        offset[0] = 0.0
        return walk(*args, stop=stop, **kw)

    monkeypatch.setattr(cut_walk_phases, "walk_cuts", spy)
    _search(0, True, monkeypatch)
    assert asked[:1] == [stops]


def test_phases_out_of_their_share_leave_the_main_search_to_prove_the_gap(monkeypatch):
    ends = _phases_run(monkeypatch)
    monkeypatch.setattr(cut_walk_phases, "PHASES_SHARE", 0.0)  # phase 3: one step, then out
    for i in CASES:
        _proves_brute_force(i, monkeypatch)
    assert any(end is not None and not end.complete for end in ends)


def test_a_walk_leaving_most_recorded_boxes_open_gives_up_to_the_main_search(monkeypatch):
    ends = _phases_run(monkeypatch)
    monkeypatch.setattr(cut_walk_phases, "GIVE_UP_AFTER", 1)
    monkeypatch.setattr(cut_walk_phases, "OPEN_SHARE", 0.0)
    monkeypatch.setattr(cut_walk, "STOP_EVERY", 1)
    for i in CASES:
        _proves_brute_force(i, monkeypatch)
    assert None in ends


def test_a_walk_is_too_coarse_past_its_share_of_open_recorded_boxes():
    few = CutWalk(reached=cut_walk_phases.GIVE_UP_AFTER - 1, open=[0] * 500)
    half = CutWalk(reached=1000, open=[0] * 500)
    most = CutWalk(reached=1000, open=[0] * 501)
    assert not cut_walk_phases.too_coarse(few)
    assert not cut_walk_phases.too_coarse(half)
    assert cut_walk_phases.too_coarse(most)


def test_a_record_under_its_least_share_of_after_boxes_is_not_walked(monkeypatch):
    # cut too coarsely for the walk: the main search goes on, as if the phases had not run
    ends = _phases_run(monkeypatch)
    monkeypatch.setattr(cut_walk_phases, "RECORD_LEAST", 1e9)
    walks = []
    monkeypatch.setattr(cut_walk_phases, "walk_cuts", lambda *a, **kw: walks.append(a))
    for i in CASES:
        _proves_brute_force(i, monkeypatch)
    assert walks == [] and ends and all(end is None for end in ends)


@pytest.mark.parametrize("i", CASES)
def test_the_phases_with_own_cuts_prove_the_brute_force_largest_gap(i, monkeypatch):
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "1")
    monkeypatch.setattr(cut_walk_phases, "beaten", lambda walk: False)  # phase 3 searches them
    ends = _phases_run(monkeypatch)
    out = _proves_brute_force(i, monkeypatch)
    assert out.boxes <= 1 or (ends and ends[0] is not None and ends[0].complete)


def test_own_cuts_that_drop_a_side_fail_brute_force(monkeypatch):
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "1")
    _phases_run(monkeypatch)
    split = cut_walk.split_box
    monkeypatch.setattr(cut_walk, "split_box", lambda *a: split(*a)[1:])  # the yes side only
    assert _brute_force_problems(monkeypatch)


def test_an_own_walk_gives_up_once_its_pace_says_it_will_not_end_within_its_share():
    few = CutWalk(visited=cut_walk_phases.OWN_GIVE_UP_AFTER - 1, done=0.0)
    on_pace = CutWalk(visited=cut_walk_phases.OWN_GIVE_UP_AFTER, done=0.5)
    behind = CutWalk(visited=cut_walk_phases.OWN_GIVE_UP_AFTER, done=0.4)
    assert not cut_walk_phases.too_slow(few, 50.0, 100.0)
    assert not cut_walk_phases.too_slow(on_pace, 49.0, 100.0)
    assert cut_walk_phases.too_slow(behind, 41.0, 100.0)


def _own_walks_give_up_at_once(monkeypatch) -> list:
    # at its first box an own walk has done none of its tree: too slow for any share
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "1")
    monkeypatch.setattr(cut_walk_phases, "OWN_GIVE_UP_AFTER", 1)
    monkeypatch.setattr(cut_walk, "STOP_EVERY", 1)
    return _phases_run(monkeypatch)


def test_an_own_walk_too_slow_for_its_share_gives_up_to_the_main_search(monkeypatch):
    ends = _own_walks_give_up_at_once(monkeypatch)
    for i in CASES:
        _proves_brute_force(i, monkeypatch)
    assert ends and all(end is None for end in ends)


def test_an_own_walk_taken_as_done_when_it_gave_up_fails_brute_force(monkeypatch):
    _own_walks_give_up_at_once(monkeypatch)
    walk = cut_walk_phases.walk_own

    def unsound(*args, **kw):
        out = walk(*args, **kw)
        out.stopped = False  # the boxes left on its stack are never searched
        return out

    monkeypatch.setattr(cut_walk_phases, "walk_own", unsound)
    assert _brute_force_problems(monkeypatch)


def test_an_own_walk_is_beaten_once_it_leaves_a_box_open():
    assert not cut_walk_phases.beaten(CutWalk(visited=10**6))
    assert cut_walk_phases.beaten(CutWalk(visited=1, open=[np.zeros(2)]))


def test_an_own_walk_that_leaves_a_box_open_gives_up_to_the_main_search(monkeypatch):
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "1")
    monkeypatch.setattr(cut_walk_phases, "OWN_GIVE_UP_AFTER", 1 << 62)  # beaten() alone
    monkeypatch.setattr(cut_walk, "STOP_EVERY", 1)
    ends = _phases_run(monkeypatch)
    for i in CASES:
        _proves_brute_force(i, monkeypatch)
    assert None in ends


@pytest.mark.parametrize("own", ["0", "1"])
def test_ctrl_c_in_the_walk_s_compiled_code_ends_the_search_interrupted_with_its_bound(
    own, monkeypatch
):
    # numba's dispatcher turns it into a SystemError: it ended "internal error", no bounds
    _phases_run(monkeypatch)
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", own)

    def interrupted(*args):
        raise _as_numba_raises(KeyboardInterrupt())

    monkeypatch.setattr("treesens.search.cut_walk_jit.box_bounds", interrupted)
    _, _, _, out = _search(WALKED, True, monkeypatch)
    assert out.interrupted and not out.proven and math.isfinite(out.upper)


def _regressor():
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(200, 3)).astype(float)
    y = 2.0 * X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=200)
    return treesens.load_model(xgb.XGBRegressor(n_estimators=20, max_depth=3, n_jobs=1).fit(X, y))


@pytest.mark.parametrize("own", ["0", "1"])
def test_a_regressors_change_has_no_pair_sum_row_to_walk_the_main_search_proves_it(
    own, monkeypatch
):
    # its one row is over both inputs, f(x1) - f(x2): the walk's bound reads a pair-sum row
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", own)
    ends = _phases_run(monkeypatch)
    ens = _regressor()
    r = treesens.max_gap(ens, ["f0"], tolerance=1e-4)
    m = r.max_gap
    assert r.status == "sensitive" and m["proven"] and ends == [None]
    assert m["lower"] <= brute_force_largest_change(ens, ["f0"]) <= m["upper"]


def test_an_open_box_no_pair_of_which_meets_the_relations_is_not_searched(monkeypatch):
    # the walk's bound reads no relation: an own walk left such a box open, phase 3
    # resolved it and asked its corner for ranks meeting them (relation_ranks: ValueError)
    from treesens.tests.campaigns.test_relation_claims import _brackets, _kinds_query
    from treesens.tests.compiler.test_max_gap_relations import _brute_max_gap, _Ratio
    from treesens.tests.feature_kinds import kinds_ensemble

    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "1")
    ends = _phases_run(monkeypatch)
    rng = np.random.default_rng([2026, 11, 28, 6, 1])  # test_relation_claims' ratio, seed 1
    ens = kinds_ensemble(601, int(rng.integers(2, 6)), int(rng.integers(1, 4)), n_classes=3)
    for _ in range(3):
        q, values = _kinds_query(rng, ens, classes=True)
        _brackets(ens, q, _brute_max_gap(ens, q, values, _Ratio(ens.proba, q.classes)))
    assert ends


def _walk_stats() -> dict | None:
    """Case WALKED's max gap through box_largest_gap: its stats' box_search cut_walk."""
    ens, q = _case(WALKED)
    res, _ = box_largest_gap(ens, q, TOLERANCE, FAR)
    return res.stats["box_search"].get("cut_walk")


def test_a_result_says_what_the_walk_did_and_how_it_ended(monkeypatch):
    _phases_run(monkeypatch)
    walk = _walk_stats()
    assert walk["ended"] == cut_walk_phases.PROVED and walk["cuts"] == "record"
    assert walk["visited"] >= walk["closed"] + walk["left_open"] > 0


def test_a_result_says_why_the_walk_gave_up(monkeypatch):
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "1")
    monkeypatch.setattr(cut_walk_phases, "OWN_GIVE_UP_AFTER", 1 << 62)  # beaten() alone
    monkeypatch.setattr(cut_walk, "STOP_EVERY", 1)
    _phases_run(monkeypatch)
    walk = _walk_stats()
    assert walk["ended"] == cut_walk_phases.BEATEN and walk["cuts"] == "own"


def test_a_result_with_the_walk_off_says_nothing_of_it(monkeypatch):
    monkeypatch.setenv("TREESENS_CUT_WALK", "off")
    assert _walk_stats() is None


def test_a_feature_of_fewer_values_than_the_setting_asks_is_not_walked(monkeypatch):
    ends = _phases_run(monkeypatch)
    monkeypatch.setenv("TREESENS_CUT_WALK", "{},{},1000".format(*AT_ONCE))
    walk = _walk_stats()
    assert walk["ended"] == cut_walk_phases.FEW_VALUES and walk["visited"] == 0 and ends == []
