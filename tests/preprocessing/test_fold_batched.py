"""The fold's bisection transforms every numeric column's rows of a step at once: on a
pipeline of 1,500 XGBoost trees (churn: one-hot encoder and scaler) the fold's one
bisection per scaled column, about 70 transforms each, took 95 of the load's 111 s; one
batched transform a step across the columns gives the same thresholds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.readers.preprocessing import pipeline as pipeline_module


def _frame(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "race": rng.choice(["A", "B", "C"], n),
            "age": rng.integers(18, 80, n),
            "income": rng.normal(50, 10, n).round(1),
            "hours": rng.uniform(0, 60, n),
        }
    )
    y = ((df.race == "B") & (df.age > 40)) | (df.income + df.hours / 4 > 70)
    return df, y.astype(int).to_numpy()


@pytest.fixture(scope="module")
def fitted():
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    df, y = _frame()
    pre = ColumnTransformer(
        [("cat", OneHotEncoder(), ["race"]), ("num", StandardScaler(), ["age", "income", "hours"])]
    )
    clf = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0)
    return make_pipeline(pre, clf).fit(df, y), df


def _transforms_of_load(pipe, monkeypatch) -> tuple[object, int]:
    """The pipeline's model, and how many times its preprocessing ran to load it."""
    calls = []
    ran = pipeline_module.preprocessed

    def counted(*args):
        calls.append(1)
        return ran(*args)

    monkeypatch.setattr(pipeline_module, "preprocessed", counted)
    return treesens.load_model(pipe), len(calls)


def test_the_fold_transforms_once_a_bisection_step(fitted, monkeypatch):
    # three scaled columns, each bisected over the doubles in about 65 steps
    _, calls = _transforms_of_load(fitted[0], monkeypatch)
    assert calls < 100


def test_the_batched_fold_gives_the_thresholds_of_a_column_at_a_time(fitted, monkeypatch):
    batched = treesens.load_model(fitted[0])
    monkeypatch.setattr(pipeline_module, "numeric_columns", lambda pairs: [f(x) for f, x in pairs])
    one_by_one = treesens.load_model(fitted[0])
    for a, b in zip(batched.trees, one_by_one.trees, strict=True):
        assert np.array_equal(a.threshold, b.threshold) and np.array_equal(a.feature, b.feature)
        assert np.array_equal(a.default_left, b.default_left) and a.categories == b.categories


def test_the_folded_model_predicts_as_the_pipeline(fitted):
    pipe, df = fitted
    model = treesens.load_model(pipe, data=df)
    rows = _frame(400, seed=1)[0]
    X = rows.assign(race=rows.race.map({"A": 0, "B": 1, "C": 2})).to_numpy(dtype=float)
    assert np.allclose(model.proba(X), pipe.predict_proba(rows), rtol=0, atol=1e-12)
