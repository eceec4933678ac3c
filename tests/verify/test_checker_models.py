"""The checker's models (verify/models.py) score inputs as their libraries do: the
trees, tests, offsets and outputs it reads, walked by hand, give the library's own
margins, probabilities (forests) or predictions (regressors), for every model kind a
certificate covers."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.tests.verify.claims_oracle import library_scores, tiny_model
from treesens.verify.models import Model, ModelError, read_model

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


def _lightgbm_onnx_without_zipmap(tmp_path, factor: float):
    """onnxmltools' LightGBM classifier without a ZipMap (a Mul of the probabilities by an
    initializer 1.0 after the operator), that initializer set to ``factor``."""
    onnx = pytest.importorskip("onnx")
    lgb = pytest.importorskip("lightgbm")
    from treesens.tests.frontends import onnx_models as om

    X, y, _, _ = om.data()
    est = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, num_threads=1)
    model = onnx.load_model_from_string(
        om.onnxmltools_model(est.fit(X, y), X.shape[1], zipmap=False)
    )
    name = next(n.input[1] for n in model.graph.node if n.op_type == "Mul")
    (init,) = [i for i in model.graph.initializer if i.name == name]
    init.CopyFrom(onnx.numpy_helper.from_array(np.array([factor], dtype=np.float32), name))
    return om.write(tmp_path, "m.onnx", model.SerializeToString()), X


def test_the_checker_reads_a_product_by_one_after_the_probabilities(tmp_path):
    pytest.importorskip("onnxmltools")
    ort = pytest.importorskip("onnxruntime")
    path, X = _lightgbm_onnx_without_zipmap(tmp_path, 1.0)
    rows = X[:20].astype(np.float32)
    _, proba = ort.InferenceSession(str(path)).run(None, {"input": rows})
    margin = _scores(read_model(str(path), "onnx"), rows)[:, 0]
    np.testing.assert_allclose(1 / (1 + np.exp(-margin)), proba[:, 1], atol=1e-6)


def test_the_checker_refuses_a_product_by_another_number(tmp_path):
    pytest.importorskip("onnxmltools")
    path, _ = _lightgbm_onnx_without_zipmap(tmp_path, 2.0)
    with pytest.raises(ModelError, match="product by one"):
        read_model(str(path), "onnx")


def _two_scores(tmp_path, class_0_weights):
    """A stump scoring both classes under LOGISTIC: class 1 weighs -0.3 left, 0.7 right."""
    pytest.importorskip("onnx")
    from treesens.tests.frontends import onnx_models as om

    w0, w0b = class_0_weights
    w = [(1, 0, w0), (1, 1, -0.3), (2, 0, w0b), (2, 1, 0.7)]
    blob = om.classifier(om.stump_nodes(), w, post="LOGISTIC")
    return om.write(tmp_path, "two.onnx", blob)


def test_the_checker_reads_two_opposite_scores_as_class_1s_sigmoid(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    path = _two_scores(tmp_path, (0.3, -0.7))  # CatBoost's export: class 0 is minus class 1
    rows = np.array([[0.2, 0.0], [0.9, 0.0]], dtype=np.float32)
    _, proba = ort.InferenceSession(str(path)).run(None, {"X": rows})
    m = read_model(str(path), "onnx")
    margin = _scores(m, rows)[:, 0]
    np.testing.assert_allclose(margin, [-0.3, 0.7], atol=1e-7)
    np.testing.assert_allclose(1 / (1 + np.exp(-margin)), proba[:, 1], atol=1e-6)


def test_the_checker_refuses_two_scores_that_are_not_opposite(tmp_path):
    path = _two_scores(tmp_path, (0.3, -0.6))
    with pytest.raises(ModelError, match="two opposite ones"):
        read_model(str(path), "onnx")
