"""A model file whose trees are not trees is refused in one line naming the tree and the
node: the libraries load such files without a word (XGBoost does), and the checker
walked them as they came (a cycle: forever; a child out of range: a Python error called
a malformed certificate; a NaN threshold: both sides at once)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from treesens.verify import verify_file
from treesens.verify.models import ModelError, Tree, malformed, read_model


def _stump_model(folder, edit) -> str:
    """An XGBoost model of stumps (node 0 splits, nodes 1 and 2 are leaves) with
    ``edit(tree)`` applied to its first tree's JSON."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 2))
    params = {"objective": "binary:logistic", "max_depth": 1}
    booster = xgboost.train(params, xgboost.DMatrix(X, (X[:, 0] > 0.5).astype(int)), 2)
    doc = json.loads(booster.save_raw("json"))
    edit(doc["learner"]["gradient_booster"]["model"]["trees"][0])
    path = folder / "m.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _cycle(tree: dict) -> None:  # leaf 1 becomes a split whose left child is the root
    tree["left_children"][1], tree["right_children"][1] = 0, 2


def test_a_tree_with_a_cycle_is_refused(tmp_path):
    with pytest.raises(ModelError, match="tree 0 is malformed: node . is reached twice"):
        read_model(_stump_model(tmp_path, _cycle), "xgboost")


def test_a_child_out_of_range_is_refused_as_the_models_fault(tmp_path):
    def edit(tree):
        tree["right_children"][0] = 99

    with pytest.raises(ModelError, match="node 0's child 99 is no node of the tree"):
        read_model(_stump_model(tmp_path, edit), "xgboost")


def test_a_nan_threshold_is_refused(tmp_path):
    def edit(tree):
        tree["split_conditions"][0] = float("nan")

    with pytest.raises(ModelError, match="node 0's threshold is NaN"):
        read_model(_stump_model(tmp_path, edit), "xgboost")


def test_a_certificate_of_a_model_with_a_cycle_is_invalid_in_one_line(tmp_path):
    """(the walk of its leaves never ended)"""
    model = _stump_model(tmp_path, _cycle)
    doc = {
        "format": "treesens-certificate",
        "version": 2,
        "model": {"file": model, "sha256": _sha(model), "library": "xgboost"},
        "question": {
            "features": ["f0", "f1"],
            "vary": ["f0"],
            "claim": {"kind": "gap", "gap": 0.45, "gap_kind": "prob"},
            "domain": [{"lb": 0, "ub": 1, "integer": False}] * 2,
        },
        "columns": [[0, 1], [0, 2], [1, None]],
        "parts": [{"proof": [["prune", "x1", 0.0]]}],
    }
    (tmp_path / "c.json").write_text(json.dumps(doc))
    verdict = verify_file(tmp_path / "c.json")
    assert not verdict.valid
    assert verdict.message.startswith("cannot check this model: tree 0 is malformed")


def _sha(path: str) -> str:
    import hashlib

    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _tree(**change) -> Tree:
    """x0 <= 0.5 ? 1.0 : -1.0, with ``change`` applied."""
    fields = {
        "feature": [0, -1, -1],
        "threshold": [0.5, 0.0, 0.0],
        "left": [1, -1, -1],
        "right": [2, -1, -1],
        "value": [0.0, 1.0, -1.0],
    }
    return Tree(**{**fields, **change})


def test_a_well_formed_tree_passes():
    assert malformed(_tree(), 1) is None


def test_a_node_shared_by_two_parents_is_refused():
    t = _tree(feature=[0, 0, -1], left=[1, 2, -1], right=[2, 2, -1], threshold=[0.5, 0.2, 0.0])
    assert "node 2 is reached twice" in malformed(t, 1)


def test_a_leaf_without_a_finite_value_is_refused():
    assert "leaf 2 holds [nan]" in malformed(_tree(value=[0.0, 1.0, float("nan")]), 1)


def test_a_split_on_a_feature_the_model_lacks_is_refused():
    assert "tests feature 3" in malformed(_tree(feature=[3, -1, -1]), 2)


def test_node_lists_of_different_lengths_are_refused():
    assert "one entry per node" in malformed(_tree(value=[0.0, 1.0]), 1)


def test_a_tree_adding_to_an_output_the_model_lacks_is_refused(tmp_path):
    """XGBoost loads a binary model whose ``tree_info`` names output 1 and adds that
    tree into the next row's margin; the checker left the tree out."""
    path = Path(_stump_model(tmp_path, lambda tree: None))
    doc = json.loads(path.read_text())
    doc["learner"]["gradient_booster"]["model"]["tree_info"][1] = 1
    path.write_text(json.dumps(doc))
    with pytest.raises(
        ModelError, match="tree 1 is malformed: it adds to output 1 of a model of 1"
    ):
        read_model(str(path), "xgboost")
