"""A long model load says what it is doing on stderr (quiet with --json): a scikit-learn
pipeline of 1,500 XGBoost trees took 16-18 s to load with no line, most of it folding its
preprocessing into the trees' thresholds. A step says its line once it has run
load_notes.AFTER seconds (set to 0 here: every step is long)."""

from __future__ import annotations

import joblib
import numpy as np
import pandas as pd
import pytest

from treesens.interfaces.cli.main import main
from treesens.readers import load_notes

xgboost = pytest.importorskip("xgboost")
pipeline = pytest.importorskip("sklearn.pipeline")
preprocessing = pytest.importorskip("sklearn.preprocessing")


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.uniform(18, 90, 300), "income": rng.uniform(0, 1e5, 300)})
    y = (X["age"] > 50).astype(int)
    pipe = pipeline.Pipeline(
        [
            ("scale", preprocessing.StandardScaler()),
            ("clf", xgboost.XGBClassifier(n_estimators=7, max_depth=2)),
        ]
    ).fit(X, y)
    folder = tmp_path_factory.mktemp("pipe")
    joblib.dump(pipe, folder / "pipe.joblib")
    X.assign(label=y).to_csv(folder / "rows.csv", index=False)
    return folder / "pipe.joblib", folder / "rows.csv"


@pytest.fixture
def pipe_files(saved, tmp_path):
    """A fresh copy of the pipeline's file: loaded afresh, not from the model cache."""
    copy = tmp_path / "pipe.joblib"
    copy.write_bytes(saved[0].read_bytes())
    return copy, saved[1]


def _check(pipe_files, *more):
    model, rows = pipe_files
    argv = ["check", str(model), "--trust-pickle", "--data", str(rows), "--vary", "age"]
    return main([*argv, "--gap", "0.2", "--timeout", "30", *more])


def test_a_long_pipeline_load_says_it_folds_the_preprocessing_into_the_trees(
    pipe_files, capsys, monkeypatch
):
    monkeypatch.setattr(load_notes, "AFTER", 0.0)
    _check(pipe_files)
    err = capsys.readouterr().err
    assert (
        f"loading {pipe_files[0]}: folding the pipeline's preprocessing (StandardScaler) "
        "into the thresholds of its 7 trees..."
    ) in err


def test_a_load_with_json_says_nothing_of_its_steps(pipe_files, capsys, monkeypatch):
    monkeypatch.setattr(load_notes, "AFTER", 0.0)
    _check(pipe_files, "--json")
    assert "folding" not in capsys.readouterr().err


def test_a_quick_load_says_nothing_of_its_steps(pipe_files, capsys, monkeypatch):
    monkeypatch.setattr(load_notes, "AFTER", 60.0)
    _check(pipe_files)
    assert "folding" not in capsys.readouterr().err
