"""Small CatBoost models with one-hot categorical features, for the tests: a city (four
names), a size (the integers 1, 2, 3), an age and an income; and catboost's own
predictions on IR rows, whose categorical codes are given to catboost as names."""

from __future__ import annotations

import numpy as np
import pandas as pd

from treesens.compiler.ensemble import Ensemble

COMMON = {"verbose": 0, "allow_writing_files": False, "thread_count": 1, "random_seed": 0}
CITIES = ["Paris", "Lyon", "Nice", "Lille"]
NAMES = ["city", "age", "size", "income"]
CATS = ["city", "size"]


def frame(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows of the four columns, and a score that the city, the size and the age move."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "city": rng.choice(CITIES, n),
            "age": rng.uniform(18, 80, n).round(1),
            "size": rng.choice([1, 2, 3], n),
            "income": rng.uniform(0, 100, n).round(2),
        }
    )
    score = (
        df.city.map({"Paris": 1.0, "Lyon": 0.2, "Nice": 0.6, "Lille": -0.4}).to_numpy()
        + (df.age > 40) * 0.8
        + (df["size"] == 2) * 0.5
        + 0.2 * rng.normal(size=n)
    )
    return df, np.asarray(score, dtype=np.float64)


def fit(kind: str, *, iterations: int = 3, depth: int = 2, grow: str = "SymmetricTree", **kw):
    """A fitted model: ``binary``, ``multiclass``, ``regression`` or ``poisson``."""
    import catboost

    df, score = frame()
    params = {
        "iterations": iterations,
        "depth": depth,
        "border_count": 8,
        "one_hot_max_size": 10,
        "grow_policy": grow,
        **COMMON,
        **kw,
    }
    if kind == "binary":
        est = catboost.CatBoostClassifier(**params)
        return est.fit(df, (score > 1.0).astype(int), cat_features=CATS)
    if kind == "multiclass":
        est = catboost.CatBoostClassifier(loss_function="MultiClass", **params)
        return est.fit(df, (score > 0.6).astype(int) + (score > 1.4), cat_features=CATS)
    loss = {"regression": "RMSE", "poisson": "Poisson"}[kind]
    target = np.exp(score / 2) if loss == "Poisson" else score
    return catboost.CatBoostRegressor(loss_function=loss, **params).fit(
        df, target, cat_features=CATS
    )


def named_rows(ens: Ensemble, X: np.ndarray) -> pd.DataFrame:
    """IR rows as catboost is given them by a user: categories by name."""
    df = pd.DataFrame(X, columns=ens.feature_names).astype(object)
    for f, feat in enumerate(ens.features):
        if feat.kind == "categorical":
            df[feat.name] = [feat.categories[int(c)] for c in X[:, f]]
    return df


def library_output(est, rows: pd.DataFrame) -> np.ndarray:
    """catboost's probabilities (a classifier) or predictions (a regressor), (n, k)."""
    if hasattr(est, "predict_proba"):
        return np.asarray(est.predict_proba(rows))
    return np.asarray(est.predict(rows)).reshape(len(rows), 1)


def replayable(ens: Ensemble, X: np.ndarray) -> np.ndarray:
    """The rows of X whose categories all have names (no ``<catboost hash N>``)."""
    ok = np.ones(len(X), dtype=bool)
    for f, feat in enumerate(ens.features):
        if feat.kind == "categorical":
            unnamed = [c.startswith("<catboost hash") for c in feat.categories]
            ok &= ~np.array([unnamed[int(c)] for c in X[:, f]], dtype=bool)
    return X[ok]
