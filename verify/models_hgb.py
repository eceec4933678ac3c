"""A binary HistGradientBoostingClassifier as the checker sees it: its predictors' nodes.

scikit-learn predicts raw = ``_baseline_prediction`` + the sum of the predictors' leaf
values, in float64, each node sending ``x <= num_threshold`` (float64 inputs) to its
``left`` child and NaN to the side ``missing_go_to_left`` names. Categorical splits (and
the preprocessor that encodes their features) are refused.
"""

from __future__ import annotations

import numpy as np

from .models import Model, ModelError, Tree, sklearn_names


def read_hgb(est) -> Model:
    if len(est.classes_) != 2:
        raise ModelError("HistGradientBoostingClassifier: the checker reads binary models")
    if getattr(est, "_preprocessor", None) is not None:
        raise ModelError("HistGradientBoosting with categorical features is not checked")
    base = np.asarray(est._baseline_prediction, dtype=np.float64).reshape(-1)
    if base.size != 1:
        raise ModelError("a binary HistGradientBoosting has one baseline")
    trees = []
    for iteration in est._predictors:
        if len(iteration) != 1:
            raise ModelError("a binary HistGradientBoosting has one predictor per iteration")
        trees.append(_tree(iteration[0].nodes))
    return Model(trees, float(base[0]), "<=", sklearn_names(est), 1.0, reads_nan=True)


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
        default_left=[bool(v) for v in nodes["missing_go_to_left"]],
        missing=["nan"] * n,
    )
