"""XGBoost computes P(class 1) with a float32 sigmoid: near P = 1 a float32 ulp spans a
wide band of raw scores, and a pair whose exact sigmoid falls short of 0.5 + g may meet
the gap in XGBoost's own predict. A binary probability gap's rows ask that much less of
P (query.SIGMOID_ROUNDING) and the replay decides: treesens said "insensitive" at a gap
a pair of XGBoost's predict meets (the max gap's own witness reached it)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import treesens


def _stumps(folder, seed: int, features: int, trees: int, learning_rate: float) -> tuple:
    """Stumps trained without regularisation on f0 > 0.5, saved in ``folder``, and the
    gaps of their best pair as XGBoost's float32 sigmoid and the exact one read it."""
    import xgboost

    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (400, features))
    est = xgboost.XGBClassifier(
        n_estimators=trees,
        max_depth=1,
        learning_rate=learning_rate,
        reg_lambda=0.0,
        min_child_weight=0.0,
    )
    booster = est.set_params(n_jobs=1).fit(X, (X[:, 0] > 0.5).astype(int)).get_booster()
    path = folder / "model.json"
    booster.save_model(path)
    rest = [0.5] * (features - 1)
    pair = xgboost.DMatrix(np.array([[0.99, *rest], [0.01, *rest]]))
    p = booster.predict(pair).astype(float)
    raw = booster.predict(pair, output_margin=True).astype(float)
    exact = [1.0 / (1.0 + math.exp(-r)) for r in raw]
    library_gap, exact_gap = min(p[0] - 0.5, 0.5 - p[1]), min(exact[0] - 0.5, 0.5 - exact[1])
    return path, library_gap, exact_gap


@pytest.fixture(scope="module")
def saturated(tmp_path_factory):
    """Six stumps (margins of +-7.2) whose best pair XGBoost reads above the exact one."""
    return _stumps(tmp_path_factory.mktemp("sigmoid"), 0, 2, 6, 1.0)


def test_xgboost_s_sigmoid_reads_the_best_pair_above_the_exact_one(saturated):
    _, library_gap, exact_gap = saturated
    assert library_gap > exact_gap


def test_a_gap_the_library_s_rounding_reaches_is_sensitive(saturated):
    path, library_gap, exact_gap = saturated
    r = treesens.check(str(path), ["f0"], gap=(library_gap + exact_gap) / 2)
    assert r.status == "sensitive" and r.validated


@pytest.fixture(scope="module")
def rounded_down(tmp_path_factory):
    """Two stumps (margins of +-8.9) whose best pair XGBoost's float32 sigmoid reads
    below the exact one, and a gap between the two readings."""
    return _stumps(tmp_path_factory.mktemp("sigmoid"), 3, 3, 2, 3.0)


def test_xgboost_s_sigmoid_reads_this_best_pair_below_the_exact_one(rounded_down):
    _, library_gap, exact_gap = rounded_down
    assert library_gap < exact_gap


def test_a_gap_the_library_s_rounding_misses_is_insensitive_not_a_disagreement(rounded_down):
    # the replay took a pair the library reads within its rounding under 0.5 + g for a
    # disagreement with treesens' model of it: an error
    path, library_gap, exact_gap = rounded_down
    r = treesens.check(str(path), ["f0"], gap=(library_gap + exact_gap) / 2)
    assert r.status == "insensitive"
