"""Test helpers (not tests): tiny models of every kind a certificate covers, their
libraries' own scores, and each claim's exact supremum by enumeration.

The grid (tests/oracle.py's ``cell_grid``) holds one point per combination of threshold
intervals of the shared and the varied features, so a pair meeting a condition exists
if and only if one exists on the grid; the scores are the library's (XGBoost's output
margin, LightGBM's raw score, scikit-learn's decision function, probabilities or
prediction), not treesens'. A claim at value v ("no pair reaches v") holds if and only if
v lies strictly above the supremum returned here.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from treesens.compiler.ensemble import Ensemble
from treesens.tests.oracle import cell_grid

FEATURES = ["a", "b", "c"]


def data(seed: int = 0, n: int = 400):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0, 1, size=(n, 3)), columns=FEATURES)
    return X, X["a"] + 0.5 * X["b"] + 0.15 * X["c"]


def tiny_model(kind: str, folder: Path, seed: int = 0) -> Path:
    """A small model file: ``kind`` is "<library>-<task>" with library xgboost,
    lightgbm, lgbmforest (LightGBM in random-forest mode), sklearn (GradientBoosting), forest (RandomForest), hgb
    (HistGradientBoosting), catboost (.cbm), onnx (GradientBoosting through skl2onnx),
    onnxforest (RandomForest through skl2onnx) or pipeline (a scikit-learn Pipeline of
    scalers before GradientBoosting), and task binary, multiclass (three classes) or
    regressor; ``seed``: the data's (another seed, another model of the kind)."""
    library, task = kind.split("-")
    X, s = data(seed)
    y = {
        "binary": (s > 0.8).astype(int),
        "multiclass": np.digitize(s, [0.6, 1.0]),
        "regressor": 10 * s,
    }[task]
    if library == "xgboost":
        import xgboost

        cls = xgboost.XGBRegressor if task == "regressor" else xgboost.XGBClassifier
        est = cls(n_estimators=4, max_depth=2, learning_rate=0.8).fit(X, y)
        path = folder / f"{kind}.json"
        est.get_booster().save_model(path)
        return path
    if library in ("lightgbm", "lgbmforest"):
        import lightgbm

        cls = lightgbm.LGBMRegressor if task == "regressor" else lightgbm.LGBMClassifier
        # lgbmforest: random-forest mode, whose raw score is the mean over iterations
        forest = {"boosting_type": "rf", "subsample": 0.8, "subsample_freq": 1}
        kw = forest if library == "lgbmforest" else {}
        est = cls(n_estimators=4, num_leaves=4, min_child_samples=5, verbose=-1, **kw).fit(X, y)
        path = folder / f"{kind}.txt"
        est.booster_.save_model(path)
        return path
    if library == "catboost":
        import catboost

        cls = catboost.CatBoostRegressor if task == "regressor" else catboost.CatBoostClassifier
        est = cls(iterations=4, depth=2, verbose=0, allow_writing_files=False, random_seed=0)
        path = folder / f"{kind}.cbm"
        est.fit(X, y).save_model(str(path))
        return path
    if library in ("onnx", "onnxforest"):
        return _onnx_model(kind, library, task, X, y, folder)
    import skops.io
    from sklearn import ensemble as E

    if library == "hgb":
        cls = (
            E.HistGradientBoostingRegressor
            if task == "regressor"
            else E.HistGradientBoostingClassifier
        )
        est = cls(max_iter=4, max_depth=2, learning_rate=0.8)
    elif library == "pipeline":
        est = _pipeline(task)
    elif library == "sklearn":
        cls = E.GradientBoostingRegressor if task == "regressor" else E.GradientBoostingClassifier
        est = cls(n_estimators=4, max_depth=2, learning_rate=0.8, random_state=0)
    else:
        cls = E.RandomForestRegressor if task == "regressor" else E.RandomForestClassifier
        est = cls(n_estimators=4, max_depth=3, random_state=0)
    path = folder / f"{kind}.skops"
    skops.io.dump(est.fit(X, y), path)
    return path


def _pipeline(task: str):
    """Scalers on a ColumnTransformer's columns before GradientBoosting."""
    from sklearn import ensemble as E
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    cls = E.GradientBoostingRegressor if task == "regressor" else E.GradientBoostingClassifier
    columns = ColumnTransformer(
        [("std", StandardScaler(), ["a", "b"]), ("minmax", MinMaxScaler(), ["c"])]
    )
    model = cls(n_estimators=4, max_depth=2, learning_rate=0.8, random_state=0)
    return Pipeline([("columns", columns), ("model", model)])


def _onnx_model(kind: str, library: str, task: str, X, y, folder: Path) -> Path:
    """A scikit-learn model through skl2onnx, over the DataFrame's columns: one input
    [N, 1] per column, joined by a Concat (a passthrough ColumnTransformer)."""
    from skl2onnx import to_onnx
    from sklearn import ensemble as E
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    regressor = task == "regressor"
    if library == "onnx":
        cls = E.GradientBoostingRegressor if regressor else E.GradientBoostingClassifier
        model = cls(n_estimators=4, max_depth=2, learning_rate=0.8, random_state=0)
    else:
        cls = E.RandomForestRegressor if regressor else E.RandomForestClassifier
        model = cls(n_estimators=4, max_depth=3, random_state=0)
    X32 = X.astype(np.float32)
    columns = ColumnTransformer([("columns", "passthrough", FEATURES)])
    pipe = Pipeline([("columns", columns), ("model", model)]).fit(X32, y)
    options = None if regressor else {"zipmap": False}
    path = folder / f"{kind}.onnx"
    path.write_bytes(to_onnx(pipe, X32[:1], options=options).SerializeToString())
    return path


def _onnx_scores(path: Path, X: np.ndarray) -> tuple[np.ndarray, str]:
    """onnxruntime's scores: a regressor's prediction, a forest's probabilities, or a
    boosting classifier's raw scores (the graph run with its post_transform set to NONE)."""
    import onnx
    import onnxruntime

    model = onnx.load_model(str(path))
    op = next(n for n in model.graph.node if n.op_type.startswith("TreeEnsemble"))
    post = next((a for a in op.attribute if a.name == "post_transform"), None)
    what = "prediction" if op.op_type == "TreeEnsembleRegressor" else "proba"
    if post is not None and post.s != b"NONE":
        post.s, what = b"NONE", "margin"
    session = onnxruntime.InferenceSession(model.SerializeToString())
    feed = {i.name: X[:, [k]].astype(np.float32) for k, i in enumerate(session.get_inputs())}
    out = session.run(None, feed)
    s = np.asarray(out[0] if what == "prediction" else out[1], dtype=np.float64)
    s = s.reshape(len(X), -1)
    if s.shape[1] == 2:  # a binary classifier's one score, in column 1
        s = s[:, 1:]
    return s, what


def library_scores(path: Path, X: np.ndarray) -> tuple[np.ndarray, str]:
    """The library's scores of the rows X, [rows, outputs], and what they are: "margin"
    (raw scores; a binary model's one column), "proba" (a forest classifier's
    probabilities, every class), "prediction" (a regressor's)."""
    df = pd.DataFrame(X, columns=FEATURES)
    suffix = Path(path).suffix
    if suffix == ".json":
        import xgboost

        booster = xgboost.Booster(model_file=str(path))
        m = booster.predict(xgboost.DMatrix(df), output_margin=True)
        kind = "prediction" if "reg:" in booster.save_config() else "margin"
        return m.reshape(len(X), -1).astype(np.float64), kind
    if suffix == ".txt":
        import lightgbm

        booster = lightgbm.Booster(model_file=str(path))
        m = booster.predict(df, raw_score=True)
        if booster.dump_model()["average_output"]:  # random-forest mode: raw_score is
            m = m / booster.current_iteration()  # the sum, the model's score the mean
        kind = (
            "prediction" if booster.dump_model()["objective"].startswith("regression") else "margin"
        )
        return np.asarray(m, dtype=np.float64).reshape(len(X), -1), kind
    if suffix == ".cbm":
        import catboost

        model = catboost.CatBoost()
        model.load_model(str(path))
        m = model.predict(df, prediction_type="RawFormulaVal")
        kind = "prediction" if model.get_params().get("loss_function") == "RMSE" else "margin"
        return np.asarray(m, dtype=np.float64).reshape(len(X), -1), kind
    if suffix == ".onnx":
        return _onnx_scores(path, X)
    import skops.io

    est = skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    if not hasattr(est, "classes_"):
        return est.predict(df).reshape(-1, 1).astype(np.float64), "prediction"
    if hasattr(est, "decision_function"):
        return est.decision_function(df).reshape(len(X), -1).astype(np.float64), "margin"
    p = est.predict_proba(df).astype(np.float64)
    return (p[:, 1:] if p.shape[1] == 2 else p), "proba"


def supremum(ens: Ensemble, path: Path, vary, claim: str, classes=None) -> float:
    """The largest value a pair reaches, by enumeration: ``claim`` "prob" (a binary
    probability gap), "margin" (a binary margin gap, logit units), "ratio" (a multiclass
    probability ratio between ``classes``, each a class or "any"), "change" (a
    regressor's |f(x1) - f(x2)|)."""
    X, ns, nv = cell_grid(ens, vary)
    s, what = library_scores(path, X)
    s = s.reshape(ns, nv, -1)
    if claim == "change":
        return float(np.max(s[..., 0].max(axis=1) - s[..., 0].min(axis=1)))
    if claim in ("prob", "margin"):
        v = s[..., 0]
        if what == "margin" and claim == "prob":
            v = 1.0 / (1.0 + np.exp(-v)) - 0.5
        elif what == "proba":
            v = v - 0.5
        return float(np.max(np.minimum(v.max(axis=1), -v.min(axis=1))))
    k = s.shape[2]
    every = range(k)
    sides = [list(every) if c == "any" else [int(c)] for c in classes]
    wins = np.stack([_win(s, c, what) for c in every])  # [class, ns, nv]: c's lead
    best = -math.inf
    for c1 in sides[0]:
        for c2 in sides[1]:
            if c1 != c2:
                lead = np.minimum(wins[c1].max(axis=1), wins[c2].max(axis=1))
                best = max(best, float(lead.max()))
    return best


def _win(s: np.ndarray, c: int, what: str) -> np.ndarray:
    """Class c's lead over every other class: the smallest ratio P_c / P_o."""
    others = [o for o in range(s.shape[2]) if o != c]
    if what == "margin":  # softmax: P_c / P_o = exp(raw_c - raw_o)
        return np.exp(np.min([s[..., c] - s[..., o] for o in others], axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = [np.where(s[..., o] > 0, s[..., c] / s[..., o], np.inf) for o in others]
    return np.min(r, axis=0)
