"""The model-format registry: one place lists the formats; loading, sniffing, in-memory
objects, generic feature names and the CLI's --format help all read it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.errors import InputError, UnsupportedModelError
from treesens.readers import formats, load
from treesens.readers.details import GENERIC_NAMES, has_generic_names
from treesens.readers.formats import ModelFormat, registered
from treesens.readers.load import load_model
from treesens.tests.conftest import treesens_here

xgb = pytest.importorskip("xgboost")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _booster(n_trees: int = 4):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] - X[:, 2] > 0).astype(int)
    params = {"max_depth": 3, "nthread": 1, "objective": "binary:logistic", "base_score": 0.5}
    return xgb.train(params, xgb.DMatrix(X, label=y), n_trees)


def test_every_registered_format_implements_the_protocol():
    assert all(isinstance(f, ModelFormat) for f in registered())


CLASS_ATTRIBUTES = (
    "name",
    "description",
    "suffixes",
    "sniff_last",
    "takes_base_score",
    "generic_names",
)


@pytest.mark.parametrize("fmt", registered(), ids=lambda f: f.name)
def test_a_built_in_formats_registry_entry_states_its_classs_attributes(fmt):
    # the registry states them so that sniffing imports no reader: they must not drift
    real = fmt.loaded()
    assert {a: getattr(fmt, a) for a in CLASS_ATTRIBUTES} == {
        a: getattr(type(real), a) for a in CLASS_ATTRIBUTES
    }


def test_load_formats_is_auto_and_the_registered_names():
    assert load.FORMATS == (
        "auto",
        "xgboost",
        "xgboost-dump",
        "lightgbm",
        "catboost",
        "onnx",
        "sklearn",
    )


def test_generic_names_come_from_the_formats():
    assert GENERIC_NAMES == ("f{}", "Column_{}", "{}", "x{}")


def test_cli_format_help_lists_the_registered_formats():
    p = treesens_here("check", "--help")
    help_text = " ".join(p.stdout.split())
    assert (
        "(default auto: told by its content and name; xgboost, xgboost-dump, lightgbm, catboost, onnx, sklearn)"
        in help_text
    )


def test_unknown_format_names_the_known_ones(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("{}")
    with pytest.raises(InputError, match="use one of auto, xgboost, xgboost-dump"):
        load_model(path, format="pmml")


def test_a_suffix_claim_comes_before_content(tmp_path):
    path = tmp_path / "m.pkl"
    path.write_text("tree\nversion=v4\n")  # LightGBM-looking content
    assert formats.sniff(path).name == "sklearn"


def test_lightgbm_content_is_asked_before_the_catch_all_xgboost(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("tree\nversion=v4\n")
    assert formats.sniff(path).name == "lightgbm"


def test_a_json_list_is_sniffed_as_a_dump(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("[]")
    assert formats.sniff(path).name == "xgboost-dump"


def test_unclaimed_text_is_no_format(tmp_path):
    path = tmp_path / "m.txt"
    path.write_text("hello")
    assert formats.sniff(path) is None
    with pytest.raises(InputError, match="cannot tell the model format"):
        load_model(path)


def test_a_sens_file_given_as_a_model_is_said_to_be_run_with_treesens_run(tmp_path):
    path = tmp_path / "q.sens"
    path.write_text('model "m.json"\nquery q { vary f0 }\n')
    with pytest.raises(
        InputError, match=r"a \.sens query file, not a model: run it with treesens run"
    ):
        load_model(path)


def test_a_csv_file_given_as_a_model_is_said_to_be_data(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("f0,f1,label\n1,2,0\n")
    with pytest.raises(InputError, match=r"a data file, not a model: give it with --data"):
        load_model(path)


def test_a_details_file_given_as_a_model_is_said_to_be_details(tmp_path):
    path = tmp_path / "details.csv"
    path.write_text("feature,name,lb,ub\n0,age,0.0,1.0\n")
    with pytest.raises(InputError, match=r"a details file .*, not a model: give it with --details"):
        load_model(path)


def test_an_object_no_format_knows_is_unsupported():
    with pytest.raises(UnsupportedModelError, match="builtins.dict"):
        load_model({"trees": []})


def test_xgboost_text_dump_reads_like_its_json_dump(tmp_path):
    booster = _booster()
    text, js = tmp_path / "dump.txt", tmp_path / "dump.json"
    booster.dump_model(str(text), with_stats=True)
    js.write_text("[" + ",".join(booster.get_dump(dump_format="json")) + "]")
    a, b = load_model(text), load_model(js)
    assert a.source.startswith("xgboost-dump:")
    X = np.random.default_rng(1).normal(size=(50, 4))
    assert np.array_equal(a.raw(X), b.raw(X))
    assert np.allclose(
        a.replayer.predict_proba(X)[:, 1], booster.predict(xgb.DMatrix(X)), atol=1e-6
    )


def test_a_dump_s_source_says_the_base_score_its_answers_take(tmp_path):
    js = tmp_path / "dump.json"
    js.write_text("[" + ",".join(_booster().get_dump(dump_format="json")) + "]")
    assumed = "base_score 0.5 (assumed); a dump records neither its objective nor its base score"
    assert assumed in load_model(js).source
    assert (
        "base_score 0.3: as given"
        in load_model(js, base_score=0.3, objective="binary:logistic").source
    )


NAMES = ("age", "income", "debt", "tenure")


def _named_dumps(tmp_path):
    """The text and JSON dumps of a booster with feature names, and a details file naming
    its features at their indices."""
    booster = _booster()
    booster.feature_names = list(NAMES)
    text, js = tmp_path / "named.txt", tmp_path / "named.json"
    booster.dump_model(str(text))
    booster.dump_model(str(js), dump_format="json")
    details = tmp_path / "named_details.csv"
    details.write_text(
        "feature,name,lb,ub\n" + "".join(f"{i},{n},,\n" for i, n in enumerate(NAMES))
    )
    return booster, text, js, details


@pytest.mark.parametrize("kind", ["text", "json"])
def test_a_dump_naming_its_features_reads_their_indices_from_the_details_file(tmp_path, kind):
    booster, text, js, details = _named_dumps(tmp_path)
    ens = load_model(text if kind == "text" else js, details=details)
    assert tuple(ens.feature_names) == NAMES
    X = np.random.default_rng(1).normal(size=(50, 4))
    assert np.allclose(
        ens.replayer.predict_proba(X)[:, 1],
        booster.predict(xgb.DMatrix(X, feature_names=list(NAMES))),
        atol=1e-6,
    )


def test_a_dump_naming_its_features_without_a_details_file_says_to_give_one(tmp_path):
    _, text, _, _ = _named_dumps(tmp_path)
    with pytest.raises(InputError, match=r"the dump names its features .*--details"):
        load_model(text)


def test_a_dump_splitting_on_a_name_the_details_file_lacks_is_named(tmp_path):
    _, text, _, details = _named_dumps(tmp_path)
    details.write_text(details.read_text().replace("debt", "loans"))
    with pytest.raises(InputError, match="splits on feature 'debt', which the details file"):
        load_model(text, details=details)


def test_a_malformed_text_dump_line_is_named(tmp_path):
    path = tmp_path / "dump.txt"
    path.write_text("booster[0]:\n0:[f0<0.5] yes=1,no=2,missing=1\n\t1:leaf=0.1\n\t2:what\n")
    with pytest.raises(InputError, match="line 4: not a node"):
        load_model(path)


def test_has_generic_names_follows_the_registry():
    ens = load_model(_booster())
    assert has_generic_names(ens)


def test_every_format_describes_its_models():
    assert formats.by_name("lightgbm").description == "a LightGBM model"
    assert all(f.description for f in registered())


def test_emit_model_format_help_lists_the_registered_formats():
    p = treesens_here("emit", "--help")
    help_text = " ".join(p.stdout.split())
    assert (
        "(default auto: told by its content and name; xgboost, xgboost-dump, lightgbm, catboost, onnx, sklearn)"
        in help_text
    )


@pytest.mark.parametrize(
    "file, name", [("iris_lgbm.txt", "lightgbm"), ("breast_cancer_xgb.json", "xgboost")]
)
def test_a_loaded_model_names_its_format_and_file_in_its_origin(file, name):
    ens = load_model(EXAMPLES / file)
    assert (ens.origin.format, ens.origin.file) == (name, str(EXAMPLES / file))


def test_a_models_source_starts_with_the_words_of_its_origin():
    ens = load_model(EXAMPLES / "iris_lgbm.txt")
    assert ens.source.startswith(ens.origin.words())


def test_a_model_built_in_memory_names_its_format_in_its_origin():
    ens = load_model(_booster())
    assert ens.origin.format == "xgboost"


def _lightgbm_cut_before_tree(tmp_path, k: int, end: str = "") -> Path:
    """examples/diabetes_lgbm.txt (40 trees, a tree_sizes line) up to its tree ``k``."""
    text = (EXAMPLES / "diabetes_lgbm.txt").read_text()
    path = tmp_path / "cut.txt"
    path.write_text(text[: text.index(f"\nTree={k}\n") + 1] + end)
    return path


def test_a_lightgbm_file_cut_at_a_trees_end_is_refused_not_read_as_a_smaller_model(tmp_path):
    # it loaded as a 20-tree model; LightGBM itself crashes on it
    with pytest.raises(InputError, match="cut.txt") as e:
        load_model(_lightgbm_cut_before_tree(tmp_path, 20))
    assert str(e.value).endswith(
        "the file ends at tree 20 of the 40 its header lists (tree_sizes), with no "
        "'end of trees' line: it is cut short (a copy or download not finished?)"
    )


def test_a_lightgbm_file_cut_within_a_tree_is_said_to_be_cut_short(tmp_path):
    path = _lightgbm_cut_before_tree(tmp_path, 21)
    path.write_text(path.read_text() + "Tree=21\nnum_leaves=31\nsplit_feature=1 2")
    with pytest.raises(InputError, match="ends at tree 22 of the 40 .* cut short"):
        load_model(path)


def test_a_lightgbm_file_with_trees_removed_by_hand_says_its_tree_sizes_line_is_stale(tmp_path):
    with pytest.raises(InputError, match=r"20 trees where its header lists 40 \(tree_sizes\)"):
        load_model(_lightgbm_cut_before_tree(tmp_path, 20, end="end of trees\n"))


def test_a_json_model_cut_short_is_said_to_be_cut_short(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text((EXAMPLES / "breast_cancer_xgb.json").read_text()[:3000])
    with pytest.raises(InputError, match="cut.json") as e:
        load_model(path)
    assert str(e.value).endswith(
        "the JSON ends before it is complete (at line 1, after 3,000 characters): the file "
        "is cut short (a copy or download not finished?)"
    )


def test_a_json_model_with_a_fault_before_its_end_names_its_place(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"learner": 1,, "version": [3, 0, 4]}')
    with pytest.raises(InputError, match="invalid JSON at line 1 column 15"):
        load_model(path, format="xgboost")
