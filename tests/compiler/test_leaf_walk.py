"""``Ensemble.leaf_indices`` walks a few rows (a replayed pair) down the trees in Python and
many rows level by level in NumPy: both must route every row alike, on each library's
splits (float32 or float64 inputs, categories, NaN, LightGBM's zero and "no missing")."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.ensemble import MISSING_NONE, MISSING_ZERO, WALK_ROWS
from treesens.readers.load import load_model

lgb = pytest.importorskip("lightgbm")
xgb = pytest.importorskip("xgboost")


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    a[rng.random(n) < 0.2] = np.nan
    b = np.where(rng.random(n) < 0.2, 0.0, rng.normal(size=n))
    c = rng.integers(0, 6, n).astype(float)
    y = (np.isin(c, [1, 4]) ^ (np.nan_to_num(a, nan=3.0) > 1.0) ^ (b > 0.3)).astype(int)
    return np.column_stack([a, b, c]), y


def _xgboost_categorical():
    X, y = _data()
    dm = xgb.DMatrix(X, label=y, feature_types=["q", "q", "c"], enable_categorical=True)
    params = {"objective": "binary:logistic", "max_depth": 4, "max_cat_to_onehot": 1}
    return xgb.train(params, dm, num_boost_round=12)


def _lightgbm(**extra):
    X, y = _data()
    params = dict(objective="binary", verbose=-1, num_leaves=8, min_data_per_group=5)
    params |= dict(cat_smooth=1, max_cat_to_onehot=1, **extra)
    return lgb.train(params, lgb.Dataset(X, y, categorical_feature=[2]), 12)


MODELS = {
    "xgboost-categorical": _xgboost_categorical,
    "lightgbm": _lightgbm,
    "lightgbm-zero-missing": lambda: _lightgbm(zero_as_missing=True),
    "lightgbm-no-missing": lambda: _lightgbm(use_missing=False),
}


def _hard_rows(ens, n=400, seed=1) -> np.ndarray:
    """Random rows with NaN, zeros, values below LightGBM's zero band, category codes in
    and out of range, and every split's threshold exactly (ties decide the side)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, ens.n_features))
    thresholds = [
        (int(f), float(th))
        for t in ens.trees
        for f, th in zip(t.feature, t.threshold)
        if f >= 0 and np.isfinite(th)
    ]
    for i in range(n):
        f, th = thresholds[i % len(thresholds)]
        X[i, f] = th
    X[rng.random(X.shape) < 0.15] = np.nan
    X[rng.random(X.shape) < 0.1] = 0.0
    X[rng.random(X.shape) < 0.05] = 1e-40
    X[:, 2] = np.where(rng.random(n) < 0.8, rng.integers(-1, 8, n), X[:, 2])
    return X


@pytest.mark.parametrize("name", sorted(MODELS))
def test_walked_pairs_reach_the_leaves_the_vectorised_walk_reaches(name):
    ens = load_model(MODELS[name]())
    X = _hard_rows(ens)
    assert len(X) > WALK_ROWS
    together = ens.leaf_indices(X)
    pairs = np.concatenate([ens.leaf_indices(X[i : i + 2]) for i in range(0, len(X), 2)])
    assert np.array_equal(pairs, together)


def test_the_models_exercise_each_missing_mode():
    modes = set()
    for make in MODELS.values():
        for t in load_model(make()).trees:
            if t.missing is not None:
                modes |= set(t.missing.tolist())
    assert {MISSING_ZERO, MISSING_NONE} <= modes
