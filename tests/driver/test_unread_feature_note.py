"""An insensitive answer about features no tree splits on says so: the model never reads
them (a feature the training left unused), so no change of them alone moves its
prediction; a regressor's change by less than the allowance for the library's float sums
is proven so too, where every pair searched was a near miss."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.query import FeatureBound, FeatureRelation, Gap, Query
from treesens.questions.max_gap import max_gap_query

xgb = pytest.importorskip("xgboost")

QUICK = {"timeout": 60}


@pytest.fixture(scope="module")
def model():
    """Trees that split on f0 only (the label is f0 > 5)."""
    X = np.random.default_rng(0).uniform(0.0, 10.0, size=(200, 3))
    est = xgb.XGBClassifier(n_estimators=3, max_depth=2, nthread=1).fit(X, X[:, 0] > 5.0)
    ens = treesens.load_model(est)
    assert {int(f) for t in ens.trees for f in t.feature if f >= 0} == {0}
    return ens


def test_an_answer_about_a_feature_no_tree_splits_on_says_the_model_never_reads_it(model):
    r = treesens.check(model, vary=["f2"], gap=0.1, **QUICK)
    assert r.status == "insensitive"
    assert "the model never splits on f2: no change of it alone moves its prediction" in r.notes


def test_an_answer_about_features_one_of_which_a_tree_splits_on_has_no_such_note(model):
    r = treesens.check(model, vary=["f0", "f2"], gap=0.45, **QUICK)
    assert r.status == "insensitive"  # (three trees of depth 2 reach no such gap)
    assert not any("never splits" in n for n in r.notes)


def test_a_max_gap_of_a_feature_no_tree_splits_on_says_so_too(model):
    r = treesens.max_gap(model, vary=["f1", "f2"], **QUICK)
    assert "the model never splits on f1, f2: no change of them alone moves its prediction" in (
        r.notes
    )


def test_a_max_gap_of_a_feature_no_tree_splits_on_is_0_exactly(model):
    # x1 and x2 reach the same leaves: not the root's float allowance (about 1e-5)
    r = treesens.max_gap(model, vary=["f2"], **QUICK)
    assert (r.status, r.max_gap["upper"], r.max_gap["unsplit"]) == ("insensitive", 0.0, True)


def test_a_max_gap_of_0_says_why(model):
    r = treesens.max_gap(model, vary=["f2"], **QUICK)
    assert r.message == (
        "max gap 0 (proven: no tree splits on f2 within its bounds, so "
        "x1 and x2 reach the same leaves and get one prediction)"
    )


def test_a_max_gap_of_0_names_each_feature_no_tree_splits_on(model):
    r = treesens.max_gap(model, vary=["f1", "f2"], **QUICK)
    assert "no tree splits on f1 or f2 within their bounds" in r.message


def test_a_sweep_s_progress_line_of_a_max_gap_of_0_names_its_feature(model):
    from treesens.views.progress import outcome

    (r,) = treesens.sweep(model, features=["f2"], max_gap=True, **QUICK)
    assert "no tree splits on f2 within its bounds" in outcome(r)


def test_the_verdict_line_of_a_max_gap_of_0_says_max_gap_0(model):
    r = treesens.max_gap(model, vary=["f2"], **QUICK)
    assert "varying f2, max gap 0, backend boxes" in str(r)


def test_a_sweep_s_max_gap_cell_of_a_feature_no_tree_splits_on_says_0_never_split(model):
    (r,) = treesens.sweep(model, features=["f2"], max_gap=True, **QUICK)
    assert treesens.questions.sweep.max_gap_cell(r) == "0 (never split)"


def test_a_max_gap_of_a_feature_a_tree_splits_on_is_not_unsplit(model):
    r = treesens.max_gap(model, vary=["f0"], **QUICK)
    assert r.max_gap["unsplit"] is False and r.max_gap["lower"] > 0


def test_a_max_gap_of_a_feature_no_tree_splits_on_needs_no_compiled_search(model, monkeypatch):
    from treesens.search import gap_kernel

    called = []
    for name in ("prepare", "KernelSearch"):
        real = getattr(gap_kernel, name)
        monkeypatch.setattr(
            gap_kernel, name, lambda *a, _r=real, _n=name, **k: called.append(_n) or _r(*a, **k)
        )
    r = treesens.max_gap(model, vary=["f2"], **QUICK)
    assert r.status == "insensitive"
    assert called == []  # the root's bound answers: no kernel compiled (50 s on a cold cache)


@pytest.fixture(scope="module")
def prices():
    """A regressor of house prices (float32 sums of about 2e5, an allowance of about 0.1
    for their rounding) whose trees split on f0 and f1 only."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3))
    y = 2e5 + 5e4 * X[:, 0] + 2e4 * np.sin(3 * X[:, 1])
    X[:, 2] = 0.0  # f2 is left unused by the training
    est = xgb.XGBRegressor(n_estimators=20, max_depth=3, nthread=1).fit(X, y)
    ens = treesens.load_model(est)
    assert {int(f) for t in ens.trees for f in t.feature if f >= 0} == {0, 1}
    return ens


@pytest.mark.parametrize("backend", ["cpsat", "boxes"])
def test_a_change_within_the_float_allowance_of_a_feature_no_tree_splits_on_is_proven_none(
    prices, backend
):
    # x1 and x2 reach the same leaves, so the library predicts both alike: every pair
    # was a near miss, which the box search could not rule out (unknown, or the solver's
    # near-miss cuts until the time limit)
    r = treesens.check(prices, vary=["f2"], delta=0.01, backend=backend, timeout=10)
    assert r.status == "insensitive", (r.status, r.message)
    assert r.message.startswith("proved by the box search")


@pytest.fixture(scope="module")
def counts():
    """A Poisson regressor (predicting exp of its raw score, about 3000) whose trees split
    on f0 and f1 only."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 3))
    y = rng.poisson(np.exp(8 + 0.5 * X[:, 0] + 0.3 * np.sin(3 * X[:, 1]))).astype(float)
    X[:, 2] = 0.0
    est = xgb.XGBRegressor(n_estimators=20, max_depth=3, objective="count:poisson", nthread=1)
    ens = treesens.load_model(est.fit(X, y))
    assert {int(f) for t in ens.trees for f in t.feature if f >= 0} == {0, 1}
    return ens


@pytest.mark.parametrize("backend", ["cpsat", "boxes"])
def test_a_change_through_the_exp_link_of_a_feature_no_tree_splits_on_is_proven_none(
    counts, backend
):
    # the largest change's search bounded the root by its allowance for float sums, over
    # 0.1: "unknown" (the solver's tangent cuts did not close in either)
    r = treesens.check(counts, vary=["f2"], delta=0.1, backend=backend, timeout=10)
    assert r.status == "insensitive", (r.status, r.message)
    assert r.message.startswith("proved by the box search")


def test_a_regressor_s_largest_change_of_a_feature_no_tree_splits_on_is_0_exactly(prices):
    # the root's allowance for the float sums of about 2e5 is about 0.1
    r = treesens.max_gap(prices, vary=["f2"], **QUICK)
    assert (r.max_gap["upper"], r.max_gap["kind"], r.max_gap["unsplit"]) == (0.0, "change", True)
    assert r.message.startswith("largest change 0 (proven: no tree splits on f2 within")


def test_a_multiclass_ratio_of_a_feature_no_tree_splits_on_is_1_exactly():
    X = np.random.default_rng(4).uniform(0.0, 10.0, size=(300, 3))
    y = (X[:, 0] > 3.0).astype(int) + (X[:, 0] > 7.0)
    est = xgb.XGBClassifier(n_estimators=3, max_depth=2, nthread=1).fit(X, y)
    r = treesens.max_gap(treesens.load_model(est), vary=["f2"], classes=("any", "any"), **QUICK)
    assert (r.max_gap["upper"], r.max_gap["kind"], r.max_gap["unsplit"]) == (1.0, "ratio", True)


# --- the same 0 on the paths beside the box search's largest gap ----------------------------
def test_a_bisected_max_gap_of_a_feature_no_tree_splits_on_is_0_exactly(model):
    # --no-box-search: the first check, at the float allowance, proves insensitive
    r = treesens.max_gap(model, vary=["f2"], box_search=False, **QUICK)
    assert (r.max_gap["method"], r.max_gap["upper"], r.max_gap["unsplit"]) == (
        "bisection",
        0.0,
        True,
    )


def test_a_bisected_max_gap_of_a_feature_a_tree_splits_on_is_not_unsplit(model):
    r = treesens.max_gap(model, vary=["f0"], box_search=False, **QUICK)
    assert r.max_gap["unsplit"] is False and r.max_gap["lower"] > 0


def test_a_max_gap_with_a_relation_of_a_feature_no_tree_splits_on_is_0_exactly(model):
    # a relation between the inputs only narrows pairs that get one prediction each
    q = Query(vary=("f2",), gap=Gap(0.0), relations=(FeatureRelation("f2", 1, "<=", 2),))
    r = max_gap_query(model, q.planned(timeout=60.0))
    assert (r.max_gap["upper"], r.max_gap["unsplit"]) == (0.0, True)


@pytest.fixture(scope="module")
def forest():
    """A 3-class random forest (its ratio searched at fixed ratios, forest_ratio.py) that
    splits on x0 and x1, x2 left constant by the training."""
    ensemble = pytest.importorskip("sklearn.ensemble")
    X = np.random.default_rng(4).uniform(0.0, 10.0, size=(300, 3))
    y = (X[:, 0] > 3.0).astype(int) + (X[:, 1] > 7.0)
    X[:, 2] = 0.0
    est = ensemble.RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    ens = treesens.load_model(est.fit(X, y))
    assert ens.n_outputs == 3 and {int(f) for t in ens.trees for f in t.feature if f >= 0} == {
        0,
        1,
    }
    return ens


def test_a_random_forest_s_ratio_of_a_feature_no_tree_splits_on_is_1_exactly(forest):
    r = treesens.max_gap(forest, vary=["x2"], classes=(0, 1), **QUICK)
    assert (r.max_gap["upper"], r.max_gap["kind"], r.max_gap["unsplit"]) == (1.0, "ratio", True)


def test_a_random_forest_s_ratio_within_bounds_between_its_thresholds_is_1_exactly(forest):
    # each input bounded otherwise, both within one interval of x0's thresholds
    ths = sorted(
        {float(t.threshold[n]) for t in forest.trees for n in np.flatnonzero(t.feature == 0)}
    )
    a, b = ths[0], ths[1]
    bounds = (
        FeatureBound("x0", a + (b - a) / 4, b - (b - a) / 4, (1,)),
        FeatureBound("x0", a + (b - a) / 3, b - (b - a) / 3, (2,)),
    )
    q = Query(vary=("x0",), gap=Gap(1.0), classes=(0, 1), bounds=bounds)
    r = max_gap_query(forest, q.planned(timeout=60.0))
    assert (r.max_gap["upper"], r.max_gap["unsplit"]) == (1.0, True)


def test_a_random_forest_s_ratio_of_a_feature_a_tree_splits_on_is_not_unsplit(forest):
    r = treesens.max_gap(forest, vary=["x0"], classes=(0, 1), **QUICK)
    assert r.max_gap["unsplit"] is False and r.max_gap["upper"] > 1.0
