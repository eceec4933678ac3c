"""An ONNX tree ensemble as the checker sees it, read with ``onnx``.

The graph holds one ``TreeEnsembleClassifier`` or ``TreeEnsembleRegressor`` (ai.onnx.ml),
fed by one float or double tensor [N, F] (features ``f0 .. f{F-1}``) or by one Concat
(axis 1) of every graph input [N, k] (features named after the inputs, ``NAME_0 ..`` for
k > 1, as skl2onnx writes a DataFrame's columns), with only Cast, Identity, ZipMap and a product by one
around it besides, as skl2onnx and onnxmltools write. onnxruntime sends an input to a
node's "true" child when the node's mode holds (BRANCH_LEQ ``x <= t``, BRANCH_LT
``x < t``, BRANCH_GTE, BRANCH_GT), comparing in the input's precision; a leaf adds each
of its weights (``class_weights`` / ``target_weights``) to the score its id names; a
score is its ``base_values`` entry + the sum over trees, summed in float32 for a float
input (aggregate_function SUM only). Read as:

* a binary classifier with every weight under class id 0 has one score s: P(class 1) =
  s with post_transform NONE (every weight >= 0: a forest's averaged probabilities),
  sigmoid(s) with LOGISTIC (boosting); one with LOGISTIC, no base values and both class
  ids on every leaf, class 0's weight minus class 1's (CatBoost's export), has two
  scores, -s and s, whose sigmoids onnxruntime outputs: P(class 1) = sigmoid(s), s read
  from class 1's weights;
* a classifier of K > 2 classes has one score per class: P = their softmax with
  SOFTMAX (boosting), the scores themselves with NONE (every weight and base value
  >= 0: a forest's probabilities);
* a regressor of one target with post_transform NONE predicts its score (identity).

Other layouts and other post transforms are refused (a regressor
converted with an Exp node after it, XGBoost's reg:gamma or LightGBM's poisson through
onnxmltools, fails the graph's shape: its change is no linear condition on the score).

A certificate's splits use one comparison (``test``, "<=" or "<"); each node's mode is
mapped onto it exactly in the input's precision: ``x < t`` is ``x <= below(t)``, ``x <= t``
is ``x < above(t)``, and GT / GTE negate LEQ / LT with the children swapped. NaN fails
every comparison: onnxruntime sends it to the "true" child where the node's
``nodes_missing_value_tracks_true`` is set, else to the "false" child (the checker's
NaN side of the node, after any swap).

Equality modes (BRANCH_EQ ``x == t``, BRANCH_NEQ ``x != t``, as onnxmltools writes
LightGBM's categorical splits) come in chains on one feature: each node's "not equal"
child is the next node, ``x == t1 ? A1 : x == t2 ? A2 : ... : rest``. A number takes the
"equal" child of the first node whose point it equals; NaN equals no point, and takes
the "true" child of a node where it is sent there: BRANCH_NEQ's (``NaN != t`` holds: the
chain goes on), BRANCH_EQ's where ``nodes_missing_value_tracks_true`` is set (it leaves
the chain into that "equal" child), else the "false" child. The checker reads a chain
of k distinct points as a search over them in order: per point ``x < t`` (left: the
points below), then ``x <= t`` (left: its "equal" child; right: the points above), each
mapped onto ``test`` as above, with a copy of the rest in each of the k + 1 gaps; NaN
goes right towards the last gap unless its "equal" child is elsewhere. A point repeated
later in a chain is never reached by a number (its node is skipped); a chain sending
NaN to such a node, and a point that is no number of the input's precision, are refused.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .models import Model, ModelError, Tree

ML = "ai.onnx.ml"
AROUND = ("Cast", "Identity", "ZipMap", "Concat")  # Concat: of the inputs (_features)
_FLOAT, _DOUBLE = 1, 11  # TensorProto element types
LEQ, LT, GTE, GT = "BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT"
EQ, NEQ = "BRANCH_EQ", "BRANCH_NEQ"
MAX_NODES = 5_000_000  # per tree, after the equality chains' copies
CLASSIFIER, REGRESSOR = "TreeEnsembleClassifier", "TreeEnsembleRegressor"


def _by_one(node, g) -> bool:
    """A Mul or Div of a value by an initializer of ones (onnxmltools writes one after a
    LightGBM classifier's probabilities without a ZipMap): it changes no score."""
    from onnx import numpy_helper

    if node.op_type not in ("Mul", "Div") or len(node.input) != 2:
        return False
    init = [i for i in g.initializer if i.name == node.input[1]]
    if len(init) != 1:
        return False
    values = numpy_helper.to_array(init[0])
    return values.size >= 1 and values.ndim <= 1 and bool(np.all(values == 1.0))


def read_onnx(path: str, test: str = "<=") -> Model:
    import onnx

    if test not in ("<=", "<"):
        raise ModelError(f"test {test!r}: an ONNX certificate's splits use '<=' or '<'")
    try:
        model = onnx.load_model(path, load_external_data=False)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise ModelError(f"onnx cannot read the model ({type(e).__name__})") from None
    g = model.graph
    ops = [n for n in g.node if n.domain == ML and n.op_type.startswith("TreeEnsemble")]
    others = [
        n.op_type for n in g.node if n not in ops and n.op_type not in AROUND and not _by_one(n, g)
    ]
    if len(ops) != 1 or others:
        raise ModelError(
            "the checker reads a graph of one TreeEnsembleClassifier or "
            "TreeEnsembleRegressor with only Cast, Identity, ZipMap, a product by one and a "
            "Concat of its inputs around it"
        )
    (op,) = ops
    if op.op_type not in (CLASSIFIER, REGRESSOR):
        raise ModelError(
            f"{op.op_type}: the checker reads TreeEnsembleClassifier and TreeEnsembleRegressor"
        )
    names, float32 = _features(g)
    float32 = _compared_in_float32(g, op, float32)
    _outputs_of_the_trees(g, op)
    a = _attributes(op)
    if a.get("aggregate_function", "SUM") != "SUM":
        raise ModelError("an ensemble whose trees are not summed")
    post = a.get("post_transform", "NONE")
    base = [float(b) for b in a.get("base_values_as_tensor", a.get("base_values", []))]
    if op.op_type == REGRESSOR:
        scoring = _regressor(a, post, base)
    else:
        scoring = _classifier(a, post, base)
    trees = _trees(a, scoring, test, float32)
    if names is None:  # one input [N, F] of unknown F: as many as the trees read
        names = [f"f{i}" for i in range(1 + max(f for t in trees for f in t.feature))]
    offsets = scoring.offsets if scoring.n_outputs > 1 else ()
    return Model(
        trees,
        scoring.offsets[0] if scoring.n_outputs == 1 else 0.0,
        test,
        names,
        1.0,
        float32=float32,
        link=scoring.link,
        float32_sums=float32,
        # onnxruntime's post_transform (LOGISTIC, SOFTMAX) computes P in float32
        float32_link=scoring.link in ("logistic", "softmax"),
        offsets=offsets,
        task=scoring.task,
        reads_nan=True,
    )


@dataclass(frozen=True)
class _Scoring:
    link: str
    offsets: tuple[float, ...]  # per output
    prefix: str  # "class" or "target": the attributes of the leaves' weights
    task: str = "classifier"
    score_class: int = 0  # of one score: the class id whose weights make it

    @property
    def n_outputs(self) -> int:
        return len(self.offsets)


def _regressor(a: dict, post: str, base: list[float]) -> _Scoring:
    if int(a.get("n_targets", 1)) != 1 or any(int(t) != 0 for t in a["target_ids"]):
        raise ModelError("the checker reads regressors of one target")
    if post != "NONE":
        raise ModelError(f"a regressor with post_transform {post}: the checker reads NONE")
    if len(base) > 1:
        raise ModelError(f"{len(base)} base values for one target")
    return _Scoring("identity", (base[0] if base else 0.0,), "target", "regressor")


def _classifier(a: dict, post: str, base: list[float]) -> _Scoring:
    labels = a.get("classlabels_int64s") or a.get("classlabels_strings") or []
    weights = [float(w) for w in a.get("class_weights_as_tensor", a.get("class_weights", []))]
    ids = {int(c) for c in a["class_ids"]}
    n = len(labels)
    if n == 2:
        if ids == {0, 1} and post == "LOGISTIC" and not base and _opposite_scores(a):
            return _Scoring("logistic", (0.0,), "class", score_class=1)
        if ids - {0}:
            raise ModelError(
                "the checker reads binary classifiers with one score (class id 0), or two "
                "opposite ones under LOGISTIC (class 0's weight minus class 1's on every leaf)"
            )
        if len(base) > 1:
            raise ModelError(f"{len(base)} base values for one score")
        if post == "LOGISTIC":
            link = "logistic"
        elif post == "NONE" and all(w >= 0 for w in weights):
            link = "proba"
        else:
            raise ModelError(
                f"post_transform {post}: the checker reads NONE (a forest) and LOGISTIC"
            )
        return _Scoring(link, (base[0] if base else 0.0,), "class")
    if n < 2 or not ids <= set(range(n)):
        raise ModelError(f"{n} classes and class ids {sorted(ids)[:5]}")
    if len(base) not in (0, n):
        raise ModelError(f"{len(base)} base values for {n} classes")
    offsets = tuple(base) if base else (0.0,) * n
    if post == "SOFTMAX":
        return _Scoring("softmax", offsets, "class")
    if post == "NONE" and all(w >= 0 for w in weights) and all(b >= 0 for b in offsets):
        return _Scoring("proba", offsets, "class")
    raise ModelError(
        f"a multiclass classifier with post_transform {post}: the checker reads SOFTMAX, "
        "and NONE with weights >= 0 (a forest's probabilities)"
    )


def _opposite_scores(a: dict) -> bool:
    """Does every leaf (mode LEAF) weigh class 0 and class 1, class 0's sum of weights
    minus class 1's?"""
    weights = a.get("class_weights_as_tensor", a.get("class_weights", []))
    sums: dict[tuple[int, int], dict[int, float]] = defaultdict(lambda: defaultdict(float))
    for t, i, c, w in zip(a["class_treeids"], a["class_nodeids"], a["class_ids"], weights):
        sums[(int(t), int(i))][int(c)] += float(w)
    leaves = {
        (int(t), int(i))
        for t, i, m in zip(a["nodes_treeids"], a["nodes_nodeids"], a["nodes_modes"])
        if m == "LEAF"
    }
    return (
        bool(leaves)
        and all(set(sums[k]) == {0, 1} and sums[k][0] == -sums[k][1] for k in leaves)
        and set(sums) <= leaves
    )


def _features(g) -> tuple[list[str] | None, bool]:
    """The features' names (None: ``f0 ..`` as many as read) and whether they are float32:
    one input [N, F] (``f0 .. f{F-1}``), or inputs [N, k] joined by one Concat on axis 1
    in its order (an input's name, or ``NAME_0 ..`` for k > 1), all of one precision."""
    inputs = {i.name: i for i in g.input if i.name not in {t.name for t in g.initializer}}
    types = {i.type.tensor_type.elem_type for i in inputs.values()}
    dims = [i.type.tensor_type.shape.dim for i in inputs.values()]
    if len(types) != 1 or not types <= {_FLOAT, _DOUBLE} or any(len(d) != 2 for d in dims):
        raise ModelError("the checker reads float or double input tensors [N, F] of one precision")
    float32 = types == {_FLOAT}
    concats = [n for n in g.node if n.op_type == "Concat"]
    if not concats:
        if len(inputs) != 1:
            raise ModelError("the checker reads one input tensor [N, F], or a Concat of inputs")
        (only,) = inputs.values()
        n = int(only.type.tensor_type.shape.dim[1].dim_value)
        return ([f"f{i}" for i in range(n)] if n else None), float32
    (concat,) = concats if len(concats) == 1 else (None,)
    axis = {a.name: a.i for a in concat.attribute}.get("axis") if concat is not None else None
    if concat is None or axis not in (1, -1) or sorted(concat.input) != sorted(inputs):
        raise ModelError("the checker reads one Concat (axis 1) of every graph input")
    names = []
    for name in concat.input:
        k = int(inputs[name].type.tensor_type.shape.dim[1].dim_value)
        if k < 1:
            raise ModelError(f"input {name} has no fixed number of columns")
        names += [name] if k == 1 else [f"{name}_{i}" for i in range(k)]
    return names, float32


def _compared_in_float32(g, op, float32: bool) -> bool:
    """Whether the ensemble compares float32 values: its input traced back to the graph's
    inputs (through Identity, a product by one, Cast and the Concat of the inputs) is
    float32 when the inputs are or a Cast on the way makes it so; a Cast to double keeps
    the inputs' values, one to any other type (an integer, float16) is refused."""
    import onnx

    made = {out: n for n in g.node for out in n.output}
    name, seen = op.input[0], set()
    while name in made and name not in seen:
        seen.add(name)
        node = made[name]
        if node.op_type == "Cast":
            to = {a.name: a.i for a in node.attribute}.get("to")
            if to not in (_FLOAT, _DOUBLE):
                kind = onnx.TensorProto.DataType.Name(to) if to is not None else "no type"
                raise ModelError(
                    f"a Cast to {kind} before the trees: the checker reads float or double"
                )
            float32 = float32 or to == _FLOAT
        elif node.op_type == "Concat":
            return float32  # of the graph's inputs (``_features``)
        elif node.op_type not in ("Identity", "Mul", "Div"):  # Mul, Div: by one (read_onnx)
            raise ModelError(f"a {node.op_type} before the trees")
        name = node.input[0]
    return float32


def _outputs_of_the_trees(g, op) -> None:
    """Every graph output must be one of the ensemble's, through Identity, ZipMap, a
    product by one or a Cast (the scores' only to float or double: a Cast to an integer
    would make them other numbers than the trees' sums): the checker's claim is about the
    trees' scores, and a graph may output something else (its input itself)."""
    import onnx

    made = {out: n for n in g.node for out in n.output}
    scores = op.output[-1]  # a classifier's second output, a regressor's only one
    for out in g.output:
        name, seen, through_cast = out.name, set(), None
        while name in made and made[name] is not op and name not in seen:
            seen.add(name)
            node = made[name]
            if node.op_type == "Cast":
                to = {a.name: a.i for a in node.attribute}.get("to")
                if to not in (_FLOAT, _DOUBLE):
                    through_cast = to
            elif node.op_type not in ("Identity", "ZipMap", "Mul", "Div"):
                break
            name = node.input[0]
        if name not in op.output:
            raise ModelError(f"the graph's output {out.name!r} is not one the trees compute")
        if name == scores and through_cast is not None:
            kind = onnx.TensorProto.DataType.Name(through_cast)
            raise ModelError(f"the graph's output {out.name!r} casts the scores to {kind}")


def _attributes(op) -> dict:
    import onnx

    out = {}
    for at in op.attribute:
        v = onnx.helper.get_attribute_value(at)
        if isinstance(v, onnx.TensorProto):
            v = onnx.numpy_helper.to_array(v).tolist()
        elif isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, list) and v and isinstance(v[0], bytes):
            v = [x.decode() for x in v]
        out[at.name] = v
    return out


def _trees(a: dict, scoring: _Scoring, test: str, float32: bool) -> list[Tree]:
    prefix, n_out = scoring.prefix, scoring.n_outputs
    values = list(a.get("nodes_values_as_tensor", a.get("nodes_values", [])))
    nodes: dict[int, dict[int, tuple]] = defaultdict(dict)
    ids = list(zip(a["nodes_treeids"], a["nodes_nodeids"], strict=True))
    tracks = list(a.get("nodes_missing_value_tracks_true", [])) or [0] * len(ids)
    if len(tracks) != len(ids):
        raise ModelError("nodes_missing_value_tracks_true is not one flag per node")
    for k, (t, i) in enumerate(ids):
        nodes[t][i] = (
            a["nodes_modes"][k],
            int(a["nodes_featureids"][k]),
            float(values[k]),
            int(a["nodes_truenodeids"][k]),
            int(a["nodes_falsenodeids"][k]),
            bool(tracks[k]),
        )
    weights = a.get(f"{prefix}_weights_as_tensor", a.get(f"{prefix}_weights", []))
    # (tree, leaf) -> output -> the sum of its weights (onnxruntime adds every one)
    leaf_weight: dict[tuple[int, int], dict[int, float]] = defaultdict(lambda: defaultdict(float))
    cols = zip(a[f"{prefix}_treeids"], a[f"{prefix}_nodeids"], a[f"{prefix}_ids"], weights)
    for t, i, c, w in cols:
        if n_out > 1:
            leaf_weight[(t, i)][int(c)] += float(w)
        elif int(c) == scoring.score_class:  # of two opposite scores, class 1's
            leaf_weight[(t, i)][0] += float(w)
    return [_tree(nodes[t], t, leaf_weight, test, float32, n_out) for t in sorted(nodes)]


def _tree(nodes: dict, tid: int, leaf_weight: dict, test: str, float32: bool, n_out: int) -> Tree:
    feature, threshold, left, right, value, nan_left = [], [], [], [], [], []
    per_output: list[dict[int, float]] = []
    root = 0 if 0 in nodes else min(nodes)

    def new(f: int, t: float, nan_goes_left: bool) -> int:
        if len(feature) >= MAX_NODES:
            raise ModelError(f"tree {tid}: equality chains copy it beyond {MAX_NODES:,} nodes")
        for col in (feature, threshold, left, right, value):
            col.append(0)
        feature[-1], threshold[-1] = f, t
        nan_left.append(nan_goes_left)
        per_output.append({})
        return len(feature) - 1

    def add(key: int, depth: int) -> int:
        if depth > len(nodes):
            raise ModelError(f"tree {tid} has a cycle")
        if key not in nodes:
            raise ModelError(f"tree {tid} refers to node {key}, which it does not have")
        mode, f, t, true, false, nan_true = nodes[key]
        if mode == "LEAF":
            i = new(-1, 0.0, False)
            left[i], right[i] = -1, -1
            per_output[i] = dict(leaf_weight.get((tid, key), {}))
            return i
        if mode in (EQ, NEQ):
            return chain(_chain(nodes, key, tid, float32), depth)
        if mode not in (LEQ, LT, GTE, GT):
            raise ModelError(f"tree {tid}: mode {mode} is not checked")
        if mode in (GTE, GT):  # the negation of LT / LEQ: the children swap
            true, false = false, true
        less_equal = mode in (LEQ, GT)
        # NaN goes "true" (left, or right once swapped) where the flag is set
        i = new(f, _threshold(t, less_equal, test, float32), nan_true != (mode in (GTE, GT)))
        left[i] = add(true, depth + 1)
        right[i] = add(false, depth + 1)
        return i

    def chain(c: _Chain, depth: int) -> int:
        """The search over the chain's points in order (the module's docstring)."""
        order = sorted(range(len(c.points)), key=lambda j: c.points[j][0])
        nan_at = None if c.nan is None else order.index(c.nan)  # in sorted order
        below_depth = depth + c.length

        def search(lo: int, hi: int) -> int:  # the points order[lo:hi] and the gaps around
            if lo == hi:
                return add(c.rest, below_depth)
            m = (lo + hi) // 2
            t, equal = c.points[order[m]]
            lower = new(c.feature, _threshold(t, False, test, float32), _below(nan_at, m))
            left[lower] = search(lo, m)
            at = new(c.feature, _threshold(t, True, test, float32), nan_at == m)
            right[lower] = at
            left[at] = add(equal, below_depth)
            right[at] = search(m + 1, hi)
            return lower

        return search(0, len(order))

    add(root, 0)
    nan = {"default_left": [bool(b) for b in nan_left], "missing": ["nan"] * len(feature)}
    used = {k for w in per_output for k in w}
    if len(used) <= 1:  # the tree adds to one output: a value per leaf
        k = next(iter(used), 0)
        value = [w.get(k, 0.0) for w in per_output]
        return Tree(feature, threshold, left, right, value, output=k, **nan)
    values = [[w.get(k, 0.0) for k in range(n_out)] for w in per_output]
    return Tree(feature, threshold, left, right, [0.0] * len(feature), values=values, **nan)


def _below(a: int | None, b: int) -> bool:
    return a is not None and a < b


@dataclass(frozen=True)
class _Chain:
    """Equality nodes on one feature, each the "not equal" child of the one before."""

    feature: int
    points: list[tuple[float, int]]  # (t, the "equal" child), in the chain's order
    rest: int  # the last node's "not equal" child
    nan: int | None  # the point whose "equal" child NaN takes; None: the rest
    length: int  # nodes in the chain


def _chain(nodes: dict, key: int, tid: int, float32: bool) -> _Chain:
    """The chain of equality nodes from ``key``: a number goes to the "equal" child of the
    first node whose point it equals; NaN as onnxruntime sends it, node after node."""
    feature = nodes[key][1]
    points: dict[float, int] = {}
    nan: int | None = None
    nan_left_chain = False  # NaN has taken an "equal" child
    seen: set[int] = set()
    while True:
        mode, f, t, true, false, nan_true = nodes[key]
        seen.add(key)
        if not np.isfinite(t) or (float32 and float(np.float32(t)) != t):
            raise ModelError(
                f"tree {tid}: node {key} tests x == {t!r}, no finite number of the input's "
                "precision"
            )
        equal, other = (true, false) if mode == EQ else (false, true)
        repeated = t in points  # x == t took an earlier node's "equal" child
        if not repeated:
            points[t] = equal
        # NaN != t holds (NEQ: "true", on along the chain); NaN == t fails: "false" (on)
        # unless the flag sends it "true" (EQ: the "equal" child)
        if mode == EQ and nan_true and not nan_left_chain:
            if repeated:
                raise ModelError(f"tree {tid}: node {key} sends NaN to a child no number reaches")
            nan, nan_left_chain = len(points) - 1, True
        following = nodes.get(other)
        if following is None or following[0] not in (EQ, NEQ) or following[1] != feature:
            return _Chain(feature, list(points.items()), other, nan, len(seen))
        if other in seen:
            raise ModelError(f"tree {tid} has a cycle")
        key = other


def _threshold(t: float, less_equal: bool, test: str, float32: bool) -> float:
    """The threshold of ``x <= t`` (``less_equal``) or ``x < t`` under ``test``, exactly
    for inputs of the comparison's precision. ``x <= inf`` holds for every number (inf
    too), which no ``x < b`` states, and ``x < -inf`` for none, which no ``x <= b`` states:
    refused."""
    if np.isinf(t) and less_equal == (t > 0) and less_equal != (test == "<="):
        raise ModelError(f"a split x {'<=' if less_equal else '<'} {t} under the test {test!r}")
    if not float32:
        if less_equal == (test == "<="):
            return t
        return float(np.nextafter(t, -np.inf if test == "<=" else np.inf))
    f = np.float32(t)
    if less_equal == (test == "<=") and float(f) == t:
        return t
    if test == "<=":  # the largest float32 x with x (<= or <) t
        below = f if (float(f) <= t if less_equal else float(f) < t) else None
        if below is None:
            below = np.nextafter(f, np.float32(-np.inf))
        return float(below)
    # test "<": the smallest float32 x where x (<= or <) t fails
    above = f if (float(f) > t if less_equal else float(f) >= t) else None
    if above is None:
        above = np.nextafter(f, np.float32(np.inf))
    return float(above)
