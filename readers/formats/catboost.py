"""CatBoost (``.cbm``, CatBoost JSON, a fitted CatBoostClassifier / CatBoostRegressor) -> IR.

Every model is read as catboost itself exports it: a ``.cbm`` is loaded by catboost's
C++ reader in a child process, once the header has been checked here (data, never code;
the reader does not check all it reads, so a file made to crash it crashes the child:
catboost_reader.py), which saves it again as JSON and ``.cbm``; a JSON model is checked
here first and then loaded by catboost's JSON reader. The IR is built from the JSON
catboost exports, checked before catboost predicts with the model (its readers trust
indices and counts that its predict then follows: tests/frontends/test_catboost_hostile.py).
Facts this relies on (checked against catboost 1.2's predict in
tests/frontends/test_catboost_ir.py and test_catboost_categories.py):

* a float feature is read as float32 and a split's bit is ``x > border`` (borders are
  float32); in the IR the "yes" child is bit 0 (``float32(x) <= border``);
* an oblivious tree of depth d tests its splits in order; split k gives bit k of the
  leaf index (the first split is the lowest bit); leaf values are leaf-major,
  ``leaf_values[leaf * D + dimension]``;
* NaN gives bit 1 when the feature's ``nan_value_treatment`` is AsTrue (nan_mode Max),
  else bit 0 (AsFalse: nan_mode Min; AsIs: no NaN in training, NaN > border is false);
* a non-symmetric tree (grow_policy Depthwise / Lossguide) sends bit 0 ``left``;
* raw = scale * sum of leaves + bias (``scale_and_bias``; one bias per dimension);
* MultiClass: class k is approx dimension k, label ``class_names[class_to_label[k]]``;
  a class ``class_names`` lists but no training row has gets no dimension (catboost's
  raw score -inf, probability 0): it is not one of the IR's classes, and the replayer
  drops its column;
* Logloss / CrossEntropy: P(class 1) = sigmoid(raw); MultiClass: softmax; a regressor's
  ``predict`` returns raw, exp(raw) for Poisson and Tweedie; CrossEntropy, trained on
  labels in [0, 1], predicts the probability: a probability model (compiler/readings.py),
  read as a binary classifier or as a regressor (CatBoostRegressor takes neither loss);
* a one-hot split's bit is ``hash(category) == value``; ``split_index`` numbers the
  binary features: every border of every float feature, then every one-hot value of
  every categorical feature, in feature order.

One-hot categorical features are categorical in the IR, their categories named by the
data given with the model (catboost_categories.py); the features CatBoost turns into
CTR statistics (counts of training targets) are refused, naming them.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.ensemble import (
    EXP,
    IDENTITY,
    LOGISTIC,
    SOFTMAX,
    Ensemble,
    Feature,
    ModelOrigin,
    Tree,
)
from ...compiler.errors import InputError, TreesensWarning, UnsupportedModelError, name_list
from ..libraries import import_library
from . import sniffing
from .base import (
    DEFAULT_OPTIONS,
    MALFORMED,
    MAX_FEATURES,
    LoadOptions,
    module_of,
    read_json,
    warn_if_classes_are_not_positions,
)
from .catboost_categories import (
    HashedFeature,
    check_against_catboost,
    columns_of,
    unnamed_feature,
)
from .catboost_reader import read_cbm
from .catboost_replay import CatBoostReplayer, model_from_bytes, model_from_json_file, saved

BINARY = ("Logloss", "CrossEntropy")
# their prediction is P(class 1), trained on labels in [0, 1]: they answer the binary
# questions as a binary classifier and the regressor questions as a regressor
PROBABILITY = ("CrossEntropy",)
MULTICLASS = ("MultiClass",)
# regression losses and their link: what CatBoostRegressor.predict returns by default
REGRESSION = {
    "RMSE": IDENTITY,
    "MAE": IDENTITY,
    "Quantile": IDENTITY,
    "Expectile": IDENTITY,
    "MAPE": IDENTITY,
    "Huber": IDENTITY,
    "Lq": IDENTITY,
    "LogCosh": IDENTITY,
    "RMSPE": IDENTITY,
    "Poisson": EXP,
    "Tweedie": EXP,
}
NAN_BIT = {"AsIs": 0, "AsFalse": 0, "AsTrue": 1}
MAX_DEPTH = 16  # catboost's own limit on a tree's depth


def _f32(x: Any) -> float:
    v = float(x)
    with np.errstate(over="ignore"):
        b = float(np.float32(v))
    if not math.isfinite(b):
        raise ValueError(f"border {x!r} is not a finite float32")
    return b


def _number(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{what} {x!r} is not a number")
    v = float(x)
    if not math.isfinite(v):
        raise ValueError(f"{what} {x!r} is not a finite number")
    return v


# ---------------------------------------------------------------------------------
# features


@dataclass(frozen=True)
class _Columns:
    """The model's features: ``features`` in column order; ``splits``: catboost's binary
    features, in ``split_index`` order: (column, border) for each border of each float
    feature, then (column, value index) for each one-hot value of each categorical
    feature; ``nan_bit``: the bit NaN gives, per float column; ``hashed``: the
    categorical features (catboost_categories.py)."""

    features: list[Feature]
    splits: list[tuple[int, float]]
    nan_bit: dict[int, int]
    hashed: tuple[HashedFeature, ...]
    n_float_splits: int
    float_columns: list[int]  # the column of each float feature (catboost's order)

    def hashed_at(self, column: int) -> HashedFeature:
        return next(hf for hf in self.hashed if hf.column == column)


def _features(info: dict, where: str) -> _Columns:
    if not isinstance(info, dict):
        raise ValueError("features_info is not an object")
    for key, kind in (("text_features", "text"), ("embedding_features", "embedding")):
        if info.get(key):
            names = [_name(f) for f in info[key]]
            raise UnsupportedModelError(
                f"{kind} features ({name_list(names)}) are not supported", where
            )
    if info.get("ctrs"):
        raise UnsupportedModelError(_ctr_reason(info), where)
    floats = info.get("float_features") or []
    cats = info.get("categorical_features") or []
    if not isinstance(floats, list) or not isinstance(cats, list):
        raise ValueError("float_features or categorical_features is not a list")
    n = len(floats) + len(cats)
    if n > MAX_FEATURES:
        raise InputError(f"{n} features: treesens reads at most {MAX_FEATURES:,}", where)
    # catboost's JSON reader trusts these indices and counts (and reads past its arrays
    # when they are wrong): they are checked to be what catboost itself writes
    flat = [_flat_index(f, i, n) for i, f in enumerate(floats)]
    flat_cat = [_flat_index(f, j, n) for j, f in enumerate(cats)]
    if (
        sorted(flat + flat_cat) != list(range(n))
        or flat != sorted(flat)
        or flat_cat != sorted(flat_cat)
    ):
        raise ValueError("the features' flat_feature_index are not their places in the model")
    features: list[Feature | None] = [None] * n
    splits: list[tuple[int, float]] = []
    nan_bit: dict[int, int] = {}
    for i, f in enumerate(floats):
        col = flat[i]
        treatment = f.get("nan_value_treatment", "AsIs")
        if treatment not in NAN_BIT:
            raise ValueError(f"feature {i}: unknown nan_value_treatment {treatment!r}")
        borders = [_f32(b) for b in f["borders"]]
        if any(a >= b for a, b in zip(borders, borders[1:])):
            raise ValueError(f"feature {i}: borders are not increasing")
        features[col] = Feature(_name(f) or str(col))
        splits.extend((col, b) for b in borders)
        nan_bit[col] = NAN_BIT[treatment]
    n_float_splits = len(splits)
    hashed = []
    for j, f in enumerate(cats):
        col = flat_cat[j]
        values = [_hash_value(v) for v in f.get("values") or []]
        if any(a >= b for a, b in zip(values, values[1:])):
            raise ValueError(f"categorical feature {j}: values are not increasing")
        hf = unnamed_feature(col, j, _name(f) or str(col), values)
        hashed.append(hf)
        features[col] = hf.feature()
        splits.extend((col, k) for k in range(len(values)))
    return _Columns(features, splits, nan_bit, tuple(hashed), n_float_splits, flat)


def _flat_index(f: Any, i: int, n: int) -> int:
    if not isinstance(f, dict):
        raise ValueError("a feature is not an object")
    if int(f["feature_index"]) != i:
        raise ValueError(f"feature {i} has feature_index {f['feature_index']!r}")
    k = f["flat_feature_index"]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < n:
        raise ValueError(f"flat_feature_index {k!r} is not one of 0..{n - 1}")
    return k


def _hash_value(v: Any) -> int:
    """A one-hot value: a category's hash as catboost writes it (a 32-bit integer)."""
    if isinstance(v, bool) or not isinstance(v, int) or not -(2**31) <= v < 2**32:
        raise ValueError(f"one-hot value {v!r} is not a 32-bit hash")
    return v


def _name(f: dict) -> str:
    name = f.get("feature_id", "")
    if not isinstance(name, str):
        raise ValueError(f"feature name {name!r} is not a string")
    return name or str(f.get("flat_feature_index", "?"))


def _ctr_reason(info: dict) -> str:
    """The refusal of a model with CTR features: which categorical features CatBoost
    counts (``cat_feature_value``: more categories than one_hot_max_size), which it only
    combines with them (``cat_feature_exact_value``: one-hot ones), and what to retrain."""
    kinds: dict[int, set] = {}
    for c in info.get("ctrs") or []:
        for e in c.get("elements") or [] if isinstance(c, dict) else []:
            if isinstance(e, dict) and "cat_feature_index" in e:
                kinds.setdefault(int(e["cat_feature_index"]), set()).add(
                    e.get("combination_element")
                )
    cats = [f for f in info.get("categorical_features") or [] if isinstance(f, dict)]
    counted = [
        _name(f) for f in cats if "cat_feature_value" in kinds.get(f.get("feature_index"), ())
    ]
    combined = [
        _name(f) for f in cats if f.get("feature_index") in kinds and _name(f) not in counted
    ]
    what = f"CatBoost turns {name_list(counted)} into" if counted else "the model uses"
    also = f", and combinations of them with {name_list(combined)}" if combined else ""
    return (
        f"{what} CTR statistics (counts of the training targets per category: a feature of "
        f"more categories than one_hot_max_size){also}, which treesens cannot encode exactly; "
        "treesens reads CatBoost models of numeric and one-hot categorical features: retrain "
        "with one_hot_max_size at least the most categories of any of them (CatBoost then "
        "one-hot encodes every categorical feature and makes no CTR statistics)"
    )


# ---------------------------------------------------------------------------------
# trees


class _Builder:
    """The flat node arrays of one IR tree, grown node by node."""

    def __init__(self, width: int, columns: _Columns):
        self.width = width
        self.columns = columns
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.default_left: list[bool] = []
        self.categories: list[frozenset[int] | None] = []
        self.value: list[np.ndarray] = []

    def node(self) -> int:
        self.feature.append(-1)
        self.threshold.append(0.0)
        self.left.append(-1)
        self.right.append(-1)
        self.default_left.append(False)
        self.categories.append(None)
        self.value.append(np.zeros(self.width))
        return len(self.feature) - 1

    def split(self, i: int, k: int, zero: int, one: int) -> None:
        """Node ``i`` tests catboost's binary feature ``k``; its bit 0 is ``zero``."""
        col, x = self.columns.splits[k]
        self.feature[i] = col
        if k < self.columns.n_float_splits:
            # float32(x) <= border: yes is bit 0; NaN takes the feature's bit
            self.threshold[i] = x
            self.left[i], self.right[i] = zero, one
            self.default_left[i] = self.columns.nan_bit[col] == 0
        else:
            # hash(x) == value: yes (the category's code is in the set) is bit 1
            self.categories[i] = self.columns.hashed_at(col).codes({int(x)})
            self.left[i], self.right[i] = one, zero

    def tree(self, outputs: tuple[int, ...]) -> Tree:
        cats = tuple(self.categories) if any(c is not None for c in self.categories) else None
        return Tree(
            feature=np.asarray(self.feature),
            threshold=np.asarray(self.threshold),
            left=np.asarray(self.left),
            right=np.asarray(self.right),
            default_left=np.asarray(self.default_left),
            value=np.asarray(self.value).reshape(len(self.value), self.width),
            outputs=outputs,
            categories=cats,
        )


def _split(split: Any, columns: _Columns) -> int:
    """The ``split_index`` of a split, which must be the binary feature the split names
    beside it (catboost reads the index, and the rest only for show); other kinds of
    split are refused."""
    if not isinstance(split, dict):
        raise ValueError("a split is not an object")
    kind = split.get("split_type")
    if kind not in ("FloatFeature", "OneHotFeature"):
        raise UnsupportedModelError(f"splits of type {kind!r} are not supported")
    k = split["split_index"]
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(columns.splits):
        raise ValueError(f"split_index {k!r} is not one of 0..{len(columns.splits) - 1}")
    if (kind == "FloatFeature") != (k < columns.n_float_splits):
        raise ValueError(f"split {k} is not a {kind} split")
    col, x = columns.splits[k]
    if kind == "FloatFeature":
        named = (_flat_of_float(columns, split["float_feature_index"]), _f32(split["border"]))
        if named != (col, x):
            raise ValueError(f"split {k} is not the feature and border its split_index names")
    else:
        hf = columns.hashed_at(col)
        if (split["cat_feature_index"], split["value"]) != (hf.index, hf.values[int(x)]):
            raise ValueError(f"split {k} is not the feature and value its split_index names")
    return k


def _flat_of_float(columns: _Columns, i: Any) -> int:
    """The column of float feature ``i`` (catboost's index among float features)."""
    floats = columns.float_columns
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(floats):
        raise ValueError(f"float_feature_index {i!r} is not one of 0..{len(floats) - 1}")
    return floats[i]


def _decided(columns: _Columns, k: int, known: dict) -> int | None:
    """The bit of binary feature ``k`` on a path that ``known`` describes (per column:
    the borders (lo, hi] or the one-hot values still possible), or None: either."""
    col, x = columns.splits[k]
    if k < columns.n_float_splits:
        lo, hi = known.get(col, (-math.inf, math.inf))
        return 1 if x <= lo else 0 if x >= hi else None
    left = known.get(col)
    if left is None:
        return None
    return 0 if int(x) not in left else 1 if left == {int(x)} else None


def _narrowed(columns: _Columns, k: int, known: dict, bit: int) -> dict:
    col, x = columns.splits[k]
    if k < columns.n_float_splits:
        lo, hi = known.get(col, (-math.inf, math.inf))
        return {**known, col: (x, hi) if bit else (lo, x)}
    left = known.get(col, frozenset(range(columns.hashed_at(col).other + 1)))
    return {**known, col: frozenset({int(x)}) if bit else left - {int(x)}}


def _oblivious_tree(tj: dict, columns: _Columns, width: int) -> Tree:
    """A full binary tree of the oblivious tree's splits; a path that an earlier split of
    the same feature already decides keeps only the side it takes (exactly: NaN takes
    the same bit at every split of a feature, and a category is one value)."""
    splits = [_split(s, columns) for s in tj["splits"]]
    if len(splits) > MAX_DEPTH:
        raise ValueError(f"depth {len(splits)} (catboost's trees are at most {MAX_DEPTH} deep)")
    values = [_number(v, "leaf value") for v in tj["leaf_values"]]
    if len(values) != width << len(splits):
        raise ValueError(
            f"{len(values)} leaf values for {1 << len(splits)} leaves of {width} values each"
        )
    weights = tj.get("leaf_weights")
    if weights is not None and len(weights) != 1 << len(splits):
        raise ValueError(f"{len(weights)} leaf weights for {1 << len(splits)} leaves")
    leaves = np.asarray(values).reshape(1 << len(splits), width)
    b = _Builder(width, columns)
    root = b.node()
    # (node, depth, leaf index so far, per column what the path knows of it)
    stack: list[tuple[int, int, int, dict]] = [(root, 0, 0, {})]
    while stack:
        node, depth, leaf, known = stack.pop()
        while depth < len(splits):  # skip splits the path has decided
            bit = _decided(columns, splits[depth], known)
            if bit is None:
                break
            leaf |= bit << depth
            depth += 1
        if depth == len(splits):
            b.value[node] = leaves[leaf]
            continue
        k = splits[depth]
        zero, one = b.node(), b.node()
        b.split(node, k, zero, one)
        stack.append((zero, depth + 1, leaf, _narrowed(columns, k, known, 0)))
        stack.append((one, depth + 1, leaf | 1 << depth, _narrowed(columns, k, known, 1)))
    return b.tree(tuple(range(width)))


def _leaf_value(v: Any, width: int) -> np.ndarray:
    vals = v if isinstance(v, list) else [v]
    if len(vals) != width:
        raise ValueError(f"a leaf holds {len(vals)} values, expected {width}")
    return np.asarray([_number(x, "leaf value") for x in vals])


def _nonsymmetric_tree(tj: dict, columns: _Columns, width: int) -> Tree:
    b = _Builder(width, columns)
    stack = [(tj, b.node(), 0)]
    while stack:
        nd, node, depth = stack.pop()
        if not isinstance(nd, dict):
            raise ValueError("a tree node is not an object")
        if "split" not in nd:
            b.value[node] = _leaf_value(nd["value"], width)
            if "weight" in nd:
                _number(nd["weight"], "leaf weight")
            continue
        if depth >= MAX_DEPTH:
            raise ValueError(f"deeper than {MAX_DEPTH} levels (catboost's limit)")
        k = _split(nd["split"], columns)
        zero, one = b.node(), b.node()
        b.split(node, k, zero, one)
        stack.append((nd["left"], zero, depth + 1))
        stack.append((nd["right"], one, depth + 1))
    return b.tree(tuple(range(width)))


# ---------------------------------------------------------------------------------
# the model


def _loss(model: dict, where: str) -> str:
    try:
        loss = model["model_info"]["params"]["loss_function"]
    except (KeyError, TypeError):
        raise UnsupportedModelError(
            "the model records no loss function (model_info.params.loss_function), so its "
            "predictions cannot be told apart from raw scores",
            where,
        ) from None
    name = loss.get("type") if isinstance(loss, dict) else loss
    if not isinstance(name, str):
        raise InputError(f"loss function {name!r} is not a name", where)
    name = name.split(":", 1)[0]
    if name not in (*BINARY, *MULTICLASS, *REGRESSION):
        known = ", ".join((*BINARY, *MULTICLASS, *REGRESSION))
        raise UnsupportedModelError(
            f"loss function {name!r} is not one treesens supports (supported: {known})", where
        )
    return name


def _scale_and_bias(model: dict, width: int) -> tuple[float, tuple[float, ...]]:
    sb = model.get("scale_and_bias", [1.0, [0.0] * width])
    scale, bias = sb
    bias = bias if isinstance(bias, list) else [bias]
    if len(bias) != width:
        raise ValueError(f"{len(bias)} biases for {width} outputs")
    return _number(scale, "scale"), tuple(_number(v, "bias") for v in bias)


def _width(model: dict, loss: str) -> int:
    """The number of raw outputs (catboost's approx dimension)."""
    if loss not in MULTICLASS:
        return 1
    sb = model.get("scale_and_bias")
    if isinstance(sb, list) and len(sb) == 2 and isinstance(sb[1], list):
        return len(sb[1])
    names = model["model_info"]["class_params"]["class_names"]
    return len(names)


def _check_class_params(model: dict, n_classes: int) -> None:
    """catboost indexes with ``class_to_label`` when it predicts (an index out of range
    crashes the process): it must map each class to a label it has."""
    params = model.get("model_info", {}).get("class_params")
    if params is None:
        return
    names = params.get("class_names") or []
    mapping = params.get("class_to_label") or []
    count = params.get("classes_count", 0)
    labels = max(len(names), n_classes)
    if not (
        isinstance(names, list)
        and isinstance(mapping, list)
        and len(mapping) in ((0, n_classes) if n_classes else (0,))
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in mapping)
        and all(float(v).is_integer() and 0 <= v < labels for v in mapping)
        and len(set(mapping)) == len(mapping)
        and isinstance(count, int)
        and not isinstance(count, bool)
        and count in (0, n_classes)
    ):
        raise ValueError(
            f"class_params (class_names, class_to_label, classes_count) do not describe "
            f"{n_classes} classes"
        )


def from_json(model: Any, where: str, replay: tuple[bytes, Any] | None = None) -> Ensemble:
    """The ensemble of a CatBoost JSON model; ``replay``: (its .cbm bytes, the loaded
    catboost model), for the replayer."""
    if not isinstance(model, dict):
        raise InputError("not a CatBoost JSON model (not an object)", where)
    if "learner" in model:
        raise InputError("this is an XGBoost model, not a CatBoost one", where)
    try:
        return _from_json(model, where, replay)
    except UnsupportedModelError as e:
        raise UnsupportedModelError(e.message, where) from None
    except InputError:
        raise
    except MALFORMED as e:
        raise InputError(
            f"malformed CatBoost model ({type(e).__name__}: {str(e)[:120]})", where
        ) from None


def _from_json(model: dict, where: str, replay) -> Ensemble:
    if "features_info" not in model:
        raise InputError("not a CatBoost JSON model (no 'features_info')", where)
    columns = _features(model["features_info"], where)
    if model.get("ctr_data"):
        raise UnsupportedModelError(_ctr_reason(model["features_info"]), where)
    loss = _loss(model, where)
    width = _width(model, loss)
    if width < 1 or (loss in MULTICLASS and width < 2):
        raise ValueError(f"{width} outputs for loss {loss}")
    scale, bias = _scale_and_bias(model, width)
    if "oblivious_trees" in model:
        trees = [_oblivious_tree(t, columns, width) for t in model["oblivious_trees"]]
    elif "trees" in model:
        trees = [_nonsymmetric_tree(t, columns, width) for t in model["trees"]]
    else:
        raise InputError("not a CatBoost JSON model (no 'oblivious_trees' or 'trees')", where)
    if loss in BINARY:
        n_classes, link = 2, LOGISTIC
    elif loss in MULTICLASS:
        n_classes, link = width, SOFTMAX
    else:
        n_classes, link = 0, REGRESSION[loss]
    _check_class_params(model, n_classes)
    try:
        ens = Ensemble(
            trees=tuple(trees),
            features=tuple(columns.features),
            n_classes=n_classes,
            intercept=bias,
            link=link,
            op="<=",
            cast="float32",
            scale=scale,
            origin=ModelOrigin("catboost", where),
            columns=columns_of(columns.hashed, [f.name for f in columns.features]),
            probability=loss in PROBABILITY,
        )
    except ValueError as e:  # e.g. a feature name listed twice
        raise InputError(f"malformed model: {e}", where) from None
    return ens if replay is None else _with_replayer(ens, model, replay, where)


def _with_replayer(ens: Ensemble, model: dict, replay: tuple[bytes, Any], where: str) -> Ensemble:
    """``ens``, read from the JSON ``model``, replayed by catboost's predict on ``replay``:
    (its .cbm bytes, the loaded catboost model)."""
    n_classes = ens.n_classes
    kind = "Exponent" if ens.link == EXP else "Probability" if ens.probability else "RawFormulaVal"
    replayer = CatBoostReplayer(
        replay[0],
        n_classes,
        kind,
        where,
        model=replay[1],
        hashed=() if ens.columns is None else ens.columns.hashed,
        classes=_trained_classes(model, n_classes),
    )
    return replace(ens, replayer=replayer)


def _from_catboost(model: Any, where: str) -> Ensemble:
    """The ensemble of a loaded catboost model, read from the JSON catboost exports, once
    catboost has predicted with it as the IR does (a model catboost loads but cannot
    predict with, or predicts otherwise, is refused here rather than at the first
    witness)."""
    exported, cbm = saved(model, where)
    return _checked(exported, cbm, model, where)


def _checked(
    exported: dict, cbm: bytes, model: Any, where: str, built: Ensemble | None = None
) -> Ensemble:
    """The ensemble of catboost's export of ``model`` (its JSON and ``.cbm`` bytes), once
    catboost predicts as it does; a warning when its class labels are not 0..k-1.
    ``built``: the ensemble already read from ``exported`` (from_json), not read again."""
    if built is None:
        ens = from_json(exported, where, replay=(cbm, model))
    else:
        ens = _with_replayer(built, exported, (cbm, model), where)
    check_against_catboost(ens, where)
    _warn_about_labels(exported, ens.n_classes, where)
    return ens


def _trained_classes(model: dict, n_classes: int) -> tuple[int, ...] | None:
    """The columns of catboost's probabilities that are the model's classes, when its
    ``class_names`` list more (classes absent from the training data, which have no
    approx dimension: catboost gives them probability 0, its raw score -inf): class k is
    column ``class_to_label[k]``; None when every column is a class."""
    params = model.get("model_info", {}).get("class_params") or {}
    names = params.get("class_names") or []
    mapping = [int(v) for v in params.get("class_to_label") or ()]
    if n_classes < 2 or len(names) <= n_classes or len(mapping) != n_classes:
        return None
    return tuple(mapping)


def _warn_about_labels(model: dict, n_classes: int, where: str) -> None:
    """The warning a model's class labels call for: classes listed in ``class_names``
    but absent from the training data, or labels that are not 0..k-1."""
    labels = _labels(model, n_classes)
    classes = _trained_classes(model, n_classes)
    if classes is None or labels is None:
        warn_if_classes_are_not_positions(labels, where)
        return
    names = model["model_info"]["class_params"]["class_names"]
    absent = [v for i, v in enumerate(names) if i not in classes]
    warnings.warn(
        f"{where}: class_names lists {len(names)} classes, of which the training data held "
        f"{n_classes}: catboost gives the others ({_shown(absent)[1:-1]}) probability 0 always; classes are "
        f"the {n_classes} trained, asked and shown by position 0..{n_classes - 1} "
        f"(labels {_shown(labels)})",
        TreesensWarning,
        stacklevel=3,
    )


def _shown(labels: list) -> str:
    listed = [str(v) for v in labels[:6]]
    return "[" + ", ".join(listed) + (", ...]" if len(labels) > 6 else "]")


def _labels(model: dict, n_classes: int) -> list | None:
    """The class label of each of the model's classes, in order (class k's scores are
    catboost's approx dimension k, whose label is ``class_names[class_to_label[k]]``), or
    None when the model does not name them."""
    params = model.get("model_info", {}).get("class_params") or {}
    names = params.get("class_names") or []
    mapping = [int(v) for v in params.get("class_to_label") or range(len(names))]
    if not n_classes or len(mapping) != n_classes or not all(v < len(names) for v in mapping):
        return None
    return [names[v] for v in mapping]


def _check_cbm_header(blob: bytes, where: str) -> None:
    """A .cbm is ``CBM1``, the size of its model core (uint32, little-endian), the core:
    catboost reads the core's bytes without checking that the file holds them (a cut
    file makes it read past its buffer, and crash)."""
    if len(blob) < 8 or blob[:4] != b"CBM1":
        raise InputError("not a CatBoost model: a .cbm file starts with CBM1", where)
    size = int.from_bytes(blob[4:8], "little")
    if size == 0 or 8 + size > len(blob):
        raise InputError(
            f"catboost cannot load this model: its core is {size:,} bytes, the file holds "
            f"{len(blob) - 8:,} after its header (a cut or broken .cbm)",
            where,
        )


def load_path(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Ensemble:
    where = str(path)
    blob = Path(path).read_bytes()
    if blob.lstrip()[:1] == b"{":
        data = read_json(blob, where, "not a CatBoost model: neither .cbm nor UTF-8 JSON")
        from_json(data, where)  # our checks before catboost's reader
        return _from_catboost(model_from_json_file(Path(path), where), where)
    _check_cbm_header(blob, where)
    import_library("catboost")  # says what to install, before the child needs it
    exported, cbm = read_cbm(blob, where)  # catboost's reader, in a child process
    ens = from_json(exported, where)  # our checks before catboost reads it here
    return _checked(exported, cbm, model_from_bytes(cbm, where), where, built=ens)


def from_object(obj: Any) -> Ensemble:
    """A fitted ``CatBoostClassifier``, ``CatBoostRegressor`` or ``CatBoost``."""
    name = type(obj).__name__
    if name == "CatBoostRanker":
        raise UnsupportedModelError(f"{name} is not a classifier or regressor")
    fitted = getattr(obj, "is_fitted", None)
    if not callable(fitted) or not fitted():
        raise InputError(f"the {name} is not fitted")
    return _from_catboost(obj, f"<{name}>")


class CatBoostFormat:
    """CatBoost's binary ``.cbm`` and JSON models, and fitted CatBoost estimators."""

    name = "catboost"
    description = "a CatBoost model"
    suffixes = (".cbm",)
    sniff_last = False
    takes_base_score = False
    generic_names = "{}"  # catboost calls unnamed features 0, 1, 2, ...
    replayer = CatBoostReplayer

    def sniff(self, head: bytes, suffix: str) -> bool:
        return sniffing.catboost(head, suffix)

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_path(path, options)

    def load_object(self, obj: Any) -> Ensemble | None:
        if not module_of(obj).startswith("catboost"):
            return None
        return from_object(obj)
