"""A categorical feature with no declared categories: every code no split lists is routed
alike, and the domain keeps one of them for all. Bounds that leave out the smallest one
(``c in [3, 9]`` where the splits list 3, 5 and 7) must still search the unlisted codes
inside them (4, 6, 8, 9): the box search over the domain the bounds narrow, the solvers'
encoding with one such code added per bound, a declared range alike. Checked against
the library's own predict over every code and one value per cell of the numeric
feature."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.domain import build_categorical_domain
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, Gap, Query
from treesens.driver import solve_query
from treesens.questions.max_gap import max_gap_query

lgb = pytest.importorskip("lightgbm")
pd = pytest.importorskip("pandas")

LISTED = (3, 5, 7)
CODES = range(12)  # every code the tests' bounds reach, listed or not


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """LightGBM, one categorical feature c whose splits list the codes 3, 5 and 7 (low
    probability) against every other code (high where x > 0), and a numeric x."""
    import treesens

    rng = np.random.default_rng(1)
    c, x = rng.integers(0, 10, 4000), rng.normal(size=4000)
    y = (~np.isin(c, LISTED) & (x > 0)).astype(int)
    params = {"objective": "binary", "verbose": -1, "num_leaves": 4, "min_data_per_group": 5}
    params |= {"cat_smooth": 1, "max_cat_to_onehot": 1, "deterministic": True}
    data = lgb.Dataset(pd.DataFrame({"c": c, "x": x}), y, categorical_feature=["c"])
    path = tmp_path_factory.mktemp("unlisted") / "m.txt"
    booster = lgb.train(params, data, 5)
    booster.save_model(str(path))
    return treesens.load_model(str(path)), booster


def _brute_max_gap(booster, ens, b1: tuple[float, float], b2: tuple[float, float]) -> float:
    """The largest min(P(x1) - 0.5, 0.5 - P(x2)) by the library's predict, x1.c in b1,
    x2.c in b2, x shared: every code and a value either side of each split on x."""
    ths = sorted({float(t.threshold[n]) for t in ens.trees for n in np.flatnonzero(t.feature == 1)})
    xs = [t + d for t in ths for d in (-1e-6, 1e-6)] or [0.0]
    best = -np.inf
    for xv in xs:
        frame = pd.DataFrame({"c": list(CODES), "x": [xv] * len(CODES)})
        p = booster.predict(frame)
        p1 = [p[k] for k in CODES if b1[0] <= k <= b1[1]]
        p2 = [p[k] for k in CODES if b2[0] <= k <= b2[1]]
        for u, v in itertools.product(p1, p2):
            best = max(best, min(u - 0.5, 0.5 - v))
    return float(best)


def _pair_question(gap: float, bounds) -> Query:
    return Query(vary=("c",), gap=Gap(gap), bounds=tuple(bounds), plan=Plan(timeout=30.0))


def _through_the_solvers(q: Query) -> Query:
    return q.planned(options=replace(q.plan.options, box_search=False, heuristic=False))


def test_the_domain_keeps_an_unlisted_code_inside_declared_bounds(model):
    ens, _ = model
    ens = ens.with_features((replace(ens.features[0], lb=3, ub=9), ens.features[1]))
    codes = build_categorical_domain(ens, 0, LISTED).codes
    assert any(c not in LISTED for c in codes), codes


def test_a_bound_leaving_out_code_0_is_sensitive_by_the_box_search(model):
    ens, booster = model
    assert _brute_max_gap(booster, ens, (3, 9), (3, 9)) > 0.05
    r = solve_query(ens, _pair_question(0.05, [FeatureBound("c", 3, 9)]))
    assert r.status == "sensitive", (r.status, r.message)


def test_a_bound_leaving_out_code_0_is_sensitive_through_the_solvers(model):
    ens, _ = model
    q = _through_the_solvers(_pair_question(0.05, [FeatureBound("c", 3, 9)]))
    r = solve_query(ens, q)
    assert r.status == "sensitive" and r.backend == "cpsat", (r.status, r.message)


def test_a_bound_on_one_input_searches_the_unlisted_codes_inside_it(model):
    ens, booster = model
    bounds = [FeatureBound("c", 3, 9, (1,)), FeatureBound("c", 3, 9, (2,))]
    assert _brute_max_gap(booster, ens, (3, 9), (3, 9)) > 0.05
    r = solve_query(ens, _through_the_solvers(_pair_question(0.05, bounds)))
    assert r.status == "sensitive", (r.status, r.message)
    w = r.witness_arrays
    assert not constraint_violations(ens, _pair_question(0.05, bounds), w.x1, w.x2)


def test_a_declared_range_leaving_out_code_0_is_sensitive(model):
    ens, booster = model
    ranged = ens.with_features((replace(ens.features[0], lb=3, ub=9), ens.features[1]))
    r = solve_query(ranged, _pair_question(0.05, []))
    assert r.status == "sensitive", (r.status, r.message)


@pytest.mark.parametrize("box_search", [True, False])
def test_the_max_gap_within_a_bound_is_the_library_s(model, box_search):
    ens, booster = model
    q = Query(vary=("c",), bounds=(FeatureBound("c", 6, 9),), plan=Plan(timeout=30.0))
    if not box_search:
        q = _through_the_solvers(q)
    exact = _brute_max_gap(booster, ens, (6, 9), (6, 9))
    m = max_gap_query(ens, q, tolerance=1e-3).max_gap
    assert m["upper"] >= exact and m["lower"] >= exact - 1e-3, (m, exact)


def test_a_bound_on_x1_alone_searches_the_unlisted_code_inside_it(model):
    ens, booster = model
    bounds = [FeatureBound("c", 3, 4, (1,))]  # 3 listed, 4 not: x1 = 4 against x2 = 3
    assert _brute_max_gap(booster, ens, (3, 4), (0, 11)) > 0.05
    r = solve_query(ens, _pair_question(0.05, bounds))
    assert r.status == "sensitive", (r.status, r.message)
    w = r.witness_arrays
    assert not constraint_violations(ens, _pair_question(0.05, bounds), w.x1, w.x2)
