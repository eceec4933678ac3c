"""check, sweep, max_gap, audit and compare take features alike: a name, a list of names,
or indices; a name as it was before a library rewrote it ('mean texture' for LightGBM's
mean_texture) finds the feature."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError, TreesensWarning
from treesens.compiler.feature_names import feature_list
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import random_ensemble

QUICK = {"gap": 0.1, "timeout": 30}


@pytest.fixture(scope="module")
def ens():
    return random_ensemble(5, n_trees=4, depth=2, n_features=4, n_thresholds=2)


@pytest.fixture(scope="module")
def rows(ens):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.uniform(-2, 2, size=(8, 4)), columns=ens.feature_names)
    return frame.assign(label=(frame.iloc[:, 0] > 0).astype(int))


def test_one_name_is_one_feature(ens):
    assert feature_list(ens, ens.feature_names[1]) == (ens.feature_names[1],)


def test_a_comma_separated_string_is_several_features(ens):
    a, b = ens.feature_names[:2]
    assert feature_list(ens, f"{a}, {b}") == (a, b)


def test_all_is_every_feature_as_in_a_sens_files_vary_all(ens):
    assert feature_list(ens, "all") == tuple(ens.feature_names)


def test_a_feature_named_all_is_that_feature_not_every_one(ens):
    from dataclasses import replace

    named = replace(ens, features=(replace(ens.features[0], name="all"), *ens.features[1:]))
    assert feature_list(named, "all") == ("all",)


def test_an_index_is_the_feature_at_that_place(ens):
    assert feature_list(ens, 2) == (ens.feature_names[2],)


def test_a_numpy_index_is_the_feature_at_that_place(ens):
    assert feature_list(ens, [np.int64(3)]) == (ens.feature_names[3],)


def test_names_and_indices_mix_in_a_list(ens):
    assert feature_list(ens, [0, ens.feature_names[1]]) == tuple(ens.feature_names[:2])


def test_an_index_out_of_range_is_an_input_error(ens):
    with pytest.raises(InputError, match="feature index 9 out of range 0..3"):
        feature_list(ens, [9])


def test_an_unknown_name_gets_the_closest_known_one(ens):
    name = ens.feature_names[0]
    with pytest.raises(InputError, match=f"did you mean '{name}'"):
        feature_list(ens, name + "x")


def test_a_name_with_spaces_finds_the_feature_a_library_renamed(ens):
    renamed = ens.with_features(
        tuple(
            f.__class__(**{**f.__dict__, "name": "mean_texture"}) if i == 1 else f
            for i, f in enumerate(ens.features)
        )
    )
    with pytest.warns(TreesensWarning):
        assert feature_list(renamed, ["mean texture"]) == ("mean_texture",)


def test_a_name_found_but_for_spaces_and_punctuation_is_said_to_be_read_as_the_feature(ens):
    renamed = ens.with_features(
        tuple(
            f.__class__(**{**f.__dict__, "name": "annual income"}) if i == 1 else f
            for i, f in enumerate(ens.features)
        )
    )
    said = "vary: 'annual_income' is read as the feature 'annual income'"
    with pytest.warns(TreesensWarning, match=said):
        feature_list(renamed, ["annual_income"])


def test_a_name_found_exactly_is_read_without_a_word(ens):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert feature_list(ens, [ens.feature_names[1]]) == (ens.feature_names[1],)


def test_cli_says_once_which_feature_a_name_found_but_for_its_spaces_is(tmp_path):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, size=(80, 2)), columns=["annual income", "age"])
    model = xgb.XGBClassifier(n_estimators=3, max_depth=2).fit(X, X["annual income"] > 0.5)
    path = tmp_path / "income.json"
    model.save_model(path)
    p = treesens_here("check", path, "--vary", "annual_income", "--gap", "0.1")
    said = "treesens: warning: vary: 'annual_income' is read as the feature 'annual income'"
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(said) == 1


@pytest.mark.parametrize("suffix", ["!", " ", "\udcff", "\x00"])
def test_a_name_with_a_character_more_at_its_end_is_not_the_feature(ens, suffix):
    name = ens.feature_names[0]
    with pytest.raises(InputError, match=f"unknown feature .*did you mean '{name}'"):
        feature_list(ens, [name + suffix])


def test_an_empty_list_names_the_keyword(ens):
    with pytest.raises(InputError, match="^features: no features given"):
        feature_list(ens, [], "features")


def test_a_list_with_an_empty_name_is_told_the_names_it_holds(ens):
    # was "vary: no features given", the name given unmentioned ('sex,': a comma too many)
    name = ens.feature_names[0]
    with pytest.raises(
        InputError, match=rf"^vary: '{name},' holds an empty name \(did you mean '{name}'\?\)$"
    ):
        feature_list(ens, f"{name},")


def test_a_sweeps_features_with_an_empty_name_are_told_so_as_checks():
    from treesens.interfaces.cli.sweep import parse_features

    with pytest.raises(
        InputError, match=r"^--features 'a,,b': holds an empty name \(did you mean 'a,b'\?\)$"
    ):
        parse_features("a,,b")


def test_check_takes_an_index(ens):
    assert treesens.check(ens, vary=[1], **QUICK).features == [ens.feature_names[1]]


def test_max_gap_takes_an_index(ens):
    assert treesens.max_gap(ens, vary=1, timeout=30).features == [ens.feature_names[1]]


def test_compare_takes_an_index(ens):
    (res,) = treesens.compare(ens, vary=[1], backends=["cpsat"], **QUICK)
    assert res.features == [ens.feature_names[1]]


def test_sweep_takes_one_name_as_one_feature(ens):
    name = ens.feature_names[2]
    (res,) = treesens.sweep(ens, features=name, progress=False, **QUICK)
    assert res.features == [name]


def test_sweep_takes_indices(ens):
    results = treesens.sweep(ens, features=[0, 3], progress=False, **QUICK)
    assert [r.features for r in results] == [[ens.feature_names[0]], [ens.feature_names[3]]]


def test_audit_takes_an_index(ens, rows):
    frame = treesens.audit(ens, rows, 1, gap=0.1)
    assert f"x2_{ens.feature_names[1]}" in frame.columns


def test_a_feature_given_twice_names_the_python_keyword(ens):
    name = ens.feature_names[0]
    with pytest.raises(InputError, match=f"^vary: feature '{name}' listed twice"):
        treesens.check(ens, vary=[name, 0], **QUICK)


def test_classes_for_a_binary_audit_names_no_flag(ens, rows):
    with pytest.raises(InputError, match="classes") as e:
        treesens.audit(ens, rows, ens.feature_names[0], classes=1)
    assert "--" not in str(e.value)


def test_check_of_a_lightgbm_model_takes_the_data_columns_original_name():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.uniform(0, 1, size=(60, 2)), columns=["mean radius", "mean texture"])
    y = (X["mean texture"] > 0.5).astype(int)
    model = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, min_child_samples=5, verbose=-1)
    model.fit(X, y)
    with pytest.warns(
        TreesensWarning, match="'mean texture' is read as the feature 'mean_texture'"
    ):
        res = treesens.check(model, vary=["mean texture"], data=X.assign(label=y), **QUICK)
    assert res.features == ["mean_texture"]


def test_an_infinite_gap_is_refused_alike_by_check_and_audit(ens, rows):
    with pytest.raises(InputError, match="gap inf is not a finite number"):
        treesens.check(ens, vary=0, gap=float("inf"))
    with pytest.raises(InputError, match="gap inf is not a finite number"):
        treesens.audit(ens, rows, 0, gap=float("inf"))


def test_a_name_of_ones_own_on_a_model_of_positional_names_says_how_to_name_them(ens):
    # said only "(known features: f0, f1, f2, f3)" to a user asking for 'age'
    with pytest.raises(InputError, match=r"by position only \(f0, f1, \.\.\.\); name them with"):
        feature_list(ens, "age")


def test_a_positional_name_out_of_range_gets_no_naming_advice(ens):
    with pytest.raises(InputError) as e:
        feature_list(ens, "f9")
    assert "by position only" not in str(e.value)


def test_cli_names_the_data_flag_for_a_model_of_positional_names(tmp_path):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    booster = xgb.train({"max_depth": 2}, xgb.DMatrix(X, label=X[:, 0] > 0), 2)
    booster.save_model(str(tmp_path / "m.json"))
    p = treesens_here("check", tmp_path / "m.json", "--vary", "age", "--gap", "0.1")
    assert p.returncode == 2
    assert "name them with the data (--data ROWS.csv: its columns, in order)" in p.stderr
