"""An ONNX graph may Cast its input before the trees: onnxruntime then compares the cast
values, and the checker reads the trees in the precision they receive (a double input
cast to float compares float32 values), and refuses a Cast to any other type. Its
outputs must be the trees' (the claim is of their scores)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from treesens.verify import verify_file
from treesens.verify.models import ModelError, read_model
from treesens.verify.pair_space import goes_left


def _stump(path, cast_to: int, output: list | None = None) -> None:
    """A double input [N, 2], Cast to ``cast_to``, then one tree: x0 <= 0.5 ? +5 : -5;
    ``output``: the graph's output, (its name, the nodes making it from the trees' "Y" or
    the input "X", its type) in place of "Y"."""
    import onnx
    from onnx import TensorProto, helper

    tree = helper.make_node(
        "TreeEnsembleRegressor",
        ["Xc"],
        ["Y"],
        domain="ai.onnx.ml",
        n_targets=1,
        nodes_treeids=[0, 0, 0],
        nodes_nodeids=[0, 1, 2],
        nodes_featureids=[0, 0, 0],
        nodes_values=[0.5, 0.0, 0.0],
        nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 0, 0],
        nodes_falsenodeids=[2, 0, 0],
        target_treeids=[0, 0],
        target_nodeids=[1, 2],
        target_ids=[0, 0],
        target_weights=[5.0, -5.0],
        post_transform="NONE",
        aggregate_function="SUM",
    )
    name, after, kind = output or ("Y", [], TensorProto.FLOAT)
    graph = helper.make_graph(
        [helper.make_node("Cast", ["X"], ["Xc"], to=cast_to), tree, *after],
        "stump",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE, [None, 2])],
        [helper.make_tensor_value_info(name, kind, None)],
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 3)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.save(model, path)


JUST_ABOVE = 0.50000001  # above 0.5 as a double, 0.5 itself as a float32


def test_a_double_input_cast_to_float_is_compared_as_float32(tmp_path):
    import onnxruntime

    _stump(tmp_path / "m.onnx", 1)  # TensorProto.FLOAT
    m = read_model(str(tmp_path / "m.onnx"), "onnx")
    run = onnxruntime.InferenceSession(str(tmp_path / "m.onnx")).run
    (y,) = run(None, {"X": np.array([[JUST_ABOVE, 0.0]])})
    assert y[0, 0] == 5.0  # onnxruntime: 0.5 <= 0.5, the left leaf
    assert goes_left(m, m.trees[0], 0, JUST_ABOVE)


def test_a_forged_certificate_over_values_the_cast_rounds_down_is_rejected(tmp_path):
    """Varying x0 over (0.5, 1], its stump changes by 10 once cast (0.50000001 is 0.5);
    read in double precision, the checker saw x0 above 0.5 everywhere: one leaf, no
    change, and this one-box proof verified VALID."""
    _stump(tmp_path / "m.onnx", 1)
    domain = [{"lb": JUST_ABOVE, "ub": 1.0, "integer": False}, {"lb": 0, "ub": 1, "integer": False}]
    doc = {
        "format": "treesens-certificate",
        "version": 2,
        "model": {
            "file": "m.onnx",
            "sha256": hashlib.sha256((tmp_path / "m.onnx").read_bytes()).hexdigest(),
            "library": "onnx",
            "test": "<=",
        },
        "question": {
            "features": ["f0", "f1"],
            "vary": ["f0"],
            "claim": {"kind": "change", "delta": 1.0, "direction": "up"},
            "domain": domain,
        },
        "columns": [[0, 1], [0, 2], [1, None]],
        "parts": [{"direction": "up", "proof": [["prune", "change", 0.0]]}],
    }
    (tmp_path / "c.json").write_text(json.dumps(doc))
    verdict = verify_file(tmp_path / "c.json")
    assert not verdict.valid
    assert "change bound is 10" in verdict.message


def test_a_cast_to_an_integer_before_the_trees_is_refused(tmp_path):
    _stump(tmp_path / "m.onnx", 7)  # TensorProto.INT64
    with pytest.raises(ModelError, match="Cast to INT64"):
        read_model(str(tmp_path / "m.onnx"), "onnx")


def test_a_graph_whose_output_is_not_the_trees_is_refused(tmp_path):
    """Its output is its input, whatever the trees say of it."""
    from onnx import helper

    _stump(tmp_path / "m.onnx", 1, ("Z", [helper.make_node("Identity", ["X"], ["Z"])], 11))
    with pytest.raises(ModelError, match="output 'Z' is not one the trees compute"):
        read_model(str(tmp_path / "m.onnx"), "onnx")


def test_a_graph_casting_the_scores_to_an_integer_is_refused(tmp_path):
    from onnx import helper

    _stump(tmp_path / "m.onnx", 1, ("Z", [helper.make_node("Cast", ["Y"], ["Z"], to=7)], 7))
    with pytest.raises(ModelError, match="output 'Z' casts the scores to INT64"):
        read_model(str(tmp_path / "m.onnx"), "onnx")
