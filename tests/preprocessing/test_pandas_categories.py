"""Models fitted on pandas ``category`` columns show category names, not codes, and
take names in data and in ``where`` / ``fix``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.interfaces.sens_run import run_query
from treesens.language import load_queries


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
