"""The Ensemble IR: one canonical, immutable description of any supported tree ensemble.

The readers (readers/formats/) translate library models into it; what is computed
downstream does not depend on which library made the model (its ``origin`` says, for
messages, the report and certificates). Conventions:

* every split node has a "yes" child (``left``) taken when the test holds and a "no"
  child (``right``) otherwise;
* a numeric test is ``cast(x) <op> threshold`` where ``op`` and ``cast`` (float32 or
  float64) are properties of the ensemble, because each library compares one way;
* a categorical test holds when the category code is in the node's category set;
* a missing value (NaN) follows the node's default direction, and LightGBM's
  zero-as-missing / none-missing modes are kept per node;
* a leaf holds a value vector; ``Tree.outputs`` says which output columns it adds to.

The raw score of output ``k`` is ``intercept[k] + scale * sum(tree leaf values)``.
The ``link`` turns raw scores into class probabilities.

A *regressor* is an ensemble with ``n_classes == 0`` and exactly one output; its
prediction is ``link(raw)`` with link ``identity`` (squared / absolute / Huber error,
forests: ``scale`` 1/n), ``exp`` (log-link objectives: Poisson, gamma, Tweedie) or
``sigmoid`` (a regression on [0, 1] through the logistic function). ``predict`` gives
predictions; ``proba`` is for classifiers only (and probability models, below). A
regressor's replayer has ``predict(X) -> (n,)`` in prediction space besides
``predict_raw``.

A *probability model* (``probability``: XGBoost ``reg:logistic``, LightGBM
``cross_entropy``, CatBoost ``CrossEntropy``) predicts P(class 1) = sigmoid(raw): it has
two readings, a binary classifier (two classes, link ``logistic``; as it loads) and a
regressor (link ``sigmoid``), the same trees either way (``as_classifier``,
``as_regressor``); the question asked picks one (compiler/readings.py). Its replayer has
both ``predict_proba`` and ``predict``.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

LOGISTIC = "logistic"  # binary: one output, P(class 1) = sigmoid(raw)
SOFTMAX = "softmax"  # multiclass: C outputs, P = softmax(raw)
PROBA = "proba"  # raw scores are already probabilities (random forests)
# regressors (n_classes == 0, one output): prediction = link(raw)
IDENTITY = "identity"
EXP = "exp"
SIGMOID = "sigmoid"
REGRESSION_LINKS = (IDENTITY, EXP, SIGMOID)

# missing-value modes of a node
MISSING_NAN = 0  # NaN goes to the default side; any number is compared
MISSING_ZERO = 1  # NaN and 0.0 go to the default side (LightGBM missing_type=Zero)
MISSING_NONE = 2  # NaN is replaced by 0.0 before comparing (LightGBM missing_type=None)
# LightGBM's "zero": |x| <= kZeroThreshold (1e-35f, compared in double)
ZERO_BAND = float(np.float32(1e-35))
WALK_ROWS = 8  # leaf_indices walks at most this many rows in Python (a pair, a few more)
# how a library reads inputs: "float64z" is float64 with |x| <= ZERO_BAND read as 0.0
# (LightGBM's predictor drops such values from its sparse rows)
CASTS = ("float32", "float64", "float64z")

KINDS = ("real", "integer", "binary", "categorical")
# the attribute an ensemble keeps its fingerprint in: named anew whenever what the
# fingerprint hashes changes, so that an ensemble pickled by an earlier treesens (its
# state holds the fingerprint it had) computes this one's
_FINGERPRINT = "_fingerprint_v2"


@dataclass(frozen=True)
class Feature:
    name: str
    kind: str = "real"
    lb: float = -math.inf
    ub: float = math.inf
    categories: tuple[str, ...] | None = None  # names of category codes 0..n-1
    may_be_missing: bool = False
    # the value each code stands for where the model reads numbers, not the names (a
    # pipeline encoder fitted on {1, 2}): what a witness shows, so it can be fed back
    category_values: tuple[str | int | float | bool, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"feature {self.name!r}: unknown kind {self.kind!r}")
        if self.kind == "binary":
            object.__setattr__(self, "lb", max(self.lb, 0.0))
            object.__setattr__(self, "ub", min(self.ub, 1.0))
        if self.lb > self.ub:
            raise ValueError(
                f"feature {self.name!r}: lower bound {self.lb} > upper bound {self.ub}"
            )

    @property
    def integral(self) -> bool:
        return self.kind in ("integer", "binary", "categorical")

    def admits(self, v: float) -> bool:
        """Whether ``v`` lies in the feature's domain: NaN where it may be missing, else
        within its bounds and whole where it is integral."""
        if v != v:
            return self.may_be_missing
        return self.lb <= v <= self.ub and not (self.integral and not float(v).is_integer())

    def shown_category(self, code: int) -> str | int | float | bool | None:
        """Category ``code`` as a result shows it: its raw value where the model reads
        one (None for a category learned from missing values), else its name."""
        if self.category_values is not None and 0 <= code < len(self.category_values):
            v = self.category_values[code]
            return None if isinstance(v, float) and v != v else v
        return self.categories[code] if self.categories else code


def raw_category_values(raw) -> tuple[str | int | float | bool, ...] | None:
    """Categories in code order as a witness shows them: numbers as numbers (an integral
    float as an int), strings as they are; None when every one is a string (their names
    already say them)."""
    out: list = []
    for c in raw:
        if isinstance(c, (bool, np.bool_)):
            out.append(bool(c))
        elif isinstance(c, (int, np.integer)):
            out.append(int(c))
        elif isinstance(c, (float, np.floating)):
            c = float(c)
            out.append(int(c) if c.is_integer() else c)
        else:
            out.append(str(c))
    if all(isinstance(c, str) for c in out):
        return None
    return tuple(out)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Tree:
    """One tree as flat node arrays; node 0 is the root; leaves have ``feature == -1``."""

    feature: np.ndarray  # int32[n]
    threshold: np.ndarray  # float64[n]
    left: np.ndarray  # int32[n], the "yes" child
    right: np.ndarray  # int32[n], the "no" child
    default_left: np.ndarray  # bool[n]
    value: np.ndarray  # float64[n, k]; meaningful on leaves
    outputs: tuple[int, ...]  # output column of each of the k values
    missing: np.ndarray | None = None  # int8[n] of MISSING_*; None = all MISSING_NAN
    categories: tuple[frozenset[int] | None, ...] | None = None  # per node; None = numeric

    def __post_init__(self) -> None:
        n = len(self.feature)
        object.__setattr__(self, "feature", _frozen(np.asarray(self.feature, dtype=np.int32)))
        object.__setattr__(self, "threshold", _frozen(np.asarray(self.threshold, dtype=np.float64)))
        object.__setattr__(self, "left", _frozen(np.asarray(self.left, dtype=np.int32)))
        object.__setattr__(self, "right", _frozen(np.asarray(self.right, dtype=np.int32)))
        object.__setattr__(self, "default_left", _frozen(np.asarray(self.default_left, dtype=bool)))
        value = np.asarray(self.value, dtype=np.float64)
        if value.ndim == 1:
            value = value[:, None]
        object.__setattr__(self, "value", _frozen(value))
        if self.missing is not None:
            object.__setattr__(self, "missing", _frozen(np.asarray(self.missing, dtype=np.int8)))
        for name in ("threshold", "left", "right", "default_left", "value"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"tree arrays disagree in length ({name})")
        if value.shape[1] != len(self.outputs):
            raise ValueError("tree value width differs from its outputs")
        if self.categories is not None and len(self.categories) != n:
            raise ValueError("tree categories disagree in length")
        self._check_shape()

    def _check_shape(self) -> None:
        """Every node reachable from the root once: no cycles, no shared children."""
        n = len(self.feature)
        if n == 0:
            raise ValueError("a tree has no nodes")
        inner = self.feature >= 0
        kids = np.concatenate([self.left[inner], self.right[inner]])
        if len(kids) and (kids.min() < 0 or kids.max() >= n):
            raise ValueError("a child index is out of range")
        seen = np.zeros(n, dtype=bool)
        stack = [0]
        while stack:
            node = stack.pop()
            if seen[node]:
                raise ValueError(
                    f"node {node} is reached twice (the tree has a cycle or a shared child)"
                )
            seen[node] = True
            if inner[node]:
                stack.append(int(self.left[node]))
                stack.append(int(self.right[node]))

    def __setstate__(self, state: dict) -> None:
        # unpickled arrays come back writable: freeze them again
        for name, v in state.items():
            if isinstance(v, np.ndarray):
                state[name] = _frozen(v)
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"Tree({self.n_nodes} nodes, depth {self.depth()}, outputs {list(self.outputs)})"

    @property
    def n_nodes(self) -> int:
        return len(self.feature)

    def is_leaf(self, node: int) -> bool:
        return self.feature[node] < 0

    def is_categorical(self, node: int) -> bool:
        return self.categories is not None and self.categories[node] is not None

    def leaves(self) -> list[int]:
        return [int(i) for i in np.flatnonzero(self.feature < 0)]

    def max_feature(self) -> int:
        """The largest feature index the tree splits on, -1 for none (computed once: every
        ensemble made with this tree checks it)."""
        cached = self.__dict__.get("_max_feature")
        if cached is None:
            used = self.feature[self.feature >= 0]
            cached = int(used.max()) if len(used) else -1
            object.__setattr__(self, "_max_feature", cached)
        return cached

    def depth(self) -> int:
        best, stack = 0, [(0, 0)]
        while stack:
            node, d = stack.pop()
            if self.feature[node] < 0:
                best = max(best, d)
            else:
                stack.append((int(self.left[node]), d + 1))
                stack.append((int(self.right[node]), d + 1))
        return best


class Replayer(Protocol):
    """The original library's own predict, used to check every witness."""

    library: str

    def predict_proba(self, X: np.ndarray) -> np.ndarray: ...  # (n, n_classes)

    def predict_raw(self, X: np.ndarray) -> np.ndarray: ...  # (n, n_outputs)


@dataclass(frozen=True)
class ModelOrigin:
    """What a model was read from: its ``format`` (the format registry's name, as
    ``--format`` says it: ``xgboost``, ``lightgbm``, ...; ``pipeline`` for a scikit-learn
    Pipeline folded around its model) and its ``file`` (or how an in-memory model was
    given)."""

    format: str
    file: str = ""

    def words(self) -> str:
        """``format:file``, the start of a model's ``source``."""
        return f"{self.format}:{self.file}"


@dataclass(frozen=True, eq=False)
class Ensemble:
    trees: tuple[Tree, ...]
    features: tuple[Feature, ...]
    n_classes: int
    intercept: tuple[float, ...]  # one per output
    link: str
    op: str = "<"  # numeric test: cast(x) < t, or cast(x) <= t
    cast: str = (
        "float32"  # "float32", "float64" or "float64z" (see CASTS): how the library reads inputs
    )
    scale: float = 1.0  # raw = intercept + scale * sum of leaves (1/n for forests)
    # how the library adds the trees' values: "float64", or "float32" one tree after the
    # other (XGBoost; onnxruntime on float inputs), whose rounding grows with the tree
    # count (rounding.gap_relaxation)
    sums: str = "float64"
    # human-readable origin, e.g. "xgboost:adult.json (bounds from adult_details.csv)":
    # ``origin.words()`` (when not given) and what was done to the model since
    source: str = ""
    replayer: Any = field(default=None, repr=False, compare=False)
    # the files it was read from, (role, path) in order: ("model", ...), ("details", ...)
    inputs: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)
    # how the user's data columns become the model's columns (a reader's object with
    # ``user_frame(df, rows: TableRows) -> df`` and ``feature_of(column) -> feature name or None``,
    # e.g. one-hot groups collapsed to one column), or None: the user's columns are the
    # model's
    columns: Any = field(default=None, repr=False, compare=False)
    # its prediction is P(class 1) = sigmoid(raw): read as a binary classifier or as a
    # regressor (see the module's docstring)
    probability: bool = False
    origin: ModelOrigin | None = None  # its format and file (None: built by hand)

    def __post_init__(self) -> None:
        if not self.source and self.origin is not None:
            object.__setattr__(self, "source", self.origin.words())
        if self.link not in (LOGISTIC, SOFTMAX, PROBA, *REGRESSION_LINKS):
            raise ValueError(f"unknown link {self.link!r}")
        if (self.link in REGRESSION_LINKS) != (self.n_classes == 0):
            raise ValueError("a regressor has n_classes 0 and a regression link, and only it")
        if self.n_classes == 0 and self.n_outputs != 1:
            raise ValueError("a regressor has exactly one output")
        if self.op not in ("<", "<="):
            raise ValueError(f"unknown comparison {self.op!r}")
        if self.sums not in ("float32", "float64"):
            raise ValueError(f"unknown summation {self.sums!r} (float32 or float64)")
        if self.cast not in CASTS:
            raise ValueError(f"unknown input cast {self.cast!r}")
        if self.link == LOGISTIC and self.n_outputs != 1:
            raise ValueError("a logistic ensemble has exactly one output")
        if self.probability and self.link not in (LOGISTIC, SIGMOID):
            raise ValueError("a probability model's link is logistic or sigmoid")
        names = [f.name for f in self.features]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"duplicate feature names: {', '.join(dup)}")
        n_outputs, n_features = self.n_outputs, len(self.features)
        for t in self.trees:
            if any(o >= n_outputs for o in t.outputs):
                raise ValueError("a tree adds to an output the ensemble does not have")
            if t.max_feature() >= n_features:
                raise ValueError(
                    f"a tree splits on feature index {t.max_feature()}, "
                    f"but the model has {n_features} features"
                )

    def __repr__(self) -> str:
        """One line: library, trees, depth, classes, features (the first names)."""
        library = self.origin.format if self.origin is not None else "?"
        names, shown = self.feature_names, []
        for name in names:
            if sum(len(n) + 2 for n in shown) + len(name) > 60:
                break
            shown.append(name)
        more = ", ..." if len(shown) < len(names) else ""
        return (
            f"Ensemble({library}, {len(self.trees)} trees, depth {self.max_depth()}, "
            f"{self.what_it_predicts}, {self.n_features} features: {', '.join(shown)}{more})"
        )

    # ---- facts -------------------------------------------------------------------
    @property
    def is_regressor(self) -> bool:
        return self.n_classes == 0

    @property
    def what_it_predicts(self) -> str:
        """For messages: "2 classes", or "a regressor (link identity)"; a probability
        model's says which reading this is."""
        if self.probability:
            reading = "a regressor (link sigmoid)" if self.is_regressor else "a binary classifier"
            return f"P(class 1) read as {reading}"
        return (
            f"a regressor (link {self.link})" if self.is_regressor else f"{self.n_classes} classes"
        )

    def as_regressor(self) -> Ensemble:
        """A probability model read as a regressor (its prediction P(class 1) through the
        link sigmoid); itself when it is read so already."""
        return self._reading(regressor=True)

    def as_classifier(self) -> Ensemble:
        """A probability model read as a binary classifier (P(class 1) its prediction);
        itself when it is read so already."""
        return self._reading(regressor=False)

    def _reading(self, regressor: bool) -> Ensemble:
        if not self.probability:
            raise ValueError("only a probability model (it predicts P(class 1)) reads as both")
        if self.is_regressor == regressor:
            return self
        # made once: the caches keyed by an ensemble (its structure, its fingerprint)
        # then serve every question asked of this reading
        if regressor:
            mine, its, n_classes, link = "_regressor_reading", "_classifier_reading", 0, SIGMOID
        else:
            mine, its, n_classes, link = "_classifier_reading", "_regressor_reading", 2, LOGISTIC
        other = self.__dict__.get(mine)
        if other is None:
            other = replace(self, n_classes=n_classes, link=link)
            object.__setattr__(other, its, self)
            object.__setattr__(self, mine, other)
        return other

    @property
    def n_outputs(self) -> int:
        return len(self.intercept)

    @property
    def n_features(self) -> int:
        return len(self.features)

    @property
    def feature_names(self) -> list[str]:
        return [f.name for f in self.features]

    @property
    def domain(self) -> str:
        """Over which inputs an answer about this model holds, for messages."""
        bounded = any(math.isfinite(f.lb) or math.isfinite(f.ub) for f in self.features)
        missing = any(f.may_be_missing for f in self.features)
        return proof_domain(self.source, bounded, missing)

    def feature_index(self, name: str) -> int:
        for i, f in enumerate(self.features):
            if f.name == name:
                return i
        raise KeyError(name)

    def with_features(self, features: tuple[Feature, ...]) -> Ensemble:
        return replace(self, features=tuple(features))

    def with_input(self, role: str, path: str) -> Ensemble:
        """This ensemble, recording one more file it was read from (``role``: model, details,
        sens, ...): results list them as ``inputs``."""
        return replace(self, inputs=(*self.inputs, (role, str(path))))

    def max_depth(self) -> int:
        return max((t.depth() for t in self.trees), default=0)

    def n_leaves(self) -> int:
        return sum(int((t.feature < 0).sum()) for t in self.trees)

    def fingerprint(self) -> str:
        """A sha256 of everything that decides the model's answers (trees, features and
        their bounds, link, comparison, input cast, how the library adds the trees'
        values), not of where it came from: the same model loaded from another path, or a
        copy of its file, or unpickled in another process, has the same fingerprint. A
        probability model has one fingerprint for both its readings (the question asked
        picks the reading). Computed once per ensemble (it is immutable)."""
        cached = self.__dict__.get(_FINGERPRINT)
        if cached is None:
            cached = self._digest()
            object.__setattr__(self, _FINGERPRINT, cached)
        return cached

    def _digest(self) -> str:
        h = hashlib.sha256()
        head: tuple = (
            self.n_classes,
            self.intercept,
            self.link,
            self.op,
            self.cast,
            self.scale,
            self.sums,
        )
        if self.probability:  # its classifier reading's, marked
            head = ("probability", 2, self.intercept, LOGISTIC, *head[3:])
        h.update(repr((head, self.features)).encode())
        for t in self.trees:
            h.update(struct.pack("<qq", t.n_nodes, t.value.shape[1]))
            for a in (t.feature, t.threshold, t.left, t.right, t.default_left, t.value):
                h.update(a.tobytes())
            h.update(b"-" if t.missing is None else t.missing.tobytes())
            cats = None if t.categories is None else [c and sorted(c) for c in t.categories]
            h.update(repr((t.outputs, cats)).encode())
        return h.hexdigest()

    # ---- the library's comparison, in one place ------------------------------------
    def cast_value(self, x: float) -> np.floating:
        if self.cast == "float64z":
            v = np.float64(x)
            return np.float64(0.0) if abs(v) <= ZERO_BAND else v
        if self.cast == "float32":
            with np.errstate(over="ignore"):  # beyond float32's range: inf, as the library
                return np.float32(x)
        return np.float64(x)

    def test_holds(self, x: float, threshold: float) -> bool:
        """Does the numeric test of a split with this threshold send ``x`` to "yes"?"""
        # compare as Python floats (exact doubles): a NumPy float32 scalar would round a
        # double threshold to float32 first (NEP 50), unlike the libraries and leaf_indices
        v = _as_float32(x) if self.cast == "float32" else float(self.cast_value(x))
        t = float(threshold)
        return v < t if self.op == "<" else v <= t

    # ---- evaluation ----------------------------------------------------------------
    def leaf_indices(self, X: np.ndarray) -> np.ndarray:
        """(n_rows, n_trees) index of the leaf each row reaches in each tree."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.shape[1] != self.n_features:
            raise ValueError(f"expected {self.n_features} columns, got {X.shape[1]}")
        with np.errstate(over="ignore"):  # beyond float32's range: inf, as the library
            Xc = X.astype(np.float32).astype(np.float64) if self.cast == "float32" else X
        if self.cast == "float64z":
            Xc = np.where(np.abs(X) <= ZERO_BAND, 0.0, X)
        if X.shape[0] <= WALK_ROWS:
            return self._walked_leaves(Xc)
        return self._vectorised_leaves(Xc)

    def _vectorised_leaves(self, Xc: np.ndarray) -> np.ndarray:
        """``leaf_indices`` of cast rows, each tree's level at a time over all rows."""
        n = Xc.shape[0]
        rows = np.arange(n)
        out = np.empty((n, len(self.trees)), dtype=np.int32)
        for ti, t in enumerate(self.trees):
            node = np.zeros(n, dtype=np.int32)
            active = t.feature[node] >= 0
            while active.any():
                nd = node[active]
                f = t.feature[nd]
                v = Xc[rows[active], f]
                if self.op == "<":
                    yes = v < t.threshold[nd]
                else:
                    yes = v <= t.threshold[nd]
                if t.categories is not None:
                    cat_nodes = np.array([t.categories[k] is not None for k in nd], dtype=bool)
                    if cat_nodes.any():
                        for j in np.flatnonzero(cat_nodes):
                            val = v[j]
                            cats = t.categories[nd[j]]
                            yes[j] = (not math.isnan(val)) and int(val) == val and int(val) in cats
                isnan = np.isnan(v)
                if t.missing is not None:
                    mode = t.missing[nd]
                    zero_missing = (mode == MISSING_ZERO) & (np.abs(v) <= ZERO_BAND)
                    none_mode = (mode == MISSING_NONE) & isnan
                    if none_mode.any():
                        zero = np.zeros(int(none_mode.sum()))
                        th = t.threshold[nd][none_mode]
                        yes[none_mode] = zero < th if self.op == "<" else zero <= th
                    take_default = (isnan & ~(mode == MISSING_NONE)) | zero_missing
                else:
                    take_default = isnan
                go_left = np.where(take_default, t.default_left[nd], yes)
                node[active] = np.where(go_left, t.left[nd], t.right[nd])
                active = t.feature[node] >= 0
            out[:, ti] = node
        return out

    def _walked_leaves(self, Xc: np.ndarray) -> np.ndarray:
        """``leaf_indices`` of a few cast rows, each walked down each tree in Python: the
        same tests as ``_vectorised_leaves`` (in the same order), on exact doubles, without
        its dozen NumPy calls per level (~60 ms on 300 trees for a replayed pair)."""
        below = self.op == "<"
        rows = Xc.tolist()
        out = np.empty((len(rows), len(self.trees)), dtype=np.int32)
        for ti, t in enumerate(self.trees):
            feature, threshold = t.feature.tolist(), t.threshold.tolist()
            left, right, dleft = t.left.tolist(), t.right.tolist(), t.default_left.tolist()
            missing = None if t.missing is None else t.missing.tolist()
            cats = t.categories
            for r, x in enumerate(rows):
                node = 0
                while (f := feature[node]) >= 0:
                    v, th = x[f], threshold[node]
                    yes = v < th if below else v <= th
                    if cats is not None and (c := cats[node]) is not None:
                        yes = (not math.isnan(v)) and int(v) == v and int(v) in c
                    isnan = math.isnan(v)
                    if missing is not None:
                        mode = missing[node]
                        if mode == MISSING_NONE and isnan:
                            yes = th > 0.0 if below else th >= 0.0
                        zero_missing = mode == MISSING_ZERO and abs(v) <= ZERO_BAND
                        take_default = (isnan and mode != MISSING_NONE) or zero_missing
                    else:
                        take_default = isnan
                    go_left = dleft[node] if take_default else yes
                    node = left[node] if go_left else right[node]
                out[r, ti] = node
        return out

    def raw(self, X: np.ndarray) -> np.ndarray:
        """(n_rows, n_outputs) raw scores, summed in float64."""
        leaves = self.leaf_indices(X)
        acc = np.zeros((leaves.shape[0], self.n_outputs))
        for ti, t in enumerate(self.trees):
            vals = t.value[leaves[:, ti]]
            for j, o in enumerate(t.outputs):
                acc[:, o] += vals[:, j]
        return np.asarray(self.intercept)[None, :] + self.scale * acc

    def proba(self, X: np.ndarray) -> np.ndarray:
        """(n_rows, n_classes) class probabilities (a probability model's in either
        reading)."""
        if self.probability:
            return raw_to_proba(self.raw(X), LOGISTIC, 2)
        if self.is_regressor:
            raise ValueError("a regressor has predictions, not class probabilities")
        return raw_to_proba(self.raw(X), self.link, self.n_classes)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n_rows,) a regressor's predictions: link(raw) (a probability model's, P(class
        1), in either reading)."""
        if self.probability:
            return raw_to_prediction(self.raw(X)[:, 0], SIGMOID)
        if not self.is_regressor:
            raise ValueError("predict is for regressors; a classifier has proba")
        return raw_to_prediction(self.raw(X)[:, 0], self.link)


def bounds_from_data(source: str) -> bool:
    """Whether a model's ``source`` records that its bounds were narrowed to the data's
    range (load_model's ``bounds="data"``)."""
    return "bounds from data" in source or "bounds and kinds from data" in source


def bounds_data_file(source: str) -> str | None:
    """The data a model's ``source`` says its bounds were narrowed to (the last such
    data), else None."""
    found = re.findall(r"\(bounds (?:and kinds )?from data (.*?), \d+ rows?[;)]", source)
    return found[-1] if found else None


def held_reason(ens: Ensemble) -> str:
    """Why features' bounds hold them to one value: one in every row of the data the
    bounds come from, or the declared bounds."""
    data = bounds_data_file(ens.source)
    if data is not None:
        return f"one value in every row of {data}, the data the bounds come from"
    return "their bounds hold them to one value"


def proof_domain(source: str, bounded: bool | None = None, missing: bool | None = None) -> str:
    """Where a model's answers hold, from its ``source`` (which records where its bounds
    came from), whether any feature is bounded and whether any may be missing (None: not
    known)."""
    if bounds_from_data(source):
        return "within the data's range"
    if "(bounds from " in source or bounded:
        return "within the declared bounds"
    if bounded is False and missing is False:  # a model that routes NaN may flip on it
        return "over all feature values but missing ones (no bounds declared, none may be missing)"
    if bounded is False:
        return "over all feature values (no bounds declared)"
    return "within the model's feature bounds"


def raw_to_prediction(raw: np.ndarray, link: str) -> np.ndarray:
    """A regressor's raw scores in prediction space."""
    if link == EXP:
        return np.exp(raw)
    if link == SIGMOID:
        with np.errstate(over="ignore"):  # exp(-raw) = inf far below 0: the sigmoid's 0
            return 1.0 / (1.0 + np.exp(-raw))
    return np.asarray(raw, dtype=np.float64).copy()


def raw_to_proba(raw: np.ndarray, link: str, n_classes: int) -> np.ndarray:
    raw = np.atleast_2d(raw)
    if link == LOGISTIC:
        with np.errstate(over="ignore"):  # exp(-raw) = inf far below 0: the sigmoid's 0
            p = 1.0 / (1.0 + np.exp(-raw[:, 0]))
        return np.stack([1.0 - p, p], axis=1)
    if link == SOFTMAX:
        z = raw - raw.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True)
    if raw.shape[1] == 1 and n_classes == 2:
        return np.concatenate([1.0 - raw, raw], axis=1)
    return raw.copy()


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


_FLOAT32 = struct.Struct("<f")


def _as_float32(x: float) -> float:
    """``float(np.float32(x))`` without NumPy's per-call overhead (the domains' edges ask
    it thousands of times): the double rounded to the nearest float32, ties to even (C's
    conversion, as NumPy's), and +-inf beyond float32's range, as the libraries read it."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(x))[0]
    except OverflowError:  # rounds past the largest float32
        return math.copysign(math.inf, x)
