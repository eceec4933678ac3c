"""A check under relations between the inputs (``where x1.age <= x2.age``) runs the
heuristic stage (search/heuristic_stage.py) as a check without them does: the ascent
meets the relations (search/heuristic.py), its pair is replayed and reported only where
it meets them, and under ``x1.f == x2.f`` the ascent moves f on both inputs together.
Checked against brute force over every pair on models built in the IR and on the
library's own predict of trained models."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.dataset import Dataset
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, ModelOrigin, Tree
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, FeatureRelation, Gap, Query
from treesens.compiler.replay import library_output
from treesens.driver import solve_query
from treesens.driver.data_fallback import use_fallback
from treesens.search.boxes import HEURISTIC_PAIR
from treesens.search.heuristic import pair_ascent
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_bounds_as_domains import _ens, binary_library_model
from treesens.tests.compiler.test_feature_constraints import _random_query, brute
from treesens.tests.driver.test_box_stage import _context

# the relations on f2 (under x1.f2 < x2.f2 the XGBoost model's pair needs both values in
# one of f2's two intervals, x2's beside x1's)
ORDERS = ("<", "<=", ">", ">=", "==", "!=")
# the draw of test_bounds_as_domains' trained models whose features are all numbers
NUMERIC_MODEL = 73
HEURISTIC = "heuristic"


def _check(q: Query, **options) -> Query:
    """``q`` as a check whose solver stage comes after the heuristic alone."""
    return q.planned(timeout=30.0, options={"box_search": False, **options})


def test_a_check_under_a_relation_is_answered_by_the_heuristic(tmp_path):
    ens = binary_library_model("xgb-binary", NUMERIC_MODEL, tmp_path)
    q = Query(vary=("f2",), gap=Gap(0.0), relations=(FeatureRelation("f2", 1, ">", 2),))
    r = solve_query(ens, _check(q))
    assert r.status == "sensitive" and r.stats["found_by"] == HEURISTIC


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary"])
@pytest.mark.parametrize("op", ORDERS)
def test_the_heuristic_s_pair_meets_the_relation_on_a_trained_model(family, op, tmp_path):
    ens = binary_library_model(family, NUMERIC_MODEL, tmp_path)
    q = Query(vary=("f1", "f2"), gap=Gap(0.0), relations=(FeatureRelation("f2", 1, op, 2),))
    r = solve_query(ens, _check(q))
    assert r.status == "sensitive" and r.stats["found_by"] == HEURISTIC
    assert not constraint_violations(ens, q, r.witness_arrays.x1, r.witness_arrays.x2)


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary"])
def test_a_pair_in_one_wide_interval_under_a_strict_relation_shows_a_short_decimal(
    family, tmp_path
):
    # x1.f2 < x2.f2 with both below 0.55, in one interval of f2: x2's value beside x1's 0
    # is any of that interval, shown as a decimal of one or two digits (it was the float
    # after 0: 1.4e-45, or 1e-35 past LightGBM's zero band), and the library's replay
    # of that very pair stands
    ens = binary_library_model(family, NUMERIC_MODEL, tmp_path)
    q = Query(vary=("f1", "f2"), gap=Gap(0.0), relations=(FeatureRelation("f2", 1, "<", 2),))
    r = solve_query(ens, _check(q))
    w = r.witness_arrays
    assert r.status == "sensitive" and r.stats["found_by"] == HEURISTIC
    assert not constraint_violations(ens, q, w.x1, w.x2)
    assert w.x1[2] < w.x2[2] and float(f"{w.x2[2]:.2g}") == w.x2[2] != 0.0
    classes = library_output(ens, np.stack([w.x1, w.x2])).argmax(1)
    assert classes[0] != classes[1]


def _feature_rows(rng, ens, n: int) -> np.ndarray:
    """``n`` rows of values each feature takes: 0/1 for a binary one, whole numbers in
    [-3, 3] for an integer one, two-decimal numbers in [-3, 3] (within bounds) else."""
    cols = []
    for feat in ens.features:
        lo, hi = max(feat.lb, -3.0), min(feat.ub, 3.0)
        col = rng.uniform(lo, hi, size=n)
        if feat.kind == "binary":
            col = rng.integers(0, 2, size=n).astype(float)
        elif feat.integral:
            col = np.clip(np.round(col), math.ceil(lo), math.floor(hi))
        else:
            col = np.clip(col.round(2), lo, hi)
        cols.append(col)
    return np.column_stack(cols)


def test_a_pair_under_a_strict_relation_shows_data_values_where_the_data_holds_them(tmp_path):
    # x1.f2 < x2.f2 with both in one interval of f2: given rows whose f2 takes values
    # there, each input shows one of them, and every other feature a data value (a data
    # pair breaking the relation used to be dropped whole, for the search's own values),
    # the relation holds, and the library's classes of that very pair differ
    ens = binary_library_model("lgb-binary", NUMERIC_MODEL, tmp_path)
    X = _feature_rows(np.random.default_rng(3), ens, 200)
    data = Dataset(X, None, tuple(ens.feature_names))
    q = Query(vary=("f1", "f2"), gap=Gap(0.0), relations=(FeatureRelation("f2", 1, "<", 2),))
    r = solve_query(ens, _check(q, data=data))
    w = r.witness_arrays
    assert r.status == "sensitive" and r.stats["found_by"] == HEURISTIC
    assert w.x1[2] < w.x2[2]
    for x in (w.x1, w.x2):
        assert all(x[f] in X[:, f] for f in range(ens.n_features))
    classes = library_output(ens, np.stack([w.x1, w.x2])).argmax(1)
    assert classes[0] != classes[1]


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary"])
def test_a_check_given_data_under_a_relation_is_answered_by_the_heuristic_as_without(
    family, tmp_path
):
    # given data (not data-aware), the query is compiled before the heuristic, whose
    # encoding holds a NaN variable per feature the XGBoost model may miss: the heuristic
    # stood aside for it and CP-SAT answered, where without data it answers
    ens = binary_library_model(family, NUMERIC_MODEL, tmp_path)
    data = Dataset(
        _feature_rows(np.random.default_rng(3), ens, 200), None, tuple(ens.feature_names)
    )
    q = Query(vary=("f1", "f2"), gap=Gap(0.0), relations=(FeatureRelation("f2", 1, "<", 2),))
    r = solve_query(ens, _check(q, data=data))
    assert r.status == "sensitive" and r.stats["found_by"] == HEURISTIC
    assert not constraint_violations(ens, q, r.witness_arrays.x1, r.witness_arrays.x2)


@pytest.mark.parametrize("kind", ["real", "integer"])
@pytest.mark.parametrize("seed", range(4))
def test_a_check_under_relations_answers_as_brute_force_does(kind, seed):
    # the heuristic answers some of these, the solver the rest: each as brute force does,
    # each pair within the query's bounds and relations
    rng = np.random.default_rng([2026, 11, 28, 9, seed, len(kind)])
    ens = _ens(6200 + seed, kind)
    by_heuristic = 0
    for _ in range(8):
        q = _random_query(rng, ens, kind).with_(gap=Gap(float(rng.choice([0.0, 0.05]))))
        try:
            r = solve_query(ens, _check(q))
        except InputError:  # bounds and relations that leave no pair
            assert not brute(ens, q)
            continue
        assert r.status == ("sensitive" if brute(ens, q) else "insensitive"), (q, r.error)
        if r.status == "sensitive":
            assert not constraint_violations(ens, q, r.witness_arrays.x1, r.witness_arrays.x2)
            by_heuristic += r.stats["found_by"] == HEURISTIC
    assert by_heuristic


def test_a_strict_relation_on_a_shared_feature_stays_an_input_error_with_the_heuristic():
    # both inputs share f1, so x1.f1 < x2.f1 holds for no pair: the heuristic's pair,
    # found as if it held, is never reported, and the box search's input error stands
    ens = _ens(1)
    q = Query(vary=("f0",), gap=Gap(0.0), relations=(FeatureRelation("f1", 1, "<", 2),))
    with pytest.raises(InputError):
        solve_query(ens, q.planned(timeout=30.0))


def _stump(feature: int, threshold: float, yes: float, no: float, under=None) -> Tree:
    """``x < threshold`` -> ``yes`` else ``no``; ``under``: the stump sits below a split
    on ``under[0]`` < ``under[1]`` whose yes side is a leaf of 0."""
    if under is None:
        return Tree(
            feature=[feature, -1, -1],
            threshold=[threshold, 0.0, 0.0],
            left=[1, -1, -1],
            right=[2, -1, -1],
            default_left=[True] * 3,
            value=np.array([[0.0], [yes], [no]]),
            outputs=(0,),
        )
    return Tree(
        feature=[under[0], -1, feature, -1, -1],
        threshold=[under[1], 0.0, threshold, 0.0, 0.0],
        left=[1, -1, 3, -1, -1],
        right=[2, -1, 4, -1, -1],
        default_left=[True] * 5,
        value=np.array([[0.0], [0.0], [0.0], [yes], [no]]),
        outputs=(0,),
    )


def _gated_model() -> Ensemble:
    """g decides the score (by 3.5 either way) only where f >= 0.9, and by 0.5 elsewhere:
    a pair at gap 0.4 (a logit of 2.2 on each side) needs f at 0.9 or above on both
    inputs and g apart."""
    trees = (_stump(1, 0.5, -3.0, 3.0, under=(0, 0.9)), _stump(1, 0.5, -0.5, 0.5))
    return Ensemble(
        trees=trees,
        features=(Feature("f", "real", 0.0, 1.0), Feature("g", "real", 0.0, 1.0)),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        op="<",
        cast="float32",
        origin=ModelOrigin("hand-made", "f gates g"),
        replayer=None,
    )


def test_the_ascent_moves_a_feature_held_equal_on_both_inputs_together():
    ens = _gated_model()
    q = Query(
        vary=("f", "g"),
        gap=Gap(0.4),
        relations=(FeatureRelation("f", 1, "==", 2),),
        plan=Plan(timeout=30.0),
    )
    enc = pair_encoding(ens, q)
    ascent = pair_ascent(enc, 0, time.time() + 30.0, 0.0, None)
    start = np.array([0.1, 0.1])
    x1, x2, _s1, _s2, met = ascent.ascend(start.copy(), start.copy())
    p = ens.proba(np.stack([x1, x2]))[:, 1]
    assert met and x1[0] == x2[0] >= 0.9 and abs(p[0] - p[1]) >= 0.8


@pytest.mark.parametrize("op", ["<", ">", "!="])
def test_the_ascent_moves_both_inputs_into_one_interval_under_a_relation_equal_values_break(op):
    # the gap needs f at 0.9 or above on both inputs: one interval of f, which holds the
    # pair only with x2's value beside x1's
    ens = _gated_model()
    q = Query(
        vary=("f", "g"),
        gap=Gap(0.4),
        relations=(FeatureRelation("f", 1, op, 2),),
        plan=Plan(timeout=30.0),
    )
    ascent = pair_ascent(pair_encoding(ens, q), 0, time.time() + 30.0, 0.0, None)
    x1, x2, _s1, _s2, met = ascent.ascend(np.array([0.1, 0.1]), np.array([0.2, 0.1]))
    read = np.float32(np.stack([x1, x2]))
    p = ens.proba(np.stack([x1, x2]))[:, 1]
    assert met and not constraint_violations(ens, q, x1, x2)
    assert min(read[:, 0]) >= np.float32(0.9) and abs(p[0] - p[1]) >= 0.8


def _rows(rng, ens, kind: str) -> Dataset:
    """60 rows of ``ens``'s features in [-3, 3] (whole numbers for integer features)."""
    X = rng.uniform(-3.0, 3.0, size=(60, ens.n_features))
    return Dataset(np.floor(X) if kind == "integer" else X.round(2), None, tuple(ens.feature_names))


@pytest.mark.parametrize("kind", ["real", "integer"])
@pytest.mark.parametrize("seed", range(3))
def test_a_data_aware_check_under_relations_answers_as_brute_force_does(kind, seed):
    # its heuristic (the solver's hint from data rows, its pair over all inputs) takes
    # the relations: each answer is brute force's, each pair meets them, and some are the
    # heuristic's pair over all inputs
    rng = np.random.default_rng([2026, 11, 28, 10, seed, len(kind)])
    ens = _ens(6300 + seed, kind)
    data = _rows(rng, ens, kind)
    queries = [_random_query(rng, ens, kind).with_(gap=Gap(0.0), bounds=()) for _ in range(6)]
    assert _data_aware_answers_by_heuristic(ens, queries, data)


@pytest.mark.parametrize("seed", range(3))
def test_a_data_aware_check_under_bounds_answers_as_brute_force_does(seed):
    # its pair over all inputs is the heuristic's on the model the bounds narrow, where
    # each bound holds for both inputs alike (before, any bound kept the heuristic off):
    # each answer is brute force's, each pair meets the bounds and relations, and some
    # bounded queries' pairs are the heuristic's over all inputs
    rng = np.random.default_rng([2026, 11, 29, 5, seed])
    ens = _ens(6400 + seed, "real")
    data = _rows(rng, ens, "real")
    queries = []
    for _ in range(8):
        q = _random_query(rng, ens, "real").with_(gap=Gap(0.0))
        bounds = tuple(replace(b, copies=(1, 2)) for b in q.bounds)  # held alike
        queries.append(q.with_(bounds=bounds or (FeatureBound(ens.feature_names[0], -2.0, 2.0),)))
    assert _data_aware_answers_by_heuristic(ens, queries, data)


def test_a_data_aware_fallback_whose_data_values_break_a_relation_keeps_its_own():
    # x1.f < x2.f, both in f's interval [0.9, 1]: the likeliest data value there for both
    # would make them equal, so the fallback pair keeps its own values of f
    ens = _gated_model()
    q = Query(vary=("f", "g"), gap=Gap(0.4), relations=(FeatureRelation("f", 1, "<", 2),))
    ctx = _context(ens, q)
    beside = float(np.nextafter(np.float32(0.95), np.float32(1.0)))
    ctx.fallback = (np.array([0.95, 1.0]), np.array([beside, 0.0]))
    ctx.prefer = {0: [0.97]}
    assert use_fallback(ctx)
    w = ctx.result.witness_arrays
    assert not constraint_violations(ens, q, w.x1, w.x2)


def test_a_data_aware_check_under_a_relation_gives_its_solver_the_heuristic_s_pair():
    # the heuristic from data rows meets x1.f < x2.f (f at 0.9 or above on both inputs)
    ens = _gated_model()
    rows = np.random.default_rng(5).uniform(0.0, 1.0, size=(40, 2)).round(2)
    q = Query(vary=("f", "g"), gap=Gap(0.4), relations=(FeatureRelation("f", 1, "<", 2),))
    data = Dataset(rows, None, tuple(ens.feature_names))
    r = solve_query(ens, q.planned(timeout=30.0, data_aware="prob", options={"data": data}))
    assert r.status == "sensitive" and r.stats["hint_meets_gap"]


def _data_aware_answers_by_heuristic(ens, queries, data) -> int:
    """Each data-aware answer checked against brute force (a pair meeting every
    constraint; an input error only where no pair is left): how many pairs over all
    inputs the heuristic gave."""
    by_heuristic = 0
    for q in queries:
        try:
            r = solve_query(ens, q.planned(timeout=30.0, data_aware="prob", options={"data": data}))
        except InputError:  # constraints that leave no pair
            assert not brute(ens, q)
            continue
        assert r.status == ("sensitive" if brute(ens, q) else "insensitive"), (q, r.error)
        if r.status == "sensitive":
            assert not constraint_violations(ens, q, r.witness_arrays.x1, r.witness_arrays.x2)
            by_heuristic += r.stats["box_search"].get("pair") == HEURISTIC_PAIR
    return by_heuristic
