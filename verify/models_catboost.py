"""A CatBoost model as the checker sees it, read from catboost's own JSON export of the
``.cbm`` (``save_model(format="json")``).

CatBoost reads a float feature as float32 and sets a split's bit when ``x > border``
(borders are float32); an oblivious tree of depth d tests its d splits in order, split k
giving bit k of the leaf's index (the first split is the lowest bit), and raw =
scale * (sum of the leaves) + bias (``scale_and_bias``), per output; Logloss and
CrossEntropy predict P(class 1) = sigmoid(raw); MultiClass has one raw score per class
(one bias each; a tree's ``leaf_values`` hold, leaf by leaf, one value per class) and
P = their softmax; the regression losses of IDENTITY predict raw itself, Poisson and
Tweedie (EXP) exp(raw) (``link`` "exp": its change is checked by the ``link`` step,
verify/link.py).
The checker unfolds each oblivious tree into a binary tree
whose "yes" side (the test ``float32(x) <= border`` holds) is bit 0, and folds the scale
into the leaves. A split is found by its ``split_index`` (every border of every float
feature, in feature order), as catboost reads it. Plain float features only: a model
with categorical features (one-hot or CTR), text or embedding features, or a
non-symmetric tree is refused. NaN sets a split's bit when its feature's
``nan_value_treatment`` is AsTrue (nan_mode Max), and leaves it at 0 when AsFalse
(nan_mode Min) or AsIs (catboost compares NaN > border, false): the checker's tree sends
NaN "no" and "yes" alike.
"""

from __future__ import annotations

import json
import os
import tempfile

import numpy as np

from .models import Model, ModelError, Tree

BINARY = ("Logloss", "CrossEntropy")
MULTICLASS = ("MultiClass",)
# losses whose prediction is the raw score (catboost's RawFormulaVal)
IDENTITY = ("RMSE", "MAE", "Quantile", "Expectile", "MAPE", "Huber", "Lq", "LogCosh", "RMSPE")
# losses whose prediction is exp(raw) (catboost's Exponent)
EXP = ("Poisson", "Tweedie")
MAX_DEPTH = 16  # catboost's own limit


def read_catboost(path: str, categories: dict[str, list[str]] | None = None) -> Model:
    """``categories``: per one-hot categorical feature, the category each code names (a
    certificate's domain states them); catboost maps each to the value its hash equals."""
    import catboost

    model = catboost.CatBoost()
    try:
        model.load_model(path, format="cbm")
    except catboost.CatBoostError as e:
        raise ModelError(f"catboost cannot read the model: {str(e).splitlines()[0]}") from None
    fd, js = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        model.save_model(js, format="json")
        with open(js, encoding="utf-8") as fh:
            doc = json.load(fh)
    finally:
        os.unlink(js)
    return from_json(doc, one_hot_codes(model, doc, categories or {}))


def one_hot_codes(model, doc: dict, categories: dict[str, list[str]]) -> dict[int, list[int]]:
    """Per one-hot categorical feature (by its index among the categorical features),
    per code, the index of the value its category's hash equals (the number of values:
    none), as catboost computes it for the model (``_calc_cat_feature_perfect_hash``)."""
    out: dict[int, list[int]] = {}
    for f in doc["features_info"].get("categorical_features") or []:
        name = str(f.get("feature_id") or f["flat_feature_index"])
        names = categories.get(name)
        if names is None:
            raise ModelError(
                f"CatBoost's one-hot categorical feature {name!r}: the certificate's domain "
                "names no category per code"
            )
        perfect = model._object._calc_cat_feature_perfect_hash
        index = int(f["feature_index"])
        out[index] = [int(perfect(str(n), index)) for n in names]
    return out


def from_json(doc: dict, codes: dict[int, list[int]] | None = None) -> Model:
    """``codes``: per one-hot categorical feature, per code, the index of the value its
    category hashes to (``one_hot_codes``)."""
    info = doc["features_info"]
    others = [k for k in ("text_features", "embedding_features") if info.get(k)]
    if others or info.get("ctrs") or doc.get("ctr_data"):
        kind = others[0].split("_")[0] if others else "categorical (CTR)"
        raise ModelError(
            f"CatBoost with {kind} features: the checker reads float and one-hot "
            "categorical features"
        )
    loss = doc["model_info"]["params"]["loss_function"]
    name = (loss.get("type") if isinstance(loss, dict) else str(loss)).split(":", 1)[0]
    if name not in BINARY + MULTICLASS + IDENTITY + EXP:
        raise ModelError(
            f"loss {name}: the checker reads Logloss, CrossEntropy, MultiClass and the "
            f"regression losses whose prediction is the raw score ({', '.join(IDENTITY)}) "
            f"or exp(raw) ({', '.join(EXP)})"
        )
    if "oblivious_trees" not in doc:
        raise ModelError("a non-symmetric CatBoost tree (grow_policy) is not checked")
    floats = sorted(info.get("float_features") or [], key=lambda f: int(f["flat_feature_index"]))
    cats = sorted(info.get("categorical_features") or [], key=lambda f: int(f["feature_index"]))
    flat = sorted(int(f["flat_feature_index"]) for f in floats + cats)
    if flat != list(range(len(flat))):
        raise ModelError("the features are not the model's columns 0..n-1")
    splits: list[tuple] = [
        (int(f["flat_feature_index"]), float(np.float32(b)), _nan_bit(f))
        for f in floats
        for b in f["borders"]
    ]
    # then one binary feature per one-hot value of each categorical feature, in order:
    # hash(x) == value sets the bit; the codes whose category hashes elsewhere leave it
    for f in cats:
        if codes is None or int(f["feature_index"]) not in codes:
            raise ModelError("a one-hot categorical feature without its codes' categories")
        at = codes[int(f["feature_index"])]
        for v, value in enumerate(f.get("values") or []):
            zero = frozenset(c for c, i in enumerate(at) if i != v)
            splits.append((int(f["flat_feature_index"]), None, zero, int(value)))
    scale, bias = doc.get("scale_and_bias", [1.0, [0.0]])
    bias = [float(b) for b in (bias if isinstance(bias, list) else [bias])]
    width = len(bias) if name in MULTICLASS else 1
    if len(bias) != width or (name in MULTICLASS and width < 2):
        raise ModelError(f"{len(bias)} biases for a model of loss {name}")
    trees = [_oblivious(t, splits, float(scale), width) for t in doc["oblivious_trees"]]
    names = [
        str(f.get("feature_id") or f["flat_feature_index"])
        for f in sorted(floats + cats, key=lambda f: int(f["flat_feature_index"]))
    ]
    if name in MULTICLASS:
        return Model(
            trees,
            0.0,
            "<=",
            names,
            1.0,
            float32=True,
            link="softmax",
            offsets=tuple(bias),
            reads_nan=True,
            library_columns=_trained_classes(doc, width),
        )
    if name in IDENTITY + EXP:
        link = "exp" if name in EXP else "identity"
        return Model(
            trees,
            bias[0],
            "<=",
            names,
            1.0,
            float32=True,
            link=link,
            task="regressor",
            reads_nan=True,
        )
    return Model(trees, bias[0], "<=", names, 1.0, float32=True, reads_nan=True)


def _trained_classes(doc: dict, width: int) -> tuple[int, ...] | None:
    """The columns of catboost's scores that are the model's classes when its
    ``class_names`` list classes absent from the training data (no approx dimension:
    their raw score is -inf): class k is column ``class_to_label[k]``."""
    params = doc["model_info"].get("class_params") or {}
    names = params.get("class_names") or []
    mapping = params.get("class_to_label") or []
    if len(names) <= width or len(mapping) != width:
        return None
    columns = tuple(int(v) for v in mapping)
    if len(set(columns)) != width or not all(0 <= c < len(names) for c in columns):
        raise ModelError("class_to_label does not name a class of class_names per output")
    return columns


# the bit NaN gives a split, by its feature's nan_value_treatment
NAN_BIT = {"AsIs": 0, "AsFalse": 0, "AsTrue": 1}


def _nan_bit(feature: dict) -> int:
    treatment = feature.get("nan_value_treatment", "AsIs")
    if treatment not in NAN_BIT:
        raise ModelError(f"nan_value_treatment {treatment!r} is not checked")
    return NAN_BIT[treatment]


def _oblivious(t: dict, splits: list, scale: float, width: int = 1) -> Tree:
    """The full binary tree of an oblivious tree: node j levels down tests split j; its
    "yes" child (``float32(x) <= border``) leaves bit j at 0. With ``width`` > 1 outputs
    a leaf holds one value per output (one tree: a pair's bound then takes one leaf for
    every output, as catboost does)."""
    tests = []
    for s in t["splits"]:
        kind, k = s.get("split_type"), int(s["split_index"])
        if kind not in ("FloatFeature", "OneHotFeature") or not 0 <= k < len(splits):
            raise ModelError(f"a split of type {kind!r}, index {k}, is not checked")
        if (kind == "OneHotFeature") != (splits[k][1] is None) or (
            kind == "OneHotFeature" and int(s["value"]) != splits[k][3]
        ):
            raise ModelError(f"split {k} is not the {kind} split catboost numbers so")
        tests.append(splits[k])
    depth = len(tests)
    if depth > MAX_DEPTH:
        raise ModelError(f"a tree of depth {depth}")
    if len(t["leaf_values"]) != width << depth:
        raise ModelError(f"{len(t['leaf_values'])} leaf values for a tree of depth {depth}")
    leaves = [
        [float(v) * scale for v in t["leaf_values"][i * width : (i + 1) * width]]
        for i in range(1 << depth)
    ]
    feature, threshold, left, right, value, nan_left = [], [], [], [], [], []
    cats: list[frozenset[int] | None] = []

    def add(level: int, index: int) -> int:
        i = len(feature)
        for col in (feature, threshold, left, right, value, nan_left):
            col.append(0)
        cats.append(None)
        if level == depth:
            feature[i], left[i], right[i], value[i] = -1, -1, -1, leaves[index]
            return i
        test = tests[level]
        if test[1] is None:  # one-hot: the codes that leave the bit at 0 go "yes"
            feature[i], cats[i] = test[0], test[2]
        else:
            feature[i], threshold[i], bit = test
            nan_left[i] = bit == 0  # NaN leaves the bit at 0: the "yes" side
        left[i] = add(level + 1, index)
        right[i] = add(level + 1, index | 1 << level)
        return i

    add(0, 0)
    nan = {
        "default_left": [bool(b) for b in nan_left],
        "missing": ["nan"] * len(feature),
        "cats": cats if any(c is not None for c in cats) else None,
    }
    if width == 1:
        return Tree(feature, threshold, left, right, [v[0] if v else 0.0 for v in value], **nan)
    values = [v if v else [0.0] * width for v in value]
    return Tree(feature, threshold, left, right, [0.0] * len(value), values=values, **nan)
