"""An OrdinalEncoder's output read as categorical by a final HistGradientBoosting: its
splits number the categories it saw at fit, and route any other value (a category the
training data lacked, a negative ``encoded_missing_value``) as missing. Before, the fold
took an encoder's code for the split's category number: off for every code past a
category the training data lacked."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE

GAP = 0.1


def _fitted(encoder_kw: dict, missing: bool):
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OrdinalEncoder

    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"grade": rng.choice(["A", "C", "D"], n), "age": rng.integers(0, 4, n)})
    y = ((df.grade == "C") ^ (df.age > 1)).astype(int).to_numpy().copy()
    df["grade"] = df.grade.astype(object)
    if missing:
        df.loc[::5, "grade"] = np.nan
        y[::5] = 1
    pre = ColumnTransformer(
        [("g", OrdinalEncoder(**encoder_kw), ["grade"])], remainder="passthrough"
    )
    hgb = HistGradientBoostingClassifier(max_iter=5, max_depth=3, categorical_features=[0])
    return make_pipeline(pre, hgb).fit(df, y)


CASES = {
    # B, between A and C, is absent from the training data: C and D are codes 2 and 3,
    # the model's categories 1 and 2
    "a_category_absent_from_the_training_data": (dict(categories=[["A", "B", "C", "D"]]), False),
    "a_negative_code_for_missing_values": (dict(encoded_missing_value=-2), True),
}


@pytest.fixture(params=sorted(CASES))
def fitted(request):
    pipe = _fitted(*CASES[request.param])
    ens = treesens.load_model(pipe)
    codes = list(itertools.product(range(len(ens.features[0].categories)), range(4)))
    grades = [pipe[0].transformers_[0][1].categories_[0][g] for g, _ in codes]
    rows = pd.DataFrame({"grade": np.array(grades, dtype=object), "age": [a for _, a in codes]})
    return pipe, ens, np.array(codes, dtype=float), rows


def test_the_folded_model_agrees_with_the_pipeline_on_every_category(fitted):
    pipe, ens, codes, rows = fitted
    assert np.allclose(ens.proba(codes), pipe.predict_proba(rows), rtol=0, atol=1e-12)


@pytest.mark.parametrize("vary", ["grade", "age"])
def test_a_check_agrees_with_enumerating_the_categories(fitted, vary):
    pipe, ens, codes, rows = fitted
    p = pd.Series(pipe.predict_proba(rows)[:, 1])
    spread = p.groupby(rows["age" if vary == "grade" else "grade"].astype(str)).agg(["max", "min"])
    expected = bool(((spread["max"] >= 0.5 + GAP) & (spread["min"] <= 0.5 - GAP)).any())
    res = treesens.check(ens, vary=vary, gap=GAP, timeout=60)
    assert res.status == (SENSITIVE if expected else INSENSITIVE)
    assert res.status == INSENSITIVE or res.validated
