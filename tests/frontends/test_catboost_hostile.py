"""Hostile CatBoost files: truncated or bit-flipped ``.cbm`` files, random bytes with the
``.cbm`` suffix, and CatBoost JSON with values replaced or removed either load (and then
evaluate, and replay with catboost) or raise one InputError line; the command line exits
with code 2 and one line. catboost's JSON reader trusts the split indices and counts it
is given (and reads past its arrays when they are wrong), so nothing reaches it that the
format's own checks did not pass."""

from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import treesens
from treesens.compiler.errors import InputError
from treesens.tests.campaigns.test_fuzz_loaders import _bytes_mutation, _fresh, _mutate_json
from treesens.tests.conftest import treesens_here
from treesens.tests.frontends.catboost_category_models import fit
from treesens.tests.fuzzing import event, fuzz_settings

catboost = pytest.importorskip("catboost")

COMMON = {"verbose": 0, "allow_writing_files": False, "thread_count": 1, "random_seed": 0}


class _Models(list):
    def __repr__(self) -> str:
        return f"<{len(self)} models>"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """(JSON, .cbm bytes) of a binary classifier with NaN (nan_mode Max), a 3-class
    classifier, a Depthwise regressor and a classifier with one-hot categorical features."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))
    X[::6, 1] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 1])
    folder = tmp_path_factory.mktemp("cb")
    out = _Models()
    for i, est in enumerate(
        (
            catboost.CatBoostClassifier(iterations=2, depth=2, nan_mode="Max", **COMMON).fit(
                X, y > 0.8
            ),
            catboost.CatBoostClassifier(iterations=2, depth=2, **COMMON).fit(
                X, (y > 0.6).astype(int) + (y > 1.1)
            ),
            catboost.CatBoostRegressor(
                iterations=2, depth=2, grow_policy="Depthwise", **COMMON
            ).fit(X, y),
            fit("binary", iterations=2),
        )
    ):
        est.save_model(str(folder / f"{i}.json"), format="json")
        est.save_model(str(folder / f"{i}.cbm"))
        out.append(
            (json.loads((folder / f"{i}.json").read_text()), (folder / f"{i}.cbm").read_bytes())
        )
    return out


def _loads_or_input_error(path) -> None:
    """The model loads, evaluates and replays, or one InputError line is raised."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ens = treesens.load_model(path)
        except InputError as e:
            assert str(e).strip() and "\n" not in str(e).strip(), f"not one line: {e}"
            event("InputError")
            return
    event("loaded")
    X = np.concatenate(
        [np.random.default_rng(0).normal(size=(4, ens.n_features)), np.zeros((1, ens.n_features))]
    )
    X[0, 0] = np.nan
    for f, feat in enumerate(ens.features):
        if feat.kind == "categorical":  # a category catboost is given by name: <other>
            X[:, f] = feat.categories.index("<other>")
    ours = ens.predict(X) if ens.is_regressor else ens.proba(X)
    theirs = ens.replayer.predict(X) if ens.is_regressor else ens.replayer.predict_proba(X)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-9)


@fuzz_settings(150)
@given(data=st.data())
def test_fuzzed_catboost_json_loads_or_raises_an_input_error(tmp_path, models, data):
    model, _ = data.draw(st.sampled_from(models))
    path = _fresh(tmp_path, ".json")
    path.write_text(json.dumps(_mutate_json(data, model)))
    _loads_or_input_error(path)


@fuzz_settings(150)
@given(data=st.data())
def test_fuzzed_cbm_bytes_load_or_raise_an_input_error(tmp_path, models, data):
    _, blob = data.draw(st.sampled_from(models))
    for _ in range(data.draw(st.integers(1, 3))):
        blob = _bytes_mutation(data, blob)
    path = _fresh(tmp_path, ".cbm")
    path.write_bytes(blob)
    _loads_or_input_error(path)


@pytest.mark.parametrize("keep", [0.1, 0.5, 0.99])
def test_a_truncated_cbm_is_one_input_error(tmp_path, models, keep):
    _, blob = models[0]
    path = tmp_path / "m.cbm"
    path.write_bytes(blob[: int(len(blob) * keep)])
    with pytest.raises(InputError, match="catboost cannot load this model"):
        treesens.load_model(path)


def test_a_cbm_cut_inside_its_core_is_refused_before_catboost_reads_past_it(tmp_path, models):
    # catboost reads the core size the header states, without checking the file holds it
    _, blob = models[0]
    path = tmp_path / "m.cbm"
    path.write_bytes(blob[:72])
    with pytest.raises(InputError, match="the file holds 64 after its header"):
        treesens.load_model(path)


def _crashing_cbm(models) -> bytes:
    """The categorical model's .cbm with 13 bytes inserted into its training parameters:
    catboost's reader (catboost 1.2.10) then reads a string past its buffer and crashes
    the process that loads the file."""
    _, blob = models[3]
    i = blob.index(b'{"detailed_profile"') + 3654
    return blob[:i] + bytes.fromhex("934f4e368209edcb74c8027fd8") + blob[i:]


def test_a_cbm_that_crashes_catboosts_reader_is_one_input_error(tmp_path, models):
    path = tmp_path / "m.cbm"
    path.write_bytes(_crashing_cbm(models))
    with pytest.raises(InputError, match="catboost's reader crashed on this file") as e:
        treesens.load_model(path)
    assert "\n" not in str(e.value)


def test_after_a_crash_of_catboosts_reader_the_next_cbm_loads(tmp_path, models):
    (tmp_path / "bad.cbm").write_bytes(_crashing_cbm(models))
    (tmp_path / "good.cbm").write_bytes(models[3][1])
    with pytest.raises(InputError):
        treesens.load_model(tmp_path / "bad.cbm")
    assert treesens.load_model(tmp_path / "good.cbm").features[0].kind == "categorical"


def test_random_bytes_with_the_cbm_suffix_are_one_input_error(tmp_path):
    path = tmp_path / "m.cbm"
    path.write_bytes(np.random.default_rng(0).bytes(500))
    with pytest.raises(InputError, match="a .cbm file starts with CBM1"):
        treesens.load_model(path)


def _edited(tmp_path, models, edit) -> object:
    model = json.loads(json.dumps(models[0][0]))
    edit(model)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    return path


def test_a_split_index_out_of_range_is_refused_before_catboost_reads_it(tmp_path, models):
    def edit(m):
        m["oblivious_trees"][0]["splits"][0]["split_index"] = 999

    with pytest.raises(InputError, match="split_index 999 is not one of"):
        treesens.load_model(_edited(tmp_path, models, edit))


def test_a_split_naming_another_border_than_its_index_is_refused(tmp_path, models):
    def edit(m):
        m["oblivious_trees"][0]["splits"][0]["border"] = 123.0

    with pytest.raises(InputError, match="not the feature and border its split_index names"):
        treesens.load_model(_edited(tmp_path, models, edit))


def test_too_few_leaf_values_are_refused(tmp_path, models):
    def edit(m):
        m["oblivious_trees"][0]["leaf_values"] = m["oblivious_trees"][0]["leaf_values"][:2]

    with pytest.raises(InputError, match="2 leaf values for 4 leaves"):
        treesens.load_model(_edited(tmp_path, models, edit))


def test_unsorted_borders_are_refused(tmp_path, models):
    def edit(m):
        f = m["features_info"]["float_features"][0]
        f["borders"] = f["borders"][::-1] + [0.0] if len(f["borders"]) < 2 else f["borders"][::-1]

    with pytest.raises(InputError, match="borders are not increasing"):
        treesens.load_model(_edited(tmp_path, models, edit))


def test_a_model_without_a_loss_function_is_refused(tmp_path, models):
    def edit(m):
        del m["model_info"]["params"]

    with pytest.raises(InputError, match="records no loss function"):
        treesens.load_model(_edited(tmp_path, models, edit))


def test_cut_json_is_one_input_error_with_its_place(tmp_path, models):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(models[0][0])[:300])
    with pytest.raises(
        InputError, match=r"m.json: the JSON ends before it is complete \(at line 1"
    ):
        treesens.load_model(path, format="catboost")


def test_a_catboost_json_given_as_xgboost_names_the_format(tmp_path, models):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(models[0][0]))
    with pytest.raises(InputError, match="--format catboost"):
        treesens.load_model(path, format="xgboost")


@pytest.mark.parametrize("content", ["truncated", "random"])
def test_cli_exits_2_with_one_line_on_a_broken_cbm(tmp_path, models, content):
    path = tmp_path / "m.cbm"
    blob = models[0][1]
    path.write_bytes(blob[: len(blob) // 2] if content == "truncated" else bytes(range(256)) * 4)
    p = treesens_here("check", path, "--vary", "0")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "m.cbm" in p.stderr


def test_a_cbm_without_catboost_installed_says_what_to_install(tmp_path, models, monkeypatch):
    path = tmp_path / "m.cbm"
    path.write_bytes(models[0][1])
    monkeypatch.setitem(sys.modules, "catboost", None)  # import now fails as if absent
    with pytest.raises(InputError, match=r"needs the catboost package.*treesens\[catboost\]"):
        treesens.load_model(path)


def test_a_class_to_label_out_of_range_is_refused_before_catboost_predicts(tmp_path, models):
    # catboost loads such a model and crashes the process when it predicts with it
    model = json.loads(json.dumps(models[1][0]))
    model["model_info"]["class_params"]["class_to_label"][1] = 2**31
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    with pytest.raises(InputError, match="class_to_label.* do not describe 3 classes"):
        treesens.load_model(path)
    resaved = catboost.CatBoost()
    resaved.load_model(str(path), format="json")  # loading is safe, predicting is not
    resaved.save_model(str(tmp_path / "m.cbm"))
    with pytest.raises(InputError, match="do not describe 3 classes"):
        treesens.load_model(tmp_path / "m.cbm")


def test_a_cbm_catboost_takes_too_long_to_read_is_one_input_error(monkeypatch, models):
    from treesens.readers.formats import catboost_reader

    monkeypatch.setattr(catboost_reader, "READ_TIMEOUT", 0.05)
    reader = catboost_reader._Reader()  # a fresh child: importing catboost takes longer
    try:
        with pytest.raises(InputError, match="did not finish reading this file in 0.05 s"):
            reader.read(models[0][1], "m.cbm")
        assert reader.proc is None  # the child was stopped; the next read starts another
    finally:
        reader.close()
