"""scikit-learn -> Ensemble IR.

Supported: ``DecisionTreeClassifier``, ``RandomForestClassifier``,
``ExtraTreesClassifier`` (mean of tree probabilities), ``GradientBoostingClassifier``
(init estimator + learning rate * regression trees) and
``HistGradientBoostingClassifier`` (its own predictors). Facts this relies on (checked
against scikit-learn 1.9's own predict in the tests):

* ``tree_``-based models compare ``float32(x) <= threshold`` (float64 threshold), the
  "yes" child is ``children_left``; NaN follows ``missing_go_to_left``;
* ``tree_.value`` holds class fractions (sklearn >= 1.4); a tree's predict_proba
  divides a leaf's vector by its sum, which is done here too;
* a forest's probability is the mean of its trees' probabilities (link "proba");
  binary forests get one output, P(class 1);
* gradient boosting: raw = init raw prediction (log-odds / log-priors of
  ``DummyClassifier``, or 0 for ``init="zero"``) + learning_rate * tree values;
  ``loss="exponential"`` has P = sigmoid(2 raw); inputs are float32;
* HistGradientBoosting: raw = ``_baseline_prediction`` + sum of predictor leaf
  values; ``x <= num_threshold`` on float64 inputs; NaN (and, for categorical splits,
  an unknown category) follows ``missing_go_to_left``; categorical features are
  ordinal-encoded by ``_preprocessor`` (the model's columns are reordered: categorical
  first); a categorical split's bitset lists the codes that go left. In the IR a
  categorical feature's value is its code 0..n-1 (``Feature.categories`` names them);
  the replayer maps codes back to the raw categories before calling predict.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.ensemble import (
    EXP,
    IDENTITY,
    LOGISTIC,
    PROBA,
    SOFTMAX,
    Ensemble,
    Feature,
    ModelOrigin,
    Tree,
    raw_category_values,
)
from ...compiler.errors import InputError, UnsupportedModelError
from ..preprocessing.pipeline import fold_pipeline, one_openmp_thread, single_threaded
from . import sniffing
from .base import (
    DEFAULT_OPTIONS,
    MALFORMED,
    MAX_FEATURES,
    LazyLibraryModel,
    LoadOptions,
    ModelFormat,
    head_text,
    module_of,
    warn_if_classes_are_not_positions,
)
from .skops_names import untrusted_names
from .skops_partial import PARTIAL, partial_refusal

# the other formats that read in-memory models (a joblib-saved XGBoost model, a Pipeline
# ending in LightGBM): the registry's, given by formats/registry.py
OtherFormats = Sequence[ModelFormat]

SUPPORTED = (
    "DecisionTreeClassifier",
    "ExtraTreeClassifier",
    "RandomForestClassifier",
    "ExtraTreesClassifier",
    "GradientBoostingClassifier",
    "HistGradientBoostingClassifier",
)
# regressors: one output, link identity, prediction = raw (forests: the mean of trees)
REGRESSORS = (
    "DecisionTreeRegressor",
    "ExtraTreeRegressor",
    "RandomForestRegressor",
    "ExtraTreesRegressor",
    "GradientBoostingRegressor",
    "HistGradientBoostingRegressor",
)

PICKLE_REFUSED = (
    "not loaded: a pickled model (joblib/pickle) runs code while it loads. If you trust "
    "this file, opt in: --trust-pickle on the command line, trust_pickle=True in Python "
    "(treesens.load_model), or trust_pickle in a .sens file's model line; skops files "
    "(.skops) load without it"
)
# the libraries whose models a skops file may hold in a Pipeline but treesens does not trust
BOOSTING_PACKAGES = ("xgboost", "lightgbm", "catboost")

# the estimator's scores in the IR's space: P(class 1) of a binary forest, all class
# probabilities, or the decision function (gradient boosting)
RAW_PROBA_1, RAW_PROBA, RAW_DECISION = "proba1", "proba", "decision"
RAW_PREDICT = "predict"  # a regressor's predict (identity link)
RAW_LOG_PREDICT = "log_predict"  # the log of a regressor's predict (exp link)


class SklearnReplayer(LazyLibraryModel):
    """scikit-learn's own predict on the fitted estimator, on one thread (a forest's
    copy with ``n_jobs=1``: ``single_threaded``; the user's object is left as it is). It
    pickles the estimator as bytes, unpickled again on first use in the receiving process
    (they come from the same stream as the replayer itself, so trusting one is trusting
    the other)."""

    library = "sklearn"
    _cached = "_est"

    def __init__(
        self,
        est: Any,
        raw: str,
        raw_scale: float = 1.0,
        code_maps: dict | None = None,
        columns: list | None = None,
    ):
        super().__init__(single_threaded(est))
        self._est_bytes: bytes | None = None
        self.raw = raw  # RAW_PROBA_1, RAW_PROBA or RAW_DECISION
        self.raw_scale = raw_scale
        self.code_maps = code_maps or {}  # feature -> array of raw categories by code
        self.columns = columns  # feature_names_in_ when the model was fitted on a DataFrame

    def _build(self) -> Any:
        return pickle.loads(self._est_bytes)

    def _picklable(self, state: dict) -> None:
        if state["_est_bytes"] is None:
            state["_est_bytes"] = pickle.dumps(self._est, protocol=pickle.HIGHEST_PROTOCOL)

    @property
    def est(self) -> Any:
        return self._library_model()

    def raw_fn(self, X) -> np.ndarray:
        """(n, n_outputs) raw scores in the IR's space, before ``raw_scale``."""
        if self.raw in (RAW_DECISION, RAW_PREDICT):
            fn = self.est.predict if self.raw == RAW_PREDICT else self.est.decision_function
            r = np.asarray(fn(X), dtype=np.float64)
            return r.reshape(len(r), -1)
        if self.raw == RAW_LOG_PREDICT:
            return np.log(np.asarray(self.est.predict(X), dtype=np.float64)).reshape(len(X), 1)
        p = self.est.predict_proba(X)
        return p[:, 1:2] if self.raw == RAW_PROBA_1 else p

    def _input(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if not self.code_maps and self.columns is None:
            return X
        cols = {}
        out = X.astype(object) if self.code_maps else X
        for f, cats in self.code_maps.items():
            v = X[:, f]
            ok = ~np.isnan(v) & (v >= 0) & (v < len(cats)) & (v == np.floor(np.nan_to_num(v)))
            col = np.full(len(v), np.nan, dtype=object)
            col[ok] = cats[v[ok].astype(int)]
            cols[f] = col
            out[:, f] = col
        if self.columns is None:
            if all(np.asarray(c).dtype.kind in "fiu" for c in self.code_maps.values()):
                return out.astype(np.float64)
            return out
        import pandas as pd

        data = {}
        for f, name in enumerate(self.columns):
            if f in cols:
                cats = self.code_maps[f]
                data[name] = (
                    pd.Categorical(cols[f], categories=cats) if self._from_dtype else cols[f]
                )
            else:
                data[name] = X[:, f]
        return pd.DataFrame(data, columns=list(self.columns))

    @property
    def _from_dtype(self) -> bool:
        return getattr(self.est, "categorical_features", None) == "from_dtype"

    def predict_raw(self, X) -> np.ndarray:
        Xi = self._input(X)
        with one_openmp_thread(self.est):
            r = np.asarray(self.raw_fn(Xi), dtype=np.float64)
        return r.reshape(len(X), -1) * self.raw_scale

    def predict_proba(self, X) -> np.ndarray:
        with one_openmp_thread(self.est):
            return np.asarray(self.est.predict_proba(self._input(X)), dtype=np.float64)

    def predict(self, X) -> np.ndarray:
        """A regressor's predictions, (n,)."""
        with one_openmp_thread(self.est):
            p = self.est.predict(self._input(X))
        return np.asarray(p, dtype=np.float64).reshape(len(X))


def _names(est, n: int) -> list[str]:
    names = getattr(est, "feature_names_in_", None)
    if names is not None and len(names) == n:
        return [str(x) for x in names]
    return [f"x{i}" for i in range(n)]


def _check_classifier(est, where: str) -> None:
    name = type(est).__name__
    if name not in SUPPORTED and name not in REGRESSORS:
        known = ", ".join((*SUPPORTED, *REGRESSORS))
        raise UnsupportedModelError(f"{name} is not supported (supported: {known})", where)
    if not hasattr(est, "n_features_in_"):
        raise InputError(f"the {name} is not fitted", where)
    if not 0 < int(est.n_features_in_) <= MAX_FEATURES:
        raise InputError(
            f"n_features_in_={est.n_features_in_}: treesens reads 1 to {MAX_FEATURES:,} features",
            where,
        )
    if getattr(est, "n_outputs_", 1) != 1:
        raise UnsupportedModelError(f"multi-output {name} models are not supported", where)


# ---------------------------------------------------------------------------------
# tree_-based models


def _tree_ir(tree_, outputs_of_value, n_feat: int, outputs: tuple[int, ...]) -> Tree:
    """The IR tree of a fitted ``sklearn.tree._tree.Tree``; ``outputs_of_value`` maps a
    node's value block (n_outputs=1, n_classes) to the IR value vector, whose columns are
    the ensemble's ``outputs``."""
    left = tree_.children_left.astype(np.int64)
    right = tree_.children_right.astype(np.int64)
    is_leaf = left == -1
    _check_nodes(is_leaf, left, right, tree_.feature, n_feat)
    feature = np.where(is_leaf, -1, tree_.feature.astype(np.int64))
    threshold = np.where(is_leaf, 0.0, tree_.threshold.astype(np.float64))
    mgl = getattr(tree_, "missing_go_to_left", None)
    dleft = np.zeros(len(left), dtype=bool) if mgl is None else np.asarray(mgl, dtype=bool)
    value = outputs_of_value(np.asarray(tree_.value, dtype=np.float64)[:, 0, :])
    return Tree(feature, threshold, left, right, dleft, value, outputs=outputs)


def _check_nodes(is_leaf, left, right, feature, n_feat: int) -> None:
    """scikit-learn's predict follows these without bounds checks (a bad one crashes the
    process): every split node needs children and a feature that exist."""
    n = len(is_leaf)
    inner = ~np.asarray(is_leaf, dtype=bool)
    for name, v, hi in (("child", left, n), ("child", right, n), ("feature", feature, n_feat)):
        v = np.asarray(v, dtype=np.int64)
        bad = np.flatnonzero(inner & ((v < 0) | (v >= hi)))
        if bad.size:
            raise ValueError(f"split node {int(bad[0])} has {name} {int(v[bad[0]])}, out of range")


def _forest(est, where: str) -> Ensemble:
    name = type(est).__name__
    n_feat = int(est.n_features_in_)
    C = len(est.classes_)
    if C < 2:
        raise UnsupportedModelError(f"the {name} was fitted on a single class", where)
    trees_src = (
        [est]
        if name in ("DecisionTreeClassifier", "ExtraTreeClassifier")
        else list(est.estimators_)
    )

    def probs(v: np.ndarray) -> np.ndarray:
        # scikit-learn's predict_proba returns these fractions as they are: ones that are
        # not a probability vector (a tampered or pre-1.4 model) would make the IR differ
        if not (np.isfinite(v).all() and (v >= 0).all() and np.allclose(v.sum(axis=1), 1.0)):
            raise ValueError("leaf class fractions are not probabilities summing to 1")
        s = v.sum(axis=1, keepdims=True)
        s[s == 0.0] = 1.0
        p = v / s
        return p[:, 1:2] if C == 2 else p

    outputs = (0,) if C == 2 else tuple(range(C))
    trees = [_tree_ir(t.tree_, probs, n_feat, outputs) for t in trees_src]
    features = tuple(Feature(n) for n in _names(est, n_feat))
    n = len(trees)
    if n == 0:  # its probability is the mean over no trees
        raise InputError(f"the {name} has no trees", where)

    raw = RAW_PROBA_1 if C == 2 else RAW_PROBA
    rep = SklearnReplayer(est, raw, columns=_columns(est))
    return Ensemble(
        trees=tuple(trees),
        features=features,
        n_classes=C,
        intercept=(0.0,) * len(outputs),
        link=PROBA,
        op="<=",
        cast="float32",
        scale=1.0 / n,
        origin=ModelOrigin("sklearn", where),
        replayer=rep,
    )


def _columns(est):
    names = getattr(est, "feature_names_in_", None)
    return [str(x) for x in names] if names is not None else None


def _check_constant_init(est, dummy: str, default: str, where: str) -> None:
    """Gradient boosting starts from ``init_``: the IR takes its default (a ``dummy``
    estimator, the training ``default``) or 'zero', constants; any other depends on the input."""
    init = est.init_
    if not (init == "zero" or type(init).__name__ == dummy):
        raise UnsupportedModelError(
            f"{type(est).__name__} with init={type(init).__name__}: its raw prediction depends "
            f"on the input (supported: the default {default}, or init='zero')",
            where,
        )


def _gradient_boosting(est, where: str) -> Ensemble:
    n_feat = int(est.n_features_in_)
    C = len(est.classes_)
    _check_constant_init(est, "DummyClassifier", "prior", where)
    init_raw = np.asarray(
        est._raw_predict_init(np.zeros((1, n_feat), dtype=np.float32)), dtype=np.float64
    )[0]
    loss = type(getattr(est, "_loss", None)).__name__
    factor = 2.0 if loss == "ExponentialLoss" else 1.0
    K = est.estimators_.shape[1]
    trees = []
    for i in range(est.estimators_.shape[0]):
        for k in range(K):
            tree_ = est.estimators_[i, k].tree_
            trees.append(_tree_ir(tree_, lambda v: v[:, :1], n_feat, (k if K > 1 else 0,)))
    features = tuple(Feature(n) for n in _names(est, n_feat))
    if K == 1:
        link, intercept = LOGISTIC, (float(init_raw[0]) * factor,)
    else:
        link, intercept = SOFTMAX, tuple(float(v) for v in init_raw)

    rep = SklearnReplayer(est, RAW_DECISION, raw_scale=factor, columns=_columns(est))
    return Ensemble(
        trees=tuple(trees),
        features=features,
        n_classes=max(C, 2),
        intercept=intercept,
        link=link,
        op="<=",
        cast="float32",
        scale=float(est.learning_rate) * factor,
        origin=ModelOrigin("sklearn", where),
        replayer=rep,
    )


# ---------------------------------------------------------------------------------
# HistGradientBoosting


def _hgb_column_map(est, n_feat: int) -> tuple[list[int], dict[int, np.ndarray]]:
    """(original feature of each transformed column, {original feature: raw categories by code})."""
    pre = getattr(est, "_preprocessor", None)
    if pre is None:
        return list(range(n_feat)), {}
    order: list[int] = []
    cats: dict[int, np.ndarray] = {}
    for name, trans, cols in pre.transformers_:
        if name == "remainder" and (isinstance(trans, str) and trans == "drop"):
            continue
        cols = np.asarray(cols)
        idx = np.flatnonzero(cols) if cols.dtype == bool else cols.astype(int)
        if name == "encoder":
            for j, f in enumerate(idx.tolist()):
                # NaN seen in training becomes one more (last) "category" of the encoder,
                # but predict routes NaN as missing (missing_go_to_left): it is no category
                c = np.asarray(trans.categories_[j])
                cats[f] = c[[not _is_nan(v) for v in c]]
        order.extend(int(f) for f in idx)
    if sorted(order) != list(range(n_feat)):
        raise UnsupportedModelError(
            "cannot map the HistGradientBoosting preprocessor's columns back to features"
        )
    return order, cats


def _hist_gradient_boosting(est, where: str) -> Ensemble:
    n_feat = int(est.n_features_in_)
    C = len(getattr(est, "classes_", ())) or 2  # a regressor: one output, as binary
    order, code_maps = _hgb_column_map(est, n_feat)
    preds = est._predictors
    K = len(preds[0]) if preds else (1 if C == 2 else C)
    trees = []
    for it in preds:
        for k, p in enumerate(it):
            nodes = p.nodes
            is_leaf = nodes["is_leaf"].astype(bool)
            n = len(nodes)
            _check_nodes(is_leaf, nodes["left"], nodes["right"], nodes["feature_idx"], len(order))
            feature = np.full(n, -1, dtype=np.int64)
            for i in np.flatnonzero(~is_leaf):
                feature[i] = order[int(nodes["feature_idx"][i])]
            threshold = np.where(is_leaf, 0.0, nodes["num_threshold"].astype(np.float64))
            left = np.where(is_leaf, -1, nodes["left"].astype(np.int64))
            right = np.where(is_leaf, -1, nodes["right"].astype(np.int64))
            dleft = nodes["missing_go_to_left"].astype(bool)
            value = np.where(is_leaf, nodes["value"].astype(np.float64), 0.0)
            cat_nodes = nodes["is_categorical"].astype(bool) & ~is_leaf
            categories = None
            if cat_nodes.any():
                bits = np.asarray(p.raw_left_cat_bitsets)
                cl: list = [None] * n
                for i in np.flatnonzero(cat_nodes):
                    if int(feature[i]) not in code_maps or nodes["bitset_idx"][i] >= len(bits):
                        raise ValueError(f"categorical split node {i} has no category bitset")
                    words = bits[int(nodes["bitset_idx"][i])]
                    ncat = len(code_maps.get(int(feature[i]), ()))
                    cl[i] = frozenset(c for c in range(ncat) if int(words[c // 32]) >> (c % 32) & 1)
                    threshold[i] = 0.0
                categories = tuple(cl)
            outputs = (k if K > 1 else 0,)
            tree = Tree(
                feature, threshold, left, right, dleft, value, outputs, categories=categories
            )
            trees.append(tree)
    names = _names(est, n_feat)
    features = []
    for f in range(n_feat):
        if f in code_maps:
            cats = tuple(_cat_name(c) for c in code_maps[f])
            shown = raw_category_values(code_maps[f])
            ub = float(len(cats) - 1)
            # predict routes a category not seen in fit (or negative) as a missing value:
            # NaN stands for every such input
            features.append(
                Feature(
                    names[f], "categorical", 0.0, ub, cats, may_be_missing=True,
                    category_values=shown,
                )
            )  # fmt: skip
        else:
            features.append(Feature(names[f]))
    base = np.asarray(est._baseline_prediction, dtype=np.float64).reshape(-1)
    regressor = type(est).__name__ == "HistGradientBoostingRegressor"
    if regressor:  # Poisson and gamma losses predict exp(raw)
        log_link = type(getattr(est, "_loss", None)).__name__ in (
            "HalfPoissonLoss",
            "HalfGammaLoss",
        )
        link, intercept = (EXP if log_link else IDENTITY), (float(base[0]),)
    elif K == 1:
        link, intercept = LOGISTIC, (float(base[0]),)
    else:
        link, intercept = SOFTMAX, tuple(float(v) for v in base)

    how = (RAW_LOG_PREDICT if link == EXP else RAW_PREDICT) if regressor else RAW_DECISION
    rep = SklearnReplayer(est, how, code_maps=code_maps, columns=_columns(est))
    return Ensemble(
        trees=tuple(trees),
        features=tuple(features),
        n_classes=0 if regressor else max(C, 2),
        intercept=intercept,
        link=link,
        op="<=",
        cast="float64",
        origin=ModelOrigin("sklearn", where),
        replayer=rep,
    )


def _is_nan(v) -> bool:
    return isinstance(v, (float, np.floating)) and v != v


def _cat_name(c) -> str:
    if isinstance(c, (float, np.floating)) and float(c).is_integer():
        return str(int(c))
    return str(c)


# ---------------------------------------------------------------------------------
# entry points


def from_estimator(est, where: str | None = None, others: OtherFormats = ()) -> Ensemble:
    name = type(est).__name__
    where = where or f"<{name}>"
    if name == "Pipeline":
        last = f"{where}, the Pipeline's last step"
        return fold_pipeline(est, lambda final: any_estimator(final, last, others), where)
    _check_classifier(est, where)
    warn_if_classes_are_not_positions(getattr(est, "classes_", None), where)
    if name == "GradientBoostingClassifier":
        return _gradient_boosting(est, where)
    if name in ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor"):
        return _hist_gradient_boosting(est, where)
    if name in REGRESSORS:
        return _regressor(est, where)
    return _forest(est, where)


def _regressor(est, where: str) -> Ensemble:
    """A tree, forest or gradient-boosted regressor: prediction = intercept + scale *
    sum of leaf values (a forest's scale is 1/n; boosting's intercept is its constant
    ``init_``, its scale the learning rate)."""
    name = type(est).__name__
    n_feat = int(est.n_features_in_)
    intercept, scale = 0.0, 1.0
    if name == "GradientBoostingRegressor":
        _check_constant_init(est, "DummyRegressor", "mean", where)
        zero = np.zeros((1, n_feat), dtype=np.float32)
        intercept = float(np.asarray(est._raw_predict_init(zero), dtype=np.float64).reshape(-1)[0])
        scale = float(est.learning_rate)
        srcs = [e.tree_ for e in est.estimators_[:, 0]]
    elif name in ("DecisionTreeRegressor", "ExtraTreeRegressor"):
        srcs = [est.tree_]
    else:
        srcs = [e.tree_ for e in est.estimators_]
        scale = 1.0 / max(len(srcs), 1)
    if not srcs:
        raise InputError(f"the {name} has no trees", where)
    trees = [_tree_ir(t, lambda v: v[:, :1], n_feat, (0,)) for t in srcs]
    return Ensemble(
        trees=tuple(trees),
        features=tuple(Feature(n) for n in _names(est, n_feat)),
        n_classes=0,
        intercept=(intercept,),
        link=IDENTITY,
        op="<=",
        cast="float32",
        scale=scale,
        origin=ModelOrigin("sklearn", where),
        replayer=SklearnReplayer(est, RAW_PREDICT, columns=_columns(est)),
    )


def load_path(
    path: Path, options: LoadOptions = DEFAULT_OPTIONS, others: OtherFormats = ()
) -> Ensemble:
    """A fitted estimator saved with skops, or with joblib / pickle when the caller trusts
    the file (``options.trust_pickle``): unpickling runs code the file chooses."""
    path = Path(path)
    where = str(path)
    other = _another_library(path)
    if other is not None:  # no pickle: its trust is not the question
        raise InputError(
            f"not a scikit-learn model (a pickle, joblib or .skops file): {other}; "
            "--format names its library",
            where,
        )
    if path.suffix.lower() == ".skops" and not _is_pickle(path):
        obj = _read_skops(path)
    elif not options.trust_pickle:
        raise InputError(PICKLE_REFUSED, where)
    else:
        obj = _read_pickle(path)
    return any_estimator(obj, where, others)


def _another_library(path: Path) -> str | None:
    """What the file is, where its head shows another library's model (an XGBoost or
    LightGBM one, CatBoost's JSON or .cbm: JSON or text, or CatBoost's magic), else None."""
    with path.open("rb") as fh:
        head = fh.read(4096)
    text = head_text(head)
    if sniffing.catboost(head, ""):
        return "it is a CatBoost model"
    if sniffing.lightgbm(head, ""):
        return "it is a LightGBM model"
    if text is None:
        return None
    if sniffing.looks_like_text_dump(text):
        return "it is an XGBoost text dump"
    if text.startswith(("{", "[")):
        return "it is an XGBoost model" if '"learner"' in text else "it is JSON"
    return None


def _is_pickle(path: Path) -> bool:
    with path.open("rb") as fh:
        return sniffing.looks_like_pickle(fh.read(2))


def any_estimator(obj: Any, where: str, others: OtherFormats = ()) -> Ensemble:
    """A fitted model object: one of ``others`` reads (an XGBoost or LightGBM model, as
    saved with joblib, or ending a Pipeline), or a scikit-learn one."""
    for fmt in others:
        try:
            ens = fmt.load_object(obj)
        except InputError as e:
            raise type(e)(e.message, where) from None
        if ens is not None:
            return ens
    mod = module_of(obj)
    if not mod.startswith("sklearn"):
        raise UnsupportedModelError(
            f"the file holds a {mod}.{type(obj).__name__}, not a scikit-learn model", where
        )
    try:
        ens = from_estimator(obj, where, others)
    except InputError:
        raise
    except MALFORMED as e:  # a pickled estimator whose attributes were tampered with
        raise InputError(
            f"malformed {type(obj).__name__} ({type(e).__name__}: {_first_line(e)})", where
        ) from None
    _check_loaded(ens, type(obj).__name__, where)
    return ens


def _read_skops(path: Path) -> Any:
    where = str(path)
    try:
        import skops.io as sio
    except ImportError:
        raise InputError(
            "reading .skops files needs the 'skops' package (pip install skops)", where
        ) from None
    try:
        untrusted = sio.get_untrusted_types(file=str(path))
        others = untrusted_names([t for t in untrusted if t != PARTIAL])
        trusted = [t for t in untrusted if t not in others and t != PARTIAL]
        if PARTIAL in untrusted:  # HistGradientBoosting's one partial (skops_partial.py)
            why = partial_refusal(str(path))
            if why is not None:
                raise InputError(
                    f"the skops file holds {why}, which treesens does not trust (it trusts "
                    "only HistGradientBoosting's partial of check_array)",
                    where,
                )
            trusted.append(PARTIAL)
        if others:
            raise InputError(
                "the skops file contains types treesens does not trust (only scikit-learn's, "
                f"NumPy's and Python's classes and NumPy's ufuncs): {', '.join(others[:5])}"
                + _boosting_hint(others),
                where,
            )
        return sio.load(str(path), trusted=trusted)
    except InputError:
        raise
    except Exception as e:  # noqa: BLE001 - skops raises many kinds
        raise InputError(f"skops cannot load this file: {str(e)[:200]}", where) from None


def _boosting_hint(untrusted: list[str]) -> str:
    """What to do with a skops file of another library's model (a Pipeline ending in an
    XGBoost or LightGBM model): skops cannot be told to trust it here, a pickle can."""
    if not any(t.split(".")[0] in BOOSTING_PACKAGES for t in untrusted):
        return ""
    return (
        "; save a model of another library (a Pipeline ending in XGBoost or LightGBM) with "
        "joblib.dump instead and load that file with --trust-pickle (trust_pickle=True), "
        "if your own job wrote it"
    )


def _read_pickle(path: Path) -> Any:
    try:
        import joblib

        return joblib.load(str(path))
    except Exception as e:  # noqa: BLE001 - unpickling raises anything
        raise InputError(
            f"cannot load this joblib/pickle file: {type(e).__name__}: {_first_line(e)}",
            str(path),
        ) from None


def _check_loaded(ens: Ensemble, name: str, where: str) -> None:
    """A loaded (possibly tampered) estimator's numbers are finite and its predict runs."""
    numbers = [np.asarray(ens.intercept), np.asarray(ens.scale)] + [t.value for t in ens.trees]
    # an infinite threshold is legitimate: models trained with missing values split
    # "NaN vs the rest" at +inf; a NaN threshold is not
    thresholds = [t.threshold[t.feature >= 0] for t in ens.trees]
    if not all(np.isfinite(v).all() for v in numbers) or any(np.isnan(v).any() for v in thresholds):
        raise InputError(f"the {name} holds a number that is not finite (NaN or inf)", where)
    try:  # the replay of witnesses needs the estimator's own predict
        X = np.zeros((1, ens.n_features))
        ens.replayer.predict_raw(X)
        if ens.is_regressor:
            ens.replayer.predict(X)
        else:
            ens.replayer.predict_proba(X)
    except Exception as e:  # noqa: BLE001 - whatever the tampered estimator raises
        raise InputError(
            f"scikit-learn cannot predict with this {name} ({type(e).__name__}: {_first_line(e)})",
            where,
        ) from None


def _first_line(e: Exception) -> str:
    s = str(e).strip()
    return s.splitlines()[0][:200] if s else ""


class SklearnFormat:
    """A fitted scikit-learn tree classifier: saved with skops, or with joblib / pickle
    (loaded only when trusted), or in memory."""

    name = "sklearn"
    description = "a scikit-learn model"
    suffixes = (".joblib", ".pkl", ".pickle", ".skops")
    sniff_last = False
    takes_base_score = False
    generic_names = "x{}"
    replayer = SklearnReplayer

    def sniff(self, head: bytes, suffix: str) -> bool:
        return sniffing.sklearn(head, suffix)

    def __init__(self, formats: Callable[[], OtherFormats] = tuple) -> None:
        self._formats = formats  # every registered format (this one is skipped)

    def others(self) -> tuple[ModelFormat, ...]:
        """The other formats that may read a model this one unpickles or ends a Pipeline."""
        return tuple(f for f in self._formats() if f.name != self.name)

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_path(path, options, self.others())

    def load_object(self, obj: Any) -> Ensemble | None:
        if not module_of(obj).startswith("sklearn"):
            return None
        return from_estimator(obj, others=self.others())
