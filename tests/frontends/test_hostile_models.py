"""Hostile and unsupported model files: one clear InputError, never a traceback."""

from __future__ import annotations

import contextlib
import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treesens
from treesens.compiler.errors import InputError, UnsupportedModelError
from treesens.tests.conftest import treesens_here
from treesens.tests.fuzzing import json_paths


def _train(**params):
    import xgboost as xgb

    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    base = {"max_depth": 2, "eta": 0.5, "nthread": 1}
    base.update(params)
    return xgb.train(base, xgb.DMatrix(X, label=y), num_boost_round=3)


@pytest.fixture(scope="module")
def tiny_model_json() -> dict:
    return json.loads(bytes(_train(objective="binary:logistic").save_raw("json")))


def _cli(*args, cwd=None):
    return treesens_here(*args, cwd=cwd)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"objective": "binary:hinge"}, "binary:hinge"),
        ({"objective": "rank:pairwise"}, "rank:pairwise"),
        ({"objective": "binary:logistic", "booster": "dart"}, "DART"),
        ({"objective": "binary:logistic", "booster": "gblinear"}, "not a tree ensemble"),
    ],
)
def test_unsupported_model_kind_is_named(tmp_path, params, words):
    path = tmp_path / "m.json"
    _train(**params).save_model(path)
    with pytest.raises(UnsupportedModelError, match=words):
        treesens.load_model(path)


def test_unsupported_model_kind_exits_2_with_one_line(tmp_path):
    path = tmp_path / "m.json"
    _train(objective="binary:hinge").save_model(path)
    r = _cli("check", str(path), "--vary", "f0")
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and str(path) in r.stderr


def test_truncated_model_file_names_the_file(tmp_path, tiny_model_json):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(tiny_model_json)[:500])
    with pytest.raises(InputError, match="cut.json: the JSON ends before it is complete"):
        treesens.load_model(path)


def test_binary_garbage_is_an_input_error(tmp_path):
    path = tmp_path / "garbage.json"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(InputError):
        treesens.load_model(path)


def test_json_of_the_wrong_shape_is_an_input_error(tmp_path):
    path = tmp_path / "shape.json"
    path.write_text(json.dumps({"hello": [1, 2, 3]}))
    with pytest.raises(InputError, match="neither an XGBoost model"):
        treesens.load_model(path)


def test_split_on_a_feature_the_model_lacks_is_an_input_error(tmp_path, tiny_model_json):
    m = copy.deepcopy(tiny_model_json)
    tree = m["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["split_indices"][0] = 99
    path = tmp_path / "bad_feature.json"
    path.write_text(json.dumps(m))
    with pytest.raises(InputError, match="feature"):
        treesens.load_model(path)


def test_a_threshold_beyond_float32_is_an_input_error_naming_tree_and_node(
    tmp_path, tiny_model_json
):
    m = copy.deepcopy(tiny_model_json)
    m["learner"]["gradient_booster"]["model"]["trees"][0]["split_conditions"][0] = 1e300
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(m))
    with pytest.raises(InputError, match="node 0: the split threshold 1e[+]300 is beyond float32"):
        treesens.load_model(path)


def test_num_class_above_1_with_a_binary_objective_is_an_input_error(tmp_path, tiny_model_json):
    m = copy.deepcopy(tiny_model_json)
    m["learner"]["learner_model_param"]["num_class"] = "7"
    path = tmp_path / "seven.json"
    path.write_text(json.dumps(m))
    with pytest.raises(InputError, match="num_class=7 but the objective binary:logistic has one"):
        treesens.load_model(path)


_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.lists(st.integers(-2, 5), max_size=4),
    st.just({}),
)


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_fuzzed_model_json_loads_or_raises_an_input_error(tmp_path, tiny_model_json, data):
    m = copy.deepcopy(tiny_model_json)
    paths = json_paths(m)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths[1:]))
        parent = m
        try:
            for k in path[:-1]:
                parent = parent[k]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = data.draw(_junk)
        except (KeyError, IndexError, TypeError):
            continue
    f = tmp_path / "fuzz.json"
    f.write_text(json.dumps(m))
    try:
        ens = treesens.load_model(f)
    except InputError:
        return
    # whatever loads must evaluate
    ens.raw(np.zeros((2, ens.n_features)))


@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(cut=st.integers(0, 4000), junk=st.binary(max_size=40))
def test_fuzzed_model_text_loads_or_raises_an_input_error(tmp_path, tiny_model_json, cut, junk):
    text = json.dumps(tiny_model_json).encode()
    f = tmp_path / "fuzz.json"
    f.write_bytes(text[:cut] + junk + text[cut + len(junk) :])
    with contextlib.suppress(InputError):
        treesens.load_model(f)


def test_a_tree_with_a_cycle_is_an_input_error(tmp_path, tiny_model_json):
    m = copy.deepcopy(tiny_model_json)
    tree = m["learner"]["gradient_booster"]["model"]["trees"][0]
    tree["left_children"][1] = 0  # node 1 points back to the root
    path = tmp_path / "cycle.json"
    path.write_text(json.dumps(m))
    with pytest.raises(InputError, match="reached twice|malformed"):
        treesens.load_model(path)


def _treeless_model(library: str, folder):
    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    if library == "xgboost":  # trained for 0 rounds
        import xgboost as xgb

        path = folder / "none.json"
        xgb.train({"objective": "binary:logistic"}, xgb.DMatrix(X, label=y), 0).save_model(path)
        return path
    import lightgbm as lgb  # saved from past its last tree

    path = folder / "none.txt"
    booster = lgb.train({"objective": "binary", "verbose": -1}, lgb.Dataset(X, y), 2)
    booster.save_model(path, start_iteration=2)
    return path


@pytest.mark.parametrize("library", ["xgboost", "lightgbm"])
def test_a_model_saved_with_no_trees_is_one_line_and_exit_2(library, tmp_path):
    """It loaded ('0 trees') and every query ended in 'internal error: ValueError:
    operands could not be broadcast together' (the heuristic's and the box search's
    tables index the trees)."""
    pytest.importorskip(library)
    r = treesens_here(
        "check", str(_treeless_model(library, tmp_path)), "--vary", "f0", "--gap", "0.1"
    )
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "the model has no trees" in lines[0], r.stderr


def test_a_dump_of_trees_with_vector_leaves_is_refused_naming_multi_output_tree(tmp_path):
    """Its leaves are lists; the line said 'tree 0 of the dump is malformed: only
    0-dimensional arrays can be converted to Python scalars'."""
    import xgboost as xgb

    X = np.random.default_rng(0).random((80, 3))
    params = {"tree_method": "hist", "max_depth": 2, "multi_strategy": "multi_output_tree"}
    booster = xgb.train(params, xgb.DMatrix(X, label=X[:, :2]), 2)
    booster.dump_model(str(tmp_path / "dump.json"), dump_format="json")
    with pytest.raises(UnsupportedModelError, match="tree 0: .*multi_output_tree"):
        treesens.load_model(tmp_path / "dump.json")
