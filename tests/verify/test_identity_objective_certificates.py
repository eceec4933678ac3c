"""XGBoost ``reg:quantileerror`` (one quantile_alpha) and ``reg:squaredlogerror`` models,
whose prediction is the raw score (the base score a prediction): their answers are
certified, and the checker reads their predictions as XGBoost computes them."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.tests.verify.tampering import checker_raw
from treesens.verify import verify_file
from treesens.verify.models import read_model

OBJECTIVES = {
    "reg:quantileerror": {"quantile_alpha": 0.7},
    "reg:squaredlogerror": {},
}


@pytest.fixture(scope="module", params=sorted(OBJECTIVES))
def regressor(request, tmp_path_factory):
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(300, 3))
    y = np.exp(X[:, 0] + 0.2 * X[:, 1]) + 0.1 * rng.uniform(size=300)
    params = {"objective": request.param, "max_depth": 2, **OBJECTIVES[request.param]}
    booster = xgboost.train(params, xgboost.DMatrix(X, label=y), 4)
    path = tmp_path_factory.mktemp("identity") / "model.json"
    booster.save_model(path)
    return path, X[:50]


def test_the_checker_reads_the_prediction_as_xgboost_computes_it(regressor):
    import xgboost

    path, X = regressor
    m = read_model(str(path), "xgboost")
    want = xgboost.Booster(model_file=str(path)).predict(xgboost.DMatrix(X))
    np.testing.assert_allclose([checker_raw(m, x) for x in X], want, rtol=1e-6, atol=1e-6)


def test_the_largest_change_is_certified_and_verified(regressor, tmp_path):
    out = tmp_path / "c.json"
    r = treesens.max_gap(str(regressor[0]), vary=["f1"], certificate=out, timeout=60)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid
