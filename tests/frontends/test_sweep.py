"""Sweeps: subsets, sampling, streaming, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.compiler.errors import InputError
from treesens.questions.results_log import appending
from treesens.questions.resume import ResumeKey, plan_resume, read_results
from treesens.questions.sweep import OtherModelResults, feature_subsets
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import random_ensemble

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _ens():
    return random_ensemble(3, n_trees=4, depth=2, n_features=5, n_thresholds=2)


def test_single_feature_sweep_has_one_query_per_feature():
    assert feature_subsets(_ens(), 1) == [(f"f{i}",) for i in range(5)]


def test_subsets_of_size_two_are_all_pairs():
    assert len(feature_subsets(_ens(), 2)) == 10


def test_sampled_subsets_are_distinct_and_reproducible_with_a_seed():
    a = feature_subsets(_ens(), 2, sample=4, seed=1)
    assert len(set(a)) == 4
    assert a == feature_subsets(_ens(), 2, sample=4, seed=1)


def test_subset_size_out_of_range_is_an_input_error():
    from treesens.compiler.errors import InputError

    with pytest.raises(InputError):
        feature_subsets(_ens(), 6)


def test_more_subsets_than_a_sweep_lists_are_refused_before_listing_them(monkeypatch):
    # 30 features choose 12 took 13.6 GB and two minutes before the first query
    from treesens.questions import sweep

    monkeypatch.setattr(sweep, "MAX_SWEEP_QUERIES", 9)
    with pytest.raises(InputError, match=r"subsets 2 of 5 features are 10 queries, more than a "):
        feature_subsets(_ens(), 2)


def test_a_sample_within_what_a_sweep_lists_is_drawn_from_more_subsets(monkeypatch):
    from treesens.questions import sweep

    monkeypatch.setattr(sweep, "MAX_SWEEP_QUERIES", 9)
    assert len(feature_subsets(_ens(), 2, sample=3)) == 3


def test_a_sweep_of_many_queries_says_how_to_ask_fewer(monkeypatch):
    from treesens.interfaces.cli import sweep as sweep_cmd

    monkeypatch.setattr(sweep_cmd, "MANY_QUERIES", 1)
    argv = ["--features", "mean_texture,mean_radius", "--table", "none"]
    p = treesens_here("sweep", EXAMPLES / "breast_cancer_xgb.json", *argv)
    assert "note: 2 queries may take long (each up to its --timeout): --sample N" in p.stderr


def test_features_are_swept_in_the_order_given():
    assert feature_subsets(_ens(), 1, features=["f3", "f1"]) == [("f3",), ("f1",)]


def test_a_repeated_feature_is_an_input_error_as_in_vary():
    with pytest.raises(InputError, match="^features: feature 'f3' listed twice"):
        feature_subsets(_ens(), 1, features=["f3", "f1", "f3"])


def test_empty_feature_list_is_an_input_error():
    with pytest.raises(InputError, match="no features"):
        feature_subsets(_ens(), 1, features=[])


QUESTION = ResumeKey(
    model="xgboost:m.json",
    gap=0.3,
    gap_kind="prob",
    classes=None,
    passes=["aff", "obj", "ordering", "unaff"],
    backend="cpsat",
    timeout=60.0,
    asked={"ensemble": "abc", "data_aware": "none"},
)


def _line(query="a", status="insensitive", timeout=60.0, **kw) -> dict:
    """A result line as the sweep records it, asked QUESTION unless ``kw`` says otherwise."""
    asked = {**QUESTION.record(), "timeout": timeout, **kw.pop("asked", {})}
    line = {
        "query": query,
        "status": status,
        "model": QUESTION.model,
        "gap": QUESTION.gap,
        "gap_kind": QUESTION.gap_kind,
        "classes": QUESTION.classes,
        "passes": QUESTION.passes,
        "backend": QUESTION.backend,
        "stats": {"asked": asked},
    }
    return json.loads(json.dumps({**line, **kw}))


def test_recorded_answer_to_the_same_question_is_reused():
    assert QUESTION.reuses(_line(status="insensitive"))


@pytest.mark.parametrize(
    "other",
    [
        {"gap": 0.05},
        {"gap_kind": "margin"},
        {"asked": {"backend": "highs"}},
        {"model": "lightgbm:m.txt"},
        {"classes": [0, "any"]},
        {"passes": ["ordering"]},
        {"asked": {"data_aware": "clause"}},
        {"asked": {"data": "d.csv"}},
        {"asked": {"ensemble": "retrained"}},
    ],
    ids=lambda d: next(iter(d.get("asked", d))),
)
def test_recorded_answer_asked_with_another_setting_is_not_reused(other):
    assert not QUESTION.reuses(_line(**other))


def test_recorded_answer_for_the_same_model_at_another_path_is_reused():
    assert QUESTION.reuses(_line(model="xgboost:/abs/path/to/m.json"))


def test_recorded_answer_without_the_sweep_record_is_not_reused():
    assert not QUESTION.reuses({**_line(), "stats": {}})


def test_recorded_error_is_not_reused():
    assert not QUESTION.reuses(_line(status="error"))


@pytest.mark.parametrize(("timeout", "reused"), [(30.0, False), (60.0, True), (120.0, True)])
def test_recorded_unknown_is_reused_only_with_at_least_the_time_limit(timeout, reused):
    assert QUESTION.reuses(_line(status="unknown", timeout=timeout)) is reused


def test_a_recorded_answer_cut_short_by_an_interruption_is_not_reused():
    line = _line(status="sensitive", timeout=600.0)
    line["stats"]["stopped_by"] = "interrupted"
    assert not QUESTION.reuses(line)


MAX_GAP_QUESTION = ResumeKey(**{**QUESTION.__dict__, "max_gap": 0.001})


@pytest.mark.parametrize(("proven", "reused"), [(False, False), (True, True)])
def test_a_max_gap_cut_short_is_reused_only_when_its_bounds_were_proven(proven, reused):
    found = {"lower": 0.3, "upper": 0.3005 if proven else 0.4, "proven": proven}
    line = _line(status="sensitive", timeout=600.0, max_gap={**found, "stopped_by": "interrupted"})
    assert MAX_GAP_QUESTION.reuses(line) is reused


ANY_CLASS_QUESTION = ResumeKey(
    **{
        **MAX_GAP_QUESTION.__dict__,
        "classes": [0, "any"],
        "asked": {**QUESTION.asked, "classes": [0, "any"]},
    }
)


def test_a_max_gap_asked_with_any_class_is_reused_though_its_line_shows_the_pairs_classes():
    found = {"lower": 3.0, "upper": 3.001, "proven": True}
    line = _line(status="sensitive", classes=[0, 2], max_gap=found, asked=ANY_CLASS_QUESTION.asked)
    assert ANY_CLASS_QUESTION.reuses(line)


def test_a_line_asked_for_one_class_is_not_reused_for_any_class():
    found = {"lower": 3.0, "upper": 3.001, "proven": True}
    line = _line(status="sensitive", classes=[0, 2], max_gap=found)
    assert not ANY_CLASS_QUESTION.reuses(line)


def test_resume_plan_matches_a_feature_set_in_any_order():
    plan = plan_resume([("a", "b")], [_line(query="b,a")], QUESTION)
    assert plan.reused[("a", "b")]["query"] == "a,b" and plan.todo == []


def test_resume_plan_prefers_an_answer_to_a_later_unknown():
    lines = [_line(status="sensitive"), _line(status="unknown", timeout=600.0)]
    assert plan_resume([("a",)], lines, QUESTION).reused[("a",)]["status"] == "sensitive"


def test_resume_plan_counts_queries_rerun_and_new():
    lines = [_line(query="a"), _line(query="b", gap=0.1), _line(query="c", status="error")]
    plan = plan_resume([("a",), ("b",), ("c",), ("d",)], lines, QUESTION)
    assert (list(plan.reused), plan.todo, plan.rerun) == ([("a",)], [("b",), ("c",), ("d",)], 2)


def test_garbage_line_in_a_resume_file_is_reported_with_its_line_number(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(_line()) + "\nnot json\n" + json.dumps(_line(query="b")) + "\n")
    warnings: list[str] = []
    assert [d["query"] for d in read_results(f, warnings.append)] == ["a", "b"]
    assert warnings == [f"{f} line 2: not a JSON result, ignored"]


def test_a_results_file_saved_with_a_byte_order_mark_keeps_its_first_line(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + (json.dumps(_line()) + "\n").encode())  # an editor's UTF-8
    warnings: list[str] = []
    assert [d["query"] for d in read_results(f, warnings.append)] == ["a"]
    assert warnings == []


def test_a_line_cut_short_by_an_interruption_is_not_a_result(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(_line()) + "\n" + '{"query": "c", "sta')
    warnings: list[str] = []
    assert [d["query"] for d in read_results(f, warnings.append)] == ["a"]
    assert warnings == []


def test_appending_after_a_cut_short_line_drops_it(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(json.dumps(_line()) + "\n" + '{"query": "c", "sta')
    with appending(f) as append:
        append(json.dumps(_line(query="d")) + "\n")
    assert [d["query"] for d in read_results(f, lambda msg: None)] == ["a", "d"]


def test_appending_to_a_results_file_with_a_byte_order_mark_is_not_refused(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + (json.dumps(_line()) + "\n").encode())
    with appending(f) as append:
        append(json.dumps(_line(query="d")) + "\n")
    assert [d["query"] for d in read_results(f, lambda msg: None)] == ["a", "d"]


def test_appending_to_a_file_whose_first_line_is_not_json_is_refused(tmp_path):
    f = tmp_path / "contract.sens"
    f.write_text('model "m.json"\nfeatures from "d')
    with pytest.raises(InputError, match="its first line is not a JSON line"), appending(f):
        pass
    assert f.read_text() == 'model "m.json"\nfeatures from "d'


def test_cli_sweep_out_into_a_file_that_is_not_json_lines_is_refused(tmp_path):
    f = tmp_path / "rows.jsonl"  # a CSV's lines under a log's name (rows.csv: by its name)
    f.write_text("a,b\n1,2\n")
    argv = ["--features", "mean_texture", "--gap", "0.2", "--out", f, "--table", "none"]
    p = treesens_here("sweep", EXAMPLES / "breast_cancer_xgb.json", *argv)
    assert p.returncode == 2 and "its first line is not a JSON line" in p.stderr
    assert f.read_text() == "a,b\n1,2\n"


def test_cli_sweep_resume_from_a_file_that_is_not_json_lines_is_one_line_before_any_query(
    tmp_path,
):
    # it warned once per line of the CSV (570 lines for a data file) before refusing it
    f = tmp_path / "rows.jsonl"
    f.write_text("a,b\n1,2\n3,4\n")
    argv = ["--features", "mean_texture", "--gap", "0.2", "--resume", f, "--table", "none"]
    p = treesens_here("sweep", EXAMPLES / "breast_cancer_xgb.json", *argv)
    assert p.returncode == 2 and "its first line is not a JSON line" in p.stderr
    assert "warning" not in p.stderr and "resume from" not in p.stderr
    assert f.read_text() == "a,b\n1,2\n3,4\n"


def _sweep(args, cwd):
    return treesens_here("sweep", *args, cwd=cwd)


def test_resume_from_a_file_not_there_says_it_is_created(tmp_path):
    # a mistyped --resume path would otherwise start over silently
    model = str(EXAMPLES / "breast_cancer_xgb.json")
    r = _sweep([model, "--features", "mean_texture", "--resume", "typo.jsonl"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "resume from typo.jsonl (no such file yet: it is created): " in r.stderr


@pytest.fixture(scope="module")
def resumed_wine(tmp_path_factory):
    """A sweep of hue and alcohol, then one of hue, alcohol and proline resumed with --json."""
    tmp = tmp_path_factory.mktemp("wine")
    model = str(EXAMPLES / "wine_xgb.json")
    out = tmp / "sweep.jsonl"
    common = ["--classes", "0,any", "--gap", "2", "--timeout", "60", "--table", "none"]
    r1 = _sweep([model, "--features", "hue,alcohol", "--out", str(out), *common], tmp)
    assert r1.returncode == 0, r1.stderr
    assert [json.loads(x)["query"] for x in out.read_text().splitlines()] == ["hue", "alcohol"]
    r2 = _sweep(
        [model, "--features", "hue,alcohol,proline", "--resume", str(out), "--json", *common],
        tmp,
    )
    assert r2.returncode == 0, r2.stderr
    return r2, out


def test_resumed_sweep_answers_only_the_missing_queries(resumed_wine):
    _, out = resumed_wine
    assert [json.loads(x)["query"] for x in out.read_text().splitlines()] == [
        "hue",
        "alcohol",
        "proline",
    ]


def test_resumed_sweep_with_json_prints_reused_results_too(resumed_wine):
    r2, _ = resumed_wine
    assert [json.loads(x)["query"] for x in r2.stdout.splitlines()] == ["hue", "alcohol", "proline"]


@pytest.fixture(scope="module")
def resumed_with_another_gap(tmp_path_factory):
    """worst_radius: insensitive at gap 0.3, sensitive at 0.05 (treesens check agrees)."""
    tmp = tmp_path_factory.mktemp("gap")
    model = str(EXAMPLES / "breast_cancer_xgb.json")
    out = tmp / "r.jsonl"
    feats = ["--features", "mean_texture,worst_radius", "--timeout", "60"]
    r1 = _sweep([model, *feats, "--gap", "0.3", "--out", str(out), "--table", "none"], tmp)
    assert r1.returncode == 0, r1.stderr
    r2 = _sweep([model, *feats, "--gap", "0.05", "--resume", str(out), "--table", "csv"], tmp)
    assert r2.returncode == 0, r2.stderr
    return r2


def test_resume_reruns_queries_asked_with_another_gap(resumed_with_another_gap):
    rows = resumed_with_another_gap.stdout.splitlines()[1:]
    assert [r.split(",")[:2] for r in rows] == [
        ["mean_texture", "sensitive"],
        ["worst_radius", "sensitive"],
    ]


def test_resume_says_how_many_results_are_reused_and_rerun(resumed_with_another_gap):
    assert "0 results reused, 2 rerun" in resumed_with_another_gap.stderr


@pytest.mark.parametrize(
    ("flag", "path", "problem"),
    [
        ("--out", ".", "is a directory"),
        ("--resume", ".", "is a directory"),
        ("--out", "a_file/x.jsonl", "cannot make its folder a_file: file exists"),
        ("--table-out", "a_file/t.md", "cannot make its folder a_file: file exists"),
    ],
)
def test_unwritable_output_is_an_input_error_before_the_model_loads(tmp_path, flag, path, problem):
    (tmp_path / "a_file").write_text("")
    r = _sweep([str(EXAMPLES / "breast_cancer_xgb.json"), flag, path], tmp_path)
    assert (r.returncode, r.stderr) == (2, f"treesens: error: {flag} {path}: {problem}\n")


def test_a_table_out_named_as_another_format_is_refused_before_the_model_loads(tmp_path):
    # it wrote Markdown into t.xlsx
    r = _sweep([str(EXAMPLES / "breast_cancer_xgb.json"), "--table-out", "t.xlsx"], tmp_path)
    assert (r.returncode, r.stderr) == (
        2,
        "treesens: error: --table-out t.xlsx: the table is written as CSV (FILE.csv) or "
        "Markdown (FILE.md, FILE.txt), not as .xlsx\n",
    )


def test_an_out_file_named_as_a_table_is_refused_pointing_at_table_out(tmp_path):
    # it wrote JSON Lines into s.csv
    r = _sweep([str(EXAMPLES / "breast_cancer_xgb.json"), "--out", "s.csv"], tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("treesens: error: --out s.csv: the results log is JSON Lines")
    assert r.stderr.endswith("name it FILE.jsonl (the table: --table-out FILE.csv)\n")


def test_out_and_resume_naming_different_files_is_an_input_error(tmp_path):
    r = _sweep(
        [str(EXAMPLES / "wine_xgb.json"), "--out", "a.jsonl", "--resume", "b.jsonl"], tmp_path
    )
    assert r.returncode == 2 and r.stderr.startswith("treesens: error: --out a.jsonl: ")


def test_empty_features_flag_is_an_input_error(tmp_path):
    r = _sweep([str(EXAMPLES / "wine_xgb.json"), "--features", ""], tmp_path)
    assert (r.returncode, r.stderr) == (2, "treesens: error: --features '': no features given\n")


def test_model_fingerprint_is_the_same_for_a_copy_of_its_file(tmp_path):
    from treesens import load_model

    copy = tmp_path / "copy.json"
    copy.write_bytes((EXAMPLES / "wine_xgb.json").read_bytes())
    original = load_model(EXAMPLES / "wine_xgb.json", auto_details=False)
    assert load_model(copy).fingerprint() == original.fingerprint()


def test_model_fingerprint_changes_with_its_feature_bounds(tmp_path):
    from treesens import load_model

    ens = load_model(EXAMPLES / "wine_xgb.json")
    lines = ["feature,name,lb,ub"] + [f"{i},{f.name},0,1000" for i, f in enumerate(ens.features)]
    details = tmp_path / "d.csv"
    details.write_text("\n".join(lines) + "\n")
    bounded = load_model(EXAMPLES / "wine_xgb.json", details=details)
    assert bounded.fingerprint() != ens.fingerprint()


def test_model_fingerprint_changes_when_the_file_is_retrained_in_place(tmp_path):
    from treesens import load_model

    model = json.loads((EXAMPLES / "breast_cancer_xgb.json").read_text())
    copy = tmp_path / "m.json"
    copy.write_text(json.dumps(model))
    before = load_model(copy).fingerprint()
    model["learner"]["learner_model_param"]["base_score"] = "[9E-1]"
    copy.write_text(json.dumps(model))
    assert load_model(copy).fingerprint() != before


def test_resume_reuses_results_for_the_same_model_given_by_another_path(tmp_path):
    (tmp_path / "m.json").write_bytes((EXAMPLES / "breast_cancer_xgb.json").read_bytes())
    common = ["--features", "mean_texture", "--gap", "0.3", "--timeout", "60", "--table", "none"]
    r1 = _sweep(["m.json", *common, "--out", "r.jsonl"], tmp_path)
    assert r1.returncode == 0, r1.stderr
    r2 = _sweep([str(tmp_path / "m.json"), *common, "--resume", "r.jsonl"], tmp_path)
    assert "1 result reused, 0 rerun" in r2.stderr


def test_the_changed_cell_names_a_missing_value_missing():
    from treesens.answers.result import Result
    from treesens.questions.sweep import changed_features

    w = {"x1": {"a": 1.0, "b": None}, "x2": {"a": 1.0, "b": 0.5}}
    r = Result(query="b", status="sensitive", backend="cpsat", features=["b"], gap=0.2, witness=w)
    assert changed_features(r) == "b: missing -> 0.5"


def test_the_table_shows_each_pairs_distance_to_the_data_when_it_has_one():
    from treesens.answers.result import Result
    from treesens.questions.sweep import table_rows

    w = {"x1": {"a": 1.0}, "x2": {"a": 2.0}}
    near = Result(query="a", status="sensitive", backend="cpsat", features=["a"], gap=0.2)
    near.witness, near.distance = w, 0.0712
    none = Result(query="b", status="insensitive", backend="cpsat", features=["b"], gap=0.2)
    assert [row["distance"] for row in table_rows([near, none])] == ["0.0712", ""]


def _two_models_into_one_file(tmp_path, second: str):
    common = ["--features", "mean_texture", "--gap", "0.3", "--timeout", "60", "--table", "none"]
    r1 = _sweep([str(EXAMPLES / "breast_cancer_xgb.json"), *common, "--out", "r.jsonl"], tmp_path)
    assert r1.returncode == 0, r1.stderr
    return _sweep([str(EXAMPLES / second), *common, "--out", "r.jsonl"], tmp_path)


def test_out_file_of_another_model_is_warned_once_and_appended_to(tmp_path):
    """A log of several models is legitimate; a plot of it is not one sweep's."""
    r = _two_models_into_one_file(tmp_path, "breast_cancer_deep_xgb.json")
    warned = [x for x in r.stderr.splitlines() if "holds results of another model" in x]
    assert r.returncode == 0 and len(warned) == 1, r.stderr
    assert warned[0].startswith("treesens: warning: r.jsonl holds results of another model")
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 2


def test_out_file_of_the_same_model_is_appended_to_without_a_warning(tmp_path):
    r = _two_models_into_one_file(tmp_path, "breast_cancer_xgb.json")
    assert r.returncode == 0 and "another model" not in r.stderr, r.stderr


def test_api_sweep_out_of_another_model_warns(tmp_path):
    import treesens

    out = tmp_path / "r.jsonl"
    kw = {"features": ["mean_texture"], "gap": 0.3, "timeout": 60, "out": out}
    treesens.sweep(EXAMPLES / "breast_cancer_xgb.json", **kw)
    with pytest.warns(OtherModelResults, match="holds results of another model"):
        treesens.sweep(EXAMPLES / "breast_cancer_deep_xgb.json", **kw)


def test_an_out_file_that_is_not_text_is_appended_to_as_before_not_refused(tmp_path):
    """The other-model warning reads the out file; a file it cannot read as text holds
    no result to warn of, and the sweep goes on appending to it."""
    (tmp_path / "r.jsonl").write_bytes(b"\xff\xfe\x00 not text\n")
    common = ["--features", "mean_texture", "--gap", "0.3", "--timeout", "60", "--table", "none"]
    r = _sweep([str(EXAMPLES / "breast_cancer_xgb.json"), *common, "--out", "r.jsonl"], tmp_path)
    assert r.returncode == 0 and "cannot read" not in r.stderr, r.stderr
    assert (tmp_path / "r.jsonl").read_bytes().startswith(b"\xff\xfe\x00 not text\n{")


def test_out_file_of_a_model_replaced_in_place_is_warned_of_as_the_same_name(tmp_path):
    """One name, other trees (retrained in place, or lines an earlier treesens wrote):
    'another model' would not say why the file's model looks like this one."""
    import shutil

    import treesens

    model, out = tmp_path / "m.json", tmp_path / "r.jsonl"
    kw = {"features": ["mean_texture"], "gap": 0.3, "timeout": 60, "out": out}
    shutil.copy(EXAMPLES / "breast_cancer_xgb.json", model)
    treesens.sweep(model, **kw)
    shutil.copy(EXAMPLES / "breast_cancer_deep_xgb.json", model)
    with pytest.warns(OtherModelResults, match="holds results of a model of this name with other"):
        treesens.sweep(model, **kw)


def test_the_resume_line_says_an_open_answer_of_a_shorter_time_limit_is_asked_again():
    from treesens.questions.resume import ResumePlan

    said = ResumePlan({}, [("a",)], rerun=1).summary()
    assert said == (
        "0 results reused, 1 rerun (other settings, an error, or left open within a shorter "
        "time limit: an unknown, a max gap not proven), 0 new"
    )


def test_cli_sweep_out_into_a_file_that_is_not_json_lines_is_its_one_line_naming_the_flag(
    tmp_path,
):
    f = tmp_path / "q.sens"
    f.write_text('model "m.json"\n')
    argv = ["--features", "mean_texture", "--out", f, "--table", "none"]
    p = treesens_here("sweep", EXAMPLES / "breast_cancer_xgb.json", *argv)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        f"treesens: error: --out {f}: its first line is not a JSON line: the file holds no "
        "results, and this run would append its own to it; give a new file"
    ]


@pytest.mark.parametrize(
    "name, first_line",
    [("t.csv", "features,verdict,"), ("t.md", "| features | verdict |"), ("t.txt", "| features |")],
)
def test_cli_sweep_table_out_is_csv_for_a_csv_name_and_markdown_otherwise(
    tmp_path, name, first_line
):
    argv = ["--features", "mean_texture", "--table", "none", "--table-out", tmp_path / name]
    p = treesens_here("sweep", EXAMPLES / "breast_cancer_xgb.json", *argv)
    assert p.returncode == 0
    assert (tmp_path / name).read_text().startswith(first_line)
