"""A HistGradientBoosting classifier or regressor as the checker sees it: its predictors'
nodes.

scikit-learn predicts raw = ``_baseline_prediction`` + the sum of the predictors' leaf
values, in float64, per output: an iteration holds one predictor per output (a
multiclass classifier: one per class, P = the softmax of the K raw scores; binary: one,
P(class 1) = sigmoid(raw); a regressor: one, whose prediction is ``link.inverse(raw)``).
Each node sends ``x <= num_threshold`` (float64 inputs) to its ``left`` child and NaN to
the side ``missing_go_to_left`` names. A model with categorical features first encodes
them (``_preprocessor``: an OrdinalEncoder of those columns, put first, the others passed
through): code k of such a feature is the encoder's k-th category, a categorical node
sends the codes its bitset (``raw_left_cat_bitsets``) holds left and the others right,
NaN (and an unknown category) to the side ``missing_go_to_left`` names. A regressor's
link is the identity or, for the losses poisson and gamma, exp (``link`` "exp": its
change is checked by the ``link`` step, verify/link.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .models import Model, ModelError, Tree
from .models_sklearn import sklearn_names


def read_hgb(est) -> Model:
    link = type(est._loss.link).__name__
    regressor = not hasattr(est, "classes_")
    if regressor and link not in ("IdentityLink", "LogLink"):
        raise ModelError(
            f"a HistGradientBoostingRegressor with loss {est.loss} (link {link}): the checker "
            "reads regressors whose prediction is the raw score (identity link) or exp(raw) "
            "(log link)"
        )
    order, n_codes = _columns(est)
    base = np.asarray(est._baseline_prediction, dtype=np.float64).reshape(-1)
    n_out = 1 if regressor or len(est.classes_) == 2 else len(est.classes_)
    if base.size != n_out:
        raise ModelError(f"{base.size} baselines for {n_out} outputs")
    trees = []
    for iteration in est._predictors:
        if len(iteration) != n_out:
            raise ModelError(f"an iteration of {len(iteration)} predictors for {n_out} outputs")
        trees += [
            replace(_tree(p.nodes, order, n_codes, np.asarray(p.raw_left_cat_bitsets)), output=k)
            for k, p in enumerate(iteration)
        ]
    model = Model(
        trees, float(base[0]), "<=", sklearn_names(est), 1.0, reads_nan=True, known_codes=n_codes
    )
    if regressor:
        return replace(model, link="exp" if link == "LogLink" else "identity", task="regressor")
    if n_out == 1:
        return model
    return replace(model, offset=0.0, link="softmax", offsets=tuple(float(b) for b in base))


def _columns(est) -> tuple[list[int], dict[int, int]]:
    """The feature each column the predictors read comes from, and per categorical
    feature how many categories its encoder knows (NaN is none: it is missing)."""
    n = int(est.n_features_in_)
    pre = getattr(est, "_preprocessor", None)
    if pre is None:
        return list(range(n)), {}
    order: list[int] = []
    n_codes: dict[int, int] = {}
    for name, trans, cols in pre.transformers_:
        if isinstance(trans, str) and trans == "drop":
            continue
        cols = np.asarray(cols)
        features = (np.flatnonzero(cols) if cols.dtype == bool else cols.astype(int)).tolist()
        if name == "encoder":
            for j, f in enumerate(features):
                known = [c for c in trans.categories_[j] if not _is_nan(c)]
                n_codes[int(f)] = len(known)
        elif name != "numerical":
            raise ModelError(f"a HistGradientBoosting preprocessor step {name!r} is not read")
        order.extend(int(f) for f in features)
    if sorted(order) != list(range(n)):
        raise ModelError("the HistGradientBoosting preprocessor's columns are not its features")
    return order, n_codes


def _is_nan(v) -> bool:
    return isinstance(v, float) and v != v


def _tree(nodes, order: list[int], n_codes: dict[int, int], bitsets: np.ndarray) -> Tree:
    leaf = nodes["is_leaf"].astype(bool)
    n = len(nodes)
    feature = [-1 if leaf[i] else order[int(nodes["feature_idx"][i])] for i in range(n)]
    cats: list[frozenset[int] | None] = [None] * n
    for i in np.flatnonzero(nodes["is_categorical"].astype(bool) & ~leaf).tolist():
        if feature[i] not in n_codes:
            raise ModelError(f"a categorical split on feature {feature[i]}, which is not encoded")
        words = bitsets[int(nodes["bitset_idx"][i])]
        cats[i] = frozenset(
            k for k in range(n_codes[feature[i]]) if int(words[k // 32]) >> (k % 32) & 1
        )
    return Tree(
        feature=feature,
        threshold=[0.0 if leaf[i] else float(nodes["num_threshold"][i]) for i in range(n)],
        left=[-1 if leaf[i] else int(nodes["left"][i]) for i in range(n)],
        right=[-1 if leaf[i] else int(nodes["right"][i]) for i in range(n)],
        value=[float(nodes["value"][i]) if leaf[i] else 0.0 for i in range(n)],
        default_left=[bool(v) for v in nodes["missing_go_to_left"]],
        missing=["nan"] * n,
        cats=cats if any(c is not None for c in cats) else None,
    )
