"""Libraries that add the trees' values in float32, one tree after the other (XGBoost,
onnxruntime on float inputs), round more the more trees they add: the encoding's
relaxation (rounding.gap_relaxation) bounds that rounding on models of hundreds of trees,
so that "insensitive" stays a proof about the library's own scores."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.rounding import float32_sum_error, gap_relaxation

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def _data(n: int = 2000, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 8))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=n) > 1).astype(int)
    return X, y


def _xgb(n_trees: int):
    X, y = _data()
    return xgb.XGBClassifier(n_estimators=n_trees, max_depth=6, learning_rate=0.3, nthread=1).fit(
        X, y
    )


def test_xgboost_models_are_read_as_summing_in_float32():
    assert treesens.load_model(_xgb(5)).sums == "float32"


def test_lightgbm_models_are_read_as_summing_in_float64():
    X, y = _data()
    est = lgb.LGBMClassifier(n_estimators=5, verbose=-1).fit(X, y)
    assert treesens.load_model(est).sums == "float64"


def test_the_float32_rounding_bound_grows_with_the_tree_count():
    few, many = treesens.load_model(_xgb(50)), treesens.load_model(_xgb(500))
    assert float32_sum_error(many) > 5 * float32_sum_error(few)


@pytest.mark.parametrize("n_trees", [100, 1000])
def test_the_relaxation_bounds_xgboosts_float32_rounding(n_trees):
    ens = treesens.load_model(_xgb(n_trees))
    X = np.random.default_rng(1).normal(size=(20000, 8))
    ir = ens.raw(X)[:, 0]
    lib = np.asarray(ens.replayer.predict_raw(X), dtype=np.float64).reshape(-1)
    assert np.abs(lib - ir).max() <= gap_relaxation(ens)


def test_the_relaxation_bounds_onnxruntimes_float32_rounding_on_a_large_forest(tmp_path):
    pytest.importorskip("onnxruntime")
    skl2onnx = pytest.importorskip("skl2onnx")
    from sklearn.ensemble import RandomForestClassifier

    X, y = _data(800)
    # 1000 trees' probabilities summed in float32 err by ~8e-6 on the training rows, eight
    # times the 2^-20 of the largest sum that bounds float64 sums
    est = RandomForestClassifier(1000, max_depth=8, random_state=0, n_jobs=1).fit(X, y)
    onx = skl2onnx.to_onnx(est, X[:1].astype(np.float32), options={"zipmap": False})
    path = tmp_path / "forest.onnx"
    path.write_bytes(onx.SerializeToString())
    ens = treesens.load_model(str(path))
    assert ens.sums == "float32"
    R = X.astype(np.float32).astype(np.float64)
    ir = ens.proba(R)
    lib = np.asarray(ens.replayer.predict_proba(R), dtype=np.float64)
    assert np.abs(lib - ir).max() <= gap_relaxation(ens)
