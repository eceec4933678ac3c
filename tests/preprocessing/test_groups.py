"""One-hot groups: columns that together encode one categorical feature are one
feature of the user's, whose values are its categories."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.compiler.errors import InputError


@pytest.fixture(scope="module")
def race_model():
    """The issue's example: XGBoost on pd.get_dummies (race -> race_A, race_B, race_C)."""
    from xgboost import XGBClassifier

    rng = np.random.default_rng(1)
    n = 1500
    race = rng.choice(["A", "B", "C"], n)
    age = rng.integers(18, 80, n)
    X = pd.get_dummies(pd.DataFrame({"race": race, "age": age}), dtype=float)
    y = ((race == "B") & (age > 40)) ^ (rng.random(n) < 0.05)
    return XGBClassifier(n_estimators=20, max_depth=3, n_jobs=1).fit(X, y), X


def test_groups_are_inferred_from_data_when_bounds_come_from_data(race_model):
    model, X = race_model
    ens = treesens.load_model(model, data=X, bounds="data")
    assert ens.feature_names == ["age", "race"]
    assert ens.features[1].categories == ("A", "B", "C")
    assert "one-hot groups inferred" in ens.source and "race = race_A, race_B, race_C" in ens.source


def test_varying_a_groups_columns_varies_the_group_and_gives_one_hot_rows(race_model):
    model, X = race_model
    ens = treesens.load_model(model, data=X, bounds="data")
    res = treesens.check(ens, vary=["race_A", "race_B", "race_C"], gap=0.3)
    assert res.status == SENSITIVE and res.features == ["race"]
    assert {res.witness["x1"]["race"], res.witness["x2"]["race"]} <= {"A", "B", "C"}
    assert res.validated


def test_a_sweep_asks_one_query_per_group(race_model):
    model, X = race_model
    ens = treesens.load_model(model, data=X, bounds="data")
    assert [r.features for r in treesens.sweep(ens, gap=0.3)] == [["age"], ["race"]]


def test_declared_groups_name_their_categories_by_the_columns_suffix(race_model):
    model, _ = race_model
    ens = treesens.load_model(model, groups={"race": ["race_A", "race_B", "race_C"]})
    assert ens.features[ens.feature_index("race")].categories == ("A", "B", "C")


def test_groups_given_as_text_are_the_same_groups(race_model):
    model, _ = race_model
    ens = treesens.load_model(model, groups="race=race_A,race_B,race_C")
    assert ens.feature_names == ["age", "race"]


def test_groups_can_be_turned_off_with_an_empty_mapping(race_model):
    model, X = race_model
    ens = treesens.load_model(model, data=X, bounds="data", groups={})
    assert ens.feature_names == ["age", "race_A", "race_B", "race_C"]


def test_a_group_column_that_is_not_a_feature_is_one_error(race_model):
    model, _ = race_model
    with pytest.raises(InputError, match="'race_D' is not a feature"):
        treesens.load_model(model, groups={"race": ["race_A", "race_D"]})


def test_data_rows_with_two_ones_in_a_group_are_one_error(race_model):
    model, X = race_model
    bad = X.copy()
    bad.loc[3, ["race_A", "race_B"]] = 1.0
    ens = treesens.load_model(model, groups={"race": ["race_A", "race_B", "race_C"]})
    with pytest.raises(InputError, match="row 4: the one-hot group 'race'"):
        treesens.check(ens, vary="age", gap=0.3, data=bad)


def test_a_dropped_category_is_the_row_with_no_one():
    from xgboost import XGBClassifier

    rng = np.random.default_rng(2)
    race = rng.choice(["A", "B", "C"], 900)
    X = pd.get_dummies(pd.Series(race, name="race"), prefix="race", drop_first=True, dtype=float)
    model = XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1).fit(X, race == "A")
    spec = {"race": {"columns": ["race_B", "race_C"], "dropped": "A"}}
    ens = treesens.load_model(model, groups=spec, data=X, bounds="data")
    assert ens.features[0].categories == ("B", "C", "A")
    res = treesens.check(ens, vary="race", gap=0.3)
    assert res.status == SENSITIVE and "A" in (res.witness["x1"]["race"], res.witness["x2"]["race"])
    assert res.validated


def test_a_model_that_only_impossible_rows_flip_is_insensitive_to_the_group():
    """Trained so that only rows with two races set get class 1: as columns it is
    sensitive, as the user's feature race it is not."""
    from sklearn.tree import DecisionTreeClassifier

    rows = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    X = pd.DataFrame(rows * 20, columns=["race_A", "race_B", "race_C"], dtype=float)
    y = (X.sum(axis=1) >= 2).astype(int)
    model = DecisionTreeClassifier(random_state=0).fit(X, y)
    columns = treesens.load_model(model, groups={})
    assert treesens.check(columns, vary="race_A,race_B,race_C", gap=0.3).status == SENSITIVE
    grouped = treesens.load_model(model, groups={"race": ["race_A", "race_B", "race_C"]})
    assert treesens.check(grouped, vary="race", gap=0.3).status == INSENSITIVE


def test_a_group_of_a_column_declared_outside_0_and_1_is_one_error(race_model):
    model, X = race_model
    details = pd.DataFrame(
        {"feature": range(4), "name": list(X.columns), "lb": X.min(), "ub": X.max()}
    )
    with pytest.raises(InputError, match="column 'age' is declared in \\[18, 79\\], not a 0/1"):
        treesens.load_model(model, details=details, groups={"g": ["age", "race_A"]})


def test_a_group_of_a_column_declared_with_a_bound_beyond_0_and_1_is_one_error(race_model):
    model, X = race_model
    details = pd.DataFrame(
        {"feature": range(4), "name": list(X.columns), "lb": 0.0, "ub": [100, 10, 1, 1]}
    )
    with pytest.raises(InputError, match="column 'race_A' is declared in \\[0, 10\\], not a 0/1"):
        treesens.load_model(model, details=details, groups={"race": ["race_A", "race_B"]})


def test_a_group_of_a_column_the_model_splits_past_1_is_one_error(race_model):
    model, _ = race_model  # no bounds declared: the model's splits on age say it is no 0/1
    with pytest.raises(InputError, match="^group 'g': the model splits column 'age' at age < "):
        treesens.load_model(model, groups={"g": ["age", "race_A"]})


@pytest.mark.parametrize("library", ["xgboost-hist", "xgboost-exact", "lightgbm", "hgb"])
def test_a_group_of_one_hot_columns_with_missing_values_is_one_feature(library):
    """A library splits missing values apart from every number (XGBoost at 2.00001,
    LightGBM and HistGradientBoosting at infinity): no split between 0 and 1, and still
    a one-hot column."""
    rng = np.random.default_rng(0)
    race = rng.integers(0, 3, 600)
    X = pd.DataFrame(np.eye(3)[race], columns=["race_A", "race_B", "race_C"])
    X["x"] = rng.uniform(0, 1, 600)
    y = (X["x"] + 0.35 * (race == 1) - 0.25 * (race == 2) > 0.55) ^ (rng.random(600) < 0.1)
    X.loc[rng.random(600) < 0.2, "race_B"] = np.nan
    model = _missing_aware_model(library).fit(X, y)
    groups = {"race": ["race_A", "race_B", "race_C"]}
    assert treesens.load_model(model, groups=groups).feature_names == ["race", "x"]


def _missing_aware_model(library: str):
    if library.startswith("xgboost"):
        from xgboost import XGBClassifier

        method = library.split("-")[1]
        return XGBClassifier(n_estimators=40, max_depth=5, tree_method=method, n_jobs=1)
    if library == "lightgbm":
        from lightgbm import LGBMClassifier

        return LGBMClassifier(n_estimators=40, min_child_samples=5, verbose=-1, n_jobs=1)
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(max_iter=20)


def test_a_column_listed_twice_in_one_group_is_one_error_saying_so(race_model):
    model, _ = race_model
    with pytest.raises(InputError, match="^group 'race': column 'race_A' listed twice$"):
        treesens.load_model(model, groups={"race": ["race_A", "race_B", "race_A"]})
