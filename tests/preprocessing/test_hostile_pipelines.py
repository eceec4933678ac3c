"""A tampered pipeline is one InputError naming it, never another exception; from a file
on the command line, one line and exit 2."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.tests.conftest import treesens_here

TAMPERED = {
    "a negative scale": ("scale_", np.array([-1.0, 1.0]), "not a nondecreasing map"),
    "a NaN scale": ("scale_", np.array([np.nan, 1.0]), "missing \\(NaN\\) whatever"),
    "an infinite mean": ("mean_", np.array([np.inf, 0.0]), "not finite"),
    "a scale that is text": ("scale_", "x", "fails on probe rows"),
}


def _pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.tree import DecisionTreeClassifier

    X = np.random.default_rng(0).normal(size=(100, 2))
    return make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=2)).fit(X, X[:, 0] > 0)


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_scaler_is_one_input_error(case):
    attr, value, message = TAMPERED[case]
    pipe = _pipeline()
    setattr(pipe[0], attr, value)
    with pytest.raises(InputError, match=message):
        treesens.load_model(pipe)


def test_a_tampered_pipeline_file_is_one_line_and_exit_2(tmp_path):
    import joblib

    pipe = _pipeline()
    pipe[0].scale_ = np.array([-1.0, 1.0])
    path = tmp_path / "pipe.joblib"
    joblib.dump(pipe, path)
    out = treesens_here("check", path, "--trust-pickle", "--vary", "x0", "--gap", "0.2")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert str(path) in out.stderr
