"""The box search stage of a solve (search/boxes.py): it answers before the backend,
within its share of the time, and only when it applies."""

from __future__ import annotations

import time

import pytest

from treesens.answers.result import INSENSITIVE, SENSITIVE, UNKNOWN
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureRelation, Gap, Query
from treesens.driver.solve import _start, solve_query
from treesens.search import boxes
from treesens.search import pair_boxes as boxes_tables
from treesens.tests.oracle import brute_force_sensitive, random_ensemble
from treesens.tests.pass_cases import two_feature_ensemble


def _context(ens, q: Query, seconds: float = 60.0):
    return _start(ens, q, None, time.time() + seconds, None, False, None)


def _query(vary, gap: Gap, box_search: bool = True, **kw) -> Query:
    opts = (("heuristic_effort", 0.001), ("box_search", box_search))
    return Query(vary=tuple(vary), gap=gap, plan=Plan(timeout=60.0, options=opts), **kw)


def test_the_box_stage_proves_a_gap_no_pair_reaches():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))
    assert boxes.box_stage(ctx)
    assert ctx.result.status == INSENSITIVE
    assert ctx.stats["proved_by"] == boxes.FOUND_BY


def test_the_box_stage_answers_with_a_replay_checked_pair():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.25, "margin")))
    assert boxes.box_stage(ctx)
    assert ctx.result.status == SENSITIVE and ctx.result.validated
    assert ctx.stats["found_by"] == boxes.FOUND_BY


def test_the_box_stage_does_not_run_when_switched_off():
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin"), False))
    assert not boxes.box_stage(ctx)
    assert ctx.result.status == UNKNOWN and "box_search" not in ctx.stats


def test_the_box_stage_runs_on_a_query_with_relations_between_the_inputs():
    relation = (FeatureRelation("x1", 1, "<=", 2),)
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin"), relations=relation))
    boxes.box_stage(ctx)
    assert "box_search" in ctx.stats


def test_the_box_stage_does_not_run_without_the_heuristic():
    q = Query(vary=("x1",), gap=Gap(1.6, "margin"), plan=Plan(options=(("heuristic", False),)))
    ctx = _context(two_feature_ensemble(), q)
    assert not boxes.box_stage(ctx)
    assert "box_search" not in ctx.stats


def test_the_box_stage_leaves_the_query_to_the_backend_when_out_of_time():
    ctx = _context(random_ensemble(7, 6, 3, 3, 3), _query(("f0",), Gap(0.1)), seconds=-1.0)
    assert not boxes.box_stage(ctx)
    assert ctx.result.status == UNKNOWN


def test_the_pipeline_agrees_with_the_oracle_with_the_box_stage_on():
    for seed in range(6):
        ens = random_ensemble(200 + seed, 5, 3, 3, 3, leaf_scale=1.0)
        q = _query(("f0",), Gap(0.2))
        res = solve_query(ens, q)
        assert (res.status == SENSITIVE) == brute_force_sensitive(ens, q)


def test_the_pipeline_answers_by_the_box_search_when_it_applies():
    res = solve_query(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))
    assert res.status == INSENSITIVE and res.stats["proved_by"] == boxes.FOUND_BY


def test_the_box_search_first_turn_is_half_of_a_short_time_left():
    assert boxes.box_turn(10.0) == 5.0


def test_the_box_search_first_turn_does_not_grow_with_a_long_time_left():
    assert boxes.box_turn(600.0) == boxes.FIRST_TURN


def test_without_a_time_limit_the_box_search_first_turn_still_ends():
    assert boxes.box_turn(float("inf")) == boxes.FIRST_TURN


def test_a_box_search_its_turn_left_unfinished_is_kept_to_go_on(monkeypatch):
    monkeypatch.setattr(boxes, "FIRST_TURN", 0.0)
    ctx = _context(random_ensemble(3, 12, 4, 4, 6, leaf_scale=0.8), _query(("f0",), Gap(0.15)))
    assert not boxes.box_stage(ctx)
    assert ctx.boxes is not None and ctx.stats["box_search"]["status"] == "gave up"


def test_the_box_stage_is_skipped_when_its_tables_would_pass_the_memory_bound(monkeypatch):
    monkeypatch.setattr(boxes_tables, "MAX_TABLE_BYTES", 64)
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))
    assert not boxes.box_stage(ctx)
    assert ctx.stats["box_search"]["status"] == "skipped"
    assert ctx.result.status == UNKNOWN


def test_a_query_whose_box_tables_are_too_large_is_answered_by_the_backend(monkeypatch):
    monkeypatch.setattr(boxes_tables, "MAX_TABLE_BYTES", 64)
    res = solve_query(two_feature_ensemble(), _query(("x1",), Gap(1.6, "margin")))
    assert res.status == INSENSITIVE
    assert res.stats.get("proved_by") != boxes.FOUND_BY


# tiny multiclass ensembles with "any" on one side: (seed, classes, (c1, c2), ratio)
ANY_CASES = [
    (seed, 3 + seed % 2, [(0, "any"), ("any", 1), (2, "any")][seed % 3], [1.2, 2.0, 4.0][seed % 3])
    for seed in range(12)
]


def test_a_multiclass_query_with_any_class_is_searched_one_pair_of_classes_at_a_time():
    ens = random_ensemble(500, 8, 2, 3, 3, n_classes=3, leaf_scale=1.5)
    ctx = _context(ens, _query(("f1",), Gap(1.2), classes=(0, "any")))
    boxes.box_stage(ctx)
    assert ctx.stats["box_search"]["class_pairs"] >= 1


@pytest.mark.parametrize("case", ANY_CASES, ids=lambda c: f"seed{c[0]}-{c[2]}-g{c[3]}")
def test_the_box_stage_agrees_with_brute_force_on_any_class(case):
    seed, n_classes, classes, ratio = case
    ens = random_ensemble(500 + seed, 8, 2, 3, 3, n_classes=n_classes, leaf_scale=1.5)
    q = _query(("f1",), Gap(ratio), classes=classes)
    r = solve_query(ens, q)
    assert r.status == (SENSITIVE if brute_force_sensitive(ens, q) else INSENSITIVE)
    assert r.stats.get("proved_by") == boxes.FOUND_BY or r.stats.get("found_by") in (
        boxes.FOUND_BY,
        "heuristic",
    )


def _first_pair_a_near_miss(monkeypatch) -> list:
    """The replay calls the first pair the box search finds a near miss (as the library's
    float32 sums may, on a gap's boundary); the calls are counted."""
    from treesens.answers.verdict import NearMiss

    replayed = boxes.check_pair
    calls = []

    def check(ens, q, enc, w):
        calls.append(w)
        return NearMiss(w, (0,)) if len(calls) == 1 else replayed(ens, q, enc, w)

    monkeypatch.setattr(boxes, "check_pair", check)
    return calls


def test_the_box_stage_rules_out_a_near_miss_box_and_goes_on(monkeypatch):
    calls = _first_pair_a_near_miss(monkeypatch)
    ctx = _context(two_feature_ensemble(), _query(("x1",), Gap(0.25, "margin")))
    assert boxes.box_stage(ctx)  # a second box's pair, which the replay accepts
    assert ctx.result.status == SENSITIVE and len(calls) == 2
    assert ctx.stats["box_search"]["near_misses"] == 1


def test_a_query_whose_box_stage_ends_past_the_deadline_starts_no_solver(monkeypatch):
    from treesens.driver import solve

    def box_stage_out_of_time(ctx) -> bool:
        ctx.deadline = time.time() - 1.0
        return False

    def solver_stage(ctx) -> None:
        raise AssertionError("the solver's stage started after the time limit")

    monkeypatch.setattr(solve, "heuristic_search", lambda ctx: False)
    monkeypatch.setattr(solve, "_box_stage", box_stage_out_of_time)
    monkeypatch.setattr(solve, "_solver_stage", solver_stage)
    res = solve_query(random_ensemble(7, 6, 3, 3, 3), _query(("f0",), Gap(0.1)))
    assert res.status == UNKNOWN and "time limit reached before the solver" in res.message


def test_a_pair_found_for_any_class_names_the_classes_it_meets():
    import numpy as np

    from treesens.compiler.replay import meets

    found = 0
    for seed, n_classes, classes, ratio in ANY_CASES:
        ens = random_ensemble(500 + seed, 8, 2, 3, 3, n_classes=n_classes, leaf_scale=1.5)
        r = solve_query(ens, _query(("f1",), Gap(ratio), classes=classes))
        if r.status != SENSITIVE:
            continue
        found += 1
        assert "any" not in r.classes
        assert [a for a in classes if a != "any"] == [
            c for c, a in zip(r.classes, classes) if a != "any"
        ]
        named = _query(("f1",), Gap(ratio), classes=tuple(r.classes))
        for copy, x in enumerate(("x1", "x2")):
            p = np.array(r.outputs[x])
            assert meets(ens, named, p, np.zeros(len(p)), copy)
    assert found >= 3


def _forest_at_a_float_tie():
    """A 3-class scikit-learn forest, and a pair of its cells over x0 whose averaged class
    fractions are P(0) = 3 P(1) exactly, which its float64 average misses by an ulp."""
    import numpy as np

    sk = pytest.importorskip("sklearn.ensemble")
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(40, 3)).astype(float)
    y = rng.integers(0, 3, size=40)
    return sk.RandomForestClassifier(n_estimators=2, max_depth=3, random_state=1).fit(X, y)


def test_a_multiclass_forest_s_near_miss_rules_its_box_out():
    # a forest's rows fix each leaf's class fractions (they sum to 1), so every pair of a
    # resolved box scores as its replayed pair: the box search proves the ratio no pair
    # meets by the library's average, the near miss's box ruled out

    import treesens
    from treesens.tests.oracle import cell_grid

    est = _forest_at_a_float_tie()
    r = treesens.check(est, vary=["x0"], gap=3.0, classes=(0, 1), backend="boxes")
    assert r.status == INSENSITIVE and r.stats["box_search"]["near_misses"] >= 1
    X, ns, nv = cell_grid(treesens.load_model(est), ["x0"])
    p = est.predict_proba(X).reshape(ns, nv, 3)
    x1 = (p[..., 0] >= 3.0 * p[..., 1]) & (p[..., 0] >= 3.0 * p[..., 2])
    x2 = (p[..., 1] >= 3.0 * p[..., 0]) & (p[..., 1] >= 3.0 * p[..., 2])
    assert not (x1.any(axis=1) & x2.any(axis=1)).any()
