"""ONNX graphs of one input per column joined by a Concat (axis 1), as skl2onnx writes a
pandas DataFrame's columns: the IR agrees with onnxruntime on random rows and rows on
every threshold, the features are the inputs' names, the command line answers with
witnesses onnxruntime replays from one array per input; what the IR cannot state exactly
(columns at two precisions, a Concat along axis 0, a Concat of something other than graph
inputs, an input joined twice) is refused in one line naming it."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.conftest import treesens_here
from treesens.tests.frontends import onnx_models as om
from treesens.tests.frontends.test_onnx_ir import _agrees

pd = pytest.importorskip("pandas")
sk_ensemble = pytest.importorskip("sklearn.ensemble")
pytest.importorskip("skl2onnx")

X, YB, Y3, YR = om.data(150)
COLUMNS = ["age", "income", "score"]
STUMP_WEIGHTS = [(1, 0, 0.25), (2, 0, 0.75)]


def _frame(dtype=np.float32):
    return pd.DataFrame(X.astype(dtype), columns=COLUMNS)


def _forest(df) -> bytes:
    est = sk_ensemble.RandomForestClassifier(3, max_depth=3, random_state=0)
    return om.dataframe_onnx(est, df, YB)


def _boosting_regressor(df) -> bytes:
    est = sk_ensemble.GradientBoostingRegressor(n_estimators=3, max_depth=2, random_state=0)
    return om.dataframe_onnx(est, df, YR)


def _load(tmp_path, blob: bytes, name: str = "m.onnx"):
    return treesens.load_model(om.write(tmp_path, name, blob))


def _refused(tmp_path, blob: bytes, *words, kind=UnsupportedModelError) -> str:
    return om.refused(tmp_path, blob, *words, kind=kind)


def _graph(blob: bytes):
    return om.onnx.load_model_from_string(blob).graph


# ---- what skl2onnx writes for a DataFrame --------------------------------------------------


def test_skl2onnx_writes_one_input_per_column_joined_by_a_concat():
    g = _graph(_forest(_frame()))
    assert [i.name for i in g.input] == COLUMNS
    assert "Concat" in [n.op_type for n in g.node]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_per_column_forest_matches_onnxruntime_on_random_rows_and_thresholds(tmp_path, dtype):
    blob = _forest(_frame(dtype))
    _agrees(_load(tmp_path, blob), blob)


def test_a_per_column_boosting_regressor_matches_onnxruntime(tmp_path):
    # skl2onnx writes a double GradientBoostingRegressor onnxruntime cannot load
    blob = _boosting_regressor(_frame())
    _agrees(_load(tmp_path, blob), blob)


def test_per_column_features_are_the_column_names(tmp_path):
    ens = _load(tmp_path, _forest(_frame()))
    assert [f.name for f in ens.features] == COLUMNS


@pytest.mark.parametrize("dtype, cast", [(np.float32, "float32"), (np.float64, "float64")])
def test_per_column_inputs_are_compared_at_their_precision(tmp_path, dtype, cast):
    assert _load(tmp_path, _forest(_frame(dtype))).cast == cast


def test_initial_types_of_one_float_column_each_load_with_their_names(tmp_path):
    from skl2onnx.common.data_types import FloatTensorType

    df = _frame()
    types = [(c, FloatTensorType([None, 1])) for c in COLUMNS]
    est = sk_ensemble.RandomForestClassifier(3, max_depth=3, random_state=0)
    blob = om.dataframe_onnx(est, df, YB, initial_types=types)
    ens = _load(tmp_path, blob)
    assert [f.name for f in ens.features] == COLUMNS
    _agrees(ens, blob)


def test_an_input_of_several_columns_names_them_name_0_to_name_k_minus_1(tmp_path):
    nodes = om.two_level_nodes(("BRANCH_LEQ",) * 3, (0.5, 0.25, 0.7))
    nodes["nodes_featureids"][4] = 2  # the third column: input c's
    weights = [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)]
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(nodes, weights, n_features=3), ["ab", "c"])
    )
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 2
    blob = model.SerializeToString()
    ens = _load(tmp_path, blob)
    assert [f.name for f in ens.features] == ["ab_0", "ab_1", "c"]
    _agrees(ens, blob)


def test_nested_concats_join_the_columns_in_their_order(tmp_path):
    from skl2onnx import to_onnx
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    df = _frame()
    columns = ColumnTransformer([("s", "passthrough", ["score"])], remainder="passthrough")
    forest = sk_ensemble.RandomForestClassifier(3, max_depth=3, random_state=0)
    pipe = Pipeline([("c", columns), ("m", forest)]).fit(df, YB)
    blob = to_onnx(pipe, df[:1]).SerializeToString()
    assert [n.op_type for n in _graph(blob).node].count("Concat") == 2
    ens = _load(tmp_path, blob)
    assert [f.name for f in ens.features] == ["score", "age", "income"]
    _agrees(ens, blob)


def test_an_input_the_trees_do_not_read_is_a_feature_no_split_uses(tmp_path):
    df = _frame()
    est = sk_ensemble.RandomForestClassifier(3, max_depth=3, random_state=0)
    forest = om.dataframe_onnx(est, df[["score", "age"]], YB)
    model = om.onnx.load_model_from_string(forest)
    extra = om.helper.make_tensor_value_info("income", om.FLOAT, [None, 1])
    model.graph.input.append(extra)
    blob = model.SerializeToString()
    ens = _load(tmp_path, blob)
    assert [f.name for f in ens.features] == ["score", "age", "income"]
    assert all(not (t.feature == 2).any() for t in ens.trees)
    _agrees(ens, blob)


def test_a_per_column_model_pickles_and_replays_in_its_new_life(tmp_path):
    blob = _boosting_regressor(_frame())
    _agrees(pickle.loads(pickle.dumps(_load(tmp_path, blob))), blob)


def test_columns_cast_to_float_before_the_concat_are_compared_as_float32(tmp_path):
    blob = om.with_columns(
        om.classifier(om.stump_nodes(threshold=0.1), STUMP_WEIGHTS),
        ["a", "b"],
        in_types=om.DOUBLE,
        cast_to=om.FLOAT,
    )
    ens = _load(tmp_path, blob)
    assert (ens.cast, [f.name for f in ens.features]) == ("float32", ["a", "b"])
    _agrees(ens, blob)


def test_a_concat_along_axis_minus_1_is_read(tmp_path):
    blob = om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"], axis=-1)
    _agrees(_load(tmp_path, blob), blob)


# ---- the command line -------------------------------------------------------------------


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("columns")
    om.write(folder, "forest.onnx", _forest(_frame()))
    om.write(folder, "boosting.onnx", _boosting_regressor(_frame()))
    return folder


def _replayed(blob: bytes, line: dict) -> None:
    for copy in ("x1", "x2"):
        got = om.onnxruntime_run(blob, line["witness"][copy], COLUMNS)
        zipmap = got.get("output_probability")
        if isinstance(zipmap, list):  # a ZipMap's [{label: probability}]
            lib = [zipmap[0][k] for k in sorted(zipmap[0])]
        else:
            lib = next(v for v in got.values() if v.dtype.kind == "f")[0]
        np.testing.assert_allclose(line["outputs"][copy], lib, rtol=0, atol=1e-6)


def _sensitive_by_cli(path, *question) -> dict:
    """The JSON line of ``treesens check PATH --vary age QUESTION``: sensitive, replayed."""
    p = treesens_here("check", path, "--vary", "age", *question, "--json")
    assert p.returncode == 0, p.stderr
    line = json.loads(p.stdout)
    assert line["status"] == "sensitive" and line["validated"], line
    _replayed(path.read_bytes(), line)
    return line


def test_cli_check_varies_a_column_by_name_with_a_replayed_witness(saved):
    line = _sensitive_by_cli(saved / "forest.onnx", "--gap", "0.05")
    assert sorted(line["witness"]["x1"]) == sorted(COLUMNS)


def test_cli_delta_varies_a_regressor_column_by_name_with_a_replayed_witness(saved):
    line = _sensitive_by_cli(saved / "boosting.onnx", "--delta", "0.3")
    assert abs(line["outputs"]["x1"][0] - line["outputs"]["x2"][0]) >= 0.3


# ---- refused ------------------------------------------------------------------------------


def test_columns_reaching_the_trees_at_two_precisions_are_refused(tmp_path):
    df = _frame(np.float64).astype({"score": np.float32})
    _refused(tmp_path, _forest(df), "'score'", "float32", "'age'", "doubles")


def test_columns_at_two_precisions_on_the_command_line_exit_2_in_one_line(tmp_path):
    df = _frame(np.float64).astype({"score": np.float32})
    path = om.write(tmp_path, "m.onnx", _forest(df))
    p = treesens_here("check", path, "--vary", "age")
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "one precision" in lines[0] and "Traceback" not in p.stderr


def test_a_concat_along_axis_0_is_refused(tmp_path):
    blob = om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"], axis=0)
    _refused(tmp_path, blob, "Concat (join) joins along axis 0")


def test_a_concat_of_a_constant_is_refused(tmp_path):
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"])
    )
    del model.graph.input[1]
    const = om.numpy_helper.from_array(np.zeros((1, 1), dtype=np.float32), name="b")
    model.graph.initializer.append(const)
    _refused(tmp_path, model.SerializeToString(), "joins 'b', a constant, not a graph input")


def test_a_concat_of_another_operator_is_refused_by_its_name(tmp_path):
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"])
    )
    model.graph.node[0].input[1] = "b_abs"
    model.graph.node.insert(0, om.helper.make_node("Abs", ["b"], ["b_abs"], name="abs"))
    _refused(tmp_path, model.SerializeToString(), "operator Abs (abs)")


def test_an_input_joined_twice_is_refused(tmp_path):
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"])
    )
    model.graph.node[0].input[1] = "a"
    _refused(tmp_path, model.SerializeToString(), "input 'a' reaches the trees twice")


def test_an_integer_column_is_refused(tmp_path):
    blob = om.with_columns(
        om.classifier(om.stump_nodes(), STUMP_WEIGHTS),
        ["a", "b"],
        in_types=[om.FLOAT, om.TensorProto.INT64],
        cast_to=om.FLOAT,
    )
    _refused(tmp_path, blob, "input 'b' is not a float or double tensor")


def test_a_column_input_without_a_fixed_width_is_refused(tmp_path):
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"])
    )
    dim = model.graph.input[1].type.tensor_type.shape.dim[1]
    dim.dim_param = "k"
    _refused(tmp_path, model.SerializeToString(), "input 'b' is not a tensor [N, F]")


def test_columns_that_would_share_a_name_are_refused(tmp_path):
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS, n_features=3), ["a", "a_1"])
    )
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 2
    _refused(tmp_path, model.SerializeToString(), "both be named 'a_1'")


def test_a_cycle_through_a_concat_is_refused(tmp_path):
    model = om.onnx.load_model_from_string(
        om.with_columns(om.classifier(om.stump_nodes(), STUMP_WEIGHTS), ["a", "b"])
    )
    model.graph.node[0].input[1] = "X"  # the Concat joins its own output
    _refused(tmp_path, model.SerializeToString(), "Concat join reaches the trees twice")
