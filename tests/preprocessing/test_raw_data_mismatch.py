"""A pipeline's last step loaded with data in the pipeline's raw units: the data's
ranges miss the model's thresholds, and treesens says so."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import TreesensWarning
from treesens.tests.conftest import treesens_here


@pytest.fixture(scope="module")
def fitted():
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "age": rng.uniform(18, 80, 400),
            "income": rng.normal(50000, 9000, 400),
            "hours": rng.normal(40, 5, 400),
        }
    )
    y = ((X.age > 40) & (X.income > 50000)) | (X.hours > 45)
    clf = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    return make_pipeline(StandardScaler(), clf).fit(X, y), X


def test_the_last_step_with_raw_data_warns(fitted):
    pipe, X = fitted
    with pytest.warns(TreesensWarning, match="was the model trained on transformed columns"):
        treesens.load_model(pipe[-1], data=X)


def test_the_whole_pipeline_with_raw_data_does_not_warn(fitted):
    pipe, X = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        treesens.load_model(pipe, data=X)


def test_the_command_line_prints_the_warning_as_one_line(fitted, tmp_path):
    import skops.io as sio

    pipe, X = fitted
    sio.dump(pipe[-1], tmp_path / "last.skops")
    pd.DataFrame(X.to_numpy(), columns=["x0", "x1", "x2"]).assign(label=0).to_csv(
        tmp_path / "raw.csv", index=False
    )
    out = treesens_here(
        "check",
        tmp_path / "last.skops",
        "--data",
        tmp_path / "raw.csv",
        "--vary",
        "x0",
        "--gap",
        "0.2",
    )
    warned = [ln for ln in out.stderr.splitlines() if "trained on transformed columns" in ln]
    assert len(warned) == 1 and warned[0].startswith("treesens: warning: ")
