"""The attributes of an ai.onnx.ml tree-ensemble operator, read into plain data.

Two layouts: TreeEnsembleClassifier / TreeEnsembleRegressor (ai.onnx.ml 1 and 3) list
nodes as tuples across ``nodes_*`` attributes keyed by (tree id, node id), and leaf
weights across ``class_*`` / ``target_*``; TreeEnsemble (ai.onnx.ml 5) lists split nodes
by index, with separate leaves (``nodes_trueleafs`` / ``nodes_falseleafs`` say that a
child index is a leaf's), numeric enums and tensor-valued thresholds and weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...compiler.errors import UnsupportedModelError
from ..libraries import import_library
from .onnx_trees import EQ, GT, GTE, LEAF, LEQ, LT, NEQ, Node, OnnxTree, TreeError

CLASSIFIER, REGRESSOR, ENSEMBLE = "TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble"
OPERATORS = (CLASSIFIER, REGRESSOR, ENSEMBLE)

# TreeEnsemble (ai.onnx.ml 5) enums
_V5_MODES = {0: LEQ, 1: LT, 2: GTE, 3: GT, 4: EQ, 5: NEQ, 6: "BRANCH_MEMBER"}
_V5_POST = {0: "NONE", 1: "SOFTMAX", 2: "LOGISTIC", 3: "SOFTMAX_ZERO", 4: "PROBIT"}
_V5_AGGREGATE = {0: "AVERAGE", 1: "SUM", 2: "MIN", 3: "MAX"}


@dataclass
class Operator:
    """What treesens needs of one tree-ensemble operator."""

    op_type: str
    trees: list[OnnxTree]
    n_outputs: int  # classes (a classifier) or targets
    labels: tuple | None  # a classifier's class labels (ints or strings)
    base_values: tuple[float, ...]
    post_transform: str
    aggregate: str  # SUM, AVERAGE, MIN, MAX


def _attributes(node) -> dict:
    onnx = import_library("onnx")
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if hasattr(v, "data_type"):  # a TensorProto
            v = numpy_helper.to_array(v).reshape(-1).tolist()
        elif isinstance(v, bytes):
            v = v.decode("utf-8", errors="replace")
        elif isinstance(v, list):
            v = [x.decode("utf-8", errors="replace") if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


def _floats(a: dict, name: str) -> list[float]:
    """A float attribute, or its double ``_as_tensor`` form."""
    v = a.get(f"{name}_as_tensor", a.get(name))
    return [float(x) for x in (v or [])]


def _same_length(a: dict, names: tuple[str, ...], counted: str) -> int:
    n = len(a.get(counted) or [])
    for name in names:
        v = a.get(name)
        if v is None and name.endswith("_as_tensor"):
            continue
        if v is not None and len(v) != n:
            raise TreeError(f"{name} has {len(v)} entries, {counted} {n}")
    return n


def read_operator(node) -> Operator:
    """The operator of an ONNX node (TreeError / ValueError on a malformed one)."""
    a = _attributes(node)
    if node.op_type == ENSEMBLE:
        return _read_v5(a)
    return _read_v3(node.op_type, a)


def _read_v3(op_type: str, a: dict) -> Operator:
    n = _same_length(
        a,
        (
            "nodes_nodeids",
            "nodes_featureids",
            "nodes_modes",
            "nodes_truenodeids",
            "nodes_falsenodeids",
        ),
        "nodes_treeids",
    )
    values = _floats(a, "nodes_values")
    if len(values) != n:
        raise TreeError(f"nodes_values has {len(values)} entries, nodes_treeids {n}")
    tracks = a.get("nodes_missing_value_tracks_true") or [0] * n
    if len(tracks) != n:
        raise TreeError(f"nodes_missing_value_tracks_true has {len(tracks)} entries for {n} nodes")
    trees: dict[int, dict[int, Node]] = {}
    for i in range(n):
        tree, key = int(a["nodes_treeids"][i]), int(a["nodes_nodeids"][i])
        nodes = trees.setdefault(tree, {})
        if key in nodes:
            raise TreeError(f"tree {tree} lists node {key} twice")
        nodes[key] = Node(
            mode=str(a["nodes_modes"][i]),
            feature=int(a["nodes_featureids"][i]),
            threshold=values[i],
            true=int(a["nodes_truenodeids"][i]),
            false=int(a["nodes_falsenodeids"][i]),
            nan_true=bool(tracks[i]),
        )
    prefix = "class" if op_type == CLASSIFIER else "target"
    m = _same_length(a, (f"{prefix}_nodeids", f"{prefix}_ids"), f"{prefix}_treeids")
    weights = _floats(a, f"{prefix}_weights")
    if len(weights) != m:
        raise TreeError(f"{prefix}_weights has {len(weights)} entries, {prefix}_treeids {m}")
    for j in range(m):
        tree, key = int(a[f"{prefix}_treeids"][j]), int(a[f"{prefix}_nodeids"][j])
        out = int(a[f"{prefix}_ids"][j])
        node = trees.get(tree, {}).get(key)
        if node is None:
            raise TreeError(f"a weight is for node {key} of tree {tree}, which has no such node")
        node.weights[out] = node.weights.get(out, 0.0) + weights[j]
    labels = None
    if op_type == CLASSIFIER:
        ints, strings = a.get("classlabels_int64s"), a.get("classlabels_strings")
        if (ints is None) == (strings is None):
            raise TreeError("a classifier lists its class labels as ints or as strings, not both")
        labels = tuple(int(x) for x in ints) if ints is not None else tuple(strings)
        n_outputs = len(labels)
    else:
        n_outputs = int(a.get("n_targets", 1))
    for tree_nodes in trees.values():
        for nd in tree_nodes.values():
            bad = [o for o in nd.weights if not 0 <= o < n_outputs]
            if bad:
                raise TreeError(f"a leaf weight is for output {bad[0]} of {n_outputs}")
    return Operator(
        op_type=op_type,
        trees=[_v3_tree(tid, nodes) for tid, nodes in sorted(trees.items())],
        n_outputs=n_outputs,
        labels=labels,
        base_values=tuple(_floats(a, "base_values")),
        post_transform=str(a.get("post_transform", "NONE")),
        aggregate=str(a.get("aggregate_function", "SUM")),
    )


def _v3_tree(tid: int, nodes: dict[int, Node]) -> OnnxTree:
    """onnxruntime starts a tree at its first listed node (nodes no path reaches are
    ignored); a first node that is another's child, or a leaf with other nodes listed,
    makes it score oddly: refused."""
    root = next(iter(nodes))
    if any(root in (nd.true, nd.false) for nd in nodes.values() if nd.mode != LEAF):
        raise TreeError(f"tree {tid} lists first node {root}, which is another node's child")
    if nodes[root].mode == LEAF and len(nodes) > 1:  # onnxruntime adds all its weights
        raise TreeError(f"tree {tid} starts with a leaf but lists {len(nodes)} nodes")
    return OnnxTree(f"tree {tid}", nodes, root)


def _read_v5(a: dict) -> Operator:
    n = _same_length(
        a,
        (
            "nodes_modes",
            "nodes_splits",
            "nodes_truenodeids",
            "nodes_trueleafs",
            "nodes_falsenodeids",
            "nodes_falseleafs",
        ),
        "nodes_featureids",
    )
    m = _same_length(a, ("leaf_weights",), "leaf_targetids")
    tracks = a.get("nodes_missing_value_tracks_true") or [0] * n
    if len(tracks) != n:
        raise TreeError(f"nodes_missing_value_tracks_true has {len(tracks)} entries for {n} nodes")
    n_targets = int(a.get("n_targets", 1))
    # one key space: split node i is key i, leaf j is key n + j
    nodes: dict[int, Node] = {}
    for j in range(m):
        out = int(a["leaf_targetids"][j])
        if not 0 <= out < n_targets:
            raise TreeError(f"leaf {j} is for target {out} of {n_targets}")
        nodes[n + j] = Node(LEAF, weights={out: float(a["leaf_weights"][j])})
    for i in range(n):
        code = int(a["nodes_modes"][i])
        mode = _V5_MODES.get(code)
        if mode is None:
            raise TreeError(f"node {i} has mode {code}")
        if mode == "BRANCH_MEMBER":
            raise UnsupportedModelError("BRANCH_MEMBER (set membership) splits are not supported")
        true, false = int(a["nodes_truenodeids"][i]), int(a["nodes_falsenodeids"][i])
        nodes[i] = Node(
            mode=mode,
            feature=int(a["nodes_featureids"][i]),
            threshold=float(a["nodes_splits"][i]),
            true=n + true if a["nodes_trueleafs"][i] else true,
            false=n + false if a["nodes_falseleafs"][i] else false,
            nan_true=bool(tracks[i]),
        )
    roots = [int(r) for r in a.get("tree_roots") or []]
    if any(not 0 <= r < n for r in roots):
        raise TreeError(f"a tree root is not one of the {n} split nodes")
    post = int(a.get("post_transform", 0))
    aggregate = int(a.get("aggregate_function", 1))
    if post not in _V5_POST or aggregate not in _V5_AGGREGATE:
        raise TreeError(f"post_transform {post} or aggregate_function {aggregate} is unknown")
    return Operator(
        op_type=ENSEMBLE,
        trees=[OnnxTree(f"tree {t}", _reached(nodes, r), r) for t, r in enumerate(roots)],
        n_outputs=n_targets,
        labels=None,
        base_values=(),
        post_transform=_V5_POST[post],
        aggregate=_V5_AGGREGATE[aggregate],
    )


def _reached(nodes: dict[int, Node], root: int) -> dict[int, Node]:
    """The nodes a path from ``root`` reaches (a missing one is named when the tree is
    built)."""
    out: dict[int, Node] = {}
    stack = [root]
    while stack:
        key = stack.pop()
        if key in out or key not in nodes:
            continue
        out[key] = nodes[key]
        if out[key].mode != LEAF:
            stack += [out[key].true, out[key].false]
    if root in out:  # the root first
        out = {root: out.pop(root), **out}
    return out
