"""scikit-learn Pipelines as models: features are the pipeline's input columns in the
user's units, witnesses are replayed through the whole pipeline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import SENSITIVE
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.conftest import run_treesens


def _frame(n: int = 800, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "race": rng.choice(["A", "B", "C"], n),
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 10, n).round(1),
        }
    )
    y = (((df.race == "B") & (df.age > 40)) | (df.income > 62)).astype(int).to_numpy()
    return df, y


def _pipeline(*pre_steps, clf=None):
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeClassifier

    return make_pipeline(*pre_steps, clf or DecisionTreeClassifier(max_depth=4, random_state=0))


def _one_hot_and_scaler():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    return ColumnTransformer(
        [("cat", OneHotEncoder(), ["race"]), ("num", StandardScaler(), ["age", "income"])]
    )


def test_a_pipelines_features_are_its_input_columns_in_the_users_units():
    df, y = _frame()
    pipe = _pipeline(_one_hot_and_scaler()).fit(df, y)
    ens = treesens.load_model(pipe, data=df, bounds="data")
    assert ens.feature_names == ["race", "age", "income"]
    assert ens.features[0].categories == ("A", "B", "C")
    assert (ens.features[1].lb, ens.features[1].ub) == (df.age.min(), df.age.max())


def test_a_pipelines_witness_is_replayed_through_the_whole_pipeline():
    df, y = _frame()
    pipe = _pipeline(_one_hot_and_scaler()).fit(df, y)
    ens = treesens.load_model(pipe, data=df, bounds="data")
    res = treesens.check(ens, vary="income", gap=0.3)
    assert res.status == SENSITIVE and res.validated
    rows = pd.DataFrame([res.witness["x1"], res.witness["x2"]])[list(df.columns)]
    assert pipe.predict_proba(rows)[:, 1].tolist() == [p[1] for p in res.outputs.values()]


def test_integer_columns_give_whole_number_witnesses():
    df, y = _frame()
    pipe = _pipeline(_one_hot_and_scaler()).fit(df, y)
    ens = treesens.load_model(pipe, data=df, bounds="data")
    assert ens.features[1].kind == "integer"
    res = treesens.check(ens, vary="age", gap=0.3)
    assert float(res.witness["x1"]["age"]).is_integer()
    assert float(res.witness["x2"]["age"]).is_integer()


def test_an_ordinal_encoder_makes_a_categorical_feature_with_its_names():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OrdinalEncoder

    df, y = _frame()
    pre = ColumnTransformer([("cat", OrdinalEncoder(), ["race"])], remainder="passthrough")
    ens = treesens.load_model(_pipeline(pre).fit(df, y), data=df, bounds="data")
    assert ens.features[0].categories == ("A", "B", "C")
    assert treesens.check(ens, vary="race", gap=0.3).validated


def test_an_imputed_column_may_be_missing_and_missing_goes_where_the_fill_value_goes():
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline as mp
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    df, y = _frame()
    df.loc[::7, "income"] = np.nan
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(), ["race"]),
            ("num", mp(SimpleImputer(strategy="median"), StandardScaler()), ["age", "income"]),
        ]
    )
    pipe = _pipeline(pre).fit(df, y)
    ens = treesens.load_model(pipe)
    assert ens.features[2].may_be_missing
    rows = df.head(50)
    codes = rows.assign(race=rows.race.map({"A": 0, "B": 1, "C": 2})).to_numpy(dtype=float)
    assert np.allclose(ens.proba(codes), pipe.predict_proba(rows))


def test_a_pipeline_fitted_on_an_array_names_its_columns_x0_x1():
    from sklearn.preprocessing import StandardScaler

    df, y = _frame()
    X = df[["age", "income"]].to_numpy(dtype=float)
    ens = treesens.load_model(_pipeline(StandardScaler()).fit(X, y))
    assert ens.feature_names == ["x0", "x1"]
    assert treesens.check(ens, vary="x1", gap=0.3).validated


def test_an_unsupported_step_is_named_with_what_is_supported():
    from sklearn.decomposition import PCA

    df, y = _frame()
    with pytest.raises(UnsupportedModelError, match="step 'PCA' is not supported.*StandardScaler"):
        treesens.load_model(_pipeline(PCA(1)).fit(df[["age", "income"]], y))


def test_a_pipeline_saved_with_skops_answers_from_the_command_line(tmp_path):
    import skops.io as sio

    df, y = _frame()
    path = tmp_path / "pipe.skops"
    sio.dump(_pipeline(_one_hot_and_scaler()).fit(df, y), path)
    df.assign(label=y).to_csv(tmp_path / "data.csv", index=False)
    out = run_treesens(
        "check",
        path,
        "--data",
        tmp_path / "data.csv",
        "--bounds",
        "data",
        "--vary",
        "race",
        "--gap",
        "0.3",
        "--json",
    )
    assert out.returncode in (0, 1), out.stderr
    assert '"race"' in out.stdout


def test_an_unsupported_step_in_a_file_is_one_line_and_exit_2(tmp_path):
    import skops.io as sio
    from sklearn.decomposition import PCA

    df, y = _frame()
    path = tmp_path / "pca.skops"
    sio.dump(_pipeline(PCA(1)).fit(df[["age", "income"]], y), path)
    out = run_treesens("check", path, "--vary", "x0", "--gap", "0.3")
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "PCA" in out.stderr
