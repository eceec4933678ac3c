"""Slips a new user of the Python API makes that were taken silently or said in another
function's name: a label that is no column name, data passed where the features go,
classes as a numpy array, and a misspelt keyword of a function with a signature of its
own (audit, load_model, expect_*, plots)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError

REPO = Path(__file__).resolve().parents[2]
BC_MODEL = REPO / "examples" / "breast_cancer_xgb.json"
BC_ROWS = REPO / "examples" / "breast_cancer_rows.csv"
WINE = REPO / "examples" / "wine_xgb.json"


@pytest.mark.parametrize("label", [0, 1.0, True])
def test_a_label_that_is_no_column_name_is_refused_without_data(label):
    # label=0 was taken and ignored: a class number given where a column is named
    with pytest.raises(InputError, match=r"^label: the data's label column, a name .*classes="):
        treesens.check(BC_MODEL, vary="mean_texture", gap=0.2, label=label)


def test_a_label_of_zero_with_data_is_refused_not_read_as_no_label():
    # 0 is false: the data's label column was taken as a feature column, without a word
    with pytest.raises(InputError, match=r"a column named so is '0'"):
        treesens.load_model(BC_MODEL, data=pd.read_csv(BC_ROWS), label=0)


def test_label_none_says_the_data_has_no_label_column():
    ens = treesens.load_model(BC_MODEL, data=pd.read_csv(BC_ROWS).drop(columns="label"), label=None)
    assert ens.n_features == 30


def test_a_dataframe_given_as_vary_is_refused_as_data_in_the_features_place():
    # check(model, X_test) asked about every column (or failed on the label column)
    with pytest.raises(InputError, match=r"^vary: a DataFrame \(columns mean_radius.*data="):
        treesens.check(BC_MODEL, pd.read_csv(BC_ROWS), gap=0.2)


def test_a_column_of_values_given_as_vary_is_refused_naming_the_column():
    # its 0s and 1s were read as feature indices: "feature 'mean_texture' listed twice"
    rows = pd.read_csv(BC_ROWS)
    with pytest.raises(
        InputError, match=r"^vary: a column of values \(200 of them\).*vary='label'"
    ):
        treesens.check(BC_MODEL, rows["label"], gap=0.2)


def test_a_series_of_feature_names_is_taken():
    r = treesens.check(BC_MODEL, pd.Series(["mean_texture"]), gap=0.2)
    assert r.query == "mean_texture"


def test_classes_as_a_numpy_array_of_two_are_the_pair():
    a = treesens.check(WINE, vary=["alcohol"], gap=2, classes=np.array([0, 2]))
    b = treesens.check(WINE, vary=["alcohol"], gap=2, classes=(0, 2))
    assert (a.status, a.classes) == (b.status, b.classes)


def test_classes_as_a_numpy_array_of_three_are_refused():
    with pytest.raises(InputError, match=r"^classes: give two classes.*\(got \(0, 1, 2\)\)"):
        treesens.check(WINE, vary=["alcohol"], gap=2, classes=np.array([0, 1, 2]))


def test_expect_max_gaps_misspelt_keyword_is_said_in_its_own_name():
    # was "check() got an unexpected keyword argument 'tolerence'"
    with pytest.raises(
        TypeError, match=r"^expect_max_gap\(\) got an unexpected .*'alow_unknown'.*'allow_unknown'"
    ):
        treesens.expect_max_gap(BC_MODEL, "mean_texture", at_most=0.4, alow_unknown=True)


@pytest.mark.parametrize(
    "call, slip, meant",
    [
        (
            lambda: treesens.audit(BC_MODEL, BC_ROWS, "mean_texture", gap=0.2, timout=3),
            "timout",
            "timeout",
        ),
        (lambda: treesens.load_model(BC_MODEL, detials=None), "detials", "details"),
        (
            lambda: treesens.expect_audit(BC_MODEL, BC_ROWS, "mean_texture", max_precent=2),
            "max_precent",
            "max_percent",
        ),
        (lambda: treesens.plot_sweep([], pth="x.png"), "pth", "path"),
    ],
)
def test_a_misspelt_keyword_gets_the_closest_one_the_function_takes(call, slip, meant):
    with pytest.raises(
        TypeError, match=rf"unexpected keyword argument '{slip}' \(did you mean '{meant}'"
    ):
        call()


def test_expect_audit_takes_audits_keywords():
    out = treesens.expect_audit(
        BC_MODEL, pd.read_csv(BC_ROWS).head(5), "mean_texture", max_rows=5, gap=0.2
    )
    assert out.ok


def test_a_gap_given_as_a_percent_says_the_number_it_stands_for():
    with pytest.raises(InputError, match=r"^gap must be a number, not '20%'; 20% is written 0.2$"):
        treesens.check(BC_MODEL, vary="mean_texture", gap="20%")


def test_a_timeout_written_as_a_duration_says_its_seconds():
    with pytest.raises(InputError, match=r"not '2m'; 2m is written 120 \(seconds\)$"):
        treesens.check(BC_MODEL, vary="mean_texture", gap=0.2, timeout="2m")


def test_a_certificate_named_as_a_folder_is_refused(tmp_path):
    # certificate="c/" wrote a file named c
    with pytest.raises(InputError, match=r"it is a directory \(give a file name\)"):
        treesens.check(BC_MODEL, vary="mean_texture", gap=0.45, certificate=f"{tmp_path / 'c'}/")
    assert not (tmp_path / "c").exists()


def test_a_certificate_not_named_json_is_refused(tmp_path):
    # certificate="c.cert" wrote JSON that treesens verify DIR (its *.json) missed
    with pytest.raises(InputError, match=r"c.cert: a certificate is JSON .* name it c.json$"):
        treesens.check(BC_MODEL, vary="worst_symmetry", gap=0.1, certificate=tmp_path / "c.cert")
    assert not (tmp_path / "c.cert").exists()


def test_a_certificate_of_a_model_in_memory_is_refused_before_the_search(tmp_path, monkeypatch):
    # it answered first, then said "no certificate: a certificate needs the model's file"
    from sklearn.tree import DecisionTreeClassifier

    from treesens.interfaces import api

    monkeypatch.setattr(api, "answer", lambda *a, **k: pytest.fail("the question was asked"))
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    tree = DecisionTreeClassifier().fit(X, [0, 1, 0, 1])
    with pytest.raises(InputError, match=r"^certificate= needs the model's file, .* in memory"):
        treesens.check(tree, vary="x1", gap=0.2, certificate=tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()


def test_an_audits_certificates_of_a_model_in_memory_are_refused_before_any_row(
    tmp_path, monkeypatch
):
    # every row was answered, then df.attrs["certificates"] said "needs the model's file"
    from sklearn.tree import DecisionTreeClassifier

    from treesens.questions import audit as audit_module

    monkeypatch.setattr(audit_module, "_answered", lambda *a, **k: pytest.fail("rows answered"))
    X = pd.DataFrame({"a": [0.0, 1.0, 0.0, 1.0], "b": [0.0, 0.0, 1.0, 1.0]})
    tree = DecisionTreeClassifier().fit(X, [0, 1, 0, 1])
    with pytest.raises(InputError, match=r"^certificates= needs the model's file, .* in memory"):
        treesens.audit(tree, X, vary="b", gap=0.2, certificates=tmp_path / "rows")
    assert not (tmp_path / "rows").exists()


def test_a_reports_certificates_of_a_model_in_memory_are_refused_before_the_ranking(
    tmp_path, monkeypatch
):
    # the ranking, checks and audits ran, then each claim and row said "needs the model's file"
    from sklearn.tree import DecisionTreeClassifier

    from treesens.questions import report as report_module

    monkeypatch.setattr(report_module, "_rank", lambda *a, **k: pytest.fail("ranked"))
    rows = pd.read_csv(BC_ROWS)
    tree = DecisionTreeClassifier(max_depth=2).fit(rows.drop(columns="label"), rows["label"])
    with pytest.raises(InputError, match=r"^certificates= needs the model's file, .* in memory"):
        treesens.report(tree, BC_ROWS, budget=10, progress=False, certificates=tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_compare_given_check_s_backend_keyword_names_its_own(monkeypatch):
    # backend="z3" was left unread: every installed backend was compared
    from treesens.interfaces import api

    monkeypatch.setattr(api, "compare_query", lambda *a, **k: pytest.fail("compared"))
    with pytest.raises(InputError, match=r"^compare takes backends= .*, not backend='z3'"):
        treesens.compare(BC_MODEL, vary="mean_texture", gap=0.2, backend="z3")


def test_backends_separated_by_spaces_are_told_their_commas():
    # was "unknown backend 'cpsat z3' (did you mean 'cpsat'?)"
    with pytest.raises(InputError, match=r"^backends: commas separate the backends, .*'cpsat,z3'$"):
        treesens.compare(BC_MODEL, vary="mean_texture", gap=0.2, backends="cpsat z3")


def test_a_certificate_named_as_the_model_file_is_refused_and_the_model_kept(tmp_path):
    # the certificate was written over the model
    model = tmp_path / "m.json"
    model.write_bytes(BC_MODEL.read_bytes())
    with pytest.raises(InputError, match=r"m.json: is a file and not a treesens certificate"):
        treesens.check(model, vary="worst_symmetry", gap=0.1, certificate=model)
    assert model.read_bytes() == BC_MODEL.read_bytes()


def test_a_misspelt_keyword_of_report_gets_the_closest_one():
    # was Python's own "report() got an unexpected keyword argument 'budgt'"
    with pytest.raises(TypeError, match=r"'budgt' \(did you mean 'budget'"):
        treesens.report(BC_MODEL, BC_ROWS, budgt=3)


@pytest.mark.parametrize(
    "call, given, meant",
    [
        (lambda: treesens.plot_sweep([], out="p.png"), "out", "path"),
        (lambda: treesens.sweep(BC_MODEL, gap=0.2, path="s.jsonl"), "path", "out"),
        (lambda: treesens.report(BC_MODEL, BC_ROWS, path="r.html"), "path", "out"),
    ],
)
def test_the_file_to_write_named_as_another_function_names_it_gets_this_ones_keyword(
    call, given, meant
):
    # plot_sweep(out=) said nothing of path=; sweep(path=) guessed 'data'
    with pytest.raises(TypeError, match=rf"'{given}' \(did you mean '{meant}'\? here the file"):
        call()
