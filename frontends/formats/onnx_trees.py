"""The trees of an ONNX tree-ensemble operator -> IR trees, exactly as onnxruntime routes.

onnxruntime's routing (checked against it in tests/frontends/test_onnx_ir.py): a split
node compares the input value with its threshold by its mode (BRANCH_LEQ ``x <= t``,
BRANCH_LT, BRANCH_GTE, BRANCH_GT, BRANCH_EQ ``x == t``, BRANCH_NEQ) and goes to its
"true" child when the comparison holds; a NaN goes to the true child when the node's
``missing_value_tracks_true`` is set, else to the false child, except for BRANCH_NEQ,
where ``NaN != t`` holds. Inputs are compared in the precision of the input tensor
(float32 inputs as float32), thresholds as stored.

The IR has one comparison per ensemble (``x < t`` or ``x <= t``, "yes" = left child).
The other modes map onto it exactly, for inputs of the comparison's precision p:
``x < t`` is ``x <= below_p(t)`` (the largest p-number under t) and ``x <= t`` is
``x < above_p(t)``; GT / GTE are the negation of LEQ / LT, with the children swapped; an
equality ``x == t`` is two splits (``x <= t``, then ``x < t``) with the "not equal"
subtree copied under both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...compiler.ensemble import Tree

LEAF = "LEAF"
LEQ, LT, GTE, GT, EQ, NEQ = (
    "BRANCH_LEQ",
    "BRANCH_LT",
    "BRANCH_GTE",
    "BRANCH_GT",
    "BRANCH_EQ",
    "BRANCH_NEQ",
)
SPLIT_MODES = (LEQ, LT, GTE, GT, EQ, NEQ)

# an ensemble whose equality splits copy subtrees beyond this many IR nodes is refused
MAX_IR_NODES = 20_000_000


class TreeError(ValueError):
    """A tree that is not one (the message says where); the loader names the file."""


@dataclass
class Node:
    """One node as the operator states it; ``true`` / ``false`` are keys of its tree."""

    mode: str
    feature: int = -1
    threshold: float = 0.0
    true: int = -1
    false: int = -1
    nan_true: bool = False
    weights: dict[int, float] = field(default_factory=dict)  # output -> summed weight


@dataclass
class OnnxTree:
    """The nodes of one tree by key, and its root's key; ``name``: for messages."""

    name: str
    nodes: dict[int, Node]
    root: int


def comparison_op(trees: list[OnnxTree]) -> str:
    """The IR comparison that needs the fewest threshold shifts ("<" when most nodes are
    LT / GTE, as XGBoost's converters write; else "<=")."""
    modes = [n.mode for t in trees for n in t.nodes.values()]
    strict = sum(m in (LT, GTE) for m in modes)
    return "<" if strict > sum(m in (LEQ, GT) for m in modes) else "<="


def below(t: float, float32: bool) -> float:
    """The largest number of the comparison's precision that is < t (t finite)."""
    if not float32:
        return float(np.nextafter(t, -np.inf))
    with np.errstate(over="ignore"):
        f = np.float32(t)
    if float(f) >= t:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def above(t: float, float32: bool) -> float:
    """The smallest number of the comparison's precision that is > t (t finite)."""
    if not float32:
        return float(np.nextafter(t, np.inf))
    with np.errstate(over="ignore"):
        f = np.float32(t)
    if float(f) <= t:
        f = np.nextafter(f, np.float32(np.inf))
    return float(f)


def _threshold(t: float, less_equal: bool, op: str, float32: bool) -> float:
    """The IR threshold of the test ``x <= t`` (``less_equal``) or ``x < t``."""
    if less_equal == (op == "<="):
        return t
    return below(t, float32) if op == "<=" else above(t, float32)


class _Builder:
    """Flat IR node arrays, filled in depth-first order."""

    def __init__(self):
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.default_left: list[bool] = []
        self.weights: dict[int, dict[int, float]] = {}  # leaf -> output -> weight

    def new(self, feature: int = -1, threshold: float = 0.0, nan_left: bool = False) -> int:
        self.feature.append(feature)
        self.threshold.append(threshold)
        self.left.append(-1)
        self.right.append(-1)
        self.default_left.append(nan_left)
        return len(self.feature) - 1

    def attach(self, parent: int | None, is_left: bool, child: int) -> None:
        if parent is not None:
            (self.left if is_left else self.right)[parent] = child


def ir_tree(tree: OnnxTree, op: str, float32: bool, n_features: int, budget: list[int]) -> Tree:
    """The IR tree of one operator tree; ``budget``: IR nodes left (shared by the trees)."""
    b = _Builder()
    # (node key, IR parent, is the parent's left child, depth); a path longer than the
    # tree has nodes goes round a cycle
    stack: list[tuple[int, int | None, bool, int]] = [(tree.root, None, True, 0)]
    while stack:
        key, parent, is_left, depth = stack.pop()
        node = tree.nodes.get(key)
        if node is None:
            raise TreeError(f"{tree.name} refers to node {key}, which it does not have")
        if depth > len(tree.nodes):
            raise TreeError(f"{tree.name} has a cycle (through node {key})")
        if len(b.feature) + 2 > budget[0]:
            raise TreeError(
                f"the equality splits copy subtrees beyond {MAX_IR_NODES:,} nodes ({tree.name})"
            )
        if node.mode == LEAF:
            i = b.new()
            b.weights[i] = node.weights
            b.attach(parent, is_left, i)
            continue
        if node.weights:
            raise TreeError(f"{tree.name} node {key} is a split with leaf weights")
        if not 0 <= node.feature < n_features:
            raise TreeError(
                f"{tree.name} node {key} splits on feature {node.feature}; "
                f"the input has {n_features} (0..{n_features - 1})"
            )
        if not np.isfinite(node.threshold):
            raise TreeError(f"{tree.name} node {key}: threshold {node.threshold} is not finite")
        f, t, d = node.feature, node.threshold, depth + 1
        if node.mode in (EQ, NEQ):
            eq, ne = (node.true, node.false) if node.mode == EQ else (node.false, node.true)
            nan_to_eq = node.nan_true and node.mode == EQ
            # x <= t ? (x < t ? ne : eq) : ne; a NaN reaching the second split goes to eq
            first = b.new(f, _threshold(t, True, op, float32), nan_left=nan_to_eq)
            second = b.new(f, _threshold(t, False, op, float32), nan_left=False)
            b.attach(parent, is_left, first)
            b.left[first] = second
            stack += [(ne, first, False, d), (eq, second, False, d), (ne, second, True, d)]
            continue
        if node.mode not in SPLIT_MODES:
            raise TreeError(f"{tree.name} node {key} has mode {node.mode!r}")
        negated = node.mode in (GT, GTE)  # x > t is not x <= t: the children swap
        yes, no = (node.false, node.true) if negated else (node.true, node.false)
        less_equal = node.mode in (LEQ, GT)
        i = b.new(f, _threshold(t, less_equal, op, float32), nan_left=node.nan_true != negated)
        b.attach(parent, is_left, i)
        stack += [(no, i, False, d), (yes, i, True, d)]
    budget[0] -= len(b.feature)
    leaf = np.asarray(b.feature) < 0
    outputs = sorted({o for w in b.weights.values() for o in w}) or [0]
    column = {o: j for j, o in enumerate(outputs)}
    value = np.zeros((len(b.feature), len(column)))
    for i, w in b.weights.items():
        for o, v in w.items():
            value[i, column[o]] += v
    return Tree(
        feature=b.feature,
        threshold=np.where(leaf, 0.0, b.threshold),
        left=b.left,
        right=b.right,
        default_left=b.default_left,
        value=value,
        outputs=tuple(outputs),
    )


def ir_trees(trees: list[OnnxTree], op: str, float32: bool, n_features: int) -> tuple[Tree, ...]:
    budget = [MAX_IR_NODES]
    return tuple(ir_tree(t, op, float32, n_features, budget) for t in trees)
