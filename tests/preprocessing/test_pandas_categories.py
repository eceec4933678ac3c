"""Models fitted on pandas ``category`` columns show category names, not codes, and
take names in data and in ``where`` / ``fix``."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.interfaces.sens_run import run_query
from treesens.language import load_queries
from treesens.readers.data import load_data


def _frame() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"race": pd.Categorical(rng.choice(["A", "B", "C"], 900)), "age": rng.integers(18, 80, 900)}
    )
    return df, ((df.race == "B") & (df.age > 40)).astype(int).to_numpy()


def _xgboost(df, y):
    from xgboost import XGBClassifier

    return XGBClassifier(n_estimators=8, max_depth=3, enable_categorical=True, n_jobs=1).fit(df, y)


def _lightgbm(df, y):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(n_estimators=40, num_leaves=6, verbose=-1, n_jobs=1).fit(df, y)


@pytest.mark.parametrize("fit", [_xgboost, _lightgbm], ids=["xgboost", "lightgbm"])
def test_a_category_columns_witness_shows_category_names(fit):
    df, y = _frame()
    ens = treesens.load_model(fit(df, y), data=df, bounds="data")
    assert ens.features[0].categories == ("A", "B", "C")
    res = treesens.check(ens, vary="race", gap=0.3)
    assert res.status == SENSITIVE and res.witness["x1"]["race"] == "B"


def test_an_xgboost_json_file_keeps_its_category_names(tmp_path):
    df, y = _frame()
    _xgboost(df, y).save_model(tmp_path / "m.json")
    assert treesens.load_model(tmp_path / "m.json").features[0].categories == ("A", "B", "C")


def test_where_and_fix_take_category_names(tmp_path):
    df, y = _frame()
    _xgboost(df, y).save_model(tmp_path / "m.json")
    (tmp_path / "q.sens").write_text(
        'model "m.json"\n'
        'query a { vary age  gap 0.3  fix race = "A" }\n'
        'query b { vary age  gap 0.3  where x1.race == "B" }\n'
    )
    sf = load_queries(tmp_path / "q.sens")
    statuses = [run_query(sf, q).status for q in sf.queries]
    assert statuses == [INSENSITIVE, SENSITIVE]


def _numeric_frame() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"grade": rng.choice([1, 2, 5], 900), "age": rng.integers(18, 80, 900)})
    return df, ((df.grade == 5) & (df.age > 40)).astype(int).to_numpy()


def _fed_back(model, res) -> tuple[np.ndarray, np.ndarray]:
    pair = pd.DataFrame([res.witness["x1"], res.witness["x2"]])
    return model.predict_proba(pair)[:, 1], np.array([res.outputs["x1"][1], res.outputs["x2"][1]])


def test_a_pipelines_witness_shows_numeric_categories_as_numbers_its_predict_takes():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    df, y = _numeric_frame()
    pre = ColumnTransformer([("grade", OneHotEncoder(), ["grade"])], remainder="passthrough")
    pipe = Pipeline([("pre", pre), ("clf", HistGradientBoostingClassifier(max_iter=60))])
    pipe.fit(df, y)
    res = treesens.check(treesens.load_model(pipe, data=df, bounds="data"), vary="grade", gap=0.3)
    assert res.status == SENSITIVE and res.witness["x1"]["grade"] in (1, 2, 5)
    replayed, stated = _fed_back(pipe, res)
    assert np.allclose(replayed, stated, atol=1e-6)


def test_a_category_column_of_numbers_shows_them_as_numbers():
    df, y = _numeric_frame()
    df = df.assign(grade=pd.Categorical(df.grade))
    res = treesens.check(treesens.load_model(_lightgbm(df, y), data=df), vary="grade", gap=0.3)
    assert res.status == SENSITIVE and {res.witness["x1"]["grade"], res.witness["x2"]["grade"]} <= {
        1,
        2,
        5,
    }


def _bool_pipeline():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(2)
    df = pd.DataFrame({"member": rng.integers(0, 2, 300).astype(bool), "age": rng.random(300)})
    y = (df.member ^ (df.age > 0.5)).astype(int)
    pre = ColumnTransformer([("m", OrdinalEncoder(), ["member"])], remainder="passthrough")
    pipe = Pipeline([("pre", pre), ("clf", HistGradientBoostingClassifier(max_iter=5))])
    return pipe.fit(df, y), df


def test_a_bool_column_of_an_encoded_bool_feature_is_read_by_name_without_a_warning():
    pipe, df = _bool_pipeline()
    ens = treesens.load_model(pipe)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_data(df.head(4), ens)
    codes = [ens.features[0].categories[int(c)] for c in ds.X[:, 0]]
    assert codes == [str(v) for v in df.member.head(4)]
