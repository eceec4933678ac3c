"""The model as the checker sees it, read through the library's own API and nothing of
treesens: binary trees with one test per node and a value per leaf, the margin offset,
and how the library compares (XGBoost ``float32(x) < t``, LightGBM ``x <= t``). This
module holds that model and ``read_model``, which checks its trees' shape; each format's
reader has a module of its own (models_xgboost.py, models_lightgbm.py, models_sklearn.py,
models_hgb.py, models_catboost.py, models_onnx.py, models_pipeline.py)."""

from __future__ import annotations

import math
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
    # the library's predict refuses NaN (scikit-learn's GradientBoosting): a domain that
    # holds NaN claims about inputs the model cannot score, and is refused as vacuous
    refuses_nan: bool = False
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
        from .models_xgboost import read_xgboost

        return replace(read_xgboost(path), open_codes=True)
    if library == "xgboost-dump":
        from .models_xgboost import read_xgboost_dump

        return replace(read_xgboost_dump(path, base_score, num_class), open_codes=True)
    if library == "lightgbm":
        from .models_lightgbm import read_lightgbm

        return replace(read_lightgbm(path), open_codes=True)
    if library == "sklearn":
        from .models_sklearn import read_sklearn

        return read_sklearn(path)
    if library == "catboost":
        from .models_catboost import read_catboost

        return read_catboost(path, categories)
    if library == "onnx":
        from .models_onnx import read_onnx

        return read_onnx(path, test)
    raise ModelError(f"unknown library {library!r}")


# XGBoost's regression objectives whose prediction is the raw score (identity link)


def nested_tree(root: dict, read) -> Tree:
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
