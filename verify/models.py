"""The model as the checker sees it, read through the library's own API and nothing of
treesens: binary trees with one test per node and a value per leaf, the margin offset,
and how the library compares (XGBoost ``float32(x) < t``, LightGBM ``x <= t``). This
module reads XGBoost, LightGBM and scikit-learn's ``tree_`` models; the other formats have
a module each (models_hgb.py, models_catboost.py, models_onnx.py, models_pipeline.py)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np


@dataclass(frozen=True)
class Tree:
    feature: list[int]  # per node; -1 at a leaf
    threshold: list[float]
    left: list[int]  # the child where the test holds
    right: list[int]
    value: list[float]  # the leaf's raw score (0 at inner nodes)
    output: int = 0  # the output (class) the tree adds to
    # a tree with a value per output (scikit-learn's multiclass forests): per node, one
    # value per output 0, 1, ... (``value`` and ``output`` are then unused)
    values: list[list[float]] | None = None
    # missing values and categories (certificates of version 3): per node, the side NaN
    # takes (True: ``left``), how NaN is read ("nan": to the default side; "zero": NaN
    # and LightGBM's zero band to the default side; "none": NaN read as 0.0), and for a
    # categorical node the codes that go ``left`` (the others, and non-codes, go right)
    default_left: list[bool] | None = None
    missing: list[str] | None = None
    cats: list[frozenset[int] | None] | None = None


@dataclass(frozen=True)
class Model:
    trees: list[Tree]
    offset: float  # raw score before any tree
    test: str  # "<" (XGBoost) or "<=" (LightGBM, scikit-learn)
    features: list[str]
    margin_per_logit: float  # P = sigmoid(margin_per_logit * raw)
    float32: bool = False  # the library compares float32(x) (XGBoost, scikit-learn)
    # "logistic": P = sigmoid(margin); "proba": the sum is P itself (forests' averages)
    link: str = "logistic"
    # the library adds the trees' values in float32, one after the other (XGBoost)
    float32_sums: bool = False
    # the library computes P from its raw scores in float32 (XGBoost's binary:logistic,
    # reg:logistic and multi:softprob; onnxruntime's LOGISTIC and SOFTMAX): a probability
    # claim's rows allow its rounding (claims.py), and a replayed pair is judged on its P
    float32_link: bool = False
    # a multiclass model's per-class offsets (its ``offset`` unused); "softmax": P is the
    # softmax of the per-class scores, "proba": they are the probabilities (forests)
    offsets: tuple[float, ...] = ()
    # "classifier" (binary: one output; multiclass: one per class) or "regressor" (the
    # prediction is the raw score: identity link)
    task: str = "classifier"
    # |x| <= zero_band is read as 0.0 (LightGBM's predictor drops it from its rows)
    zero_band: float = 0.0
    # the reader read each node's NaN side (a domain may then hold NaN)
    reads_nan: bool = False
    # per feature whose codes the model knows (HistGradientBoosting's encoder), how many:
    # a domain's codes lie in 0..n-1 (an unknown category is read as missing)
    known_codes: dict[int, int] = field(default_factory=dict)
    # the features whose NaN the reader read, when not every one (a pipeline's imputed
    # inputs, a grouped model's ungrouped features); None: every feature, if ``reads_nan``
    nan_features: frozenset[int] | None = None
    # per feature whose codes stand for rows of the model's own columns (one-hot groups),
    # what they stand for (the verdict names it)
    meaning: dict[int, str] = field(default_factory=dict)
    # rows over ``features`` -> rows over the model file's columns (one-hot groups), for
    # the library's own scores of a replayed pair; None: the same columns
    to_model: Callable[[np.ndarray], np.ndarray] | None = None
    # the columns of the library's raw scores that are the outputs (CatBoost: class_names
    # may list classes absent from the training data, scored -inf); None: all of them
    library_columns: tuple[int, ...] | None = None
    # the library routes every whole code no categorical split lists alike, beyond its
    # bitsets and below 0 too (XGBoost, LightGBM: their predict shows it), so one such
    # code of a domain may stand for the rest (``Domain.unlisted``)
    open_codes: bool = False

    @property
    def n_outputs(self) -> int:
        return len(self.offsets) if self.offsets else 1

    def reads_nan_of(self, f: int) -> bool:
        """Whether the reader read feature f's NaN side at every node."""
        return self.reads_nan and (self.nan_features is None or f in self.nan_features)

    def offset_of(self, k: int) -> float:
        return self.offsets[k] if self.offsets else self.offset


class ModelError(Exception):
    """The model cannot be read as a binary logistic tree ensemble."""


def library_read(library: str, load: Callable):
    """``load()``, the library reading the model file; whatever it raises (a file of
    another format: a certificate naming the wrong library) is a ModelError, in one line."""
    try:
        return load()
    except ModelError:
        raise
    except Exception as e:  # noqa: BLE001 - each library raises its own errors
        first = (str(e).strip().splitlines() or [""])[0][:200]
        raise ModelError(f"{library} cannot read the model ({type(e).__name__}: {first})") from None


def read_model(
    path: str,
    library: str,
    base_score: float = 0.5,
    test: str = "<=",
    maps=None,
    num_class: int = 1,
    categories: dict[str, list[str]] | None = None,
) -> Model:
    """The model of a certificate's ``library``; ``test``: the comparison an ONNX
    certificate's splits use (the checker maps every node's mode onto it); ``maps``: a
    pipeline certificate's per-column maps (confirmed against the pipeline's transform);
    ``base_score`` and ``num_class``: an XGBoost dump's, which it does not record;
    ``categories``: per CatBoost one-hot feature, the category each code names.
    Every tree must be one (``malformed``); a model file whose reading fails on its
    own shape (a list too short, a field missing, a tree nested too deep) is a ModelError
    (a pipeline's reading also reads the certificate's maps: its errors stay its own)."""
    if library == "sklearn-pipeline":
        from .models_pipeline import read_pipeline

        model = read_pipeline(path, maps)
    else:
        try:
            model = _read(path, library, base_score, test, num_class, categories)
        except (IndexError, KeyError, TypeError, ValueError, RecursionError) as e:
            what = f"{type(e).__name__}: {str(e)[:120]}"
            raise ModelError(f"the model's file does not read as trees ({what})") from None
    for k, t in enumerate(model.trees):
        why = malformed(t, len(model.features))
        if why is None and t.values is None and not 0 <= t.output < model.n_outputs:
            why = f"it adds to output {t.output} of a model of {model.n_outputs}"
        if (
            why is None
            and t.values is not None
            and any(len(v) != model.n_outputs for v in t.values)
        ):
            why = f"its leaves do not hold one value per output ({model.n_outputs})"
        if why is not None:
            raise ModelError(f"tree {k} is malformed: {why}")
    return model


def malformed(t: Tree, n_features: int) -> str | None:
    """Why a tree is not one the checker can walk as the library does (None: it is): from
    node 0, every inner node tests a feature of the model at a threshold that is a number
    (not NaN) and has two children among the tree's nodes, no node is reached twice (no
    cycle, no node shared), and every leaf reached holds finite values."""
    n = len(t.feature)
    columns = [t.threshold, t.left, t.right, t.value]
    columns += [c for c in (t.values, t.default_left, t.missing, t.cats) if c is not None]
    if n == 0 or any(len(c) != n for c in columns):
        return "its node lists are not one entry per node"
    seen = [False] * n
    stack = [0]
    while stack:
        i = stack.pop()
        if seen[i]:
            return f"node {i} is reached twice (a cycle, or a node shared)"
        seen[i] = True
        if t.feature[i] < 0 and t.left[i] != -1:
            return f"node {i} tests feature {t.feature[i]}, which the model does not have"
        if t.feature[i] < 0:
            values = t.values[i] if t.values is not None else [t.value[i]]
            if not all(math.isfinite(v) for v in values):
                return f"leaf {i} holds {values!r}, no finite value"
            continue
        if t.feature[i] >= n_features:
            return f"node {i} tests feature {t.feature[i]}, which the model does not have"
        cats = t.cats[i] if t.cats is not None else None
        if cats is None and math.isnan(t.threshold[i]):
            return f"node {i}'s threshold is NaN"
        for child in (t.left[i], t.right[i]):
            if not (isinstance(child, int) and 0 <= child < n):
                return f"node {i}'s child {child!r} is no node of the tree"
            stack.append(child)
    return None


def _read(path, library, base_score, test, num_class, categories) -> Model:
    """``read_model``'s reading of the file, by library (a pipeline aside)."""
    if library == "xgboost":
        return replace(_xgboost(path), open_codes=True)
    if library == "xgboost-dump":
        return replace(_xgboost_dump(path, base_score, num_class), open_codes=True)
    if library == "lightgbm":
        return replace(_lightgbm(path), open_codes=True)
    if library == "sklearn":
        return _sklearn(path)
    if library == "catboost":
        from .models_catboost import read_catboost

        return read_catboost(path, categories)
    if library == "onnx":
        from .models_onnx import read_onnx

        return read_onnx(path, test)
    raise ModelError(f"unknown library {library!r}")


# XGBoost's regression objectives whose prediction is the raw score (identity link)
XGBOOST_REGRESSION = ("reg:squarederror", "reg:absoluteerror", "reg:pseudohubererror")
XGBOOST_MULTICLASS = ("multi:softprob", "multi:softmax")
# XGBoost's objectives whose prediction is exp(raw score) (log link): their base score
# is a prediction, whose log starts the raw score
XGBOOST_EXP = ("reg:gamma", "count:poisson", "reg:tweedie")


def _xgboost(path: str) -> Model:
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
            "pseudohubererror and reg:gamma / count:poisson / reg:tweedie models"
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


def _xgboost_dump(path: str, base_score: float, num_class: int = 1) -> Model:
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
    trees = [_nested_tree(t, _dump_node) for t in doc]
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


def _nested_tree(root: dict, read) -> Tree:
    """A tree of nested nodes, numbered in pre-order; ``read(node)`` is a leaf's value (a
    number) or a split's (feature, threshold, child where the test holds, other child),
    optionally with a fifth item: its NaN side, how NaN is read and its left codes
    (``Tree.default_left``, ``missing``, ``cats``)."""
    feature, threshold, left, right, value = [], [], [], [], []
    default_left: list[bool] = []
    missing: list[str] = []
    cats: list[frozenset[int] | None] = []

    def add(node: dict) -> int:
        i = len(feature)
        for col in (feature, threshold, left, right, value):
            col.append(0)
        default_left.append(False)
        missing.append("nan")
        cats.append(None)
        what = read(node)
        if not isinstance(what, tuple):
            feature[i], left[i], right[i], value[i] = -1, -1, -1, what
            return i
        feature[i], threshold[i], yes, no = what[:4]
        if len(what) > 4:
            default_left[i], missing[i], cats[i] = what[4]
        left[i] = add(yes)
        right[i] = add(no)
        return i

    add(root)
    return Tree(
        feature,
        threshold,
        left,
        right,
        value,
        default_left=default_left,
        missing=missing,
        cats=cats if any(c is not None for c in cats) else None,
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


# LightGBM's regression objectives whose prediction is the raw score (identity link)
LIGHTGBM_REGRESSION = ("regression", "regression_l1", "huber", "fair", "quantile", "mape")
# and those whose prediction is exp(raw score) (log link)
LIGHTGBM_EXP = ("poisson", "gamma", "tweedie")


def lightgbm_booster(path: str):
    """LightGBM's Booster of a model file, given its text without the header's
    ``tree_sizes`` line: LightGBM parses the trees in parallel at the offsets that line
    lists, and aborts the whole process ("terminate called") when an edit to a tree has
    made them wrong; without it, it reads the same trees one after the other."""
    import lightgbm

    def load():
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        first = re.search(r"(?m)^Tree=", text)
        head, trees = (text[: first.start()], text[first.start() :]) if first else (text, "")
        return lightgbm.Booster(model_str=re.sub(r"(?m)^tree_sizes=.*$", "", head) + trees)

    return library_read("lightgbm", load)


def _lightgbm(path: str) -> Model:
    booster = lightgbm_booster(path)
    doc = booster.dump_model()
    exact = _text_thresholds(booster.model_to_string())
    objective = str(doc.get("objective", ""))
    # cross_entropy predicts P(class 1) = sigmoid(raw), as binary does
    name = objective.split()[0] if objective.split() else ""
    if "sqrt" in objective.split():  # reg_sqrt: the prediction is sign(raw) raw^2
        raise ModelError(f"objective {objective}: a regression on the square root")
    n_class = int(doc.get("num_class", 1))
    trees = [
        _nested_tree(t["tree_structure"], lambda node, i=i: _lightgbm_node(node, exact[i]))
        for i, t in enumerate(doc["tree_info"])
    ]
    if doc.get("average_output"):  # random-forest mode: the raw score is the mean over
        # iterations, each of num_tree_per_iteration trees (raw_score divides the sum)
        per_iteration = max(1, int(doc.get("num_tree_per_iteration", n_class)))
        scale = 1.0 / max(1, len(trees) // per_iteration)
        trees = [replace(t, value=[v * scale for v in t.value]) for t in trees]
    names = list(doc["feature_names"])
    if name == "multiclass" and n_class > 1:  # softmax; tree i adds to class i mod K
        trees = [replace(t, output=i % n_class) for i, t in enumerate(trees)]
        return Model(
            trees, 0.0, "<=", names, 1.0, link="softmax", offsets=(0.0,) * n_class, **LIGHTGBM_READS
        )
    if name in LIGHTGBM_REGRESSION and n_class == 1:
        return Model(
            trees, 0.0, "<=", names, 1.0, link="identity", task="regressor", **LIGHTGBM_READS
        )
    if name in LIGHTGBM_EXP and n_class == 1:
        return Model(trees, 0.0, "<=", names, 1.0, link="exp", task="regressor", **LIGHTGBM_READS)
    if name not in ("binary", "cross_entropy", "xentropy") or n_class != 1:
        raise ModelError(
            f"objective {objective}: the checker reads binary, cross_entropy, multiclass "
            f"and regression ({', '.join(LIGHTGBM_REGRESSION + LIGHTGBM_EXP)}) models"
        )
    sigmoid = 1.0
    for part in objective.split():
        if part.startswith("sigmoid:"):
            sigmoid = float(part.split(":", 1)[1])
    return Model(trees, 0.0, "<=", names, sigmoid, **LIGHTGBM_READS)


# LightGBM's predictor reads |x| <= kZeroThreshold (1e-35f, compared as a double) as 0.0
LIGHTGBM_READS = {"zero_band": float(np.float32(1e-35)), "reads_nan": True}


# dump_model() writes a threshold beyond +-1e300 as +-1e300 (LightGBM's AvoidInf): the
# model's text holds it as it is ("inf" in a split of the numbers from NaN, which sends
# every number left)
DUMP_CLAMP = 1e300


def _text_thresholds(text: str) -> list[list[float]]:
    """Per tree of a LightGBM model's text, its nodes' thresholds by split index."""
    out = []
    for block in re.split(r"(?m)^Tree=", text)[1:]:
        line = re.search(r"(?m)^threshold=(.*)$", block)
        out.append([float(v) for v in line.group(1).split()] if line else [])
    return out


def _lightgbm_node(node: dict, exact: list[float]):
    """A node of ``dump_model()``: ``x <= threshold`` goes left; NaN by ``missing_type``
    (None: read as 0.0; Zero: NaN and the zero band to the default side; NaN: NaN to the
    default side); a categorical node (``==``) sends the codes its threshold lists
    (``a||b||c``) left, and NaN, negative and unlisted values right. ``exact``: the
    tree's thresholds in the model's text, for those the dump clamps."""
    if "leaf_value" in node:
        if "leaf_coeff" in node:  # a linear tree's leaf: leaf_const + coefficients x inputs
            raise ModelError("linear trees (linear_tree): the checker reads one value per leaf")
        return float(node["leaf_value"])
    feature = int(node["split_feature"])
    kids = node["left_child"], node["right_child"]
    if node.get("decision_type") == "==":
        codes = frozenset(int(c) for c in str(node["threshold"]).split("||"))
        return feature, 0.0, *kids, (False, "nan", codes)
    if node.get("decision_type") != "<=":
        raise ModelError(f"decision type {node.get('decision_type')!r} is not checked")
    mode = {"None": "none", "Zero": "zero", "NaN": "nan"}.get(str(node.get("missing_type")))
    if mode is None:
        raise ModelError(f"missing type {node.get('missing_type')!r} is not checked")
    side = bool(node.get("default_left", False))
    threshold = float(node["threshold"])
    if abs(threshold) >= DUMP_CLAMP:
        threshold = exact[int(node["split_index"])]
    return feature, threshold, *kids, (side, mode, None)


def _sklearn(path: str) -> Model:
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
    return replace(model, reads_nan=all(t.default_left is not None for t in model.trees))


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
