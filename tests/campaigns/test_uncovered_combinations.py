"""Combinations the differential and max-gap campaigns do not draw, each against brute
force: the largest gap under a query's bounds and relations (models built in the IR,
every library's comparison), and models the campaign's families never train (XGBoost's
random forests and parallel trees, LightGBM's DART and GOSS, integer features past
float32's whole numbers, a scaled column with missing values reaching XGBoost through a
pipeline), each asked for its largest gap on the library's own predict over one point
per threshold cell."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.ensemble import Feature
from treesens.compiler.errors import InputError
from treesens.compiler.query import FeatureBound, Gap, Query
from treesens.driver import solve_query
from treesens.questions.max_gap import max_gap_query
from treesens.tests.compiler.test_feature_constraints import OPS, _random_query, candidate_values
from treesens.tests.oracle import random_ensemble
from treesens.tests.regressions import harness as H

COMPARISONS = [("<", "float32"), ("<=", "float32"), ("<=", "float64")]
TOLERANCE = 1e-3


# --- the largest gap under a query's bounds and relations ----------------------------------
def _inputs_and_pairs(ens, q):
    """One value per class of values no split, bound end or relation tells apart (the
    extremes of each: test_feature_constraints' enumeration): the shared rows, each
    input's varied rows, and which (x1, x2) varied rows the relations allow."""
    names = ens.feature_names
    varying, shared, vals, within = candidate_values(ens, q)

    def product(columns):
        return np.array(list(itertools.product(*columns)), dtype=float).reshape(-1, len(columns))

    S = product([[v for v in vals[f] if within(f, v, 1) and within(f, v, 2)] for f in shared])
    V1, V2 = (product([[v for v in vals[f] if within(f, v, c)] for f in varying]) for c in (1, 2))
    allowed = np.ones((len(V1), len(V2)), dtype=bool)
    for r in q.relations:
        f = names.index(r.feature)
        if f in varying:
            k = varying.index(f)
            u, w = V1[:, k][:, None], V2[:, k][None, :]
            allowed &= OPS[r.op](u, w) if r.left == 1 else OPS[r.op](w, u)
    return shared, varying, S, V1, V2, allowed


def pairs_that_differ(ens, q) -> bool:
    """Whether the query's bounds and relations allow a pair that differs in a varied
    feature (else the query is vacuous, refused as bad input)."""
    *_, V1, V2, allowed = _inputs_and_pairs(ens, q)
    differ = (V1[:, None, :] != V2[None, :, :]).any(axis=2)
    return bool((allowed & differ).any())


def brute_force_max_gap_under_constraints(ens, q) -> float | None:
    """The largest min(P(x1) - 0.5, 0.5 - P(x2)) over the pairs the query's bounds and
    relations allow (None: they allow none)."""
    shared, varying, S, V1, V2, allowed = _inputs_and_pairs(ens, q)
    if not (len(S) and len(V1) and len(V2)) or not allowed.any():
        return None

    def proba(V):
        X = np.empty((len(S) * len(V), ens.n_features))
        X[:, shared] = np.repeat(S, len(V), axis=0)
        X[:, varying] = np.tile(V, (len(S), 1))
        return ens.proba(X)[:, 1].reshape(len(S), len(V))

    p1, p2 = proba(V1), proba(V2)
    gaps = np.minimum(p1[:, :, None] - 0.5, 0.5 - p2[:, None, :])
    return float(np.where(allowed[None], gaps, -np.inf).max())


def _constrained_case(seed: int, kind: str):
    rng = np.random.default_rng([2026, seed, len(kind)])
    op, cast = COMPARISONS[seed % len(COMPARISONS)]
    ens = random_ensemble(
        rng,
        n_trees=4,
        depth=2,
        n_features=3,
        n_thresholds=3,
        integer_features=kind != "real",
        op=op,
        cast=cast,
        bounded=bool(seed % 2),
    )
    if kind == "binary":
        ens = ens.with_features(tuple(Feature(f.name, "binary") for f in ens.features))
    return ens, [replace(_random_query(rng, ens, kind), gap=Gap(0.0)) for _ in range(3)]


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(6))
def test_max_gap_under_bounds_and_relations_holds_the_brute_force_gap(kind, seed):
    ens, queries = _constrained_case(seed, kind)
    for q in queries:
        exact = brute_force_max_gap_under_constraints(ens, q)
        try:
            r = max_gap_query(ens, q.planned(timeout=30.0), tolerance=TOLERANCE)
        except InputError:  # constraints that leave no pair apart are refused, never answered
            assert exact is None or not pairs_that_differ(ens, q), q
            continue
        m = r.max_gap
        assert exact is not None and m is not None, (q, r.status, r.error)
        assert m["upper"] >= exact, (q, m, exact)
        if r.status == "insensitive":
            assert exact < TOLERANCE, (q, m, exact)
        else:
            assert r.status == "sensitive" and m["proven"], (q, r.status, m)
            assert exact - TOLERANCE <= m["lower"] <= exact, (q, m, exact)


# --- models the campaign's families never train ---------------------------------------------
def _exact_library_gap(ens, vary, predict_1) -> float:
    """max over shared cells of min(max P - 0.5, 0.5 - min P), P(class 1) by the library's
    own predict (``predict_1``) on one value per routing signature of every feature."""
    grid = H.build_grid(ens, vary)
    p = np.asarray(predict_1(grid.X), dtype=np.float64).reshape(grid.ns, grid.nv)
    return float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))


def _assert_max_gap_is_the_library_s(model, est_predict_1, vary, backend="cpsat", **load):
    ens = treesens.load_model(model, **load)
    exact = _exact_library_gap(ens, vary, est_predict_1)
    r = treesens.max_gap(ens, vary, tolerance=TOLERANCE, backend=backend, timeout=60)
    m = r.max_gap
    assert r.status == "sensitive" and m["proven"] and r.validated, (r.status, m)
    assert m["upper"] >= exact >= m["lower"] >= exact - TOLERANCE, (m, exact)
    w = r.witness_arrays
    p = np.asarray(est_predict_1(np.stack([w.x1, w.x2])), dtype=np.float64)
    assert min(p[0] - 0.5, 0.5 - p[1]) == pytest.approx(m["lower"], abs=1e-12)


def _binary_data(seed: int, n: int = 400, d: int = 3):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, d)), 2)
    s = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + (X[:, 2] > 0) * X[:, 0] + rng.normal(0, 0.5, n)
    return X, (s > np.median(s)).astype(int)


@pytest.mark.parametrize("backend", ["cpsat", "boxes"])
def test_xgboost_random_forest_max_gap_is_the_library_s(backend):
    import xgboost as xgb

    X, y = _binary_data(1)
    est = xgb.XGBRFClassifier(n_estimators=4, max_depth=2, random_state=1).fit(X, y)
    _assert_max_gap_is_the_library_s(est, lambda Z: est.predict_proba(Z)[:, 1], ["f0"], backend)


def test_xgboost_parallel_trees_of_each_round_max_gap_is_the_library_s():
    import xgboost as xgb

    X, y = _binary_data(2)
    est = xgb.XGBClassifier(
        n_estimators=3, num_parallel_tree=2, max_depth=2, subsample=0.7, random_state=2
    ).fit(X, y)
    _assert_max_gap_is_the_library_s(est, lambda Z: est.predict_proba(Z)[:, 1], ["f0"])


@pytest.mark.parametrize("params", [{"boosting_type": "dart"}, {"data_sample_strategy": "goss"}])
def test_lightgbm_dart_and_goss_max_gap_is_the_library_s(params):
    import lightgbm as lgb

    X, y = _binary_data(3)
    est = lgb.LGBMClassifier(
        n_estimators=6, num_leaves=4, learning_rate=0.5, verbose=-1, random_state=3, **params
    ).fit(X, y)
    _assert_max_gap_is_the_library_s(est, lambda Z: est.predict_proba(Z)[:, 1], ["Column_0"])


def _large_integer_frame(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Whole numbers around 2^24, where float32 holds only the even ones, and around 1e8."""
    rng = np.random.default_rng(seed)
    n = 400
    a = float(2**24) + rng.integers(-6, 7, n)
    b = np.round(rng.normal(size=n), 2)
    c = 1e8 + 3.0 * rng.integers(-40, 40, n)
    y = (((a % 2) == 1) ^ (b > 0) ^ (c > 1e8 + 10)).astype(int)
    return pd.DataFrame({"a": a, "b": b, "c": c}), y


@pytest.mark.parametrize("vary", ["a", "c"])
def test_integer_features_past_float32_s_whole_numbers_max_gap_is_xgboost_s(vary):
    import xgboost as xgb

    df, y = _large_integer_frame(4)
    est = xgb.XGBClassifier(n_estimators=6, max_depth=3, tree_method="exact").fit(df, y)

    def p1(Z):
        return est.predict_proba(pd.DataFrame(Z, columns=df.columns))[:, 1]

    ens = treesens.load_model(est, data=df)
    assert ens.features[ens.feature_names.index(vary)].kind == "integer"
    _assert_max_gap_is_the_library_s(ens, p1, [vary])


@pytest.mark.parametrize("scaler", ["MaxAbsScaler", "RobustScaler"])
def test_scaled_column_with_missing_values_reaching_xgboost_max_gap_is_the_pipeline_s(scaler):
    import sklearn.preprocessing as pre
    import xgboost as xgb
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    rng = np.random.default_rng(5)
    n = 400
    a, b = np.round(rng.normal(3, 2, n), 2), np.round(rng.normal(-1, 0.5, n), 3)
    b[rng.random(n) < 0.2] = math.nan  # no imputer: NaN reaches XGBoost, which routes it
    df = pd.DataFrame({"a": a, "b": b})
    y = ((a + 2 * np.nan_to_num(b, nan=0.5) + rng.normal(0, 0.5, n)) > 1.5).astype(int)
    columns = ColumnTransformer([(c, getattr(pre, scaler)(), [c]) for c in ("a", "b")])
    pipe = Pipeline([("pre", columns), ("m", xgb.XGBClassifier(n_estimators=4, max_depth=2))])
    pipe.fit(df, y)

    def p1(Z):
        return pipe.predict_proba(pd.DataFrame(Z, columns=df.columns))[:, 1]

    ens = treesens.load_model(pipe, data=df)
    assert ens.features[1].may_be_missing
    _assert_max_gap_is_the_library_s(ens, p1, ["b"])


# --- a softmax model's unnamed category codes under a bound on one input ------------------
@pytest.fixture(scope="module")
def coded_softmax():
    """A 3-class LightGBM model of an array: column 0 holds category codes 0..11 that no
    name declares (its splits list some, the rest route alike), column 1 is numeric."""
    booster = coded_softmax_booster()
    return booster, treesens.load_model(booster)


def coded_softmax_booster():
    """``coded_softmax``'s LightGBM booster."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    n = 900
    c, x = rng.integers(0, 12, n).astype(float), rng.random(n)
    s = rng.normal(0, 1.5, 12)[c.astype(int)] + 2 * (x > 0.5) + rng.normal(0, 0.3, n)
    y = np.digitize(s, np.quantile(s, [0.33, 0.66]))
    params = dict(objective="multiclass", num_class=3, num_leaves=4, verbose=-1)
    params |= dict(min_data_per_group=5, cat_smooth=1, max_cat_to_onehot=4, min_child_samples=10)
    return lgb.train(params, lgb.Dataset(np.stack([c, x], 1), y, categorical_feature=[0]), 3)


def _library_ratio(booster, ens, classes, b1, b2) -> float:
    """The largest ratio of a pair varying the codes (x1's within b1, x2's within b2), by
    the library's predict on every code up to 14 and one value per routing of column 1."""
    codes = np.arange(0.0, 15.0)
    xs = H.feature_values(ens, 1)
    X = np.array([[c, x] for c in codes for x in xs])
    p = np.asarray(booster.predict(X), dtype=np.float64).reshape(len(codes), len(xs), 3)
    ratio = np.stack([np.min(p[..., [c]] / np.delete(p, c, axis=2), axis=2) for c in range(3)], 2)
    best = [ratio[(codes >= lo) & (codes <= hi)].max(axis=0) for lo, hi in (b1, b2)]
    return float(np.max(np.minimum(best[0][:, classes[0]], best[1][:, classes[1]])))


@pytest.mark.parametrize("backend", ["cpsat", "highs", "z3", "boxes"])
@pytest.mark.parametrize("b1", [(3.0, 4.0), (8.0, 13.0)])
def test_softmax_codes_bounded_on_one_input_answer_as_the_library_s_ratio(
    coded_softmax, backend, b1
):
    booster, ens = coded_softmax
    c = ens.feature_names[0]
    bounds = (FeatureBound(c, *b1, (1,)),)
    for classes in [(0, 2), (2, 0), (1, 2)]:
        best = _library_ratio(booster, ens, classes, b1, (0.0, 14.0))
        for g, sensitive in [(best / 1.001, True), (best * 1.001, False)]:
            if g < 1.0:
                continue
            q = Query(vary=(c,), gap=Gap(g), classes=classes, bounds=bounds)
            r = solve_query(ens, q.planned(backend=backend, timeout=30.0))
            assert r.status == ("sensitive" if sensitive else "insensitive"), (classes, g, best)


@pytest.mark.parametrize("b1", [(3.0, 4.0), (8.0, 13.0)])
def test_softmax_codes_bounded_on_one_input_max_ratio_brackets_the_library_s(coded_softmax, b1):
    booster, ens = coded_softmax
    c = ens.feature_names[0]
    q = Query(vary=(c,), gap=Gap(1.0), classes=(2, 1), bounds=(FeatureBound(c, *b1, (1,)),))
    best = _library_ratio(booster, ens, (2, 1), b1, (0.0, 14.0))
    m = max_gap_query(ens, q.planned(timeout=30.0)).max_gap
    assert m["lower"] <= best * (1 + 1e-12) and best <= m["upper"] * (1 + 1e-12), (m, best)


def _coded_query(ens, b1, backend="boxes") -> Query:
    c = ens.feature_names[0]
    q = Query(vary=(c,), gap=Gap(1.5), classes=(0, 2), bounds=(FeatureBound(c, *b1, (1,)),))
    return q.planned(backend=backend, timeout=30.0)


@pytest.mark.parametrize("backend", ["boxes", "cpsat"])
def test_a_bound_leaving_no_category_code_is_the_same_error_on_every_backend(
    coded_softmax, backend
):
    _, ens = coded_softmax
    with pytest.raises(InputError, match=r"^no category code of x1.Column_0 lies in \[4.2, 4.8\]$"):
        solve_query(ens, _coded_query(ens, (4.2, 4.8), backend))


def test_a_multiclass_max_gap_under_a_bound_leaving_no_category_code_says_so(coded_softmax):
    _, ens = coded_softmax
    with pytest.raises(InputError, match=r"^no category code of x1.Column_0 lies in \[4.2, 4.8\]$"):
        max_gap_query(ens, _coded_query(ens, (4.2, 4.8), "cpsat"))


def test_the_box_search_alone_names_unlisted_codes_in_a_bound_as_its_refusal(coded_softmax):
    # codes 13 and 14 are in no split's list: the solvers' encoding adds a code for them
    _, ens = coded_softmax
    r = solve_query(ens, _coded_query(ens, (12.5, 14.0)))
    assert r.status == "error"
    assert "no bound on x1.Column_0 in [12.5, 14] over category codes no split lists" in r.error


def test_a_multiclass_max_gap_refusal_names_unlisted_codes_in_a_bound(coded_softmax):
    _, ens = coded_softmax
    with pytest.raises(InputError, match=r"over category codes no split lists\): ask a ratio"):
        max_gap_query(ens, _coded_query(ens, (12.5, 14.0), "cpsat"))
