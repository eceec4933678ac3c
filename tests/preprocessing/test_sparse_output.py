"""Preprocessing whose output is a sparse matrix (a OneHotEncoder's default, a
ColumnTransformer under its sparse_threshold): XGBoost reads the zeros it leaves out as
missing values, scikit-learn and LightGBM as 0. Before, treesens read them as 0 for
XGBoost too, and answered "insensitive" for pairs the pipeline flips."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.compiler.errors import UnsupportedModelError

GAP = 0.1
CATS = ["A", "B", "C", "D"]
GRID = pd.DataFrame(list(itertools.product(CATS, CATS)), columns=["a", "b"])


def _training(n: int = 400) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.choice(CATS, n), "b": rng.choice(CATS, n)})
    y = ((df.a.isin(["A", "B"]) ^ (df.b == "C")) | (df.b == "D")).astype(int).to_numpy()
    return df, y


def _final(library: str):
    from lightgbm import LGBMClassifier
    from sklearn.ensemble import RandomForestClassifier
    from xgboost import XGBClassifier

    return {
        "xgboost": XGBClassifier(n_estimators=5, max_depth=3, n_jobs=1),
        "lightgbm": LGBMClassifier(n_estimators=5, num_leaves=8, verbose=-1, n_jobs=1),
        "random_forest": RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
    }[library]


def _one_hot_pipeline(library: str):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    pipe = make_pipeline(OneHotEncoder(), _final(library)).fit(*_training())
    assert hasattr(pipe[:-1].transform(GRID), "toarray")  # the output is sparse
    return pipe


def _codes(rows: pd.DataFrame) -> np.ndarray:
    return rows.apply(lambda c: c.map(CATS.index)).to_numpy(dtype=float)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "random_forest"])
def test_the_folded_model_reads_a_sparse_outputs_zeros_as_the_final_model_does(library):
    pipe = _one_hot_pipeline(library)
    ens = treesens.load_model(pipe)
    assert np.allclose(ens.proba(_codes(GRID)), pipe.predict_proba(GRID), rtol=0, atol=1e-6)


@pytest.mark.parametrize("vary", ["a", "b"])
def test_an_xgboost_check_after_a_sparse_one_hot_agrees_with_enumerating_the_grid(vary):
    pipe = _one_hot_pipeline("xgboost")
    p = pd.Series(pipe.predict_proba(GRID)[:, 1])
    other = GRID["b" if vary == "a" else "a"]
    spread = p.groupby(other).agg(["max", "min"])
    expected = bool(((spread["max"] >= 0.5 + GAP) & (spread["min"] <= 0.5 - GAP)).any())
    res = treesens.check(treesens.load_model(pipe), vary=vary, gap=GAP, timeout=60)
    assert res.status == (SENSITIVE if expected else INSENSITIVE)
    if res.status == SENSITIVE:
        assert res.validated


def test_a_numeric_column_a_sparse_output_leaves_out_at_zero_is_refused_naming_it():
    """A MinMaxScaler's smallest input is 0, which XGBoost reads as missing: a split that
    sends a missing value apart from 0 cannot be folded into thresholds on the input."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder

    df, y = _training()
    df["age"] = np.random.default_rng(1).integers(0, 5, len(df))
    y = y | (df.age == 0).to_numpy()
    pre = ColumnTransformer(
        [("cat", OneHotEncoder(), ["a", "b"]), ("age", MinMaxScaler(), ["age"])],
        sparse_threshold=1.0,
    )
    pipe = make_pipeline(pre, _final("xgboost")).fit(df, y)
    with pytest.raises(UnsupportedModelError, match="sparse.*'age'.*sparse_threshold=0"):
        treesens.load_model(pipe)


def test_the_same_numeric_column_in_a_dense_output_folds():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder

    df, y = _training()
    df["age"] = np.random.default_rng(1).integers(0, 5, len(df))
    y = y | (df.age == 0).to_numpy()
    pre = ColumnTransformer(
        [("cat", OneHotEncoder(), ["a", "b"]), ("age", MinMaxScaler(), ["age"])],
        sparse_threshold=0.0,
    )
    pipe = make_pipeline(pre, _final("xgboost")).fit(df, y)
    ens = treesens.load_model(pipe)
    rows = df.head(50)
    codes = np.column_stack([_codes(rows[["a", "b"]]), rows.age.to_numpy(dtype=float)])
    assert np.allclose(ens.proba(codes), pipe.predict_proba(rows), rtol=0, atol=1e-6)
