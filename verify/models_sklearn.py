"""scikit-learn's tree ensembles as the checker reads them (verify/models.py's Model): a
``.skops`` file loaded with only scikit-learn's and NumPy's types trusted, then each
estimator's ``tree_`` arrays (HistGradientBoosting: models_hgb.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .models import Model, ModelError, Tree, library_read


def read_sklearn(path: str) -> Model:
    """A scikit-learn GradientBoosting, HistGradientBoosting, RandomForest,
    ExtraTrees or DecisionTree classifier or regressor from a .skops file, loaded with only
    scikit-learn's and NumPy's types trusted (nothing else may run)."""
    return sklearn_model(load_skops(path))


def sklearn_model(est) -> Model:
    """A fitted scikit-learn tree ensemble's trees."""
    kind = type(est).__name__
    if int(getattr(est, "n_outputs_", 1)) > 1:  # a prediction per output; a claim of one
        raise ModelError(f"{kind} of {est.n_outputs_} outputs: the checker reads one")
    if kind in ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor"):
        from .models_hgb import read_hgb

        return read_hgb(est)
    if kind in FORESTS:
        model = _sklearn_forest(est)
    elif kind in REGRESSOR_FORESTS:
        model = _sklearn_regressor_forest(est)
    elif kind == "GradientBoostingRegressor":
        model = _sklearn_boosting(est, "regressor")
    elif kind == "GradientBoostingClassifier":
        model = _sklearn_boosting(est, "classifier")
    else:
        raise ModelError(
            f"{kind}: the checker reads GradientBoosting, RandomForest, ExtraTrees, "
            "DecisionTree and ExtraTree classifiers and regressors, and HistGradientBoosting "
            "classifiers and regressors"
        )
    refuses = not _allows_nan(est)
    read = not refuses and all(t.default_left is not None for t in model.trees)
    return replace(model, reads_nan=read, refuses_nan=refuses)


def _allows_nan(est) -> bool:
    """Whether the estimator's predict takes NaN, as its tags say (GradientBoosting: no;
    forests and trees: yes, since scikit-learn 1.4); True where no tag says."""
    try:
        return bool(est.__sklearn_tags__().input_tags.allow_nan)
    except AttributeError:  # scikit-learn before 1.6
        return bool(getattr(est, "_get_tags", dict)().get("allow_nan", True))


def load_skops(path: str):
    """A .skops file's object, loaded with only scikit-learn's and NumPy's types trusted
    (of functions, HistGradientBoosting's one partial of check_array: skops_trust.py)."""
    import skops.io

    from .skops_trust import trusted_types

    untrusted = library_read("skops", lambda: skops.io.get_untrusted_types(file=path))
    trusted = trusted_types(path, untrusted)
    return library_read("skops", lambda: skops.io.load(path, trusted=trusted))


def _sklearn_boosting(est, task: str) -> Model:
    """raw = init + learning rate * the trees' sum, per class (a multiclass model: one
    tree per class and stage, P = softmax)."""
    n = est.n_features_in_
    start = est.init_
    if not (isinstance(start, str) and start == "zero") and type(start).__name__ not in (
        "DummyRegressor",
        "DummyClassifier",
    ):  # an estimator's raw prediction depends on the input: no offset states it
        raise ModelError(
            f"{type(est).__name__} with init={type(start).__name__}: the checker reads the "
            "default init (a constant) or init='zero'"
        )
    if getattr(start, "strategy", None) == "stratified":  # random, row by row
        raise ModelError(f"{type(est).__name__} with a stratified DummyClassifier init")
    init = est._raw_predict_init(np.zeros((1, n), dtype=np.float32))[0]
    lr = float(est.learning_rate)
    k_out = est.estimators_.shape[1]
    trees = [
        replace(_sklearn_tree(r.tree_, lr * r.tree_.value[:, 0, 0]), output=k)
        for stage in est.estimators_
        for k, r in enumerate(stage)
    ]
    names = sklearn_names(est)
    if task == "regressor":
        return Model(
            trees, float(init[0]), "<=", names, 1.0, float32=True, link="identity", task="regressor"
        )
    if k_out > 1:
        offsets = tuple(float(v) for v in init)
        return Model(trees, 0.0, "<=", names, 1.0, float32=True, link="softmax", offsets=offsets)
    factor = 2.0 if est.loss == "exponential" else 1.0  # P = sigmoid(factor * raw)
    return Model(trees, float(init[0]), "<=", names, factor, float32=True)


# one tree (a DecisionTree, or a single ExtraTree) is a forest of itself
SINGLE_TREES = (
    "DecisionTreeClassifier",
    "ExtraTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeRegressor",
)
FORESTS = ("RandomForestClassifier", "ExtraTreesClassifier", *SINGLE_TREES[:2])
REGRESSOR_FORESTS = ("RandomForestRegressor", "ExtraTreesRegressor", *SINGLE_TREES[2:])


def _members(est) -> list:
    return [est] if type(est).__name__ in SINGLE_TREES else list(est.estimators_)


def _sklearn_forest(est) -> Model:
    """P(class c) = the mean over trees of the leaf's class-c fraction (binary: one
    output, P(class 1))."""
    members = _members(est)
    n_classes = len(est.classes_)
    trees = []
    for m in members:
        counts = m.tree_.value[:, 0, :]
        frac = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1e-300)
        if n_classes == 2:
            trees.append(_sklearn_tree(m.tree_, frac[:, 1] / len(members)))
            continue
        t = _sklearn_tree(m.tree_, np.zeros(m.tree_.node_count))
        leaf = m.tree_.children_left == -1
        values = [
            [float(v) / len(members) for v in frac[i]] if leaf[i] else [0.0] * n_classes
            for i in range(m.tree_.node_count)
        ]
        trees.append(replace(t, values=values))
    offsets = () if n_classes == 2 else (0.0,) * n_classes
    names = sklearn_names(est)
    return Model(trees, 0.0, "<=", names, 1.0, float32=True, link="proba", offsets=offsets)


def _sklearn_regressor_forest(est) -> Model:
    """The prediction = the mean over trees of the leaf's value."""
    members = _members(est)
    trees = [_sklearn_tree(m.tree_, m.tree_.value[:, 0, 0] / len(members)) for m in members]
    return Model(
        trees, 0.0, "<=", sklearn_names(est), 1.0, float32=True, link="identity", task="regressor"
    )


def _sklearn_tree(t, leaf_value) -> Tree:
    """A fitted scikit-learn ``tree_``; ``leaf_value[i]``: node i's score if it is a leaf."""
    leaf = t.children_left == -1
    # NaN goes to the side missing_go_to_left names (scikit-learn >= 1.3)
    nan_left = getattr(t, "missing_go_to_left", None)
    return Tree(
        feature=[-1 if leaf[i] else int(f) for i, f in enumerate(t.feature)],
        threshold=[0.0 if leaf[i] else float(v) for i, v in enumerate(t.threshold)],
        left=[int(c) for c in t.children_left],
        right=[int(c) for c in t.children_right],
        value=[float(leaf_value[i]) if leaf[i] else 0.0 for i in range(t.node_count)],
        default_left=None if nan_left is None else [bool(v) for v in nan_left],
        missing=None if nan_left is None else ["nan"] * t.node_count,
    )


def sklearn_names(est) -> list[str]:
    n = est.n_features_in_
    return [str(c) for c in getattr(est, "feature_names_in_", [f"x{i}" for i in range(n)])]
