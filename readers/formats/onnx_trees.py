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
``x < above_p(t)``; GT / GTE are the negation of LEQ / LT, with the children swapped.
Equalities come in chains on one feature (``x == t1 ? A1 : x == t2 ? A2 : ... : rest``,
as onnxmltools writes a LightGBM categorical split): a chain of k points becomes a search
over the sorted points, ``x < t`` then ``x <= t`` around each (2k splits), with a copy of
the rest in each of the k + 1 gaps between them. A threshold may be inf or -inf (skl2onnx
writes a HistGradientBoosting split of NaN from every number at inf), not an equality's.
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
    LT / GTE, as XGBoost's converters write; else "<="), or the one an infinite threshold
    needs: ``x <= inf`` (LEQ, GT) holds for every number, inf too (skl2onnx writes it for a
    HistGradientBoosting split of NaN from the rest), which only ``<=`` states; ``x < -inf``
    (LT, GTE) holds for none, which only ``<`` states."""
    needs = {_needed_op(n) for t in trees for n in t.nodes.values()} - {None}
    if len(needs) > 1:
        raise TreeError("splits at inf and at -inf need different comparisons")
    if needs:
        return needs.pop()
    modes = [n.mode for t in trees for n in t.nodes.values()]
    strict = sum(m in (LT, GTE) for m in modes)
    return "<" if strict > sum(m in (LEQ, GT) for m in modes) else "<="


def _needed_op(node: Node) -> str | None:
    if node.threshold == np.inf and node.mode in (LEQ, GT):
        return "<="
    if node.threshold == -np.inf and node.mode in (LT, GTE):
        return "<"
    return None


def below(t: float, float32: bool) -> float:
    """The largest number of the comparison's precision that is < t (t not -inf)."""
    if not float32:
        return float(np.nextafter(t, -np.inf))
    with np.errstate(over="ignore"):
        f = np.float32(t)
    if float(f) >= t:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def above(t: float, float32: bool) -> float:
    """The smallest number of the comparison's precision that is > t (t not inf)."""
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


def _check_split(tree: OnnxTree, key: int, node: Node, n_features: int) -> None:
    if node.weights:
        raise TreeError(f"{tree.name} node {key} is a split with leaf weights")
    if node.mode not in SPLIT_MODES:
        raise TreeError(f"{tree.name} node {key} has mode {node.mode!r}")
    if not 0 <= node.feature < n_features:
        raise TreeError(
            f"{tree.name} node {key} splits on feature {node.feature}; "
            f"the input has {n_features} (0..{n_features - 1})"
        )
    if np.isnan(node.threshold) or (np.isinf(node.threshold) and node.mode in (EQ, NEQ)):
        raise TreeError(f"{tree.name} node {key}: threshold {node.threshold} is not finite")


@dataclass
class _Chain:
    """Equality splits on one feature, each in the "not equal" child of the one before:
    ``x == t1 ? A1 : x == t2 ? A2 : ... : rest``; NaN goes to ``points[nan]``'s child, or
    to the rest (``nan`` None)."""

    points: list[tuple[float, int]]  # (t, child when x == t), first occurrence of each t
    rest: int
    nan: int | None
    length: int


def _equality_chain(tree: OnnxTree, key: int, float32: bool, n_features: int) -> _Chain:
    node = tree.nodes[key]
    feature, seen = node.feature, set()
    points: dict[float, int] = {}
    nan: int | None = None
    nan_open = True  # NaN has not left the chain yet
    while True:
        _check_split(tree, key, node, n_features)
        seen.add(key)
        eq, ne = (node.true, node.false) if node.mode == EQ else (node.false, node.true)
        t = node.threshold
        with np.errstate(over="ignore"):
            possible = not float32 or float(np.float32(t)) == t  # else x == t never holds
        new_point = possible and t not in points
        if new_point:
            points[t] = eq
        if nan_open and node.mode == EQ and node.nan_true:  # NaN != t: NEQ sends it on
            if not new_point:
                raise TreeError(f"{tree.name} node {key} sends NaN to a branch no number reaches")
            nan, nan_open = len(points) - 1, False
        following = tree.nodes.get(ne)
        if following is None or following.mode not in (EQ, NEQ) or following.feature != feature:
            return _Chain(list(points.items()), ne, nan, len(seen))
        if ne in seen:
            raise TreeError(f"{tree.name} has a cycle (through node {ne})")
        key, node = ne, following


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
        if len(b.feature) >= budget[0]:
            raise TreeError(
                f"the equality splits copy subtrees beyond {MAX_IR_NODES:,} nodes ({tree.name})"
            )
        if node.mode == LEAF:
            i = b.new()
            b.weights[i] = node.weights
            b.attach(parent, is_left, i)
            continue
        if node.mode in (EQ, NEQ):
            chain = _equality_chain(tree, key, float32, n_features)
            stack += _intervals(b, chain, node.feature, op, float32, parent, is_left, depth)
            continue
        _check_split(tree, key, node, n_features)
        negated = node.mode in (GT, GTE)  # x > t is not x <= t: the children swap
        yes, no = (node.false, node.true) if negated else (node.true, node.false)
        less_equal = node.mode in (LEQ, GT)
        t = _threshold(node.threshold, less_equal, op, float32)
        i = b.new(node.feature, t, nan_left=node.nan_true != negated)
        b.attach(parent, is_left, i)
        stack += [(no, i, False, depth + 1), (yes, i, True, depth + 1)]
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


def _intervals(
    b: _Builder, chain: _Chain, feature: int, op: str, float32: bool, parent, is_left, depth
) -> list[tuple[int, int | None, bool, int]]:
    """The splits of an equality chain: a search over its sorted points, each point's child
    between ``x < t`` and ``x <= t``, a copy of the rest in every gap between them; the
    subtrees still to build, as stack entries."""
    order = sorted(range(len(chain.points)), key=lambda j: chain.points[j][0])
    nan_at = None if chain.nan is None else order.index(chain.nan)
    d = depth + chain.length
    todo: list[tuple[int, int | None, bool, int]] = []

    def build(lo: int, hi: int, parent, is_left: bool) -> None:
        if lo == hi:  # a gap between points: the rest
            todo.append((chain.rest, parent, is_left, d))
            return
        m = (lo + hi) // 2
        t, child = chain.points[order[m]]
        # NaN goes right (towards the last gap, the rest) unless its point is elsewhere
        below_m = b.new(feature, _threshold(t, False, op, float32), nan_left=_lt(nan_at, m))
        b.attach(parent, is_left, below_m)
        build(lo, m, below_m, True)
        at_m = b.new(feature, _threshold(t, True, op, float32), nan_left=nan_at == m)
        b.attach(below_m, False, at_m)
        todo.append((child, at_m, True, d))
        build(m + 1, hi, at_m, False)

    build(0, len(order), parent, is_left)
    return todo


def _lt(a: int | None, b: int) -> bool:
    return a is not None and a < b


def ir_trees(trees: list[OnnxTree], op: str, float32: bool, n_features: int) -> tuple[Tree, ...]:
    budget = [MAX_IR_NODES]
    return tuple(ir_tree(t, op, float32, n_features, budget) for t in trees)
