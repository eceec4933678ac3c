"""The box search as a search method of its own (``--backend boxes``): it answers alone,
with no solver after it, agrees with brute force, races and is compared like a backend,
and a query it does not describe is an error, never a made-up answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import treesens
from treesens.backends import registry
from treesens.compiler.ensemble import Feature
from treesens.compiler.query import FeatureBound, Gap, Query
from treesens.driver import solve_query
from treesens.search.box_search import GAVE_UP, box_search
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"


def _alone(q: Query) -> Query:
    return q.planned(backend="boxes", options={"heuristic": False})


@pytest.mark.parametrize("seed", range(12))
def test_boxes_alone_agrees_with_brute_force(seed):
    ens = random_ensemble(300 + seed, 5, 3, 3, 3, leaf_scale=1.0)
    q = Query(vary=("f0",), gap=Gap(0.15))
    r = solve_query(ens, _alone(q))
    assert r.backend == "boxes"
    assert r.status == ("sensitive" if brute_force_sensitive(ens, q) else "insensitive")
    assert r.status != "sensitive" or r.validated


def _undescribed():
    """A bound on one input of a categorical feature of undeclared categories no tree
    reads, over codes its domain's one code (0) lies outside: the box search does not
    describe the query (the solvers' encoding adds a code inside the bound)."""
    ens = random_ensemble(6, 4, 2, 4, 3)  # f0 unread
    ens = ens.with_features((Feature("f0", "categorical", 0.0, 9.0), *ens.features[1:]))
    q = Query(vary=("f0", "f1"), bounds=(FeatureBound("f0", 3.0, 9.0, (1,)),))
    return ens, q


def test_boxes_alone_on_a_query_it_does_not_describe_is_an_error():
    ens, q = _undescribed()
    r = solve_query(ens, _alone(q))
    assert r.status == "error" and "does not describe this query" in r.error


def test_a_race_with_the_box_search_has_it_among_its_backends():
    ens = treesens.load_model(str(EXAMPLE))
    r = treesens.check(ens, vary=["worst_texture"], backend="race:boxes,cpsat", timeout=60)
    assert r.status in ("sensitive", "insensitive")
    assert set(r.stats["race"]) == {"boxes", "cpsat"}


def test_a_race_goes_on_when_the_box_search_cannot_take_the_query():
    ens, q = _undescribed()
    r = solve_query(ens, q.planned(backend="race:boxes,cpsat"))
    assert r.backend == "cpsat" and r.status in ("sensitive", "insensitive")


def test_compare_answers_with_the_box_search_as_with_a_solver():
    ens = treesens.load_model(str(EXAMPLE))
    boxes, cpsat = treesens.compare(ens, vary=["mean_texture"], backends="boxes,cpsat")
    assert boxes.backend == "boxes" and boxes.status == cpsat.status


def test_compare_exits_0_when_the_box_search_does_not_describe_the_query():
    # sex_realistic is data-aware: the box search's row says it does not take it, as a
    # license refusal's does, and no backend failed
    sens = EXAMPLE.with_name("diabetes_data_aware.sens")
    p = subprocess.run(
        [sys.executable, "-m", "treesens", "compare", str(sens)]
        + ["--query", "sex_realistic", "--backends", "boxes,cpsat", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    rows = {r["backend"]: r for r in map(json.loads, p.stdout.splitlines())}
    assert "does not describe this query" in rows["boxes"]["error"]
    assert p.returncode == 0, p.stderr


def test_a_stop_request_ends_the_box_search():
    ens = random_ensemble(3, 6, 3, 3, 3)
    enc = pair_encoding(ens, Query(vary=("f0", "f1"), gap=Gap(0.0)))
    out = box_search(enc, pair_tables(enc), float("inf"), stop=lambda: True)
    assert out.status == GAVE_UP


def test_the_backends_listing_names_the_box_search():
    p = subprocess.run(
        [sys.executable, "-m", "treesens.interfaces.cli.main", "backends", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    rows = {r["name"]: r for r in map(json.loads, p.stdout.splitlines())}
    assert rows["boxes"]["installed"] is True


def test_the_box_search_is_a_search_method_of_the_backend_registry():
    method = registry.search_method("boxes")
    assert method is not None and method.load().search_alone is not None


def test_a_search_method_registered_under_another_name_answers_as_the_box_search():
    # the driver runs a search method from its registry entry: nothing tests the name
    registry.register(registry.SearchMethod("boxes-again", "treesens.search.boxes"))
    try:
        ens = random_ensemble(310, 5, 3, 3, 3, leaf_scale=1.0)
        q = Query(vary=("f0",), gap=Gap(0.15))
        again = solve_query(ens, q.planned(backend="boxes-again", options={"heuristic": False}))
        assert again.status == solve_query(ens, _alone(q)).status
        assert again.stats["box_search"]["status"] in ("found", "proved")
    finally:
        registry.unregister("boxes-again")


def test_boxes_alone_that_end_open_do_not_say_the_time_limit_was_reached():
    # was: "time limit reached" at once, for a change within the float32 allowance of a
    # Poisson model's exp link: here just beyond the largest change of f0
    lgb = pytest.importorskip("lightgbm")
    import math

    import numpy as np

    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=(300, 2)), np.zeros(300)]
    y = np.round(np.exp(X[:, 0] + X[:, 1]))
    est = lgb.LGBMRegressor(objective="poisson", n_estimators=4, num_leaves=4, verbose=-1)
    est.fit(X, y)
    largest = treesens.max_gap(est, vary=[0], timeout=60).max_gap["lower"]
    beyond = math.nextafter(largest, math.inf)
    r = treesens.check(est, vary=[0], delta=beyond, backend="boxes", timeout=60)
    assert r.status == "unknown"
    assert "time limit" not in r.message and "neither a pair nor a proof" in r.message


def _regressor():
    xgb = pytest.importorskip("xgboost")
    import numpy as np

    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(300, 3)), 1)
    y = 3 * X[:, 0] + X[:, 1] * X[:, 2]
    return xgb.XGBRegressor(n_estimators=20, max_depth=3, max_bin=4, nthread=1).fit(X, y)


@pytest.mark.parametrize("where", ["x1.f0 <= 0", "x1.f0 <= x2.f0"])
def test_boxes_alone_on_a_change_either_way_under_one_input_s_constraint_is_an_error(where):
    # up and down are two conditions over both inputs once x1 and x2 are not alike
    # (docs/backends.md, "--backend boxes")
    r = treesens.check(_regressor(), ["f0"], delta=1.0, direction="either", where=where,
                       backend="boxes", timeout=30)  # fmt: skip
    assert r.status == "error" and "no choice between conditions over both inputs" in r.error


@pytest.mark.parametrize("where", [None, "f0 <= 0", "x1.f1 <= 0"])
def test_boxes_alone_answer_a_change_either_way_where_both_inputs_are_alike(where):
    r = treesens.check(_regressor(), ["f0"], delta=1.0, direction="either", where=where,
                       backend="boxes", timeout=30)  # fmt: skip
    assert r.status == "sensitive" and r.validated
