"""Regressors whose prediction is a nonlinear function of the trees' raw score (exp for
XGBoost's reg:gamma, count:poisson and reg:tweedie, LightGBM's poisson, gamma and
tweedie, HistGradientBoosting's poisson and gamma losses): a change of D in the
prediction is no linear condition on the raw scores, which a certificate's rows state
(docs/certificates.md), so certify refuses them in one line naming why, for a change and
for a max gap's bound alike, and the checker refuses to read them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.questions.certify import certify, certify_answer
from treesens.questions.query_build import make_query
from treesens.verify.models import ModelError, read_model

MODELS = [
    ("xgboost", "reg:gamma"),
    ("xgboost", "count:poisson"),
    ("xgboost", "reg:tweedie"),
    ("lightgbm", "poisson"),
    ("lightgbm", "gamma"),
    ("lightgbm", "tweedie"),
    ("hgb", "poisson"),
    ("hgb", "gamma"),
]
REASON = "the regressor predicts exp(raw score)"


def _model(library: str, objective: str, folder: Path) -> Path:
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, (300, 3)), columns=["a", "b", "c"])
    y = 1.0 + 3 * X["a"] + X["b"] + 0.1 * rng.uniform(0, 1, 300)
    name = objective.replace(":", "-")
    if library == "xgboost":
        import xgboost

        est = xgboost.XGBRegressor(n_estimators=3, max_depth=2, objective=objective).fit(X, y)
        path = folder / f"{name}.json"
        est.get_booster().save_model(path)
        return path
    if library == "lightgbm":
        import lightgbm

        est = lightgbm.LGBMRegressor(n_estimators=3, num_leaves=4, objective=objective, verbose=-1)
        path = folder / f"{name}.txt"
        est.fit(X, y).booster_.save_model(path)
        return path
    import skops.io
    from sklearn.ensemble import HistGradientBoostingRegressor

    est = HistGradientBoostingRegressor(max_iter=3, max_depth=2, loss=objective).fit(X, y)
    path = folder / f"hgb-{name}.skops"
    skops.io.dump(est, path)
    return path


LIBRARY = {".json": "xgboost", ".txt": "lightgbm", ".skops": "sklearn"}


@pytest.mark.parametrize("library,objective", MODELS)
def test_a_change_of_a_nonlinear_link_regressor_gets_no_certificate_naming_why(
    library, objective, tmp_path
):
    path = _model(library, objective, tmp_path)
    ens = treesens.load_model(str(path))
    out = tmp_path / "c.json"
    done = certify(ens, make_query(["b"], delta=100.0), out, path, 60)
    assert not done.written and not out.exists()
    assert done.reason.startswith(REASON) and "\n" not in done.reason


@pytest.mark.parametrize("library,objective", MODELS[::3])
def test_a_max_gap_bound_of_a_nonlinear_link_regressor_gets_no_certificate(
    library, objective, tmp_path
):
    path = _model(library, objective, tmp_path)
    ens = treesens.load_model(str(path))
    res = treesens.max_gap(ens, vary=["b"], timeout=60)
    done = certify_answer(ens, make_query(["b"]), res, tmp_path / "mg.json", str(path), 60)
    assert not done.written and done.reason.startswith(REASON)


@pytest.mark.parametrize("library,objective", MODELS)
def test_the_checker_does_not_read_a_nonlinear_link_regressor(library, objective, tmp_path):
    path = _model(library, objective, tmp_path)
    with pytest.raises(ModelError):
        read_model(str(path), LIBRARY[path.suffix])
