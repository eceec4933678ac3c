"""scikit-learn Pipelines as models: features are the pipeline's input columns in the
user's units, witnesses are replayed through the whole pipeline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import SENSITIVE
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.conftest import treesens_here


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

    final = clf if clf is not None else DecisionTreeClassifier(max_depth=4, random_state=0)
    return make_pipeline(*pre_steps, final)


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
    out = treesens_here(
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
    out = treesens_here("check", path, "--vary", "x0", "--gap", "0.3")
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "PCA" in out.stderr


def _passthrough_categorical_pipeline():
    """A HistGradientBoosting whose categorical feature is a passthrough int column."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.preprocessing import StandardScaler

    df, y = _frame()
    pre = ColumnTransformer(
        [("num", StandardScaler(), ["income"]), ("age", "passthrough", ["age"])]
    )
    clf = HistGradientBoostingClassifier(max_iter=5, categorical_features=[1])
    return _pipeline(pre, clf=clf).fit(df[["age", "income"]], y)


def test_a_categorical_split_on_a_passthrough_column_is_refused_saying_to_encode_it():
    with pytest.raises(UnsupportedModelError, match="'age' as a category .* OrdinalEncoder"):
        treesens.load_model(_passthrough_categorical_pipeline())


def test_a_categorical_split_on_a_passthrough_column_in_a_file_names_the_file(tmp_path):
    import skops.io as sio

    path = tmp_path / "cat.skops"
    sio.dump(_passthrough_categorical_pipeline(), path)
    out = treesens_here("check", path, "--vary", "age", "--gap", "0.3")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and f"{path}: the final model splits" in out.stderr


def _final(name: str):
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from xgboost import XGBClassifier

    return {
        "xgboost": XGBClassifier(n_estimators=15, max_depth=3, n_jobs=1),
        "hist_gradient_boosting": HistGradientBoostingClassifier(max_iter=15, max_depth=3),
        "random_forest": RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0),
    }[name]


@pytest.mark.parametrize("final", ["xgboost", "hist_gradient_boosting", "random_forest"])
def test_check_sweep_max_gap_and_audit_answer_in_the_users_units(final):
    df, y = _frame()
    pipe = _pipeline(_one_hot_and_scaler(), clf=_final(final)).fit(df, y)
    model = treesens.load_model(pipe, data=df, bounds="data")
    r = treesens.check(model, vary="race", gap=0.2)
    assert r.status == SENSITIVE and r.validated
    assert {r.witness["x1"]["race"], r.witness["x2"]["race"]} <= {"A", "B", "C"}
    assert [s.features for s in treesens.sweep(model, gap=0.2)] == [[c] for c in df.columns]
    m = treesens.max_gap(model, "race", tolerance=0.01)
    assert m.max_gap["proven"] and m.max_gap["lower"] >= 0.2
    audit = treesens.audit(model, df.head(30).assign(label=y[:30]), "race", gap=0.2)
    assert set(audit["x2_race"].dropna()) <= {"A", "B", "C"}


@pytest.mark.parametrize("scaler", ["MaxAbsScaler", "RobustScaler", "MinMaxScaler"])
def test_each_scaler_folds_exactly_on_the_data(scaler):
    import sklearn.preprocessing as pre

    df, y = _frame()
    X = df[["age", "income"]]
    pipe = _pipeline(getattr(pre, scaler)()).fit(X, y)
    model = treesens.load_model(pipe)
    assert np.array_equal(model.proba(X.to_numpy(dtype=float)), pipe.predict_proba(X))


def test_a_sens_model_line_loads_a_pipeline(tmp_path):
    import skops.io as sio

    from treesens.interfaces.sens_run import run_query
    from treesens.language import load_queries

    df, y = _frame()
    sio.dump(_pipeline(_one_hot_and_scaler()).fit(df, y), tmp_path / "pipe.skops")
    df.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "q.sens").write_text(
        'model "pipe.skops"\ndata "people.csv"\n'
        'query q { vary race  gap 0.2  where x1.race == "B" }\n'
    )
    sf = load_queries(tmp_path / "q.sens")
    res = run_query(sf, sf.queries[0])
    assert res.status == SENSITIVE and res.witness["x1"]["race"] == "B" and res.validated


def test_a_scaler_that_shrinks_folds_its_largest_thresholds():
    """A scale below 1 sends the largest doubles to infinity: the fold still works."""
    from sklearn.preprocessing import StandardScaler

    df, y = _frame()
    X = df[["age", "income"]] / 1000.0  # standard deviations far below 1
    pipe = _pipeline(StandardScaler()).fit(X, y)
    model = treesens.load_model(pipe)
    assert np.array_equal(model.proba(X.to_numpy(dtype=float)), pipe.predict_proba(X))


def test_an_ordinal_encoders_missing_category_coded_nan_still_reads_its_column():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OrdinalEncoder

    df, y = _frame()
    df["race"] = df.race.astype(object)
    df.loc[::9, "race"] = np.nan  # OrdinalEncoder codes A, B, C, nan as 0, 1, 2, NaN
    pre = ColumnTransformer([("cat", OrdinalEncoder(), ["race"])], remainder="passthrough")
    pipe = _pipeline(pre).fit(df, y)
    ens = treesens.load_model(pipe)
    assert ens.features[0].categories == ("A", "B", "C", "nan")
    rows = df.head(60)
    codes = rows.assign(race=rows.race.map({"A": 0, "B": 1, "C": 2}).fillna(3))
    assert np.allclose(ens.proba(codes.to_numpy(dtype=float)), pipe.predict_proba(rows))
    assert treesens.check(ens, vary="race", gap=0.3).status == SENSITIVE


def _one_hot_with_missing_race():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    df, y = _frame()
    df["race"] = df.race.astype(object)
    df.loc[::9, "race"] = np.nan  # OneHotEncoder learns the category nan: a column of its own
    pre = ColumnTransformer([("cat", OneHotEncoder(), ["race"])], remainder="passthrough")
    return df, _pipeline(pre).fit(df, y)


def test_a_row_in_the_category_learned_from_missing_values_is_replayed_by_the_pipeline():
    df, pipe = _one_hot_with_missing_race()
    ens = treesens.load_model(pipe)
    assert ens.features[0].categories == ("A", "B", "C", "nan")
    row = pd.DataFrame({"race": [np.nan], "age": [50], "income": [70.0]}, dtype=object)
    assert np.allclose(ens.replayer.predict_proba([[3, 50, 70.0]]), pipe.predict_proba(row))


def test_a_missing_value_in_the_data_is_the_category_the_encoder_learned_from_it():
    df, pipe = _one_hot_with_missing_race()
    ens = treesens.load_model(pipe, data=df, bounds="data")
    assert (ens.features[0].lb, ens.features[0].ub) == (0.0, 3.0)
    assert not ens.features[0].may_be_missing


def test_a_dropped_remainder_is_described_as_drop_not_passthrough():
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import OneHotEncoder

    df, y = _frame()
    pre = ColumnTransformer([("cat", OneHotEncoder(), ["race"])], remainder="drop")
    ens = treesens.load_model(_pipeline(pre).fit(df, y))
    assert "ColumnTransformer[OneHotEncoder, drop]" in ens.source


def test_a_pipelines_source_names_the_imputed_columns_a_pair_may_leave_missing():
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer

    df, y = _frame()
    pre = ColumnTransformer([("imp", SimpleImputer(), ["age"])], remainder="passthrough")
    ens = treesens.load_model(_pipeline(pre).fit(df.drop(columns="race"), y))
    assert "may be missing (imputed): age;" in ens.source
    assert ens.features[ens.feature_names.index("age")].may_be_missing


# a Pipeline with no preprocessing: the model alone, or behind 'passthrough' steps, whose
# input width and names scikit-learn asks of the first step (which 'passthrough' lacks)
NO_PREPROCESSING = {"model alone": [], "passthrough first": ["passthrough"]}


def _numeric_pipeline(pre: list):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline

    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.random((120, 2)), columns=["a", "b"])
    y = (df.a + 0.3 * df.b > 0.6).astype(int).to_numpy()
    steps = [(f"s{i}", s) for i, s in enumerate(pre)]
    forest = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    return Pipeline([*steps, ("model", forest)]).fit(df, y), df


@pytest.mark.parametrize("pre", NO_PREPROCESSING.values(), ids=NO_PREPROCESSING.keys())
def test_a_pipeline_without_preprocessing_reads_as_its_model_over_its_columns(pre):
    pipe, df = _numeric_pipeline(pre)
    ens = treesens.load_model(pipe)
    assert ens.feature_names == ["a", "b"]
    np.testing.assert_allclose(ens.proba(df.to_numpy()), pipe.predict_proba(df), atol=1e-12)


@pytest.mark.parametrize("pre", NO_PREPROCESSING.values(), ids=NO_PREPROCESSING.keys())
def test_a_pipeline_without_preprocessing_answers_as_its_model(pre):
    pipe, _ = _numeric_pipeline(pre)
    bare = pipe.steps[-1][1]
    for gap in (0.3, 0.4):  # either side of b's largest gap, about 0.346
        r = treesens.check(pipe, ["b"], gap=gap)
        assert r.status == treesens.check(bare, ["b"], gap=gap).status, gap
        assert r.status != SENSITIVE or r.validated
