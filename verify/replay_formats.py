"""The library's own raw scores of a pair for the formats other than XGBoost and
LightGBM (verify/replay.py says what each one is): scikit-learn models and pipelines
from a ``.skops`` file, CatBoost's ``.cbm`` and ONNX tree ensembles run by onnxruntime."""

from __future__ import annotations

import numpy as np

from .models import Model, ModelError
from .models_sklearn import load_skops
from .replay import RawScores, per_output


def sklearn_raw(path: str, library: str, model: Model, maps=None) -> RawScores:
    """A scikit-learn model's (or Pipeline's) raw scores: ``decision_function`` where it
    has one (boosting classifiers), a forest classifier's probabilities (binary: class
    1's), a regressor's prediction; on one thread (``_one_thread``)."""
    est = _one_thread(load_skops(path))
    pipeline = library == "sklearn-pipeline"
    if pipeline and type(est).__name__ != "Pipeline":
        raise ModelError(f"{type(est).__name__}: a pipeline certificate names a Pipeline")
    categories = _input_categories(maps) if pipeline else _hgb_categories(est)
    frame = getattr(est, "feature_names_in_", None) is not None

    def rows(X: np.ndarray):
        if not frame and not categories:
            return X
        import pandas as pd

        cols = {}
        for f, name in enumerate(model.features):
            cats = categories.get(f)
            cols[name] = [_category(cats, v) for v in X[:, f]] if cats else X[:, f]
            if cats and not frame:  # a NumPy row: the categories as numbers
                cols[name] = np.asarray(cols[name], dtype=np.float64)
        out = pd.DataFrame(cols, columns=model.features)
        return out if frame else out.to_numpy()

    if model.task == "regressor":
        return lambda X: per_output(est.predict(rows(X)), model)
    if hasattr(est, "decision_function") and model.link != "proba":
        return lambda X: per_output(est.decision_function(rows(X)), model)
    if model.link != "proba":
        raise ModelError(f"{type(est).__name__}: no raw score to replay")

    def proba(X: np.ndarray) -> np.ndarray:
        p = np.asarray(est.predict_proba(rows(X)), dtype=np.float64)
        return per_output(p[:, 1] if model.n_outputs == 1 else p, model)

    return proba


def _one_thread(est):
    """``est`` (the checker's own object) set to predict on one thread, its final step if
    a Pipeline: a forest on several adds its trees' probabilities in the order its
    threads finish, an ulp apart from call to call, and a box on the claim's boundary
    would verify in one run and not the next."""
    final = est.steps[-1][1] if type(est).__name__ == "Pipeline" and est.steps else est
    if "n_jobs" in final.get_params(deep=False):
        final.set_params(n_jobs=1)
    return est


def _input_categories(maps) -> dict[int, list]:
    """Per coded input of a pipeline certificate, its raw categories (code k: the k-th),
    as its encoded columns state them (the checker's reader confirmed them)."""
    out: dict[int, list] = {}
    for col in maps or ():
        if "values" in col:
            out[int(col["input"])] = list(col["categories"])
    return out


def _hgb_categories(est) -> dict[int, list]:
    """Per categorical feature of a HistGradientBoosting, its encoder's categories (code
    k: the k-th, as models_hgb.py reads them; NaN is none)."""
    pre = getattr(est, "_preprocessor", None)
    out: dict[int, list] = {}
    for name, trans, cols in getattr(pre, "transformers_", ()):
        if name != "encoder":
            continue
        cols = np.asarray(cols)
        features = np.flatnonzero(cols) if cols.dtype == bool else cols.astype(int)
        for j, f in enumerate(features.tolist()):
            out[int(f)] = [c for c in trans.categories_[j] if c == c]
    return out


def _category(categories: list, v: float):
    if v != v:  # NaN: missing, as the library reads it
        return v
    if not float(v).is_integer() or not 0 <= int(v) < len(categories):
        raise ModelError(f"{v!r} is not a code of the input's categories")
    return categories[int(v)]


def catboost_raw(path: str, model: Model, categories: dict[str, list[str]]) -> RawScores:
    """CatBoost's RawFormulaVal; a one-hot feature's code given as its category's name."""
    import catboost

    cb = catboost.CatBoost()
    cb.load_model(path, format="cbm")
    if not categories:
        return lambda X: per_output(cb.predict(X, prediction_type="RawFormulaVal"), model)
    coded = [f for f, name in enumerate(model.features) if name in categories]

    def raw(X: np.ndarray) -> np.ndarray:
        import pandas as pd

        cols = {}
        for f, name in enumerate(model.features):
            cols[name] = (
                [_category(categories[name], v) for v in X[:, f]] if f in coded else X[:, f]
            )
        pool = catboost.Pool(pd.DataFrame(cols, columns=model.features), cat_features=coded)
        return per_output(cb.predict(pool, prediction_type="RawFormulaVal"), model)

    return raw


def onnx_raw(path: str, model: Model, post_transform: bool = False) -> RawScores:
    """onnxruntime's scores of the graph's tree-ensemble node (its scores output made a
    graph output, its post_transform NONE; with ``post_transform``, as the model states
    it: a classifier's probabilities), the inputs fed as the checker's reader names them
    (one tensor [N, F], or the Concat's inputs in its order)."""
    import onnx
    import onnxruntime

    graph_model = onnx.load_model(path, load_external_data=False)
    g = graph_model.graph
    op = next(n for n in g.node if n.op_type.startswith("TreeEnsemble"))
    for a in op.attribute:
        if a.name == "post_transform" and not post_transform:
            a.s = b"NONE"
    scores = op.output[0] if op.op_type == "TreeEnsembleRegressor" else op.output[1]
    if scores not in {o.name for o in g.output}:
        g.output.append(onnx.helper.make_tensor_value_info(scores, onnx.TensorProto.FLOAT, None))
    options = onnxruntime.SessionOptions()  # one thread, as treesens' replay: the float32
    options.intra_op_num_threads = 1  # sums of trees split over threads differ by an ulp
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        graph_model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    dtype = np.float32 if model.float32 else np.float64
    feeds = _onnx_inputs(g)

    def raw(X: np.ndarray) -> np.ndarray:
        feed, at = {}, 0
        for name, k in feeds:
            k = X.shape[1] if k < 0 else k
            feed[name] = np.ascontiguousarray(X[:, at : at + k], dtype=dtype)
            at += k
        out = np.asarray(session.run([scores], feed)[0], dtype=np.float64).reshape(len(X), -1)
        if model.n_outputs == 1 and model.task == "classifier":
            out = out[:, -1]  # a binary classifier's one score
        return per_output(out, model)

    return raw


def _onnx_inputs(g) -> list[tuple[str, int]]:
    """The graph's inputs in the order their columns make the features, with their
    number of columns."""
    inits = {t.name for t in g.initializer}
    inputs = {i.name: i for i in g.input if i.name not in inits}
    concat = [n for n in g.node if n.op_type == "Concat"]
    if not concat and len(inputs) == 1:  # one tensor [N, F]: every feature
        return [(next(iter(inputs)), -1)]
    order = list(concat[0].input) if concat else list(inputs)
    out = []
    for name in order:
        k = int(inputs[name].type.tensor_type.shape.dim[1].dim_value)
        if k < 1:
            raise ModelError(f"input {name} has no fixed number of columns")
        out.append((name, k))
    return out
