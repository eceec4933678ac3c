"""ONNX tree ensembles (ai.onnx.ml) -> IR, replayed by onnxruntime.

Reads a graph of one tree-ensemble operator (TreeEnsembleClassifier, TreeEnsembleRegressor,
or TreeEnsemble of ai.onnx.ml 5) fed by one float or double tensor [N, F], with only Cast,
Identity, ZipMap and a product by one around it, as skl2onnx and onnxmltools write scikit-learn, XGBoost and
LightGBM models. The operator may also be fed by a Concat of columns (axis 1, nested
Concats too) of float or double graph inputs [N, k], as skl2onnx writes a DataFrame's
columns (a ColumnTransformer passing them through): the features are the joined columns
in order, named after their inputs (an input [N, k], k > 1, as NAME_0 .. NAME_k-1), then
any graph input the trees do not read (onnxruntime wants every input fed); every column
must reach the operator at one precision (all float32, or all double). The file is parsed
as data (protobuf); external data and model-local functions are refused; nothing runs
while loading but onnxruntime's check that it can load the graph. ``onnx_operator`` reads
the operator's attributes, ``onnx_trees`` maps its trees onto the IR (a float32 input is
compared as float32, a double one as a double), ``onnx_scoring`` its classes, link and
intercept, ``onnx_replay`` replays witnesses (one array per graph input).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.ensemble import Ensemble, Feature, ModelOrigin
from ...compiler.errors import InputError, UnsupportedModelError
from ..libraries import import_library
from . import sniffing
from .base import (
    DEFAULT_OPTIONS,
    MAX_FEATURES,
    LoadOptions,
    module_of,
    warn_if_classes_are_not_positions,
)
from .onnx_operator import CLASSIFIER, OPERATORS, read_operator
from .onnx_replay import OnnxReplayer, Outputs, session
from .onnx_scoring import one_score_trees, scoring_of
from .onnx_trees import TreeError, comparison_op, ir_trees

ML = "ai.onnx.ml"
AROUND = ("Cast", "Identity", "ZipMap", "Concat")  # the only other nodes a graph may have
_FLOAT, _DOUBLE = 1, 11  # TensorProto element types
_DTYPES = {_FLOAT: "float32", _DOUBLE: "float64"}
_FEW = (
    "treesens reads one tree-ensemble operator with only Cast, Identity, ZipMap, a product by "
    "one and a Concat of the graph's inputs around it"
)
# the ai.onnx.ml operators skl2onnx writes for a Pipeline's steps before its model
_PREPROCESSING = frozenset({"Scaler", "Imputer", "OneHotEncoder", "Normalizer", "Binarizer"})
_PIPELINE_HINT = (
    "; a scikit-learn Pipeline's preprocessing is read from the fitted Pipeline itself (a "
    ".skops file, or a pickle with --trust-pickle; docs/pipelines.md), not from its ONNX graph"
)
_TENSOR = "one float tensor input [N, F], or float inputs [N, 1] joined by a Concat"


@dataclass(frozen=True)
class _Input:
    name: str
    dtype: str  # of the graph input
    float32: bool  # the operator sees float32 values (the input, or a Cast on the way)
    n_features: int  # its columns


@dataclass(frozen=True)
class _Feed:
    """The graph inputs in the features' order: those the trees read (their columns
    concatenated, as a Concat joins them), then any the trees do not read (fed to
    onnxruntime all the same). ``named``: the graph joins columns with a Concat, and the
    features are named after the inputs (``f0, f1, ...`` for one input [N, F] read as is)."""

    inputs: tuple[_Input, ...]
    n_read: int  # columns the trees read: the first n_read features
    float32: bool
    named: bool

    @property
    def n_features(self) -> int:
        return sum(i.n_features for i in self.inputs)

    def feature_names(self) -> list[str]:
        if not self.named:
            return [f"f{i}" for i in range(self.n_features)]
        names = []
        for i in self.inputs:
            one = i.n_features == 1
            names += [i.name] if one else [f"{i.name}_{j}" for j in range(i.n_features)]
        return names


def _check_self_contained(model, where: str) -> None:
    """External tensors would be read from files the model names, and functions the model
    defines could stand in for the operators treesens reads: both refused."""
    if len(model.functions):
        raise UnsupportedModelError(
            f"the model defines functions ({model.functions[0].name}, ...): {_FEW}", where
        )
    tensors = list(model.graph.initializer)
    for sparse in model.graph.sparse_initializer:
        tensors += [sparse.values, sparse.indices]
    for node in model.graph.node:
        for a in node.attribute:
            tensors += ([a.t] if a.HasField("t") else []) + list(a.tensors)
    for t in tensors:
        if t.data_location == 1 or len(t.external_data):
            raise InputError(
                f"tensor {t.name or '(unnamed)'} is stored as external data, which "
                "treesens does not read: save the model with its data inside",
                where,
            )


def _graph_inputs(model, where: str) -> dict[str, tuple[str, int]]:
    """Every graph input (initializers aside): name -> (its dtype, its number of columns);
    each must be a float or double tensor [N, k]."""
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if not inputs:
        raise UnsupportedModelError(
            f"the graph has no inputs; treesens reads a graph of {_TENSOR}", where
        )
    found: dict[str, tuple[str, int]] = {}
    for inp in inputs:
        tt = inp.type.tensor_type if inp.type.HasField("tensor_type") else None
        if tt is None or tt.elem_type not in _DTYPES:
            raise UnsupportedModelError(
                f"input {inp.name!r} is not a float or double tensor; treesens reads a graph "
                f"of {_TENSOR}",
                where,
            )
        dims = list(tt.shape.dim) if tt.HasField("shape") else []
        if len(dims) != 2 or not dims[1].HasField("dim_value") or dims[1].dim_value < 1:
            raise UnsupportedModelError(
                f"input {inp.name!r} is not a tensor [N, F] with a fixed number of columns F",
                where,
            )
        if inp.name in found:
            raise InputError(f"the graph lists input {inp.name!r} twice", where)
        found[inp.name] = (_DTYPES[tt.elem_type], int(dims[1].dim_value))
    F = sum(k for _, k in found.values())
    if F > MAX_FEATURES:
        raise InputError(
            f"the input has {F} columns: treesens reads at most {MAX_FEATURES:,}", where
        )
    return found


def _cast_to(node) -> int:
    return next((a.i for a in node.attribute if a.name == "to"), 0)


def _times_one(node, model) -> bool:
    """Whether ``node`` multiplies (or divides) its first input by an initializer holding
    only 1.0: an identity (onnxmltools' ``convert_lightgbm(zipmap=False)`` writes one after
    the probabilities)."""
    if (
        node.op_type not in ("Mul", "Div")
        or len(node.input) != 2
        or node.domain not in ("", "ai.onnx")
    ):
        return False
    init = next((i for i in model.graph.initializer if i.name == node.input[1]), None)
    if init is None:
        return False
    values = import_library("onnx").numpy_helper.to_array(init)
    return values.size >= 1 and values.ndim <= 1 and bool(np.all(values == 1.0))


def _the_operator(model, where: str) -> int:
    """The index of the graph's one tree-ensemble node; any node other than it, Cast,
    Identity, ZipMap and a product by one refused by name."""
    found = []
    for i, node in enumerate(model.graph.node):
        if node.domain == ML and node.op_type in OPERATORS:
            found.append(i)
        elif _times_one(node, model):
            continue
        elif node.op_type not in AROUND or node.domain not in ("", "ai.onnx", ML):
            what = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            pipeline = _PIPELINE_HINT if node.op_type in _PREPROCESSING else ""
            raise UnsupportedModelError(
                f"the graph has an operator {what} ({node.name or 'unnamed'}): {_FEW}{pipeline}",
                where,
            )
    if len(found) != 1:
        raise UnsupportedModelError(
            f"the graph has {len(found)} tree-ensemble operators: {_FEW}", where
        )
    return found[0]


def _concat_axis(node, where: str) -> int:
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
    if axis not in (1, -1):
        raise UnsupportedModelError(
            f"a Concat ({node.name or 'unnamed'}) joins along axis {axis}: treesens reads a "
            "Concat of columns (axis 1) feeding the trees",
            where,
        )
    return axis


def _feeding(model, op_index: int, where: str) -> _Feed:
    """How the graph inputs reach the operator: through Identity, float Casts and Concats
    of columns (axis 1) only, each input at most once."""
    graph_inputs = _graph_inputs(model, where)
    nodes = model.graph.node
    producer = {o: k for k, n in enumerate(nodes) for o in n.output}
    read: list[_Input] = []
    read_names: set[str] = set()
    seen: set[int] = set()  # nodes walked through: each once (a cycle, or a column twice)
    named = False
    if not nodes[op_index].input:
        raise InputError(f"the {nodes[op_index].op_type} has no input", where)
    # (a value's name, a Cast to float on the way from it to the operator); depth first,
    # a Concat's inputs in order
    stack = [(nodes[op_index].input[0], False)]
    while stack:
        name, float32 = stack.pop()
        if name in graph_inputs:
            if name in read_names:
                raise UnsupportedModelError(
                    f"input {name!r} reaches the trees twice: treesens reads each graph input "
                    "as its own columns",
                    where,
                )
            dtype, k = graph_inputs[name]
            read.append(_Input(name, dtype, float32 or dtype == "float32", k))
            read_names.add(name)
            continue
        index = producer.get(name)
        node = None if index is None else nodes[index]
        default = node is not None and node.domain in ("", "ai.onnx")
        if not default or node.op_type not in ("Cast", "Identity", "Concat"):
            raise UnsupportedModelError(_not_fed(name, node, named), where)
        if index in seen:
            raise UnsupportedModelError(
                f"{node.op_type} {node.name or '(unnamed)'} reaches the trees twice", where
            )
        seen.add(index)
        if not node.input:
            raise InputError(f"a {node.op_type} has no input", where)
        if node.op_type == "Concat":
            _concat_axis(node, where)
            named = True
            stack += [(i, float32) for i in reversed(node.input)]
            continue
        if node.op_type == "Cast":
            if _cast_to(node) not in _DTYPES:
                raise UnsupportedModelError(
                    "a Cast to a type other than float or double feeds the trees", where
                )
            float32 |= _cast_to(node) == _FLOAT
        stack.append((node.input[0], float32))
    return _feed_of(graph_inputs, read, named, where)


def _not_fed(name: str, node, named: bool) -> str:
    if not named:
        return "the trees are not fed by the graph's input"
    if node is None:
        what = "a constant" if name else "missing"
        return f"a Concat feeding the trees joins {name!r}, {what}, not a graph input"
    op = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
    return (
        f"a Concat feeding the trees joins {name!r}, the output of {op} "
        f"({node.name or 'unnamed'}), not a graph input"
    )


def _feed_of(graph_inputs: dict, read: list[_Input], named: bool, where: str) -> _Feed:
    """The feed, once every column's precision is one and the names are distinct."""
    float32 = {i.float32 for i in read}
    if len(float32) > 1:
        f32 = next(i.name for i in read if i.float32)
        f64 = next(i.name for i in read if not i.float32)
        raise UnsupportedModelError(
            f"input {f32!r} reaches the trees as float32 values and {f64!r} as doubles: "
            "treesens reads columns compared at one precision (cast them all to float, or "
            "all to double)",
            where,
        )
    names_read = {i.name for i in read}
    unread = [n for n in graph_inputs if n not in names_read]
    if unread and not named:
        names = ", ".join(graph_inputs)
        raise UnsupportedModelError(
            f"the graph has {len(graph_inputs)} inputs ({names}); treesens reads a graph of "
            f"{_TENSOR}",
            where,
        )
    extra = [
        _Input(n, dtype, dtype == "float32", k) for n in unread for dtype, k in [graph_inputs[n]]
    ]
    n_read = sum(i.n_features for i in read)
    feed = _Feed(tuple(read + extra), n_read, float32.pop(), named)
    names, distinct = feed.feature_names(), set()
    for dup in names:
        if dup in distinct:
            raise UnsupportedModelError(
                f"two columns would both be named {dup!r} (an input [N, k] names its columns "
                "NAME_0 .. NAME_k-1): rename the graph's inputs",
                where,
            )
        distinct.add(dup)
    return feed


def _scores_output(model, op_index: int, where: str) -> tuple[str, tuple | None]:
    """(the graph output holding the operator's scores, ZipMap labels or None)."""
    node = model.graph.node[op_index]
    scores = node.output[1 if node.op_type == CLASSIFIER else 0]
    outputs = [o.name for o in model.graph.output]
    consumers: dict[str, list] = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    stack: list[tuple[str, tuple | None]] = [(scores, None)]
    seen: set[str] = set()
    found = []
    while stack:
        name, labels = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in outputs:
            found.append((outputs.index(name), name, labels))
        for n in consumers.get(name, []):
            if labels is not None:
                continue  # nothing after a ZipMap keeps it a score
            same = n.op_type == "Identity" or (n.op_type == "Cast" and _cast_to(n) in _DTYPES)
            if same or (_times_one(n, model) and n.input[0] == name):
                stack.append((n.output[0], None))
            elif n.op_type == "ZipMap":
                stack.append((n.output[0], _zipmap_labels(n, where)))
    if not found:
        raise UnsupportedModelError(
            "no graph output holds the tree ensemble's scores or probabilities", where
        )
    found.sort(key=lambda f: (f[2] is not None, f[0]))  # a tensor before a ZipMap's
    return found[0][1], found[0][2]


def _zipmap_labels(node, where: str) -> tuple:
    helper = import_library("onnx").helper
    for a in node.attribute:
        if a.name in ("classlabels_int64s", "classlabels_strings"):
            v = helper.get_attribute_value(a)
            labels = tuple(
                x.decode("utf-8", errors="replace") if isinstance(x, bytes) else x for x in v
            )
            if len(set(labels)) != len(labels):
                raise InputError("a ZipMap lists a class label twice", where)
            return labels
    raise InputError("a ZipMap lists no class labels", where)


# ---------------------------------------------------------------------------------
# entry points


def from_bytes(blob: bytes, where: str) -> Ensemble:
    onnx = import_library("onnx")
    try:
        model = onnx.load_model_from_string(blob)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise InputError(
            f"not an ONNX model: protobuf cannot parse it ({type(e).__name__})", where
        ) from None
    _check_self_contained(model, where)
    op_index = _the_operator(model, where)
    node = model.graph.node[op_index]
    feed = _feeding(model, op_index, where)
    output, labels = _scores_output(model, op_index, where)
    try:
        op = read_operator(node)
        scoring = scoring_of(op, where)
        if labels is not None and len(labels) != scoring.n_classes:
            raise InputError(
                f"the ZipMap lists {len(labels)} labels for {scoring.n_classes} classes", where
            )
        ir_op = comparison_op(op.trees)
        trees = ir_trees(one_score_trees(op, scoring), ir_op, feed.float32, feed.n_read)
    except UnsupportedModelError as e:
        raise UnsupportedModelError(e.message, where) from None
    except InputError:
        raise
    except (TreeError, ValueError, KeyError, IndexError, TypeError, OverflowError) as e:
        raise InputError(f"malformed {node.op_type}: {str(e)[:200]}", where) from None
    if not trees:
        raise InputError(f"the {node.op_type} has no trees", where)
    if not all(math.isfinite(v) for v in scoring.intercept):
        raise InputError("a base value is not a finite number", where)
    inputs = tuple((i.name, i.dtype, i.n_features) for i in feed.inputs)
    outputs = Outputs(inputs, output, labels, op_index, scoring.one_score)
    replayer = OnnxReplayer(blob, outputs, scoring.n_classes == 0, where, ses=session(blob, where))
    if scoring.n_classes:  # class k is the operator's output k, named by its labels
        warn_if_classes_are_not_positions(op.labels if op.labels else labels, where)
    return Ensemble(
        trees=trees,
        features=tuple(Feature(n) for n in feed.feature_names()),
        n_classes=scoring.n_classes,
        intercept=scoring.intercept,
        link=scoring.link,
        op=ir_op,
        cast="float32" if feed.float32 else "float64",
        sums="float32" if feed.float32 else "float64",
        scale=scoring.scale,
        origin=ModelOrigin("onnx", where),
        replayer=replayer,
    )


def load_path(path: Path, options: LoadOptions = DEFAULT_OPTIONS) -> Ensemble:
    where = str(path)
    try:
        blob = Path(path).read_bytes()
    except OSError as e:
        raise InputError(f"cannot read the model: {e.strerror or e}", where) from None
    return from_bytes(blob, where)


class OnnxFormat:
    """An ONNX graph of one ai.onnx.ml tree-ensemble operator (skl2onnx, onnxmltools)."""

    name = "onnx"
    description = "an ONNX model"
    suffixes = (".onnx",)
    sniff_last = False
    takes_base_score = False
    generic_names = "f{}"
    replayer = OnnxReplayer

    def sniff(self, head: bytes, suffix: str) -> bool:
        return sniffing.onnx(head, suffix)

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_path(path, options)

    def load_object(self, obj: Any) -> Ensemble | None:
        if not (module_of(obj).startswith("onnx") and type(obj).__name__ == "ModelProto"):
            return None
        return from_bytes(obj.SerializeToString(), "<ONNX ModelProto>")
