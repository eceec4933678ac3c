"""The checker's models (verify/models.py) score inputs as their libraries do: the
trees, tests, offsets and outputs it reads, walked by hand, give the library's own
margins, probabilities (forests) or predictions (regressors), for every model kind a
certificate covers."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.tests.verify.claims_oracle import library_scores, tiny_model
from treesens.verify.models import Model, read_model

KINDS = [
    f"{library}-{task}"
    for library in (
        "xgboost",
        "lightgbm",
        "lgbmforest",
        "sklearn",
        "forest",
        "hgb",
        "catboost",
        "onnx",
        "onnxforest",
    )
    for task in ("binary", "multiclass", "regressor")
]
LIBRARY = {
    ".json": "xgboost",
    ".txt": "lightgbm",
    ".skops": "sklearn",
    ".cbm": "catboost",
    ".onnx": "onnx",
}


def _scores(m: Model, X: np.ndarray) -> np.ndarray:
    """Each row's score per output: the offset plus, per tree, the leaf it reaches."""
    out = np.tile([m.offset_of(k) for k in range(m.n_outputs)], (len(X), 1)).astype(float)
    for t in m.trees:
        for r, x in enumerate(X):
            n = 0
            while t.feature[n] >= 0:
                v = float(np.float32(x[t.feature[n]])) if m.float32 else x[t.feature[n]]
                holds = v < t.threshold[n] if m.test == "<" else v <= t.threshold[n]
                n = t.left[n] if holds else t.right[n]
            if t.values is not None:
                out[r] += t.values[n]
            else:
                out[r, t.output] += t.value[n]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_the_checkers_model_scores_rows_as_the_library_does(kind, tmp_path):
    path = tiny_model(kind, tmp_path)
    X = np.random.default_rng(7).uniform(-0.2, 1.2, size=(60, 3))
    want, _ = library_scores(path, X)
    got = _scores(read_model(str(path), LIBRARY[path.suffix]), X)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_the_checkers_model_says_what_it_predicts(kind, tmp_path):
    path = tiny_model(kind, tmp_path)
    m = read_model(str(path), LIBRARY[path.suffix])
    task = kind.split("-")[1]
    assert m.task == ("regressor" if task == "regressor" else "classifier")
    assert m.n_outputs == (3 if task == "multiclass" else 1)


def test_the_checkers_replay_of_a_lightgbm_forest_is_the_mean_of_its_trees(tmp_path):
    """LightGBM's raw_score of a random-forest model is the sum over iterations, its
    score (what predict's sigmoid reads) the mean: a replayed pair's raw scores are the
    checker's trees' own."""
    from treesens.verify.replay import library_raw

    path = tiny_model("lgbmforest-binary", tmp_path)
    X = np.random.default_rng(7).uniform(-0.2, 1.2, size=(2, 3))
    m = read_model(str(path), "lightgbm")
    got = library_raw(str(path), "lightgbm", m)(X)
    np.testing.assert_allclose(got, _scores(m, X), rtol=1e-6, atol=1e-5)
