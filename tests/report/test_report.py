"""What a report gathers: the ranking, the protected features' answers and audits, and
what it could not answer."""

from __future__ import annotations

import shutil
import warnings

import pytest

from treesens.answers.result import Result
from treesens.compiler.errors import InputError
from treesens.questions.report import Report, _results_paths, report
from treesens.questions.sweep import OtherModelResults
from treesens.tests.report.conftest import MODEL, RANKED, ROWS


def test_every_ranked_feature_has_a_proven_upper_bound_above_its_pair(small_report):
    assert [r.features for r in small_report.ranking] == [[f] for f in RANKED]
    for r in small_report.ranking:
        lower = r.max_gap["lower"]  # None: no pair at all
        assert lower is None or lower <= r.max_gap["upper"]


def test_the_protected_feature_is_checked_and_audited_by_its_own_values(small_report):
    (found,) = small_report.protected
    assert found.feature == "mean_texture"
    assert found.audit_rows == 200
    groups = {row["group"] for row in found.audit_table}
    assert {"all", "decision", "mean_texture"} <= groups


def test_a_protected_feature_of_many_values_is_broken_down_by_its_deciles(small_report):
    groups = [r for r in small_report.protected[0].audit_table if r["group"] == "mean_texture"]
    assert len(groups) == 10  # 200 rows of about as many values: ten intervals
    assert sum(r["rows"] for r in groups) == 200
    lows = [float(r["value"].strip("[]").split(",")[0]) for r in groups]
    assert lows == sorted(lows)


def test_audit_intervals_bracket_the_fraction(small_report):
    for row in small_report.protected[0].audit_table:
        if row["fraction"] is not None:
            assert row["ci_low"] <= row["fraction"] <= row["ci_high"]


def test_provenance_names_the_model_and_data_with_their_hashes(small_report):
    roles = {f.role: f for f in small_report.provenance.files}
    assert roles["model"].path.endswith("breast_cancer_xgb.json")
    assert roles["data"].path.endswith("breast_cancer_rows.csv")
    assert all(len(f.sha256) == 64 for f in roles.values())
    assert "treesens" in small_report.provenance.versions


def test_provenance_names_the_details_file_found_beside_the_model(small_report):
    # its bounds are the domain the proofs cover: the page hashes it as it does the model
    roles = {f.role: f for f in small_report.provenance.files}
    assert roles["details"].path.endswith("breast_cancer_details.csv")


def test_a_rerun_reuses_the_ranking_it_kept(small_report, tmp_path):
    # a budget the ranking cannot outrun on a loaded machine (it ends once its max gap is
    # proven): at 10 s, load ~8 left mean_texture open, and a rerun asks an open one again
    results = tmp_path / "again.jsonl"
    kw = dict(features=RANKED[:1], budget=120, results=results, progress=False)
    report(str(MODEL), str(ROWS), **kw)
    rank_file, _ = _results_paths(results)
    lines = rank_file.read_text().splitlines()
    report(str(MODEL), str(ROWS), **kw)
    assert rank_file.read_text().splitlines() == lines


def test_a_report_of_a_model_retrained_in_place_says_its_log_holds_the_old_ones_answers(
    tmp_path,
):
    """Not the sweep's warning ("give this sweep a new file"): the user ran no sweep."""
    model = tmp_path / "model.json"
    shutil.copyfile(MODEL, model)
    kw = dict(features=RANKED[:1], budget=10, results=tmp_path / "r.jsonl", progress=False)
    report(str(model), str(ROWS), **kw)
    shutil.copyfile(MODEL.with_name("breast_cancer_deep_xgb.json"), model)  # retrained
    said: list[str] = []
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        report(str(model), str(ROWS), note=said.append, **kw)
    assert [w for w in warned if issubclass(w.category, OtherModelResults)] == []
    assert [s for s in said if "holds answers of a model of this name" in s] == [
        f"report: {tmp_path / 'r.rank.jsonl'} holds answers of a model of this name with other "
        "trees or bounds (or written by an earlier treesens, whose fingerprints differ): they "
        "are not reused, and this model's are added to it (--results PATH keeps each model's "
        "apart)"
    ]


def test_a_report_ignores_the_sweep_s_other_model_warning_by_its_category_not_its_words(
    tmp_path, monkeypatch
):
    from treesens.questions import campaign

    kw = dict(features=RANKED[:1], budget=10, results=tmp_path / "r.jsonl", progress=False)
    report(str(MODEL.with_name("breast_cancer_deep_xgb.json")), str(ROWS), **kw)
    monkeypatch.setattr(campaign, "warn_other_model", lambda *a: a[-1]("reworded"))
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        report(str(MODEL), str(ROWS), **kw)
    assert [str(w.message) for w in warned if "reworded" in str(w.message)] == []


def _with_ranking(rep: Report, ranking: list[Result]) -> Report:
    return Report(**{**rep.__dict__, "ranking": ranking, "protected": []})


def test_an_unproven_max_gap_is_said_in_plain_words(small_report):
    r = small_report.ranking[0]
    open_bounds = Result(**{**r.__dict__, "max_gap": {**r.max_gap, "proven": False}})
    rep = _with_ranking(small_report, [open_bounds])
    (line,) = rep.unanswered
    assert "between" in line and "time limit" in line


def test_an_unknown_protected_feature_is_an_input_error():
    with pytest.raises(InputError, match="protected: unknown feature 'nope'"):
        report(str(MODEL), str(ROWS), protected=["nope"], budget=5, progress=False)


def test_a_protected_feature_differing_in_case_gets_a_did_you_mean():
    with pytest.raises(InputError, match="did you mean 'mean_texture'"):
        report(str(MODEL), str(ROWS), protected=["Mean_Texture"], budget=5, progress=False)


def test_a_protected_feature_listed_twice_is_an_input_error():
    with pytest.raises(InputError, match="^protected: feature 'mean_texture' listed twice"):
        report(str(MODEL), str(ROWS), protected=["mean_texture"] * 2, budget=5, progress=False)


def test_a_ranked_feature_listed_twice_is_an_input_error():
    with pytest.raises(InputError, match="^features: feature 'mean_texture' listed twice"):
        report(str(MODEL), str(ROWS), features=["mean_texture"] * 2, budget=5, progress=False)


def test_a_missing_data_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no such data file"):
        report(str(MODEL), str(tmp_path / "none.csv"), budget=5, progress=False)


def test_data_given_as_a_dataframe_is_an_input_error_asking_for_its_file():
    import pandas as pd

    with pytest.raises(InputError, match="give the rows as a CSV or Parquet file path"):
        report(str(MODEL), pd.read_csv(ROWS), budget=5, progress=False)


def test_a_budget_of_zero_is_an_input_error():
    with pytest.raises(InputError, match="budget"):
        report(str(MODEL), str(ROWS), budget=0, progress=False)


def test_an_insensitive_protected_feature_gets_a_certificate_that_verifies(tmp_path):
    from treesens.verify import verify_file

    rep = report(
        str(MODEL),
        str(ROWS),
        features=["mean_radius"],
        protected=["mean_radius"],
        budget=200,  # a cap 10x above what it takes
        certificates=tmp_path / "certs",
    )
    (found,) = rep.protected
    assert found.check.status == "insensitive"
    assert found.certificate is not None and verify_file(found.certificate).valid


WINE = MODEL.with_name("wine_xgb.json")


def wine_rows(folder):
    """scikit-learn's wine data under the names of the shipped wine model's features."""
    from sklearn.datasets import load_wine

    wine = load_wine(as_frame=True).frame.rename(columns={"target": "label"})
    rows = folder / "wine.csv"
    wine.rename(columns=lambda c: c.replace("/", "_")).to_csv(rows, index=False)
    return rows, len(wine)


def test_a_multiclass_report_audits_each_row_for_the_second_class_of_its_pair(tmp_path):
    rows, n = wine_rows(tmp_path)
    rep = report(
        str(WINE),
        str(rows),
        features=["proline"],
        protected=["proline"],
        gap=1.5,
        classes="0,1",
        budget=200,  # a cap 10x above what it takes
        progress=False,
    )
    (found,) = rep.protected
    assert found.audit_error is None and found.audit_rows == n
    by_decision = {r["value"]: r for r in found.audit_table if r["group"] == "decision"}
    assert by_decision["1 -> 1"]["flippable"] == 0  # a row of class 1 cannot flip to 1


@pytest.fixture(scope="module")
def wine_page(tmp_path_factory):
    """The page of a multiclass report: proline ranked and protected, 0 -> any at 1.5."""
    from treesens.views.report_html import render

    rows, _ = wine_rows(tmp_path_factory.mktemp("wine"))
    return render(
        report(
            str(WINE),
            str(rows),
            features=["proline"],
            protected=["proline"],
            gap=1.5,
            classes="0,any",
            budget=200,  # a cap 10x above what it takes
            progress=False,
        )  # fmt: skip
    )


def test_a_multiclass_report_says_the_ratio_and_the_class_pair_asked(wine_page):
    assert (
        "Gap asked of the protected features: a probability ratio of 1.5, class 0 -&gt; "
        "class any." in wine_page
    )


def test_a_multiclass_ranking_says_its_tolerance_is_relative(wine_page):
    assert "within 0.001 of the ratio, relatively (upper &le; lower &times; e<sup>" in wine_page


@pytest.mark.parametrize(
    ("asked", "problem"),
    [
        ({"gap": 1.5}, "give the two classes"),
        ({"classes": "0,1", "gap": 0.2}, "out of range"),
        # the default gap, 0.2, is a binary model's: a ratio is asked for, not refused
        ({"classes": "0,1"}, r"asked a probability ratio, give it \(--gap G; gap= in Python"),
        ({}, r"give it \(--gap G --classes C1,C2; gap=, classes= in Python"),
    ],
)
def test_a_multiclass_report_without_a_class_pair_or_a_ratio_is_refused_before_solving(
    tmp_path, asked, problem
):
    rows, _ = wine_rows(tmp_path)
    solved = []
    with pytest.raises(InputError, match=problem):
        report(str(WINE), str(rows), protected=["proline"], note=solved.append, **asked)
    assert solved == []  # not even the ranking's first line


@pytest.mark.parametrize("gap", [-0.1, 0.7])
def test_a_binary_gap_out_of_range_is_refused_before_solving(gap):
    solved = []
    with pytest.raises(InputError, match="out of range: a binary gap g needs 0 <= g < 0.5"):
        report(str(MODEL), str(ROWS), protected=["mean_texture"], gap=gap, note=solved.append)
    assert solved == []  # not even the ranking's first line


def test_classes_given_for_a_binary_model_are_refused_before_solving():
    solved = []
    with pytest.raises(InputError, match=r"classes=\(0, 1\) given for a binary model"):
        report(str(MODEL), str(ROWS), protected=["mean_texture"], classes="0,1", note=solved.append)
    assert solved == []
