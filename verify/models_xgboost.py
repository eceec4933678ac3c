"""XGBoost's models as the checker reads them (verify/models.py's Model): the JSON model
through xgboost's own loader, and the text and JSON dumps, whose base score and number of
classes the certificate states (a dump records neither)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np

from .models import Model, ModelError, Tree, library_read, nested_tree

XGBOOST_REGRESSION = (
    "reg:squarederror",
    "reg:absoluteerror",
    "reg:pseudohubererror",
    "reg:quantileerror",
    "reg:squaredlogerror",
)
XGBOOST_MULTICLASS = ("multi:softprob", "multi:softmax")
# XGBoost's objectives whose prediction is exp(raw score) (log link): their base score
# is a prediction, whose log starts the raw score
XGBOOST_EXP = ("reg:gamma", "count:poisson", "reg:tweedie")


def read_xgboost(path: str) -> Model:
    import xgboost

    booster = library_read("xgboost", lambda: xgboost.Booster(model_file=path))
    doc = json.loads(booster.save_raw("json"))
    learner = doc["learner"]
    objective = learner["objective"]["name"]
    booster_name = learner["gradient_booster"].get("name")
    if booster_name != "gbtree":  # dart weighs its trees at predict time; gblinear has none
        raise ModelError(f"booster {booster_name!r}: the checker reads gbtree models")
    # reg:logistic predicts P(class 1) as binary:logistic does, its base score a probability;
    # binary:logitraw predicts the margin (P = sigmoid of it), its base score a margin
    known = (
        "binary:logistic",
        "reg:logistic",
        "binary:logitraw",
        *XGBOOST_MULTICLASS,
        *XGBOOST_REGRESSION,
        *XGBOOST_EXP,
    )
    if objective not in known:
        raise ModelError(
            f"objective {objective}: the checker reads binary:logistic / logitraw, reg:logistic, "
            "multi:softprob / multi:softmax, reg:squarederror / absoluteerror / "
            "pseudohubererror / quantileerror / squaredlogerror and reg:gamma / count:poisson / "
            "reg:tweedie models"
        )
    if int(learner["learner_model_param"].get("num_target", 1) or 1) > 1:
        raise ModelError("a model of several targets (num_target > 1): the checker reads one")
    base = [
        float(v) for v in str(learner["learner_model_param"]["base_score"]).strip("[]").split(",")
    ]
    model = learner["gradient_booster"]["model"]
    if any(_vector_leaves(t) for t in model["trees"]):
        raise ModelError(
            "trees with vector leaves (multi_strategy='multi_output_tree'): the checker reads "
            "one value per leaf"
        )
    outputs = [int(k) for k in model.get("tree_info", [])]
    trees = [
        _xgboost_tree(t, outputs[i] if i < len(outputs) else 0)
        for i, t in enumerate(model["trees"])
    ]
    names = list(booster.feature_names or [f"f{i}" for i in range(booster.num_features())])
    if objective in XGBOOST_MULTICLASS:  # the base scores are the classes' margins
        n = int(learner["learner_model_param"]["num_class"])
        offsets = tuple(_f32(b) for b in (base if len(base) == n else base * n))
        # multi:softmax predicts labels: P is the softmax treesens takes of the margins
        softprob = objective == "multi:softprob"
        return replace(_xgboost_softmax(trees, names, offsets, True), float32_link=softprob)
    if objective in XGBOOST_REGRESSION + XGBOOST_EXP:  # the base score starts the raw
        # score (a log link's: its log); the prediction is raw, or exp(raw)
        exp = objective in XGBOOST_EXP
        if exp and not base[0] > 0.0:
            raise ModelError(f"base_score {base[0]} of a log-link objective is not positive")
        return Model(
            trees,
            _f32(math.log(base[0])) if exp else _f32(base[0]),
            "<",
            names,
            1.0,
            float32=True,
            link="exp" if exp else "identity",
            float32_sums=True,
            task="regressor",
            reads_nan=True,
        )
    if objective == "binary:logitraw":  # XGBoost adds the base score to the margin as is
        # (and predicts it: P is the sigmoid treesens takes of it, in float64)
        offset, float32_link = _f32(base[0]), False
    else:
        offset, float32_link = math.log(base[0] / (1.0 - base[0])), True
    return _xgboost_binary(trees, names, offset, float32_link)


def _vector_leaves(t: dict) -> bool:
    """Whether a tree of XGBoost's JSON model holds a vector per leaf (its
    ``leaf_weights``; ``split_conditions`` then holds no leaf's value)."""
    return int(t.get("tree_param", {}).get("size_leaf_vector", "1") or 1) > 1


def _xgboost_tree(t: dict, output: int) -> Tree:
    """One tree of XGBoost's JSON model: ``float32(x) < t`` goes left, NaN to
    ``default_left``'s side; a categorical node (split type 1) sends the categories it
    lists RIGHT (every other value left), NaN to its default side."""
    left, right = list(t["left_children"]), list(t["right_children"])
    leaf = [lc == -1 for lc in left]
    default_left = [bool(d) for d in t.get("default_left", [0] * len(left))]
    kinds = [int(k) for k in t.get("split_type", [0] * len(left))]
    cats: list[frozenset[int] | None] = [None] * len(left)
    listed = t.get("categories", [])
    for node, start, size in zip(
        t.get("categories_nodes", []),
        t.get("categories_segments", []),
        t.get("categories_sizes", []),
    ):
        cats[int(node)] = frozenset(int(c) for c in listed[int(start) : int(start) + int(size)])
    for n, kind in enumerate(kinds):
        if leaf[n] or kind == 0:
            continue
        if kind != 1 or cats[n] is None:
            raise ModelError(f"split type {kind} without its categories")
        # the listed categories go right: make them the "left" (yes) side
        left[n], right[n], default_left[n] = right[n], left[n], not default_left[n]
    return Tree(
        feature=[-1 if leaf[i] else int(f) for i, f in enumerate(t["split_indices"])],
        threshold=[0.0 if leaf[i] else _f32(v) for i, v in enumerate(t["split_conditions"])],
        left=left,
        right=right,
        # a leaf's value is kept where an inner node keeps its threshold
        value=[_f32(v) if leaf[i] else 0.0 for i, v in enumerate(t["split_conditions"])],
        output=output,
        default_left=default_left,
        missing=["nan"] * len(left),
        cats=cats if any(c is not None for c in cats) else None,
    )


def read_xgboost_dump(path: str, base_score: float, num_class: int = 1) -> Model:
    """XGBoost's text dump in JSON (``Booster.get_dump(dump_format="json")``, a list of
    nested trees): features are ``f<index>`` or indices; the base score and the number of
    classes are not in the file (the certificate states those the answer assumed). A
    binary model (``num_class`` 1 or 2) starts its margin at the base score's logit; one
    of K > 2 classes (multi:softprob) adds tree i to class i mod K, every class's margin
    starting at the base score itself, and P = softmax."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        doc = _text_dump(text) if text.lstrip().startswith("booster[") else json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"an XGBoost dump is JSON or text ({type(e).__name__})") from None
    if not isinstance(doc, list):
        raise ModelError("an XGBoost dump is a JSON list of trees")
    trees = [nested_tree(t, _dump_node) for t in doc]
    n = 1 + max((f for t in trees for f in t.feature), default=-1)
    names = [f"f{i}" for i in range(n)]
    if num_class > 2:
        trees = [replace(t, output=i % num_class) for i, t in enumerate(trees)]
        return _xgboost_softmax(trees, names, (_f32(base_score),) * num_class, reads_nan=True)
    if not 0.0 < base_score < 1.0:  # NaN too
        raise ModelError(f"the dump's base score {base_score!r} is no probability in (0, 1)")
    return _xgboost_binary(trees, names, math.log(base_score / (1.0 - base_score)), True)


def _xgboost_binary(
    trees: list[Tree], names: list[str], offset: float, float32_link: bool
) -> Model:
    """An XGBoost binary model: float32 tests and sums, NaN routed, the margin from
    ``offset``; P in float32 where ``float32_link`` (logitraw's is treesens' float64)."""
    return Model(
        trees,
        offset,
        "<",
        names,
        1.0,
        float32=True,
        float32_sums=True,
        reads_nan=True,
        float32_link=float32_link,
    )


def _xgboost_softmax(
    trees: list[Tree], names: list[str], offsets: tuple, reads_nan: bool = False
) -> Model:
    """An XGBoost multiclass model: float32 tests and sums, each class's margin from its
    offset, P = softmax in float32 (multi:softprob's predict; a dump's model)."""
    return Model(
        trees,
        0.0,
        "<",
        names,
        1.0,
        float32=True,
        link="softmax",
        float32_sums=True,
        offsets=offsets,
        reads_nan=reads_nan,
        float32_link=True,
    )


_TEXT_SPLIT = re.compile(
    r"(\d+):\[f?(\d+)<([^\]]+)\] yes=(\d+),no=(\d+)(?:,missing=(\d+))?(?:,gain=.*)?"
)
_TEXT_LEAF = re.compile(r"(\d+):leaf=([^,\s]+)(?:,cover=.*)?")


def _text_dump(text: str) -> list[dict]:
    """XGBoost's text dump (``booster[i]:`` then ``id:[f<t] yes=,no=,missing=`` or
    ``id:leaf=`` per line) as the JSON dump's nested trees; a categorical split
    (``[f0:{0,1}]``) is refused."""
    flat: list[dict[int, dict]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("booster["):
            flat.append({})
            continue
        split, leaf = _TEXT_SPLIT.fullmatch(line), _TEXT_LEAF.fullmatch(line)
        if split is not None and flat:
            nid, f, t, yes, no, nan_to = split.groups()
            node = {"nodeid": int(nid), "split": int(f), "split_condition": float(t)}
            node.update(yes=int(yes), no=int(no), missing=int(nan_to or yes))
        elif leaf is not None and flat:
            node = {"nodeid": int(leaf.group(1)), "leaf": float(leaf.group(2))}
        elif not line:
            continue
        else:
            raise ModelError(f"line {lineno} of the text dump is not a numeric split or a leaf")
        if node["nodeid"] in flat[-1]:
            raise ModelError(f"line {lineno}: node {node['nodeid']} appears twice")
        flat[-1][node["nodeid"]] = node
    for nodes in flat:
        for node in nodes.values():
            if "leaf" not in node:
                kids = (node["yes"], node["no"])
                if any(k not in nodes for k in kids):
                    raise ModelError(f"node {node['nodeid']} points to a missing child")
                node["children"] = [nodes[k] for k in kids]
    if any(0 not in nodes for nodes in flat):
        raise ModelError("a tree of the text dump has no node 0")
    return [nodes[0] for nodes in flat]


def _dump_node(node: dict):
    """A node of the dump: ``float32(x) < split_condition`` goes to ``yes``, NaN to the
    child ``missing`` names (XGBoost writes it on every split; a hand-written dump
    without it sends NaN ``yes``, as treesens reads it). A categorical split (its
    condition a list of categories) is refused, as treesens refuses it."""
    if "leaf" in node:
        return _f32(node["leaf"])
    feature = int(str(node["split"]).removeprefix("f"))
    if isinstance(node["split_condition"], list):
        raise ModelError(
            "a categorical split in an XGBoost dump: the checker reads its numeric splits "
            "only (give the JSON model)"
        )
    threshold = _f32(node["split_condition"])
    kids = {int(k["nodeid"]): k for k in node["children"]}
    yes, no = int(node["yes"]), int(node["no"])
    nan_to = int(node.get("missing", yes))
    if nan_to not in (yes, no):
        raise ModelError(f"split node {node.get('nodeid')}: missing={nan_to} is not a child")
    return feature, threshold, kids[yes], kids[no], (nan_to == yes, "nan", None)


def _f32(v) -> float:
    """A number of XGBoost's JSON model: a float32, written in its shortest decimal form,
    which reads back exactly as float32 (as a double it would be off in the last bits)."""
    return float(np.float32(float(v)))
