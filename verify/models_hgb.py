"""A HistGradientBoosting classifier or regressor as the checker sees it: its predictors'
nodes.

scikit-learn predicts raw = ``_baseline_prediction`` + the sum of the predictors' leaf
values, in float64, per output: an iteration holds one predictor per output (a
multiclass classifier: one per class, P = the softmax of the K raw scores; binary: one,
P(class 1) = sigmoid(raw); a regressor: one, whose prediction is ``link.inverse(raw)``).
Each node sends ``x <= num_threshold`` (float64 inputs) to its ``left`` child and NaN to
the side ``missing_go_to_left`` names. A certificate's domain holds no NaN (a feature
that may be missing gets no certificate), so the missing side is never taken and is not
read. Categorical splits (and the preprocessor that encodes their features) are refused,
and so are regressors whose link is not the identity (loss poisson or gamma: exp), whose
change in prediction is no linear condition on the raw score.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .models import Model, ModelError, Tree, sklearn_names


def read_hgb(est) -> Model:
    if getattr(est, "_preprocessor", None) is not None:
        raise ModelError("HistGradientBoosting with categorical features is not checked")
    link = type(est._loss.link).__name__
    regressor = not hasattr(est, "classes_")
    if regressor and link != "IdentityLink":
        raise ModelError(
            f"a HistGradientBoostingRegressor with loss {est.loss} (link {link}): the checker "
            "reads regressors whose prediction is the raw score (identity link)"
        )
    base = np.asarray(est._baseline_prediction, dtype=np.float64).reshape(-1)
    n_out = 1 if regressor or len(est.classes_) == 2 else len(est.classes_)
    if base.size != n_out:
        raise ModelError(f"{base.size} baselines for {n_out} outputs")
    trees = []
    for iteration in est._predictors:
        if len(iteration) != n_out:
            raise ModelError(f"an iteration of {len(iteration)} predictors for {n_out} outputs")
        trees += [replace(_tree(p.nodes), output=k) for k, p in enumerate(iteration)]
    names = sklearn_names(est)
    if regressor:
        return Model(trees, float(base[0]), "<=", names, 1.0, link="identity", task="regressor")
    if n_out == 1:
        return Model(trees, float(base[0]), "<=", names, 1.0)
    offsets = tuple(float(b) for b in base)
    return Model(trees, 0.0, "<=", names, 1.0, link="softmax", offsets=offsets)


def _tree(nodes) -> Tree:
    leaf = nodes["is_leaf"].astype(bool)
    if np.any(nodes["is_categorical"].astype(bool) & ~leaf):
        raise ModelError("categorical splits are not checked")
    n = len(nodes)
    return Tree(
        feature=[-1 if leaf[i] else int(nodes["feature_idx"][i]) for i in range(n)],
        threshold=[0.0 if leaf[i] else float(nodes["num_threshold"][i]) for i in range(n)],
        left=[-1 if leaf[i] else int(nodes["left"][i]) for i in range(n)],
        right=[-1 if leaf[i] else int(nodes["right"][i]) for i in range(n)],
        value=[float(nodes["value"][i]) if leaf[i] else 0.0 for i in range(n)],
    )
