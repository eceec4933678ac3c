"""Answers in the user's space agree with enumerating the user's space: tiny
scikit-learn pipelines (one-hot + a scaler + each supported classifier, with and without
a dropped category and unknown categories allowed) and models trained on
``pd.get_dummies`` columns. Every "sensitive" witness is a valid user row (one category
per group, whole numbers where the data has them, inside the data's bounds) that the
user's own model confirms; every "insensitive" agrees with the enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.backends.registry import BACKENDS, available

INSTALLED = [b for b in BACKENDS if available(b)]

GAP = 0.1
RACES = ["A", "B", "C"]
AGES = range(0, 13)
HOURS = range(0, 9)


def _grid() -> pd.DataFrame:
    rows = list(itertools.product(RACES, AGES, HOURS))
    return pd.DataFrame(rows, columns=["race", "age", "hours"])


def _training(seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 600
    df = pd.DataFrame(
        {
            "race": rng.choice(RACES, n),
            "age": rng.integers(AGES.start, AGES.stop, n),
            "hours": rng.integers(HOURS.start, HOURS.stop, n),
        }
    )
    score = (df.race == "B") * 1.5 + (df.age > 6) - 0.3 * (df.hours > 4) + rng.normal(0, 0.7, n)
    return df, (score > 1.0).astype(int).to_numpy()


def _brute_force_sensitive(proba_1: np.ndarray, grid: pd.DataFrame, vary: str) -> bool:
    shared = [c for c in grid.columns if c != vary]
    p = pd.Series(proba_1, index=grid.index)
    groups = p.groupby([grid[c] for c in shared])
    return bool(((groups.max() >= 0.5 + GAP) & (groups.min() <= 0.5 - GAP)).any())


def _assert_valid_user_row(row: dict, grid: pd.DataFrame) -> None:
    assert row["race"] in RACES
    for col in ("age", "hours"):
        assert float(row[col]).is_integer(), (col, row[col])
        assert grid[col].min() <= row[col] <= grid[col].max()


def _agree(ens, predict_proba_1, grid: pd.DataFrame, backend: str = "cpsat") -> None:
    """Each feature's verdict matches the enumeration; each witness is a valid user row
    that ``predict_proba_1`` (the user's model on user rows) confirms."""
    p = predict_proba_1(grid)
    for vary in grid.columns:
        res = treesens.check(ens, vary=vary, gap=GAP, timeout=60, backend=backend)
        expected = _brute_force_sensitive(p, grid, vary)
        assert res.status == (SENSITIVE if expected else INSENSITIVE), (vary, res)
        if res.status == SENSITIVE:
            x1, x2 = res.witness["x1"], res.witness["x2"]
            for row in (x1, x2):
                _assert_valid_user_row(row, grid)
            assert all(x1[c] == x2[c] for c in grid.columns if c != vary)
            q1, q2 = predict_proba_1(pd.DataFrame([x1, x2])[list(grid.columns)])
            assert q1 >= 0.5 + GAP and q2 <= 0.5 - GAP
            assert res.validated


def _classifiers():
    from lightgbm import LGBMClassifier
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from xgboost import XGBClassifier

    return {
        "xgboost": XGBClassifier(n_estimators=12, max_depth=3, n_jobs=1),
        "lightgbm": LGBMClassifier(n_estimators=12, num_leaves=6, verbose=-1, n_jobs=1),
        "random_forest": RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0),
        "extra_trees": ExtraTreesClassifier(n_estimators=8, max_depth=4, random_state=0),
        "gradient_boosting": GradientBoostingClassifier(n_estimators=10, max_depth=2),
        "hist_gradient_boosting": HistGradientBoostingClassifier(max_iter=10, max_depth=3),
    }


ENCODERS = {
    "one_hot": dict(),
    "one_hot_drop_first": dict(drop="first"),
    "one_hot_unknown_ignored": dict(handle_unknown="ignore"),
}


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
@pytest.mark.parametrize("classifier", sorted(_classifiers()))
def test_a_pipeline_agrees_with_enumerating_the_users_space(classifier, encoder):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, StandardScaler

    df, y = _training(seed=len(classifier) + len(encoder))
    pre = ColumnTransformer(
        [
            ("cat", OneHotEncoder(**ENCODERS[encoder]), ["race"]),
            ("age", StandardScaler(), ["age"]),
            ("hours", MinMaxScaler(), ["hours"]),
        ]
    )
    pipe = Pipeline([("pre", pre), ("clf", _classifiers()[classifier])]).fit(df, y)
    grid = _grid()
    ens = treesens.load_model(pipe, data=grid, bounds="data")
    assert ens.feature_names == ["race", "age", "hours"]
    _agree(ens, lambda rows: pipe.predict_proba(rows)[:, 1], grid)


@pytest.mark.parametrize("classifier", ["xgboost", "lightgbm", "random_forest"])
def test_a_model_on_get_dummies_columns_agrees_with_enumerating_the_users_space(classifier):
    df, y = _training(seed=7)
    X = pd.get_dummies(df, columns=["race"], dtype=float)
    model = _classifiers()[classifier].fit(X, y)
    grid = _grid()

    def proba_1(rows: pd.DataFrame) -> np.ndarray:
        dummies = pd.get_dummies(rows.astype({"race": pd.CategoricalDtype(RACES)}), dtype=float)
        return model.predict_proba(dummies[X.columns])[:, 1]

    ens = treesens.load_model(model, data=pd.get_dummies(grid, dtype=float), bounds="data")
    assert sorted(ens.feature_names) == ["age", "hours", "race"]
    _agree(ens, proba_1, grid[ens.feature_names])


@pytest.mark.parametrize("backend", INSTALLED)
def test_every_installed_backend_agrees_with_enumerating_a_pipelines_space(backend):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, RobustScaler

    df, y = _training(seed=3)
    pre = ColumnTransformer(
        [("cat", OneHotEncoder(drop="first"), ["race"])], remainder=RobustScaler()
    )
    clf = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)
    pipe = Pipeline([("pre", pre), ("clf", clf)]).fit(df, y)
    grid = _grid()
    ens = treesens.load_model(pipe, data=grid, bounds="data")
    _agree(ens, lambda rows: pipe.predict_proba(rows)[:, 1], grid, backend)
