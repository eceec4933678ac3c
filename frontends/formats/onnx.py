"""ONNX tree ensembles (ai.onnx.ml) -> IR, replayed by onnxruntime.

Reads a graph of one tree-ensemble operator (TreeEnsembleClassifier, TreeEnsembleRegressor,
or TreeEnsemble of ai.onnx.ml 5) fed by one float or double tensor [N, F], with only Cast,
Identity and ZipMap around it, as skl2onnx and onnxmltools write scikit-learn, XGBoost and
LightGBM models. The file is parsed as data (protobuf); external data and model-local
functions are refused; nothing runs while loading but onnxruntime's check that it can
load the graph. ``onnx_operator`` reads the operator's attributes, ``onnx_trees`` maps its
trees onto the IR (a float32 input is compared as float32, a double one as a double),
``onnx_scoring`` its classes, link and intercept, ``onnx_replay`` replays witnesses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...compiler.ensemble import Ensemble, Feature
from ...compiler.errors import InputError, UnsupportedModelError
from ..libraries import import_library
from .base import DEFAULT_OPTIONS, MAX_FEATURES, LoadOptions, module_of
from .onnx_operator import CLASSIFIER, OPERATORS, read_operator
from .onnx_replay import OnnxReplayer, Outputs, session
from .onnx_scoring import scoring_of
from .onnx_trees import TreeError, comparison_op, ir_trees

ML = "ai.onnx.ml"
AROUND = ("Cast", "Identity", "ZipMap")  # the only other nodes a graph may have
_FLOAT, _DOUBLE = 1, 11  # TensorProto element types
_DTYPES = {_FLOAT: "float32", _DOUBLE: "float64"}
_FEW = "treesens reads one tree-ensemble operator with only Cast, Identity and ZipMap around it"


@dataclass(frozen=True)
class _Input:
    name: str
    dtype: str  # of the graph input
    float32: bool  # the operator sees float32 values (the input, or a Cast on the way)
    n_features: int


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


def _graph_input(model, where: str) -> tuple[Any, str, int]:
    """(the one graph input, its dtype, its number of columns)."""
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    if len(inputs) != 1:
        names = ", ".join(i.name for i in inputs) or "none"
        raise UnsupportedModelError(
            f"the graph has {len(inputs)} inputs ({names}); treesens reads a graph of one "
            "float tensor input [N, F]",
            where,
        )
    inp = inputs[0]
    tt = inp.type.tensor_type if inp.type.HasField("tensor_type") else None
    if tt is None or tt.elem_type not in _DTYPES:
        raise UnsupportedModelError(
            f"input {inp.name!r} is not a float or double tensor; treesens reads a graph of "
            "one float tensor input [N, F]",
            where,
        )
    dims = list(tt.shape.dim) if tt.HasField("shape") else []
    if len(dims) != 2 or not dims[1].HasField("dim_value") or dims[1].dim_value < 1:
        raise UnsupportedModelError(
            f"input {inp.name!r} is not a tensor [N, F] with a fixed number of columns F", where
        )
    F = int(dims[1].dim_value)
    if F > MAX_FEATURES:
        raise InputError(
            f"the input has {F} columns: treesens reads at most {MAX_FEATURES:,}", where
        )
    return inp, _DTYPES[tt.elem_type], F


def _cast_to(node) -> int:
    return next((a.i for a in node.attribute if a.name == "to"), 0)


def _the_operator(model, where: str) -> int:
    """The index of the graph's one tree-ensemble node; any node other than it, Cast,
    Identity and ZipMap refused by name."""
    found = []
    for i, node in enumerate(model.graph.node):
        if node.domain == ML and node.op_type in OPERATORS:
            found.append(i)
        elif node.op_type not in AROUND or node.domain not in ("", "ai.onnx", ML):
            what = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            raise UnsupportedModelError(
                f"the graph has an operator {what} ({node.name or 'unnamed'}): {_FEW}", where
            )
    if len(found) != 1:
        raise UnsupportedModelError(
            f"the graph has {len(found)} tree-ensemble operators: {_FEW}", where
        )
    return found[0]


def _feeding(model, op_index: int, where: str) -> _Input:
    """How the graph input reaches the operator: through Identity and float Casts only."""
    inp, dtype, F = _graph_input(model, where)
    producer = {o: n for n in model.graph.node for o in n.output}
    name, float32 = model.graph.node[op_index].input[0], dtype == "float32"
    for _ in range(len(model.graph.node) + 1):
        if name == inp.name:
            return _Input(inp.name, dtype, float32, F)
        node = producer.get(name)
        if node is None or node.op_type not in ("Cast", "Identity"):
            break
        if node.op_type == "Cast":
            if _cast_to(node) not in _DTYPES:
                raise UnsupportedModelError(
                    "a Cast to a type other than float or double feeds the trees", where
                )
            float32 |= _cast_to(node) == _FLOAT
        name = node.input[0]
    raise UnsupportedModelError("the trees are not fed by the graph's input", where)


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
            if n.op_type == "Identity" or (n.op_type == "Cast" and _cast_to(n) in _DTYPES):
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
        trees = ir_trees(op.trees, ir_op, feed.float32, feed.n_features)
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
    outputs = Outputs(feed.name, feed.dtype, output, labels, op_index, scoring.one_score)
    replayer = OnnxReplayer(blob, outputs, scoring.n_classes == 0, where, ses=session(blob, where))
    return Ensemble(
        trees=trees,
        features=tuple(Feature(f"f{i}") for i in range(feed.n_features)),
        n_classes=scoring.n_classes,
        intercept=scoring.intercept,
        link=scoring.link,
        op=ir_op,
        cast="float32" if feed.float32 else "float64",
        sums="float32" if feed.float32 else "float64",
        scale=scoring.scale,
        source=f"onnx:{where}",
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
        # a ModelProto starts with its ir_version (field 1, a varint) and names its
        # producer (skl2onnx, OnnxMLTools) or the ai.onnx.ml domain near the start
        return head[:1] == b"\x08" and b"onnx" in head[:200].lower()

    def load_path(self, path: Path, options: LoadOptions) -> Ensemble:
        return load_path(path, options)

    def load_object(self, obj: Any) -> Ensemble | None:
        if not (module_of(obj).startswith("onnx") and type(obj).__name__ == "ModelProto"):
            return None
        return from_bytes(obj.SerializeToString(), "<ONNX ModelProto>")
