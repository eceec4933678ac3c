"""Models whose prediction is more than the trees the checker reads (an offset and one
value per leaf) are refused, not read as those trees: a certificate of such a model
would be checked against another model, and a forged one could prove a false claim
(each of these was accepted for a claim the library's own predict breaks)."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.verify.models import ModelError, read_model


def _data(n: int = 300):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(n, 2))
    return X, 10 * X[:, 0] + 0.1 * X[:, 1]


def test_a_gradient_boosting_regressor_started_from_a_linear_model_is_refused(tmp_path):
    """Its raw prediction starts at the linear model's, which moves with the input: the
    checker read it as the constant it takes at x = 0 (a change of 10 certified as
    none of 1)."""
    import skops.io
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.linear_model import LinearRegression

    X, y = _data()
    est = GradientBoostingRegressor(init=LinearRegression(), n_estimators=2, max_depth=1)
    skops.io.dump(est.fit(X, y), tmp_path / "gb.skops")
    with pytest.raises(ModelError, match="init=LinearRegression"):
        read_model(str(tmp_path / "gb.skops"), "sklearn")


def test_a_gradient_boosting_classifier_started_from_a_logistic_model_is_refused(tmp_path):
    import skops.io
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    X, y = _data()
    est = GradientBoostingClassifier(init=LogisticRegression(), n_estimators=2, max_depth=1)
    skops.io.dump(est.fit(X, (y > 5).astype(int)), tmp_path / "gb.skops")
    with pytest.raises(ModelError, match="init=LogisticRegression"):
        read_model(str(tmp_path / "gb.skops"), "sklearn")


def test_a_gradient_boosting_model_with_its_default_start_is_read(tmp_path):
    import skops.io
    from sklearn.ensemble import GradientBoostingRegressor

    X, y = _data()
    est = GradientBoostingRegressor(n_estimators=2, max_depth=1, loss="absolute_error")
    skops.io.dump(est.fit(X, y), tmp_path / "gb.skops")
    assert read_model(str(tmp_path / "gb.skops"), "sklearn").task == "regressor"


def _lightgbm_refused(tmp_path, params: dict, rounds: int, match: str) -> None:
    """A LightGBM regression trained with ``params`` is refused by the checker's reader."""
    import lightgbm

    X, y = _data()
    params = {"objective": "regression", "verbose": -1, **params}
    lightgbm.train(params, lightgbm.Dataset(X, y), rounds).save_model(tmp_path / "m.txt")
    with pytest.raises(ModelError, match=match):
        read_model(str(tmp_path / "m.txt"), "lightgbm")


def test_a_lightgbm_linear_tree_model_is_refused(tmp_path):
    """Its leaves add coefficients times the inputs to a constant: the checker read
    each leaf's ``leaf_value`` alone."""
    _lightgbm_refused(tmp_path, {"linear_tree": True, "num_leaves": 2}, 2, "linear trees")


def test_an_xgboost_model_with_vector_leaves_is_refused(tmp_path):
    """multi_output_tree keeps each leaf's class scores in ``leaf_weights``; its
    ``split_conditions`` at a leaf hold no value (the checker read every class's score
    as 0: a uniform softmax)."""
    import xgboost

    X, y = _data()
    params = {
        "objective": "multi:softprob",
        "num_class": 3,
        "multi_strategy": "multi_output_tree",
        "tree_method": "hist",
        "max_depth": 2,
    }
    booster = xgboost.train(params, xgboost.DMatrix(X, np.digitize(y, [3, 6])), 2)
    booster.save_model(tmp_path / "mo.json")
    with pytest.raises(ModelError, match="vector leaves"):
        read_model(str(tmp_path / "mo.json"), "xgboost")


@pytest.mark.parametrize("booster", ["dart", "gblinear"])
def test_an_xgboost_model_of_another_booster_than_gbtree_is_refused_by_name(booster, tmp_path):
    """DART weighs its trees at predict time, gblinear has none: one line naming the
    booster (it was 'malformed certificate: it has no field ...')."""
    import xgboost

    X, y = _data()
    params = {"objective": "binary:logistic", "booster": booster, "max_depth": 2}
    xgboost.train(params, xgboost.DMatrix(X, (y > 5).astype(int)), 3).save_model(
        tmp_path / "m.json"
    )
    with pytest.raises(ModelError, match=f"booster '{booster}'"):
        read_model(str(tmp_path / "m.json"), "xgboost")


def test_a_lightgbm_regression_on_the_square_root_is_refused(tmp_path):
    """``reg_sqrt`` predicts sign(raw) raw^2: the checker read its raw score as the
    prediction (a change of 8 certified as none of 4)."""
    _lightgbm_refused(tmp_path, {"reg_sqrt": True, "num_leaves": 4}, 3, "square root")


def test_an_xgboost_model_of_several_targets_is_refused(tmp_path):
    """Its prediction is one number per target; a change is claimed of one."""
    import xgboost

    X, y = _data()
    est = xgboost.XGBRegressor(n_estimators=2, max_depth=2).fit(X, np.stack([y, -y], axis=1))
    est.get_booster().save_model(tmp_path / "mt.json")
    with pytest.raises(ModelError, match="several targets"):
        read_model(str(tmp_path / "mt.json"), "xgboost")


@pytest.mark.parametrize("kind", ["RandomForestRegressor", "RandomForestClassifier"])
def test_a_scikit_learn_forest_of_several_outputs_is_refused(kind, tmp_path):
    """The checker read its first output's leaves alone (a second output's change of 7
    certified as none of 1)."""
    import skops.io
    from sklearn import ensemble

    X, y = _data()
    Y = np.stack([X[:, 1], y], axis=1)
    if kind.endswith("Classifier"):
        Y = (Y.mean(axis=0) < Y).astype(int)
    est = getattr(ensemble, kind)(n_estimators=2, max_depth=2, random_state=0).fit(X, Y)
    skops.io.dump(est, tmp_path / "rf.skops")
    with pytest.raises(ModelError, match="of 2 outputs"):
        read_model(str(tmp_path / "rf.skops"), "sklearn")
