"""A missing value (NaN) of an input whose encoder has no category for it: where the
pipeline sends it (an imputer before the encoder fills it; an encoder that ignores
unknown categories encodes it as none), not the trees' default side. Data with NaN in
such a column makes the feature possibly missing, so a pair may hold NaN there."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.verify import verify_file


def _frame(n: int = 600, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"race": rng.choice(["A", "B", "C"], n), "age": rng.integers(0, 6, n)})
    y = ((df.race == "B") | (df.age > 3)).astype(int).to_numpy()
    df["race"] = df.race.astype(object)
    df.loc[::7, "race"] = np.nan
    return df, y


def _pipeline(encoder, impute: bool):
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.tree import DecisionTreeClassifier

    branch = make_pipeline(SimpleImputer(strategy="constant", fill_value="B"), encoder)
    pre = ColumnTransformer(
        [("race", branch if impute else encoder, ["race"])], remainder="passthrough"
    )
    return Pipeline([("pre", pre), ("clf", DecisionTreeClassifier(max_depth=3, random_state=0))])


def _encoders():
    from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

    return {
        "one_hot_after_an_imputer": (OneHotEncoder(), True),
        "ordinal_after_an_imputer": (OrdinalEncoder(), True),
        "one_hot_ignoring_unknown_categories": (
            OneHotEncoder(categories=[["A", "B", "C"]], handle_unknown="ignore"),
            False,
        ),
    }


@pytest.fixture(params=sorted(_encoders()))
def fitted(request):
    encoder, impute = _encoders()[request.param]
    df, y = _frame()
    pipe = _pipeline(encoder, impute).fit(df, y)
    return pipe, df, treesens.load_model(pipe, data=df, bounds="data")


def test_an_encoded_input_with_missing_data_values_may_be_missing(fitted):
    _, _, ens = fitted
    assert ens.features[0].categories == ("A", "B", "C")
    assert ens.features[0].may_be_missing


def test_a_missing_encoded_input_goes_where_the_pipeline_sends_it(fitted):
    pipe, _, ens = fitted
    rows = pd.DataFrame({"race": np.array([np.nan] * 6, dtype=object), "age": range(6)})
    codes = np.column_stack([np.full(6, np.nan), np.arange(6.0)])
    assert np.allclose(ens.proba(codes), pipe.predict_proba(rows), rtol=0, atol=1e-12)


def test_a_check_and_a_max_gap_over_a_missing_encoded_input_answer(fitted):
    """Each answer is a proof or a pair the pipeline confirms, none an error: before, a
    pair with NaN there (routed by the trees' default side) failed its replay."""
    _, _, ens = fitted
    for vary in ("race", "age"):
        assert treesens.check(ens, vary=vary, gap=0.2).status in (SENSITIVE, INSENSITIVE)
        assert treesens.max_gap(ens, vary).status in (SENSITIVE, INSENSITIVE)


@pytest.fixture
def dumped(tmp_path):
    """The imputer-then-one-hot pipeline in a .skops file, and its data with NaN."""
    sio = pytest.importorskip("skops.io")
    from sklearn.preprocessing import OneHotEncoder

    df, y = _frame()
    path = tmp_path / "pipe.skops"
    sio.dump(_pipeline(OneHotEncoder(), impute=True).fit(df, y), path)
    return path, df


def _certified(dumped, tmp_path) -> tuple[Path, dict]:
    path, df = dumped
    out = tmp_path / "c.json"
    res = treesens.check(str(path), vary="race", gap=0.4, data=df, bounds="data", certificate=out)
    assert res.status == INSENSITIVE, res
    return out, res


def test_an_insensitive_answer_over_a_missing_encoded_input_gets_a_checked_certificate(
    dumped, tmp_path
):
    out, res = _certified(dumped, tmp_path)
    assert res.proof.checked and verify_file(out).valid
    races = [c for c in json.loads(out.read_text())["maps"] if c["input"] == 0]
    assert races and all(c["nan"] == 0.0 or c["nan"] == 1.0 for c in races)


def test_a_certificate_with_an_encoded_columns_image_of_nan_changed_is_rejected(dumped, tmp_path):
    out, _ = _certified(dumped, tmp_path)
    doc = json.loads(out.read_text())
    column = next(c for c in doc["maps"] if c["input"] == 0)
    column["nan"] = 1.0 - column["nan"]
    out.write_text(json.dumps(doc))
    verdict = verify_file(out)
    assert not verdict.valid and "image of a missing input 0" in verdict.message
