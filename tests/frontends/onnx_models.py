"""Test helpers (not tests): tiny ONNX tree-ensemble models, written by skl2onnx and
onnxmltools from fitted models, or built node by node with onnx.helper for the operator
layouts and modes the converters do not write; and the probe rows the IR is checked on."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import Ensemble

onnx = __import__("pytest").importorskip("onnx")
__import__("pytest").importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

FLOAT, DOUBLE = TensorProto.FLOAT, TensorProto.DOUBLE


def data(n: int = 200, n_features: int = 3, seed: int = 0):
    """(X float32, binary y, 3-class y, regression y)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, n_features)).astype(np.float32)
    yb = (X[:, 0] + X[:, 1] > 1).astype(int)
    y3 = np.minimum((X[:, 0] * 3).astype(int), 2)
    yr = 2.0 * X[:, 0] + X[:, 1] ** 2
    return X, yb, y3, yr


def sklearn_onnx(est, X, **kw) -> bytes:
    """skl2onnx's model of a fitted scikit-learn estimator."""
    from skl2onnx import to_onnx

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return to_onnx(est, X[:1], **kw).SerializeToString()


def onnxmltools_model(est, n_features: int, **options) -> bytes:
    """onnxmltools' model of a fitted XGBoost or LightGBM estimator (``options``: the
    converter's, e.g. zipmap=False)."""
    import onnxmltools
    from onnxmltools.convert.common.data_types import FloatTensorType

    types = [("input", FloatTensorType([None, n_features]))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if type(est).__module__.startswith("xgboost"):
            return onnxmltools.convert_xgboost(
                est, initial_types=types, **options
            ).SerializeToString()
        return onnxmltools.convert_lightgbm(est, initial_types=types, **options).SerializeToString()


def dataframe_onnx(est, df, y, initial_types=None) -> bytes:
    """skl2onnx's model of ``est`` fitted on (df, y) behind a ColumnTransformer passing the
    DataFrame's columns through: one graph input [N, 1] per column (of the column's dtype,
    or as ``initial_types`` says) joined by a Concat."""
    from skl2onnx import to_onnx
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    columns = ColumnTransformer([("columns", "passthrough", list(df.columns))])
    pipe = Pipeline([("columns", columns), ("model", est)]).fit(df, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if initial_types is not None:
            return to_onnx(pipe, initial_types=initial_types).SerializeToString()
        return to_onnx(pipe, df[:1]).SerializeToString()


def with_columns(blob: bytes, names, in_types=FLOAT, axis: int = 1, cast_to=None) -> bytes:
    """A node-built model (input X [N, F]) fed instead by one graph input [N, 1] per name
    (of ``in_types``, one or one per name), each through a Cast(``cast_to``) when given,
    joined by a Concat along ``axis`` into X."""
    model = onnx.load_model_from_string(blob)
    g = model.graph
    types = in_types if isinstance(in_types, (list, tuple)) else [in_types] * len(names)
    del g.input[:]
    nodes, joined = [], []
    for name, t in zip(names, types):
        g.input.append(helper.make_tensor_value_info(name, t, [None, 1]))
        if cast_to is not None:
            nodes.append(helper.make_node("Cast", [name], [f"{name}_cast"], to=cast_to))
        joined.append(name if cast_to is None else f"{name}_cast")
    nodes.append(helper.make_node("Concat", joined, ["X"], axis=axis, name="join"))
    for i, node in enumerate(nodes):
        g.node.insert(i, node)
    return model.SerializeToString()


def onnxruntime_run(blob: bytes, row: dict, names) -> dict:
    """onnxruntime's outputs on one row ({feature: value}), fed as the graph's inputs ask:
    X [1, F] from ``names`` for one input, else one [1, 1] array per input named by it."""
    import onnxruntime as ort

    s = ort.InferenceSession(blob, providers=["CPUExecutionProvider"])
    dtypes = {"tensor(float)": np.float32, "tensor(double)": np.float64}
    inputs = s.get_inputs()
    if len(inputs) == 1 and inputs[0].name not in row:
        feeds = {inputs[0].name: np.array([[row[n] for n in names]], dtype=dtypes[inputs[0].type])}
    else:
        feeds = {i.name: np.array([[row[i.name]]], dtype=dtypes[i.type]) for i in inputs}
    return dict(zip((o.name for o in s.get_outputs()), s.run(None, feeds)))


def write(folder: Path, name: str, blob: bytes) -> Path:
    path = Path(folder) / name
    path.write_bytes(blob)
    return path


def refused(tmp_path: Path, blob: bytes, *words, kind) -> str:
    """The message of the one-line error of loading ``blob``: it names the file and holds
    ``words``."""
    path = write(tmp_path, "m.onnx", blob)
    with pytest.raises(kind) as e:
        treesens.load_model(path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    for w in words:
        assert w in msg, msg
    return msg


def stump_nodes(mode: str = "BRANCH_LEQ", threshold: float = 0.5, tracks: int = 0) -> dict:
    """One tree: node 0 splits feature 0 (true -> node 1, false -> node 2), two leaves."""
    return dict(
        nodes_treeids=[0, 0, 0],
        nodes_nodeids=[0, 1, 2],
        nodes_featureids=[0, 0, 0],
        nodes_modes=[mode, "LEAF", "LEAF"],
        nodes_values=[threshold, 0.0, 0.0],
        nodes_truenodeids=[1, 0, 0],
        nodes_falsenodeids=[2, 0, 0],
        nodes_missing_value_tracks_true=[tracks, 0, 0],
    )


def two_level_nodes(modes: tuple[str, str, str], thresholds, tracks=(0, 0, 0)) -> dict:
    """One depth-2 tree on features 0, 1, 1 (nodes 0, 1, 4 split; 2, 3, 5, 6 leaves)."""
    return dict(
        nodes_treeids=[0] * 7,
        nodes_nodeids=list(range(7)),
        nodes_featureids=[0, 1, 0, 0, 1, 0, 0],
        nodes_modes=[modes[0], modes[1], "LEAF", "LEAF", modes[2], "LEAF", "LEAF"],
        nodes_values=[thresholds[0], thresholds[1], 0, 0, thresholds[2], 0, 0],
        nodes_truenodeids=[1, 2, 0, 0, 5, 0, 0],
        nodes_falsenodeids=[4, 3, 0, 0, 6, 0, 0],
        nodes_missing_value_tracks_true=[tracks[0], tracks[1], 0, 0, tracks[2], 0, 0],
    )


def equality_chain_nodes(points, modes, tracks) -> dict:
    """One tree: a chain of equality splits on feature 0 (split i's "equal" child is leaf
    i, its other child the next split; the last one's is the rest, a split on feature 1)."""
    k = len(points)
    split, leaf = list(range(k)), list(range(k, 2 * k))
    rest, rest_leaves = 2 * k, (2 * k + 1, 2 * k + 2)
    nodes = {name: [] for name in stump_nodes()}
    for i, (t, mode, tr) in enumerate(zip(points, modes, tracks)):
        nxt = split[i + 1] if i + 1 < k else rest
        eq, ne = (leaf[i], nxt) if mode == "BRANCH_EQ" else (nxt, leaf[i])
        for name, v in (
            ("nodes_nodeids", split[i]),
            ("nodes_featureids", 0),
            ("nodes_modes", mode),
            ("nodes_values", t),
            ("nodes_truenodeids", eq),
            ("nodes_falsenodeids", ne),
            ("nodes_missing_value_tracks_true", tr),
        ):
            nodes[name].append(v)
    for key, mode, t in [(rest, "BRANCH_LEQ", 0.5)] + [
        (n, "LEAF", 0.0) for n in (*leaf, *rest_leaves)
    ]:
        children = rest_leaves if key == rest else (0, 0)
        for name, v in (
            ("nodes_nodeids", key),
            ("nodes_featureids", 1 if key == rest else 0),
            ("nodes_modes", mode),
            ("nodes_values", t),
            ("nodes_truenodeids", children[0]),
            ("nodes_falsenodeids", children[1]),
            ("nodes_missing_value_tracks_true", 0),
        ):
            nodes[name].append(v)
    nodes["nodes_treeids"] = [0] * len(nodes["nodes_nodeids"])
    return nodes


def classifier(
    nodes: dict,
    weights: list[tuple[int, int, float]],
    labels=(0, 1),
    post: str = "NONE",
    base=None,
    in_type=FLOAT,
    n_features: int = 2,
    zipmap: bool = False,
    extra_nodes=(),
    **attrs,
) -> bytes:
    """A TreeEnsembleClassifier graph; ``weights``: (node id, class id, weight) of tree 0."""
    kw = dict(nodes)
    kw.update(
        class_treeids=[0] * len(weights),
        class_nodeids=[w[0] for w in weights],
        class_ids=[w[1] for w in weights],
        class_weights=[w[2] for w in weights],
        post_transform=post,
    )
    strings = isinstance(labels[0], str)
    kw["classlabels_strings" if strings else "classlabels_int64s"] = list(labels)
    if base is not None:
        kw["base_values"] = list(base)
    kw.update(attrs)
    node = helper.make_node(
        "TreeEnsembleClassifier", ["X"], ["label", "scores"], domain="ai.onnx.ml", **kw
    )
    label_type = TensorProto.STRING if strings else TensorProto.INT64
    outputs = [helper.make_tensor_value_info("label", label_type, [None])]
    graph_nodes = [node, *extra_nodes]
    if zipmap:
        key = "classlabels_strings" if strings else "classlabels_int64s"
        graph_nodes.append(
            helper.make_node(
                "ZipMap", ["scores"], ["probabilities"], domain="ai.onnx.ml", **{key: list(labels)}
            )
        )
        value = helper.make_tensor_type_proto(TensorProto.FLOAT, [])
        map_type = helper.make_map_type_proto(label_type, value)
        outputs.append(
            helper.make_value_info("probabilities", helper.make_sequence_type_proto(map_type))
        )
    else:
        outputs.append(
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, len(labels)])
        )
    return _model(graph_nodes, in_type, n_features, outputs)


def regressor(
    nodes: dict,
    weights: list[tuple[int, float]],
    post: str = "NONE",
    base=None,
    aggregate: str = "SUM",
    in_type=FLOAT,
    n_features: int = 2,
    **attrs,
) -> bytes:
    """A TreeEnsembleRegressor graph; ``weights``: (node id, weight) of its trees' leaves
    (tree ids from ``nodes``: a leaf's tree is the one that lists it first)."""
    tree_of = {}
    for t, n in zip(nodes["nodes_treeids"], nodes["nodes_nodeids"]):
        tree_of.setdefault(n, t)
    kw = dict(nodes)
    kw.update(
        n_targets=1,
        target_treeids=[w[2] if len(w) > 2 else tree_of[w[0]] for w in weights],
        target_nodeids=[w[0] for w in weights],
        target_ids=[0] * len(weights),
        target_weights=[w[1] for w in weights],
        post_transform=post,
        aggregate_function=aggregate,
    )
    if base is not None:
        kw["base_values"] = list(base)
    kw.update(attrs)
    node = helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain="ai.onnx.ml", **kw)
    out = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, 1])
    return _model([node], in_type, n_features, [out])


def tree_ensemble_v5(
    modes: list[int],
    splits: list[float],
    features: list[int],
    true_ids,
    true_leaf,
    false_ids,
    false_leaf,
    leaf_weights: list[float],
    roots: list[int],
    tracks=None,
    post: int = 0,
    aggregate: int = 1,
    n_features: int = 2,
    targets=None,
) -> bytes:
    """A TreeEnsemble (ai.onnx.ml 5) graph; ``targets``: each leaf's target (all 0)."""
    targets = list(targets or [0] * len(leaf_weights))
    n_targets = max(targets) + 1
    node = helper.make_node(
        "TreeEnsemble",
        ["X"],
        ["Y"],
        domain="ai.onnx.ml",
        n_targets=n_targets,
        aggregate_function=aggregate,
        post_transform=post,
        tree_roots=roots,
        nodes_featureids=features,
        nodes_modes=numpy_helper.from_array(np.array(modes, dtype=np.uint8)),
        nodes_splits=numpy_helper.from_array(np.array(splits, dtype=np.float32)),
        nodes_truenodeids=list(true_ids),
        nodes_trueleafs=list(true_leaf),
        nodes_falsenodeids=list(false_ids),
        nodes_falseleafs=list(false_leaf),
        nodes_missing_value_tracks_true=list(tracks or [0] * len(modes)),
        leaf_targetids=targets,
        leaf_weights=numpy_helper.from_array(np.array(leaf_weights, dtype=np.float32)),
    )
    out = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, n_targets])
    return _model([node], FLOAT, n_features, [out], ml_opset=5, opset=21)


def _model(nodes, in_type, n_features, outputs, ml_opset: int = 3, opset: int = 17) -> bytes:
    inp = helper.make_tensor_value_info("X", in_type, [None, n_features])
    graph = helper.make_graph(nodes, "trees", [inp], outputs)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("ai.onnx.ml", ml_opset)],
    )
    model.ir_version = 9
    return model.SerializeToString()


def with_cast_in_front(blob: bytes, to: int = FLOAT, in_type=DOUBLE) -> bytes:
    """The model fed through a Cast(to) from a graph input of ``in_type``."""
    model = onnx.load_model_from_string(blob)
    g = model.graph
    ensemble = g.node[0]
    ensemble.input[0] = "X_cast"
    g.node.insert(0, helper.make_node("Cast", ["X"], ["X_cast"], to=to))
    g.input[0].type.tensor_type.elem_type = in_type
    return model.SerializeToString()


def with_double_tensors(blob: bytes, thresholds) -> bytes:
    """The model with a double input and its thresholds (these doubles), weights and base
    values as double tensors (``*_as_tensor``), as onnxruntime reads them for a double
    input only."""
    model = onnx.load_model_from_string(blob)
    node = model.graph.node[0]
    for a in list(node.attribute):
        if a.name in ("nodes_values", "class_weights", "target_weights", "base_values"):
            values = np.array(thresholds if a.name == "nodes_values" else list(a.floats))
            node.attribute.remove(a)
            tensor = numpy_helper.from_array(values.astype(np.float64))
            node.attribute.append(helper.make_attribute(f"{a.name}_as_tensor", tensor))
    model.graph.input[0].type.tensor_type.elem_type = DOUBLE
    return model.SerializeToString()


def probe_rows(ens: Ensemble, thresholds=(), n: int = 300, seed: int = 1) -> np.ndarray:
    """Random rows, rows with NaN, and rows placed on every threshold (the IR's and the
    given ones) and one float32 / float64 step either side of it."""
    rng = np.random.default_rng(seed)
    F = ens.n_features
    R = rng.uniform(-0.5, 1.5, size=(n, F))
    rows = [R]
    points = [
        (int(t.feature[k]), float(t.threshold[k]))
        for t in ens.trees
        for k in np.flatnonzero(t.feature >= 0)
    ]
    points += list(thresholds)
    for f, th in points:
        t32 = np.float32(th)
        for v in (
            th,
            np.nextafter(th, -np.inf),
            np.nextafter(th, np.inf),
            float(t32),
            float(np.nextafter(t32, np.float32(np.inf))),
            float(np.nextafter(t32, np.float32(-np.inf))),
        ):
            r = R[:3].copy()
            r[:, f] = v
            rows.append(r)
    m = R[:20].copy()
    m[:, 0] = np.nan
    m[::2, -1] = np.nan
    rows.append(m)
    return np.concatenate(rows)


def onnx_thresholds(blob: bytes) -> list[tuple[int, float]]:
    """(feature, threshold) of every split of the model's tree-ensemble operator."""
    model = onnx.load_model_from_string(blob)
    out = []
    for node in model.graph.node:
        a = {x.name: helper.get_attribute_value(x) for x in node.attribute}
        if "nodes_values" in a:
            modes = [m.decode() if isinstance(m, bytes) else m for m in a["nodes_modes"]]
            out += [
                (int(f), float(v))
                for f, v, m in zip(a["nodes_featureids"], a["nodes_values"], modes)
                if m != "LEAF"
            ]
    return out
