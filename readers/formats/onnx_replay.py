"""Replaying witnesses with onnxruntime on the ONNX file's own bytes.

A replayer carries the file's bytes and what it read of the graph (the inputs' names,
types and columns, the output holding the ensemble's scores, and the ZipMap labels if that
output is one), so it pickles with the standard library; the sessions are built on first
use and not pickled. Raw scores (before the operator's post_transform) come from a second
session on the same graph with ``post_transform`` set to NONE: onnxruntime computes both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...compiler.errors import InputError
from ..libraries import import_library
from .base import LazyLibraryModel


@dataclass(frozen=True)
class Outputs:
    """Where a graph's scores are: the graph inputs to feed, (name, dtype, columns) in the
    features' order (a row is split into one array per input), the graph output to read,
    the ZipMap labels in column order when that output is a ZipMap's (None: a tensor), the
    operator node's index, and which raw columns the IR has (``one_score``: column 1 of a
    binary operator that stores one score)."""

    inputs: tuple[tuple[str, str, int], ...]  # dtype "float32" or "float64"
    output_name: str
    zipmap_labels: tuple | None
    node_index: int
    one_score: bool = False


def session(blob: bytes, where: str | None) -> Any:
    """An onnxruntime session on a model's bytes (CPU, one thread, quiet), or InputError."""
    ort = import_library("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4  # its own errors come back as one InputError line
    try:
        return ort.InferenceSession(blob, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - onnxruntime raises its own Fail / InvalidGraph ...
        raise InputError(f"onnxruntime cannot load this model: {_first_line(e)}", where) from None


def _first_line(e: Exception) -> str:
    """onnxruntime's message without its prefix, source location and C++ signature."""
    s = str(e).strip()
    line = s.splitlines()[0] if s else type(e).__name__
    line = re.sub(r"^\[ONNXRuntimeError\] : \d+ : \w+ : ", "", line)
    located = re.search(r"\S+\.(?:h|cc|cpp):\d+ ", line)
    if located:
        line = line[: located.start()] + _after_signature(line[located.end() :])
    return line.strip()[:240] or type(e).__name__


def _after_signature(text: str) -> str:
    """The text after a C++ signature ``ret name(args)`` and its ``[with ...]``."""
    depth, i = 0, 0
    while i < len(text):
        c = text[i]
        depth += c in "(<["
        depth -= c in ")>]"
        i += 1
        if c == ")" and depth == 0:
            break
    rest = text[i:].lstrip()
    if rest.startswith("[with"):
        end = _closing(rest)
        rest = rest[end:].lstrip()
    return rest or text


def _closing(text: str) -> int:
    depth = 0
    for i, c in enumerate(text):
        depth += c == "["
        depth -= c == "]"
        if depth == 0:
            return i + 1
    return len(text)


def without_post_transform(blob: bytes, node_index: int) -> bytes:
    """The model with its tree-ensemble operator's post_transform set to NONE."""
    onnx = import_library("onnx")
    model = onnx.load_model_from_string(blob)
    node = model.graph.node[node_index]
    for a in node.attribute:
        if a.name == "post_transform":
            if a.type == onnx.AttributeProto.INT:
                a.i = 0
            else:
                a.s = b"NONE"
    return model.SerializeToString()


class OnnxReplayer(LazyLibraryModel):
    """onnxruntime's own predict on the model's bytes."""

    library = "onnxruntime"
    _cached = "_session"

    def __init__(
        self, model: bytes, outputs: Outputs, regressor: bool, where: str | None = None, ses=None
    ):
        super().__init__(ses)
        self.model = model
        self.outputs = outputs
        self.regressor = regressor
        self.where = where
        self._raw_session = None

    def _build(self) -> Any:
        return session(self.model, self.where)

    def _picklable(self, state: dict) -> None:
        state["_raw_session"] = None

    def _sessions(self, raw: bool) -> Any:
        if not raw:
            return self._library_model()
        with self._lock:
            if self._raw_session is None:
                blob = without_post_transform(self.model, self.outputs.node_index)
                self._raw_session = session(blob, self.where)
            return self._raw_session

    def _run(self, X, raw: bool = False) -> np.ndarray:
        o = self.outputs
        x = np.asarray(X, dtype=np.float64)
        if x.ndim == 1:
            x = x[None, :]
        feeds, start = {}, 0
        for name, dtype, k in o.inputs:
            with np.errstate(over="ignore"):  # beyond float32: inf, as a float32 input is
                feeds[name] = np.ascontiguousarray(x[:, start : start + k].astype(dtype))
            start += k
        out = self._sessions(raw).run([o.output_name], feeds)[0]
        if o.zipmap_labels is not None:  # a list of {label: probability}
            out = [[row[label] for label in o.zipmap_labels] for row in out]
        return np.asarray(out, dtype=np.float64).reshape(len(x), -1)

    def predict_proba(self, X) -> np.ndarray:
        """A classifier's class probabilities, (n, n_classes)."""
        return self._run(X)

    def predict(self, X) -> np.ndarray:
        """A regressor's predictions, (n,)."""
        return self._run(X)[:, 0]

    def predict_raw(self, X) -> np.ndarray:
        """The scores before the post_transform, as the IR's raw outputs (n, n_outputs)."""
        out = self._run(X, raw=True)
        return out[:, 1:2] if self.outputs.one_score else out
