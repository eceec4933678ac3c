"""Data for an encoder of numbers that learned a category from missing values (its
categories 1, 2, 5, nan): each number in the data is the category it names, and a missing
value is the category nan. Before, the "nan" category made treesens read the numbers as
category codes: 1 and 2 became the categories 2 and 5 (5 an error), and answers with
bounds from data were about other categories than the data's."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.readers.data import load_data


def _fitted():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    n = 400
    grade = rng.choice([1.0, 2.0, 5.0], n)
    grade[::6] = np.nan
    df = pd.DataFrame({"grade": grade, "age": rng.integers(0, 4, n)})
    y = ((df.grade == 2) | (df.age > 2)).astype(int).to_numpy()
    pre = ColumnTransformer([("g", OneHotEncoder(), ["grade"])], remainder="passthrough")
    tree = DecisionTreeClassifier(max_depth=3, random_state=0)
    return make_pipeline(pre, tree).fit(df, y), df


@pytest.mark.parametrize("dtype", [float, object])
def test_numbers_in_the_data_are_the_categories_they_name_and_nan_the_nan_category(dtype):
    pipe, df = _fitted()
    ens = treesens.load_model(pipe)
    assert ens.features[0].categories == ("1", "2", "5", "nan")
    rows = pd.DataFrame({"grade": np.array([1.0, 2.0, 5.0, np.nan], dtype=dtype), "age": 0})
    assert load_data(rows, ens).X[:, 0].tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("vary", ["grade", "age"])
def test_bounds_from_data_of_two_categories_answer_about_those_two(vary):
    pipe, df = _fitted()
    data = df[df.grade.isin([1.0, 2.0])]
    ens = treesens.load_model(pipe, data=data, bounds="data")
    assert (ens.features[0].lb, ens.features[0].ub) == (0.0, 1.0)
    grid = pd.DataFrame(list(itertools.product([1.0, 2.0], range(4))), columns=["grade", "age"])
    p = pd.Series(pipe.predict_proba(grid)[:, 1])
    spread = p.groupby(grid["age" if vary == "grade" else "grade"]).agg(["max", "min"])
    expected = bool(((spread["max"] >= 0.7) & (spread["min"] <= 0.3)).any())
    res = treesens.check(ens, vary=vary, gap=0.2, timeout=60)
    assert res.status == (SENSITIVE if expected else INSENSITIVE)
