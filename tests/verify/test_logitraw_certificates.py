"""XGBoost ``binary:logitraw`` models, which treesens reads as binary classifiers (P =
sigmoid(margin), the base score a margin): their answers are certified, and the checker
reads the base score as the margin XGBoost adds."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.tests.verify.tampering import checker_raw
from treesens.verify import verify_file
from treesens.verify.models import read_model


@pytest.fixture(scope="module")
def logitraw(tmp_path_factory):
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(300, 3))
    y = (X[:, 0] + 0.2 * X[:, 1] > 0.6).astype(int)
    params = {"objective": "binary:logitraw", "max_depth": 2, "base_score": 0.8}
    booster = xgboost.train(params, xgboost.DMatrix(X, label=y), 4)
    path = tmp_path_factory.mktemp("logitraw") / "model.json"
    booster.save_model(path)
    return path, X[:50]


def test_the_checker_reads_a_logitraw_models_margin_as_xgboost_computes_it(logitraw):
    import xgboost

    path, X = logitraw
    m = read_model(str(path), "xgboost")
    want = xgboost.Booster(model_file=str(path)).predict(xgboost.DMatrix(X), output_margin=True)
    np.testing.assert_allclose([checker_raw(m, x) for x in X], want, rtol=1e-6, atol=1e-6)


def test_a_logitraw_models_max_gap_bound_is_certified_and_verified(logitraw, tmp_path):
    out = tmp_path / "c.json"
    r = treesens.max_gap(str(logitraw[0]), vary=["f1"], certificate=out, timeout=60)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid
