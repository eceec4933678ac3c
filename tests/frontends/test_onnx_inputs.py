"""Bad and unsupported ONNX files: one InputError line naming the file (exit 2 on the
command line), never a traceback, and nothing run while loading. Broken files (truncated,
random bytes, fuzzed bytes and attributes) load or say InputError, and whatever loads
agrees with onnxruntime; operators and graphs treesens cannot state exactly are refused by
name."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import treesens
from treesens.compiler.errors import InputError, UnsupportedModelError
from treesens.tests.conftest import treesens_here
from treesens.tests.frontends import onnx_models as om
from treesens.tests.fuzzing import event, fuzz_settings

sk_ensemble = pytest.importorskip("sklearn.ensemble")
pytest.importorskip("skl2onnx")

X, YB, Y3, YR = om.data()
STUMP_WEIGHTS = [(1, 0, 0.25), (2, 0, 0.75)]


@pytest.fixture(scope="module")
def forest_bytes() -> bytes:
    est = sk_ensemble.RandomForestClassifier(2, max_depth=2, random_state=0).fit(X, YB)
    return om.sklearn_onnx(est, X)


def _refused(tmp_path, blob: bytes, *words, kind=InputError) -> str:
    return om.refused(tmp_path, blob, *words, kind=kind)


def _one_line_exit_2(p) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]


def test_an_onnx_file_without_its_suffix_is_recognised_by_its_content(tmp_path, forest_bytes):
    from treesens.readers import formats

    path = om.write(tmp_path, "model.bin", forest_bytes)
    assert formats.sniff(path).name == "onnx"
    assert treesens.load_model(path).source == f"onnx:{path}"


def test_a_truncated_file_is_one_input_error(tmp_path, forest_bytes):
    _refused(tmp_path, forest_bytes[: len(forest_bytes) // 2])


def test_random_bytes_named_onnx_are_one_input_error(tmp_path):
    _refused(tmp_path, np.random.default_rng(0).bytes(300))


def test_a_truncated_file_on_the_command_line_exits_2_in_one_line(tmp_path, forest_bytes):
    path = om.write(tmp_path, "m.onnx", forest_bytes[:-40])
    line = _one_line_exit_2(treesens_here("check", path, "--vary", "f0"))
    assert str(path) in line


@pytest.mark.parametrize("missing", ["onnx", "onnxruntime"])
def test_without_onnx_installed_the_command_line_says_what_to_install(
    tmp_path, forest_bytes, missing
):
    import subprocess
    import sys

    path = om.write(tmp_path, "m.onnx", forest_bytes)
    code = (
        f"import sys; sys.modules[{missing!r}] = None; "
        "from treesens.interfaces.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, "check", str(path), "--vary", "f0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = _one_line_exit_2(p)
    assert f"needs the {missing} package" in line and "treesens[onnx]" in line


def test_an_unsupported_node_is_named(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(StandardScaler(), sk_ensemble.RandomForestClassifier(2, max_depth=2))
    blob = om.sklearn_onnx(pipe.fit(X, YB), X)
    _refused(tmp_path, blob, "operator ai.onnx.ml.Scaler", kind=UnsupportedModelError)


def test_a_pipeline_s_scaler_in_onnx_points_to_the_fitted_pipeline(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(StandardScaler(), sk_ensemble.RandomForestClassifier(2, max_depth=2))
    blob = om.sklearn_onnx(pipe.fit(X, YB), X)
    _refused(tmp_path, blob, "read from the fitted Pipeline itself", kind=UnsupportedModelError)


def test_an_unsupported_node_on_the_command_line_exits_2_naming_it(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    pipe = make_pipeline(StandardScaler(), sk_ensemble.RandomForestClassifier(2, max_depth=2))
    path = om.write(tmp_path, "m.onnx", om.sklearn_onnx(pipe.fit(X, YB), X))
    assert "Scaler" in _one_line_exit_2(treesens_here("check", path, "--vary", "f0"))


def test_external_data_is_refused(tmp_path):
    onnx = om.onnx
    blob = om.tree_ensemble_v5([0], [0.5], [0], [0], [1], [1], [1], [1.0, 2.0], [0])
    model = onnx.load_model_from_string(blob)
    path = tmp_path / "m.onnx"
    from onnx.external_data_helper import convert_model_to_external_data

    convert_model_to_external_data(
        model, location="m.data", size_threshold=0, convert_attribute=True
    )
    onnx.save_model(model, str(path))
    assert (tmp_path / "m.data").exists()
    with pytest.raises(InputError, match="external data"):
        treesens.load_model(path)


def test_a_model_onnxruntime_cannot_load_is_one_line_without_its_source_location(tmp_path):
    model = om.onnx.load_model_from_string(om.classifier(om.stump_nodes(), STUMP_WEIGHTS))
    model.opset_import[1].version = 99  # an ai.onnx.ml opset onnxruntime does not know
    path = om.write(tmp_path, "m.onnx", model.SerializeToString())
    line = _one_line_exit_2(treesens_here("check", path, "--vary", "f0"))
    assert "onnxruntime cannot load this model" in line and "onnxruntime_src" not in line


def test_a_model_defining_functions_is_refused(tmp_path):
    onnx = om.onnx
    model = onnx.load_model_from_string(om.classifier(om.stump_nodes(), STUMP_WEIGHTS))
    body = onnx.helper.make_node("Identity", ["a"], ["b"])
    model.functions.append(
        onnx.helper.make_function(
            "mine", "Cast", ["a"], ["b"], [body], [onnx.helper.make_opsetid("", 17)]
        )
    )
    _refused(tmp_path, model.SerializeToString(), "defines functions", kind=UnsupportedModelError)


def test_two_tree_ensembles_are_refused(tmp_path, forest_bytes):
    model = om.onnx.load_model_from_string(forest_bytes)
    twin = type(model.graph.node[0])()
    twin.CopyFrom(model.graph.node[0])
    twin.output[:] = ["label2", "probabilities2"]
    model.graph.node.append(twin)
    _refused(tmp_path, model.SerializeToString(), "2 tree-ensemble operators")


def test_an_integer_input_is_refused(tmp_path):
    blob = om.classifier(om.stump_nodes(), STUMP_WEIGHTS, in_type=om.TensorProto.INT64)
    _refused(tmp_path, blob, "not a float or double tensor", kind=UnsupportedModelError)


@pytest.mark.parametrize(
    "post, words",
    [("PROBIT", "PROBIT"), ("SOFTMAX", "no probabilities"), ("SOFTMAX_ZERO", "no probabilities")],
)
def test_binary_one_score_post_transforms_without_probabilities_are_refused(tmp_path, post, words):
    blob = om.classifier(om.stump_nodes(), [(1, 0, -0.25), (2, 0, 0.75)], post=post)
    _refused(tmp_path, blob, words, kind=UnsupportedModelError)


def test_binary_one_score_with_negative_weights_and_no_transform_is_refused(tmp_path):
    blob = om.classifier(om.stump_nodes(), [(1, 0, -0.25), (2, 0, 0.75)])
    _refused(tmp_path, blob, "no probabilities", kind=UnsupportedModelError)


def test_binary_two_scores_with_logistic_that_are_not_opposite_are_refused(tmp_path):
    # sigmoid(s0) + sigmoid(s1) is then not 1
    w = [(1, 0, 0.3), (1, 1, -0.2), (2, 0, -0.7), (2, 1, 0.7)]
    blob = om.classifier(om.stump_nodes(), w, post="LOGISTIC")
    _refused(tmp_path, blob, "no probabilities", kind=UnsupportedModelError)


def test_binary_scoring_class_1_on_some_leaves_only_is_refused(tmp_path):
    blob = om.classifier(om.stump_nodes(), [(1, 1, 0.25), (2, 0, 0.75)])
    _refused(tmp_path, blob, "class 1 on some leaves", kind=UnsupportedModelError)


def test_softmax_zero_with_scores_that_can_be_zero_is_refused(tmp_path):
    w = [(1, 0, 0.5), (1, 1, 0.0), (2, 0, 1.0), (2, 2, 0.25)]
    blob = om.classifier(om.stump_nodes(), w, labels=(0, 1, 2), post="SOFTMAX_ZERO")
    _refused(tmp_path, blob, "SOFTMAX_ZERO", kind=UnsupportedModelError)


def test_multiclass_logistic_is_refused(tmp_path):
    w = [(1, 0, 0.5), (1, 1, 0.25), (1, 2, 0.25), (2, 0, 1.0), (2, 1, 0.5), (2, 2, 0.1)]
    blob = om.classifier(om.stump_nodes(), w, labels=(0, 1, 2), post="LOGISTIC")
    _refused(tmp_path, blob, "LOGISTIC", kind=UnsupportedModelError)


def test_a_regressor_post_transform_onnxruntime_leaves_unapplied_is_refused(tmp_path):
    blob = om.regressor(om.stump_nodes(), [(1, -1.0), (2, 2.0)], post="LOGISTIC")
    _refused(tmp_path, blob, "leaves unapplied", kind=UnsupportedModelError)


@pytest.mark.parametrize("post", [1, 2])
def test_a_tree_ensemble_v5_post_transform_is_refused(tmp_path, post):
    # onnxruntime 1.32 applies LOGISTIC for the specification's SOFTMAX (1), and back
    blob = om.tree_ensemble_v5([0], [0.5], [0], [0], [1], [1], [1], [1.0, 2.0], [0], post=post)
    _refused(tmp_path, blob, "the other way round", kind=UnsupportedModelError)


@pytest.mark.parametrize("aggregate", ["MIN", "MAX"])
def test_min_and_max_aggregates_are_refused(tmp_path, aggregate):
    blob = om.regressor(om.stump_nodes(), [(1, -1.0), (2, 2.0)], aggregate=aggregate)
    _refused(tmp_path, blob, aggregate, kind=UnsupportedModelError)


def test_a_split_on_a_feature_the_input_lacks_is_refused(tmp_path):
    nodes = om.stump_nodes()
    nodes["nodes_featureids"] = [5, 0, 0]
    _refused(tmp_path, om.classifier(nodes, STUMP_WEIGHTS), "feature 5")


def test_a_child_the_tree_lacks_is_refused(tmp_path):
    nodes = om.stump_nodes()
    nodes["nodes_falsenodeids"] = [7, 0, 0]
    _refused(tmp_path, om.classifier(nodes, STUMP_WEIGHTS), "node 7")


def test_a_tree_listing_a_child_first_is_refused(tmp_path):
    nodes = {k: [v[i] for i in (1, 0, 2)] for k, v in om.stump_nodes().items()}
    _refused(tmp_path, om.classifier(nodes, STUMP_WEIGHTS), "first node 1")


def test_nodes_no_path_reaches_are_ignored_as_onnxruntime_does(tmp_path):
    nodes = {k: [*v, v[-1]] for k, v in om.stump_nodes().items()}
    nodes["nodes_nodeids"][-1] = 3
    ens = treesens.load_model(om.write(tmp_path, "m.onnx", om.classifier(nodes, STUMP_WEIGHTS)))
    rows = np.array([[0.25, 0.0], [0.75, 0.0]])
    np.testing.assert_allclose(ens.proba(rows), ens.replayer.predict_proba(rows), atol=1e-7)


def test_a_child_shared_by_both_branches_is_copied(tmp_path):
    nodes = om.stump_nodes()
    nodes["nodes_falsenodeids"] = [1, 0, 0]
    ens = treesens.load_model(om.write(tmp_path, "m.onnx", om.classifier(nodes, STUMP_WEIGHTS)))
    rows = np.array([[0.25, 0.0], [0.75, 0.0], [np.nan, 0.0]])
    np.testing.assert_allclose(ens.proba(rows), ens.replayer.predict_proba(rows), atol=1e-7)


def test_nan_sent_where_no_number_goes_in_an_equality_chain_is_refused(tmp_path):
    # the second split repeats the first's 0.0: only NaN could reach its "equal" child
    nodes = om.equality_chain_nodes((0.0, 0.0), ("BRANCH_EQ", "BRANCH_EQ"), (0, 1))
    blob = om.classifier(nodes, [(2, 0, 0.1), (3, 0, 0.2), (5, 0, 0.8), (6, 0, 0.9)])
    _refused(tmp_path, blob, "NaN to a branch no number reaches")


def test_a_cycle_is_refused(tmp_path):
    nodes = om.two_level_nodes(("BRANCH_LEQ",) * 3, (0.5, 0.25, 0.7))
    nodes["nodes_falsenodeids"][1] = 0  # node 1's false child is the root
    _refused(tmp_path, om.classifier(nodes, [(2, 0, 0.5)]))


def test_a_nan_threshold_is_refused(tmp_path):
    _refused(tmp_path, om.classifier(om.stump_nodes(threshold=float("nan")), STUMP_WEIGHTS))


# ---------------------------------------------------------------------------------
# fuzzing: whatever loads agrees with onnxruntime


def _loads_and_agrees_or_input_error(path) -> None:
    try:
        ens = treesens.load_model(path)
    except InputError as e:
        assert str(e).strip() and "\n" not in str(e).strip(), f"not one line: {e}"
        event("InputError")
        return
    event("loaded")
    rows = om.probe_rows(ens, n=40)
    rows = rows[~np.isnan(rows).any(axis=1)] if len(rows) > 40 else rows
    try:
        if ens.is_regressor:
            lib, ir = ens.replayer.predict(rows), ens.predict(rows)
        else:
            lib, ir = ens.replayer.predict_proba(rows), ens.proba(rows)
    except InputError as e:
        assert "\n" not in str(e).strip()
        return
    ok = np.isfinite(lib)
    np.testing.assert_allclose(ir[ok], lib[ok], rtol=1e-5, atol=1e-5)


@fuzz_settings(40)
@given(data=st.data())
def test_fuzzed_bytes_load_and_agree_or_are_one_input_error(tmp_path_factory, data):
    blob = om.classifier(
        om.two_level_nodes(("BRANCH_LEQ", "BRANCH_LT", "BRANCH_GT"), (0.5, 0.25, 0.7)),
        [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)],
    )
    if data.draw(st.booleans()):  # one input per column, cast to float and joined by a Concat
        blob = om.with_columns(blob, ["a", "b"], in_types=om.DOUBLE, cast_to=om.FLOAT)
    i = data.draw(st.integers(0, len(blob) - 1))
    kind = data.draw(st.sampled_from(["truncate", "overwrite", "delete", "insert"]))
    junk = data.draw(st.binary(min_size=1, max_size=4))
    broken = {
        "truncate": blob[:i],
        "overwrite": blob[:i] + junk + blob[i + len(junk) :],
        "delete": blob[:i] + blob[i + len(junk) :],
        "insert": blob[:i] + junk + blob[i:],
    }[kind]
    path = om.write(tmp_path_factory.mktemp("fz"), "m.onnx", broken)
    _loads_and_agrees_or_input_error(path)


_INT_ATTRIBUTES = [
    "nodes_featureids",
    "nodes_truenodeids",
    "nodes_falsenodeids",
    "nodes_nodeids",
    "nodes_treeids",
    "nodes_missing_value_tracks_true",
    "class_ids",
    "class_nodeids",
    "class_treeids",
]


@fuzz_settings(60)
@given(data=st.data())
def test_fuzzed_attributes_load_and_agree_or_are_one_input_error(tmp_path_factory, data):
    if data.draw(st.booleans()):
        nodes = om.two_level_nodes(("BRANCH_LEQ", "BRANCH_EQ", "BRANCH_GTE"), (0.5, 0.25, 0.7))
        weights = [(2, 0, 0.1), (3, 0, 0.4), (5, 0, 0.6), (6, 0, 0.9)]
    else:  # an equality chain on feature 0: leaves 3, 4, 5; the rest splits feature 1
        modes = ("BRANCH_EQ", "BRANCH_NEQ", "BRANCH_EQ")
        nodes = om.equality_chain_nodes((1.0, 2.0, 0.0), modes, (0, 1, 1))
        weights = [(3, 0, 0.1), (4, 0, 0.2), (5, 0, 0.3), (7, 0, 0.8), (8, 0, 0.9)]
    name = data.draw(st.sampled_from([*_INT_ATTRIBUTES, "nodes_values", "nodes_modes"]))
    extra = {}
    if name.startswith("class_"):
        column = {"class_ids": 1, "class_nodeids": 0}.get(name)
        values = [list(w) for w in weights]
        j = data.draw(st.integers(0, len(values) - 1))
        if column is None:  # tree ids
            extra["class_treeids"] = [0, 0, 0, data.draw(st.integers(-1, 2))]
        else:
            values[j][column] = data.draw(st.integers(-1, 9))
            weights = [tuple(v) for v in values]
    else:
        j = data.draw(st.integers(0, len(nodes[name]) - 1))
        if name == "nodes_values":
            nodes[name][j] = data.draw(
                st.one_of(st.floats(allow_nan=True, width=32), st.sampled_from([0.0, 1.0, 2.0]))
            )
        elif name == "nodes_modes":
            nodes[name][j] = data.draw(
                st.sampled_from(["LEAF", "BRANCH_NEQ", "BRANCH_GT", "BRANCH_LT", "BRANCH_X"])
            )
        else:
            nodes[name][j] = data.draw(st.integers(-1, 9))
    blob = om.classifier(nodes, weights, **extra)
    path = om.write(tmp_path_factory.mktemp("fz"), "m.onnx", blob)
    _loads_and_agrees_or_input_error(path)
