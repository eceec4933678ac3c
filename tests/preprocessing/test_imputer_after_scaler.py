"""A SimpleImputer after a scaler (a later step of the Pipeline, or a branch of a
ColumnTransformer that comes after one) fills a NaN the scaler passed through: the
input may be missing, and NaN reaches the trees as the imputer's fill. On a grid of
whole numbers and NaN the folded model agrees with the pipeline's predict_proba on every
row, and each feature's check agrees with enumerating the grid, its witness replayed by
the pipeline. (Read as missing at the trees, NaN took each node's default side: 91 of
the grid's 343 rows got another probability and b's check answered insensitive.)"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.preprocessing.nan_grid import (
    COLUMNS,
    GRID,
    assert_check_agrees_with_the_grid,
    assert_folded_model_agrees_on_the_grid,
    fitted_and_folded,
)

pytest.importorskip("sklearn")

GAP = 0.1


def _training(n: int = 800) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({c: rng.integers(0, 6, n).astype(float) for c in COLUMNS})
    missing = rng.random(n) < 0.3
    score = 1.5 * (df.a > 2) + 1.0 * (df.b > 3) - 0.5 * (df.c > 2)
    y = (score + rng.normal(0, 0.5, n) > 1.2).astype(int).to_numpy()
    df.loc[missing, "a"] = np.nan
    return df, y


def _scaler_then_constant_fill():
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    fill = SimpleImputer(strategy="constant", fill_value=9.0)
    clf = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    return make_pipeline(StandardScaler(), fill, clf)


def _column_transformer_then_imputer():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    scaled = ColumnTransformer([("s", StandardScaler(), COLUMNS)])
    clf = HistGradientBoostingClassifier(max_iter=10, random_state=0)
    return make_pipeline(scaled, SimpleImputer(strategy="median"), clf)


def _scaler_then_imputer_in_a_column_transformer():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    fill = ColumnTransformer([("i", SimpleImputer(strategy="constant", fill_value=-5.0), [0, 1])])
    clf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0)
    return make_pipeline(StandardScaler(), fill, clf)


def _scaler_then_indicator():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    clf = RandomForestClassifier(n_estimators=6, max_depth=4, random_state=0)
    return make_pipeline(StandardScaler(), SimpleImputer(add_indicator=True), clf)


PIPELINES = {
    "scaler, constant fill": _scaler_then_constant_fill,
    "ColumnTransformer of a scaler, imputer": _column_transformer_then_imputer,
    "scaler, ColumnTransformer of an imputer on a and b": _scaler_then_imputer_in_a_column_transformer,
    "scaler, imputer with add_indicator": _scaler_then_indicator,
}


@pytest.fixture(scope="module", params=sorted(PIPELINES))
def fitted(request):
    return fitted_and_folded(PIPELINES[request.param], _training())


def test_the_folded_model_agrees_with_the_pipeline_on_every_row_of_the_grid(fitted):
    assert_folded_model_agrees_on_the_grid(*fitted)


@pytest.mark.parametrize("vary", COLUMNS)
def test_each_check_agrees_with_enumerating_the_grid_and_its_witness_replays(fitted, vary):
    assert_check_agrees_with_the_grid(*fitted, vary, GAP)


def test_an_input_an_imputer_fills_after_a_scaler_may_be_missing_without_data():
    df, y = _training()
    ens = treesens.load_model(_scaler_then_imputer_in_a_column_transformer().fit(df, y))
    assert [f.may_be_missing for f in ens.features] == [True, True, False]
    assert "may be missing (imputed): a, b" in ens.source


def test_an_imputer_of_another_value_than_nan_on_numbers_is_refused_naming_it():
    """It maps that value to its fill: the column no longer rises with its input."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    df, y = _training()
    fill = SimpleImputer(missing_values=-1.0, strategy="constant", fill_value=5.0)
    clf = RandomForestClassifier(n_estimators=2, random_state=0)
    pipe = make_pipeline(StandardScaler(), fill, clf).fit(df.fillna(-1.0), y)
    with pytest.raises(UnsupportedModelError, match="'SimpleImputer'.* missing_values=-1.0 on"):
        treesens.load_model(pipe)


def test_an_insensitive_answer_s_certificate_states_the_fill_and_the_checker_accepts_it(tmp_path):
    """The certificate states NaN's image at each column of a and b (the fill, scaled
    before), which the checker confirms with the pipeline's own transform."""
    sio = pytest.importorskip("skops.io")
    df, y = _training()
    path = tmp_path / "pipe.skops"
    sio.dump(_scaler_then_constant_fill().fit(df, y), path)
    res = treesens.check(
        str(path), vary="c", gap=GAP, data=GRID, bounds="data", certificate=tmp_path / "c.json"
    )
    assert res.status == INSENSITIVE and res.proof.checked
