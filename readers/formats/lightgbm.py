"""LightGBM -> Ensemble IR.

Reads the model text format (``Booster.save_model`` / ``model_to_string``), the
``dump_model()`` JSON, a ``lightgbm.Booster`` and a fitted ``LGBMClassifier``. Facts
this relies on (checked against lightgbm 4.7's own predict in the tests):

* a numeric split sends ``x <= threshold`` (doubles, no float32 cast) to the left child;
  the predictor reads any |x| <= 1e-35f as 0.0 (IR cast "float64z");
* ``decision_type`` bits: 1 = categorical, 2 = default left, bits 2-3 = missing type
  (0 None: NaN is read as 0.0; 1 Zero: NaN and |x| <= 1e-35f go to the default side;
  2 NaN: NaN goes to the default side);
* a categorical split (``==``) lists, as a bitset of 32-bit words
  (``cat_threshold[cat_boundaries[i]:cat_boundaries[i+1]]``), the categories that go
  LEFT; a NaN, a negative value or an unlisted category goes right (whatever the
  missing type); a value is truncated to an int;
* children < 0 are leaves (``~child`` is the leaf index); a tree may be a single leaf;
* the init score (boost_from_average) is folded into the first tree(s): intercept 0;
* multiclass: ``num_tree_per_iteration`` = C and tree i adds to class i % C;
* random-forest mode (``average_output``): the raw score is the mean over iterations;
* ``objective=binary sigmoid:s``: P = 1 / (1 + exp(-s * raw));
* ``cross_entropy`` (``xentropy``) predicts sigmoid(raw) too, trained on labels in
  [0, 1]: a probability model (compiler/readings.py), read as a binary classifier or as
  a regressor; ``cross_entropy_lambda`` predicts log(1 + exp(raw)), no probability.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.ensemble import (
    EXP,
    IDENTITY,
    LOGISTIC,
    MISSING_NAN,
    MISSING_NONE,
    MISSING_ZERO,
    SOFTMAX,
    Ensemble,
    Feature,
    ModelOrigin,
    Tree,
    raw_category_values,
)
from ...compiler.errors import InputError, UnsupportedModelError
from . import sniffing
from .base import (
    DEFAULT_OPTIONS,
    MAX_FEATURES,
    LoadOptions,
    module_of,
    parse_json,
    warn_if_classes_are_not_positions,
)
from .lightgbm_replay import LightGBMReplayer, booster_from_string

CATEGORICAL_MASK = 1
DEFAULT_LEFT_MASK = 2
_MISSING = {0: MISSING_NONE, 1: MISSING_ZERO, 2: MISSING_NAN}
_MISSING_NAMES = {"None": 0, "Zero": 1, "NaN": 2}


# ---------------------------------------------------------------------------------
# the model text format


def _split_header(text: str, where: str):
    lines = text.splitlines()
    header: dict[str, str] = {}
    flags: set[str] = set()
    trees: list[dict[str, str]] = []
    cur: dict[str, str] | None = None
    tail: list[str] = []
    closed = False  # LightGBM's reader ends a tree at its first blank line
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line == "end of trees":
            tail = lines[i:]
            break
        if not line:
            closed = cur is not None
            continue
        if line.startswith("Tree="):
            cur = {}
            trees.append(cur)
            closed = False
            continue
        key, eq, val = line.partition("=")
        if closed:
            raise InputError(
                f"line {i}: {line[:30]!r} after the end of tree {len(trees) - 1} "
                "(expected Tree= or end of trees)",
                where,
            )
        if cur is None:
            if eq:
                header[key] = val
            else:
                flags.add(key)
        elif not eq:
            # LightGBM's tree reader looks for the '=' past the end of such a line
            raise InputError(f"line {i}: expected key=value in tree {len(trees) - 1}", where)
        else:
            cur[key] = val
    if "version" not in header and not trees:
        raise InputError(
            "not a LightGBM model text file (no 'version=' line and no 'Tree=' sections)", where
        )
    _check_tree_count(
        header, len(trees), ended="end of trees" in (ln.strip() for ln in lines), where=where
    )
    pandas_cat = None
    for line in tail:
        if line.startswith("pandas_categorical:"):
            try:
                pandas_cat = json.loads(line.split(":", 1)[1])
            except json.JSONDecodeError:
                pandas_cat = None
    return header, flags, trees, pandas_cat


def _check_tree_count(header: dict[str, str], n_trees: int, ended: bool, where: str) -> None:
    """The file holds as many trees as its header's ``tree_sizes`` lists (one size a tree,
    written by LightGBM): a file cut short at a tree's end would read as a smaller model,
    and LightGBM itself crashes on it. A file without the line is read as it is."""
    listed = len(header.get("tree_sizes", "").split())
    if not listed or listed == n_trees:
        return
    if not ended:
        raise InputError(
            f"the file ends at tree {n_trees:,} of the {listed:,} its header lists "
            "(tree_sizes), with no 'end of trees' line: it is cut short (a copy or download "
            "not finished?)",
            where,
        )
    raise InputError(
        f"{n_trees:,} trees where its header lists {listed:,} (tree_sizes): trees added or "
        "removed by hand leave that line stale (delete it to read the trees there are)",
        where,
    )


def _int(s: str) -> int:
    """An integer as LightGBM reads it: Python's int() also takes '1_0' or other scripts'
    digits, which LightGBM reads as other numbers (a child index it reads as 0 loops)."""
    if not _INT.fullmatch(s):
        raise ValueError(f"{s[:20]!r} is not a whole number")
    return int(s)


def _nums(s: str | None, kind=float) -> list:
    if s is None or not s.strip():
        return []
    return [(_int if kind is int else kind)(v) for v in s.split()]


# a linear tree's leaf predicts leaf_const + coefficients x inputs, not its leaf_value
LINEAR_TREES = (
    "linear trees (linear_tree=true) are not supported: each leaf adds coefficients times "
    "the inputs to its value; train with linear_tree=false"
)


def _refuse_linear_leaves(struct: dict) -> None:
    """A dump_model() tree of linear leaves (their ``leaf_const`` and ``leaf_coeff``,
    which the text format's arrays leave out) is refused, as the text format's is."""
    stack = [struct]
    while stack:
        nd = stack.pop()
        if "leaf_coeff" in nd or "leaf_const" in nd:
            raise UnsupportedModelError(LINEAR_TREES)
        stack += [nd[k] for k in ("left_child", "right_child") if isinstance(nd.get(k), dict)]


def _text_trees(raw_trees: list[dict[str, str]]) -> list[dict]:
    out = []
    for tr in raw_trees:
        L = _int(tr.get("num_leaves", "1"))
        if L < 1:
            raise ValueError(f"num_leaves={L}")
        if _int(tr.get("is_linear", "0") or "0"):
            raise UnsupportedModelError(LINEAR_TREES)
        out.append(
            {
                "num_leaves": L,
                "split_feature": _nums(tr.get("split_feature"), int),
                "threshold": _nums(tr.get("threshold"), float),
                "decision_type": _nums(tr.get("decision_type"), int),
                "left_child": _nums(tr.get("left_child"), int),
                "right_child": _nums(tr.get("right_child"), int),
                "leaf_value": _nums(tr.get("leaf_value"), float),
                "cat_boundaries": _nums(tr.get("cat_boundaries"), int),
                "cat_threshold": _nums(tr.get("cat_threshold"), int),
                "num_cat": _int(tr.get("num_cat", "0") or "0"),
            }
        )
    return out


def _bitset_members(words: list[int]) -> frozenset[int]:
    out = set()
    for wi, w in enumerate(words):
        w = int(w) & 0xFFFFFFFF
        for b in range(32):
            if w >> b & 1:
                out.add(wi * 32 + b)
    return frozenset(out)


def _ir_tree(tr: dict, cls: int, n_feat: int) -> Tree:
    L = tr["num_leaves"]
    leaf_value = tr["leaf_value"]
    if len(leaf_value) != L:
        raise ValueError(f"{len(leaf_value)} leaf values for {L} leaves")
    n_int = L - 1
    n = n_int + L
    feature = np.full(n, -1, dtype=np.int64)
    threshold = np.zeros(n)
    left = np.full(n, -1, dtype=np.int64)
    right = np.full(n, -1, dtype=np.int64)
    dleft = np.zeros(n, dtype=bool)
    missing = np.full(n, MISSING_NAN, dtype=np.int8)
    value = np.zeros(n)
    value[n_int:] = leaf_value
    cats: list = [None] * n
    any_cat = False
    for name in ("split_feature", "threshold", "decision_type", "left_child", "right_child"):
        if len(tr[name]) != n_int:
            raise ValueError(f"{name} has {len(tr[name])} entries for {n_int} splits")

    def child(c: int) -> int:
        idx = n_int + ~c if c < 0 else c
        if not 0 <= idx < n:
            raise ValueError(f"child index {c} out of range")
        return idx

    for i in range(n_int):
        f = tr["split_feature"][i]
        if not 0 <= f < n_feat:
            raise ValueError(f"split on feature {f} but the model has {n_feat} features")
        dt = tr["decision_type"][i]
        feature[i] = f
        left[i], right[i] = child(tr["left_child"][i]), child(tr["right_child"][i])
        mtype = (dt >> 2) & 3
        if dt & CATEGORICAL_MASK:
            ci = int(tr["threshold"][i])
            bnd = tr["cat_boundaries"]
            if not 0 <= ci < len(bnd) - 1:
                raise ValueError(
                    f"categorical split {i} points to bitset {ci}, which does not exist"
                )
            if tr.get("num_cat", len(bnd) - 1) != len(bnd) - 1:
                raise ValueError(f"num_cat={tr['num_cat']} but {len(bnd) - 1} bitsets")
            if not 0 <= bnd[ci] <= bnd[ci + 1] <= len(tr["cat_threshold"]):
                raise ValueError(f"bitset {ci} lies outside cat_threshold")
            members = _bitset_members(tr["cat_threshold"][bnd[ci] : bnd[ci + 1]])
            cats[i] = members
            any_cat = True
            dleft[i] = False  # NaN always goes right (checked against lightgbm 4.7)
            missing[i] = MISSING_NAN
        else:
            threshold[i] = tr["threshold"][i]
            dleft[i] = bool(dt & DEFAULT_LEFT_MASK)
            if mtype not in _MISSING:
                raise ValueError(f"unknown missing type {mtype} in decision_type {dt}")
            missing[i] = _MISSING[mtype]
    if n_int == 0:
        feature, threshold = feature[:1], threshold[:1]
        left, right, dleft, missing, value = left[:1], right[:1], dleft[:1], missing[:1], value[:1]
        cats = [None]
    categories = tuple(cats) if any_cat else None
    arrays = (feature, threshold, left, right, dleft, value)
    return Tree(*arrays, outputs=(cls,), missing=missing, categories=categories)


# regression objectives and their link (prediction = link(raw))
REGRESSION = {
    "regression": IDENTITY,
    "regression_l1": IDENTITY,
    "huber": IDENTITY,
    "fair": IDENTITY,
    "quantile": IDENTITY,
    "mape": IDENTITY,
    "poisson": EXP,
    "gamma": EXP,
    "tweedie": EXP,
}
# their prediction is P(class 1) = sigmoid(raw), trained on labels in [0, 1]: they answer
# the binary questions as a binary classifier and the regressor questions as a regressor
PROBABILITY = ("cross_entropy", "xentropy")


def _objective(obj: str, where: str) -> tuple[str, float]:
    """(kind, sigmoid) for a supported objective string."""
    parts = obj.split()
    name = parts[0] if parts else ""
    params = dict(p.split(":", 1) for p in parts[1:] if ":" in p)
    if name == "binary":
        try:
            sigmoid = float(params.get("sigmoid", 1.0))
        except ValueError:
            sigmoid = math.nan
        if not (math.isfinite(sigmoid) and sigmoid > 0):
            raise InputError(f"objective {obj!r}: sigmoid must be a positive number", where)
        return "binary", sigmoid
    if name in PROBABILITY:
        return "binary", 1.0
    if name in ("cross_entropy_lambda", "xentlambda"):
        raise UnsupportedModelError(
            f"objective {obj!r} predicts log(1 + exp(raw score)), an intensity, not a "
            "probability or a regression treesens reads (cross_entropy predicts P(class 1))",
            where,
        )
    if name in ("multiclass", "softmax"):
        return "multiclass", 1.0
    if name in REGRESSION:
        if "sqrt" in parts[1:]:
            raise UnsupportedModelError(
                f"objective {obj!r}: a regression on the square root is not supported", where
            )
        return "regression", 1.0
    if not name:  # a callable objective is not written into the model
        raise UnsupportedModelError(
            "the model names no objective (trained with a custom one, a callable): its "
            "prediction is the raw score, which treesens cannot read as a probability or a "
            "regression; train with a built-in objective",
            where,
        )
    if name in ("multiclassova", "multiclass_ova", "ova", "ovr"):
        raise UnsupportedModelError(
            "one-vs-all multiclass (multiclassova) is not supported; use multiclass", where
        )
    raise UnsupportedModelError(
        f"objective {obj!r} is not one treesens supports (supported: binary, multiclass, "
        f"cross_entropy, {', '.join(REGRESSION)})",
        where,
    )


_INT = re.compile(r" *[+-]?[0-9]+ *")


def _header_int(header: dict, key: str, default: int, least: int, where: str) -> int:
    """A header integer, read as strictly as LightGBM reads it (ASCII digits only; an
    empty or non-numeric value is 0 to LightGBM, which divides by some of them)."""
    s = header.get(key)
    if s is None:
        return default
    if not _INT.fullmatch(s) or int(s) < least:
        raise InputError(f"header {key}={s!r}: expected a whole number >= {least}", where)
    return int(s)


def _objective_num_class(obj: str) -> int | None:
    for p in obj.split()[1:]:
        key, _, val = p.partition(":")
        if key == "num_class":
            return int(val) if _INT.fullmatch(val) else None
    return None


def _features(header: dict, names: list[str], ir_trees: list[Tree], pandas_cat) -> list[Feature]:
    """The features: categorical ones are those the header's feature_infos lists by their
    values, and those a categorical split tests (named by pandas_categorical when given)."""
    infos = header.get("feature_infos", "").split()
    cat_feats = [i for i, s in enumerate(infos) if s and not s.startswith("[") and s != "none"]
    for t in ir_trees:
        if t.categories is not None:
            for n in range(t.n_nodes):
                if t.categories[n] is not None and int(t.feature[n]) not in cat_feats:
                    cat_feats.append(int(t.feature[n]))
    cat_feats.sort()
    features = []
    pc = pandas_cat if isinstance(pandas_cat, list) and len(pandas_cat) == len(cat_feats) else None
    for i, name in enumerate(names):
        if i in cat_feats:
            cats = shown = None
            if pc is not None:
                cats = tuple(str(c) for c in pc[cat_feats.index(i)])
                shown = raw_category_values(pc[cat_feats.index(i)])
            features.append(
                Feature(name, "categorical", lb=0.0, categories=cats, category_values=shown)
            )
        else:
            features.append(Feature(name))
    return features


def _build(
    header: dict, flags: set, trees: list[dict], pandas_cat, where: str, replay=None
) -> Ensemble:
    """The ensemble; ``replay``: (the model text LightGBM loaded, its Booster)."""
    kind, sigmoid = _objective(header.get("objective", ""), where)
    objective_name = header.get("objective", "").split()[0]  # _objective read one
    n_classes_h = _header_int(header, "num_class", 1, 1, where)
    C = _header_int(header, "num_tree_per_iteration", n_classes_h, 1, where)
    if kind == "binary" and C != 1:
        raise InputError(f"binary objective with {C} trees per iteration", where)
    # LightGBM's predict writes num_tree_per_iteration (and the objective's num_class)
    # scores into a row of num_class
    if n_classes_h != C:
        raise InputError(f"num_class={n_classes_h} but num_tree_per_iteration={C}", where)
    if kind == "multiclass" and _objective_num_class(header.get("objective", "")) != C:
        raise InputError(
            f"objective {header.get('objective')!r} disagrees with num_class={C}", where
        )
    if len(trees) % C or max(len(trees), 1) < C:  # LightGBM predicts whole iterations only
        raise InputError(f"{len(trees)} trees are not whole iterations of {C} trees", where)
    n_feat = _header_int(header, "max_feature_idx", -1, -1, where) + 1
    if n_feat > MAX_FEATURES:
        raise InputError(
            f"max_feature_idx={n_feat - 1}: treesens reads at most {MAX_FEATURES:,} features", where
        )
    names = header.get("feature_names", "").split()
    if not names:
        names = [f"Column_{i}" for i in range(n_feat)]
    if n_feat <= 0:
        n_feat = len(names)
    if len(names) != n_feat:
        raise InputError(f"model lists {len(names)} feature names for {n_feat} features", where)
    ir_trees = []
    for ti, tr in enumerate(trees):
        try:
            ir_trees.append(_ir_tree(tr, ti % C if kind == "multiclass" else 0, n_feat))
        except (KeyError, ValueError, IndexError, TypeError, OverflowError) as e:
            raise InputError(f"tree {ti} is malformed: {e}", where) from None
    features = _features(header, names, ir_trees, pandas_cat)
    n_iter = max(1, len(ir_trees) // max(C, 1))
    average = "average_output" in flags or header.get("average_output") in ("1", "true")
    scale = 1.0 / n_iter if average else 1.0
    raw_scale = scale
    if kind == "multiclass":
        n_classes, link, intercept = C, SOFTMAX, (0.0,) * C
        if C < 2:
            raise InputError("multiclass model with fewer than 2 classes", where)
    elif kind == "regression":
        if C != 1:
            raise InputError(f"regression objective with {C} trees per iteration", where)
        n_classes, link, intercept = 0, REGRESSION[objective_name], (0.0,)
    else:
        n_classes, link, intercept = 2, LOGISTIC, (0.0,)
        scale *= sigmoid
        raw_scale *= sigmoid
    replayer = None
    if replay is not None:
        replayer = LightGBMReplayer(replay[0], n_classes, raw_scale, booster=replay[1])
    try:
        return Ensemble(
            trees=tuple(ir_trees),
            features=tuple(features),
            n_classes=n_classes,
            intercept=intercept,
            link=link,
            op="<=",
            cast="float64z",
            scale=scale,
            origin=ModelOrigin("lightgbm", where),
            replayer=replayer,
            probability=objective_name in PROBABILITY,
        )
    except ValueError as e:  # e.g. a feature name listed twice
        raise InputError(f"malformed model: {e}", where) from None


def from_text(text: str, where: str = "<model text>", booster: Any = None) -> Ensemble:
    if "\x00" in text:  # LightGBM would read up to it, and its tree reader past it
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise InputError(f"line {line}: NUL byte in a LightGBM model text", where)
    header, flags, raw_trees, pandas_cat = _split_header(text, where)
    try:
        trees = _text_trees(raw_trees)
    except ValueError as e:
        raise InputError(f"malformed tree: {e}", where) from None
    except UnsupportedModelError as e:
        raise UnsupportedModelError(e.message, where) from None
    if booster is not None:
        return _build(header, flags, trees, pandas_cat, where, (text, booster))
    _build(header, flags, trees, pandas_cat, where)  # our own checks first
    given = _for_lightgbm(text)
    booster = booster_from_string(given, where)
    if booster.num_trees() != len(trees):
        raise InputError(
            f"LightGBM reads {booster.num_trees()} of its {len(trees)} trees "
            "(a line between trees is out of place)",
            where,
        )
    return _build(header, flags, trees, pandas_cat, where, (given, booster))


_LINE_START = r"(?:^|(?<=[\r\n]))"


def _for_lightgbm(text: str) -> str:
    """What LightGBM is given to load: the header without its ``tree_sizes`` line, and
    the trees. LightGBM parses the trees in parallel at the offsets tree_sizes lists and
    aborts the whole process ("terminate called") when an edit has made them wrong;
    without the line it reads them one by one. What follows the trees (feature
    importances, training parameters) does not change predictions, and LightGBM's reader
    of the parameters crashes on a line that is not ``[key: value]``."""
    end = re.search(_LINE_START + r"[ \t]*(?:end of trees|parameters:)[ \t]*(?=[\r\n]|$)", text)
    text = text[: end.start()] if end else text
    m = re.search(_LINE_START + "Tree=", text)
    head, trees = (text[: m.start()], text[m.start() :]) if m else (text, "")
    return re.sub(_LINE_START + r"tree_sizes=[^\r\n]*", "", head) + trees


# ---------------------------------------------------------------------------------
# dump_model() JSON


def _json_tree(struct: dict, n_feat: int) -> dict:
    """A dump_model() tree_structure in the text format's arrays."""
    _refuse_linear_leaves(struct)
    if "leaf_value" in struct and "split_index" not in struct and "left_child" not in struct:
        return {
            "num_leaves": 1,
            "split_feature": [],
            "threshold": [],
            "decision_type": [],
            "left_child": [],
            "right_child": [],
            "leaf_value": [float(struct["leaf_value"])],
            "cat_boundaries": [],
            "cat_threshold": [],
        }
    splits: dict[int, dict] = {}
    leaves: dict[int, float] = {}
    stack = [struct]
    while stack:
        nd = stack.pop()
        if "split_index" in nd:
            splits[int(nd["split_index"])] = nd
            stack.append(nd["left_child"])
            stack.append(nd["right_child"])
        else:
            leaves[int(nd.get("leaf_index", 0))] = float(nd["leaf_value"])
    L = len(leaves)
    if sorted(splits) != list(range(L - 1)) or sorted(leaves) != list(range(L)):
        raise ValueError("node numbering is not contiguous")

    def ref(nd: dict) -> int:
        return int(nd["split_index"]) if "split_index" in nd else ~int(nd.get("leaf_index", 0))

    tr = {
        "num_leaves": L,
        "split_feature": [],
        "threshold": [],
        "decision_type": [],
        "left_child": [],
        "right_child": [],
        "leaf_value": [leaves[i] for i in range(L)],
        "cat_boundaries": [0],
        "cat_threshold": [],
    }
    for i in range(L - 1):
        nd = splits[i]
        dt = 0
        mtype = _MISSING_NAMES.get(str(nd.get("missing_type", "None")), 0)
        if nd.get("default_left"):
            dt |= DEFAULT_LEFT_MASK
        dt |= mtype << 2
        if nd.get("decision_type") == "==":
            dt |= CATEGORICAL_MASK
            cats = [int(c) for c in str(nd["threshold"]).split("||") if c != ""]
            if not all(0 <= c < 2**24 for c in cats):  # as XGBoost's; a bitset of 2^19 words
                raise ValueError(f"category code out of range 0..2^24-1 in {nd['threshold']!r}")
            words = [0] * (max(cats) // 32 + 1 if cats else 1)
            for c in cats:
                words[c // 32] |= 1 << (c % 32)
            tr["threshold"].append(float(len(tr["cat_boundaries"]) - 1))
            tr["cat_threshold"].extend(words)
            tr["cat_boundaries"].append(len(tr["cat_threshold"]))
        else:
            tr["threshold"].append(float(nd["threshold"]))
        tr["split_feature"].append(int(nd["split_feature"]))
        tr["decision_type"].append(dt)
        tr["left_child"].append(ref(nd["left_child"]))
        tr["right_child"].append(ref(nd["right_child"]))
    return tr


def _to_text(header: dict, flags: set, trees: list[dict], pandas_cat) -> str:
    """A model text LightGBM can load, from the parsed pieces (to replay JSON dumps)."""
    out = ["tree", f"version={header.get('version', 'v4')}"]
    for key in (
        "num_class",
        "num_tree_per_iteration",
        "label_index",
        "max_feature_idx",
        "objective",
    ):
        if key in header:
            out.append(f"{key}={header[key]}")
    if "average_output" in flags:
        out.append("average_output")
    out.append(f"feature_names={header['feature_names']}")
    out.append(f"feature_infos={header['feature_infos']}")
    out.append("")
    for ti, tr in enumerate(trees):
        num_cat = max(len(tr["cat_boundaries"]) - 1, 0)
        out += [f"Tree={ti}", f"num_leaves={tr['num_leaves']}", f"num_cat={num_cat}"]
        if tr["num_leaves"] > 1:
            out += [
                "split_feature=" + " ".join(str(v) for v in tr["split_feature"]),
                "split_gain=" + " ".join("0" for _ in tr["split_feature"]),
                "threshold=" + " ".join(repr(float(v)) for v in tr["threshold"]),
                "decision_type=" + " ".join(str(v) for v in tr["decision_type"]),
                "left_child=" + " ".join(str(v) for v in tr["left_child"]),
                "right_child=" + " ".join(str(v) for v in tr["right_child"]),
            ]
        out.append("leaf_value=" + " ".join(repr(float(v)) for v in tr["leaf_value"]))
        if num_cat:
            out.append("cat_boundaries=" + " ".join(str(v) for v in tr["cat_boundaries"]))
            out.append("cat_threshold=" + " ".join(str(v) for v in tr["cat_threshold"]))
        out += ["is_linear=0", "shrinkage=1", "", ""]
    out += ["end of trees", ""]
    if pandas_cat is not None:
        out.append("pandas_categorical:" + json.dumps(pandas_cat))
    return "\n".join(out) + "\n"


def from_dump(model: dict, where: str = "<dump_model>") -> Ensemble:
    try:
        names = list(model["feature_names"])
        n_feat = int(model.get("max_feature_idx", len(names) - 1)) + 1
        finfo = model.get("feature_infos", {}) or {}
        infos = []
        for nm in names:
            fi = finfo.get(nm)
            if fi and fi.get("values"):
                infos.append(":".join(str(int(v)) for v in fi["values"]))
            elif fi:
                infos.append(f"[{fi.get('min_value', 0)}:{fi.get('max_value', 0)}]")
            else:
                infos.append("none")
        header = {
            "version": str(model.get("version", "v4")),
            "num_class": str(model.get("num_class", 1)),
            "num_tree_per_iteration": str(
                model.get("num_tree_per_iteration", model.get("num_class", 1))
            ),
            "label_index": str(model.get("label_index", 0)),
            "max_feature_idx": str(n_feat - 1),
            "objective": str(model.get("objective", "")),
            "feature_names": " ".join(names),
            "feature_infos": " ".join(infos),
        }
        flags = {"average_output"} if model.get("average_output") else set()
        trees = [_json_tree(ti["tree_structure"], n_feat) for ti in model["tree_info"]]
    except UnsupportedModelError as e:
        raise UnsupportedModelError(e.message, where) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as e:
        raise InputError(f"not a LightGBM dump_model() JSON: {e}", where) from None
    pandas_cat = model.get("pandas_categorical")
    _build(header, flags, trees, pandas_cat, where)  # our own checks before LightGBM's
    given = _to_text(header, flags, trees, pandas_cat)
    booster = booster_from_string(given, where)
    return _build(header, flags, trees, pandas_cat, where, (given, booster))


# ---------------------------------------------------------------------------------
# entry points


def load_path(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Ensemble:
    path = Path(path)
    where = str(path)
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise InputError(
            "not a LightGBM model: binary content (expected the text format or dump JSON)", where
        ) from None
    if text.lstrip().startswith("{"):
        data = parse_json(text, where)
        if not isinstance(data, dict) or "tree_info" not in data:
            raise InputError("JSON is not a LightGBM dump_model() (no 'tree_info')", where)
        return from_dump(data, where)
    return from_text(text, where)


def from_object(obj: Any) -> Ensemble:
    """A ``lightgbm.Booster``, a fitted ``LGBMClassifier``, or a dump_model() dict."""
    if isinstance(obj, dict):
        return from_dump(obj)
    name = type(obj).__name__
    if name == "LGBMRanker":
        raise UnsupportedModelError(f"{name} is not a classifier or regressor")
    booster = obj
    if name != "Booster":
        try:
            booster = obj.booster_
        except Exception as e:  # noqa: BLE001 - sklearn raises NotFittedError / LGBMNotFittedError
            raise InputError(f"the LightGBM estimator is not fitted: {e}") from None
        warn_if_classes_are_not_positions(getattr(obj, "classes_", None), f"<{name}>")
    text = booster.model_to_string()
    return from_text(text, f"<{name}>", booster=booster)


class LightGBMFormat:
    """LightGBM's model text (``save_model``), its ``dump_model()`` JSON, a Booster, a
    fitted LGBMClassifier."""

    name = "lightgbm"
    description = "a LightGBM model"
    suffixes = ()
    sniff_last = False
    takes_base_score = False
    generic_names = "Column_{}"
    replayer = LightGBMReplayer

    def sniff(self, head: bytes, suffix: str) -> bool:
        return sniffing.lightgbm(head, suffix)

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_path(path, options)

    def load_object(self, obj: Any) -> Ensemble | None:
        if not module_of(obj).startswith("lightgbm"):
            return None
        return from_object(obj)
