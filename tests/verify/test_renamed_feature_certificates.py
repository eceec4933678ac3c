"""Certificates of models whose feature names are their library's placeholders (XGBoost's
f0, LightGBM's Column_0, ...), named by a details file: the certificate states the
details' names, and the checker reads them as the model's, column by column."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.verify import verify_file

DETAILS = "feature,name,lb,ub\n0,age,0,1\n1,income,0,1\n2,score,0,1\n"


def _data():
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(300, 3))
    return X, (X[:, 0] + 0.6 * X[:, 1] > 0.8).astype(int)


@pytest.fixture(scope="module")
def lightgbm_model(tmp_path_factory) -> Path:
    """A binary LightGBM model trained on an array: its features Column_0, ..."""
    import lightgbm

    X, y = _data()
    est = lightgbm.LGBMClassifier(n_estimators=4, num_leaves=4, verbose=-1).fit(X, y)
    path = tmp_path_factory.mktemp("lgb") / "model.txt"
    est.booster_.save_model(str(path))
    return path


@pytest.fixture(scope="module")
def xgboost_model(tmp_path_factory) -> Path:
    """A binary XGBoost model trained on an array: its features f0, f1, f2."""
    import xgboost

    X, y = _data()
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2, learning_rate=0.5).fit(X, y)
    path = tmp_path_factory.mktemp("xgb") / "model.json"
    est.get_booster().save_model(path)
    return path


def _details(tmp_path: Path) -> Path:
    path = tmp_path / "details.csv"
    path.write_text(DETAILS)
    return path


def test_a_lightgbm_model_named_by_its_details_gets_a_max_gap_certificate(lightgbm_model, tmp_path):
    out = tmp_path / "c.json"
    r = treesens.max_gap(lightgbm_model, ["age"], details=_details(tmp_path), certificate=out)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid


def test_an_xgboost_model_named_by_its_details_gets_a_max_gap_certificate(xgboost_model, tmp_path):
    out = tmp_path / "c.json"
    r = treesens.max_gap(xgboost_model, ["age"], details=_details(tmp_path), certificate=out)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid


def test_the_checker_names_the_features_as_the_certificate_does(lightgbm_model, tmp_path):
    out = tmp_path / "c.json"
    treesens.max_gap(lightgbm_model, ["age"], details=_details(tmp_path), certificate=out)
    assert [d["feature"] for d in verify_file(out).domain] == ["age", "income", "score"]
