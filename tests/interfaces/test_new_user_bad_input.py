"""Bad input a new user's first hour met, each one line naming the file and exit 2: a
--certificates folder that is a file (an internal error before), a malformed XGBoost
model's base_score or tree, an empty path in a .sens file, a negative feature index, a
plugin that exits, a list flag given twice (its first list dropped in silence before), a
.sens audit's out file, categories whose codes the bounds exclude (a vacuous answer
before), a model saved with a byte order mark, random bytes named .model, a certify
budget without a certificate, emit over an existing file of another kind, a certificate
named otherwise than .json, emit's backend with a format it does not solve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BREAST = str(EXAMPLES / "breast_cancer_xgb.json")
ROWS = str(EXAMPLES / "breast_cancer_rows.csv")


def _a_file(tmp_path) -> str:
    f = tmp_path / "rows.csv"
    f.write_text("a,b\n1,2\n")
    return str(f)


def test_sweep_certificates_naming_a_file_is_bad_input(tmp_path, capsys):
    f = _a_file(tmp_path)
    argv = ["sweep", BREAST, "--features", "radius_error", "--certificates", f]
    assert main([*argv, "--table", "none"]) == 2
    err = capsys.readouterr().err
    assert f"{f}: a file, not a folder" in err and "internal error" not in err


def test_sweep_certificates_below_a_file_is_bad_input(tmp_path, capsys):
    f = _a_file(tmp_path)
    argv = ["sweep", BREAST, "--features", "radius_error", "--certificates", f"{f}/certs"]
    assert main([*argv, "--table", "none"]) == 2
    err = capsys.readouterr().err
    assert "cannot make the folder" in err and "internal error" not in err


def test_report_certificates_naming_a_file_is_refused_before_any_ranking(tmp_path, capsys):
    f = _a_file(tmp_path)
    out = str(tmp_path / "r.html")
    argv = ["report", BREAST, "--data", ROWS, "--protected", "radius_error", "--out", out]
    assert main([*argv, "--certificates", f]) == 2
    err = capsys.readouterr().err
    assert f"--certificates {f}: a file, not a folder" in err and "ranking" not in err


def _xgboost_model(tmp_path, edit) -> str:
    model = json.loads((EXAMPLES / "breast_cancer_xgb.json").read_text())
    edit(model["learner"])
    f = tmp_path / "m.json"
    f.write_text(json.dumps(model))
    return str(f)


def test_a_base_score_that_is_no_number_names_the_model_file(tmp_path, capsys):
    def edit(learner):
        learner["learner_model_param"]["base_score"] = "xyz"

    f = _xgboost_model(tmp_path, edit)
    assert main(["check", f, "--vary", "mean_texture", "--gap", "0.2"]) == 2
    assert f"{f}: cannot read base_score 'xyz': not a number" in capsys.readouterr().err


def test_a_tree_without_a_field_says_which_field_is_missing(tmp_path, capsys):
    def edit(learner):
        del learner["gradient_booster"]["model"]["trees"][0]["split_conditions"]

    f = _xgboost_model(tmp_path, edit)
    assert main(["check", f, "--vary", "mean_texture", "--gap", "0.2"]) == 2
    assert "tree 0 is malformed: it has no field 'split_conditions'" in capsys.readouterr().err


def test_an_empty_model_path_in_a_sens_file_says_it_is_empty(tmp_path, capsys):
    # it said "model path is a directory", the .sens file's own folder
    f = tmp_path / "q.sens"
    f.write_text('model ""\nquery q {\n  vary a\n}\n')
    assert main(["run", str(f)]) == 2
    assert "q.sens:1:7: the model file's path is empty" in capsys.readouterr().err


def test_a_negative_feature_index_in_a_details_file_is_no_feature_index(tmp_path, capsys):
    # it said "index '-1' is not an integer"
    f = tmp_path / "d.csv"
    f.write_text("feature,name,lb,ub\n-1,mean_texture,0,40\n")
    argv = ["check", BREAST, "--vary", "mean_texture", "--gap", "0.2", "--details", str(f)]
    assert main(argv) == 2
    assert "d.csv:2: column feature: '-1' is not a feature index" in capsys.readouterr().err


def test_a_plugin_that_exits_while_it_loads_is_bad_input(tmp_path, capsys):
    # the command ended with the plugin's exit code (3) and said nothing
    plugin = tmp_path / "plug.py"
    plugin.write_text("import sys\nsys.exit(3)\n")
    argv = ["check", BREAST, "--vary", "mean_texture", "--gap", "0.2", "--plugin", str(plugin)]
    assert main(argv) == 2
    assert "plug.py: the plugin called sys.exit(3) while it loaded" in capsys.readouterr().err


def test_vary_given_twice_is_refused_not_the_first_list_dropped(capsys):
    # --vary a --vary b asked about b alone, and answered
    argv = ["check", BREAST, "--vary", "mean_texture", "--vary", "mean_radius", "--gap", "0.2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--vary: given twice ('mean_texture', then 'mean_radius')" in err
    assert "list them in one, --vary mean_texture,mean_radius" in err


def test_sweep_features_given_twice_is_refused(capsys):
    argv = ["sweep", BREAST, "--features", "mean_texture", "--features", "mean_radius"]
    assert main(argv) == 2
    assert "--features: given twice" in capsys.readouterr().err


def test_audit_by_given_twice_is_refused(capsys):
    argv = ["audit", BREAST, "--data", ROWS, "--vary", "mean_texture", "--by", "label"]
    assert main([*argv, "--by", "mean_radius"]) == 2
    assert (
        "--by: given twice ('label', then 'mean_radius'): give it once" in capsys.readouterr().err
    )


def test_a_sens_audit_whose_out_file_is_no_results_log_names_it_not_resume(tmp_path, capsys):
    # it said "--resume FILE: ...", a flag the .sens run was not given
    (tmp_path / "rows.csv").write_text(Path(ROWS).read_text())
    f = tmp_path / "a.sens"
    f.write_text(
        f'model "{BREAST}"\ndata "rows.csv"\n'
        'audit a {\n  vary mean_texture\n  out "rows.csv"\n}\n'
    )
    assert main(["run", str(f)]) == 2
    err = capsys.readouterr().err
    assert "the out file of audit 'a': " in err and "rows.csv:1: not a JSON line" in err
    assert "--resume" not in err


def test_categories_named_on_a_feature_bounded_away_from_their_codes_are_refused(tmp_path, capsys):
    # codes 0, 1 outside mean_texture's [9.71, 39.28]: the answer was a vacuous "insensitive"
    f = tmp_path / "q.sens"
    f.write_text(
        f'model "{BREAST}"\nfeatures from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
        "feature mean_texture { low, high }\nquery q {\n  vary mean_texture\n}\n"
    )
    assert main(["run", str(f)]) == 2
    err = capsys.readouterr().err
    assert "q.sens:3:1: feature 'mean_texture': its categories would be the codes 0..1" in err


@pytest.mark.parametrize("encoding, kind", [("utf-8-sig", "UTF-8"), ("utf-16", "UTF-16")])
def test_a_json_model_saved_with_a_byte_order_mark_is_told_so(tmp_path, capsys, encoding, kind):
    # UTF-8's was "cannot tell the model format", UTF-16's "binary content"
    f = tmp_path / "m.json"
    f.write_text(Path(BREAST).read_text(), encoding=encoding)
    assert main(["check", str(f), "--vary", "mean_texture", "--gap", "0.2"]) == 2
    assert f"m.json: the file starts with a {kind} byte order mark" in capsys.readouterr().err


def test_emit_with_the_box_search_as_backend_says_it_is_no_solver(tmp_path, capsys):
    # it said "unknown backend 'boxes' (did you mean 'boxes'?)"
    out = str(tmp_path / "q.smt2")
    argv = ["emit", BREAST, "--vary", "mean_texture", "--gap", "0.2", "--backend", "boxes"]
    assert main([*argv, "--format", "smt2", "-o", out]) == 2
    err = capsys.readouterr().err
    assert "backend 'boxes' is treesens' own search, not a solver" in err
    assert "did you mean" not in err


def test_report_out_naming_a_folder_names_it(tmp_path, capsys):
    # it said "--out: is a directory", without the path
    argv = ["report", BREAST, "--data", ROWS, "--protected", "mean_texture", "--out"]
    assert main([*argv, str(tmp_path)]) == 2
    assert f"--out {tmp_path}: is a directory" in capsys.readouterr().err


def test_details_given_twice_is_refused(capsys):
    details = str(EXAMPLES / "breast_cancer_details.csv")
    argv = ["check", BREAST, "--vary", "mean_texture", "--details", details]
    assert main([*argv, "--details", details]) == 2
    assert "--details: given twice" in capsys.readouterr().err


def test_emit_format_naming_another_format_than_the_out_file_is_bad_input(tmp_path, capsys):
    # it wrote LP into q.smt2, saying "wrote q.smt2 (lp, ...)"
    out = tmp_path / "q.smt2"
    argv = ["emit", BREAST, "--vary", "mean_texture", "--gap", "0.2", "--format", "lp"]
    assert main([*argv, "-o", str(out)]) == 2
    assert f"{out}: --format lp writes LP, but the file's name says smt2: drop --format, or " in (
        capsys.readouterr().err
    )
    assert not out.exists()


def test_an_audit_out_file_named_as_a_table_is_bad_input(tmp_path, capsys):
    # it wrote JSON Lines into rows.csv
    out = tmp_path / "rows.csv"
    argv = ["audit", BREAST, "--vary", "mean_texture", "--gap", "0.2", "--data", ROWS]
    assert main([*argv, "--out", str(out)]) == 2
    assert "the results log is JSON Lines (one result a line), not a table: name it " in (
        capsys.readouterr().err
    )


def test_random_bytes_named_model_are_said_to_be_no_format_it_reads(tmp_path, capsys):
    # was "xgboost cannot load this model: Invalid model format ..."
    path = tmp_path / "m.model"
    path.write_bytes(bytes(range(128, 256)) * 8)
    assert main(["check", str(path), "--vary", "a"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: not a model file: binary content that is no XGBoost model" in err


def test_a_certify_budget_without_a_certificate_is_refused(capsys):
    # was taken in silence: "not independently checked", nothing certified
    argv = ["check", BREAST, "--vary", "worst_symmetry", "--gap", "0.1", "--certify-budget", "5"]
    assert main(argv) == 2
    assert "--certify-budget 5 is the time for the proof --certificate FILE writes" in (
        capsys.readouterr().err
    )


def test_emit_into_an_existing_file_no_format_names_is_refused_and_keeps_it(tmp_path, capsys):
    # emit --format smt2 -o README.md wrote the problem over the README
    readme = tmp_path / "README.md"
    readme.write_text("# my project\n")
    argv = ["emit", BREAST, "--vary", "worst_symmetry", "--format", "smt2", "-o", str(readme)]
    assert main(argv) == 2
    assert "README.md: is a file whose name says no smt2/lp/mps problem" in capsys.readouterr().err
    assert readme.read_text() == "# my project\n"


def test_a_report_s_certify_budget_without_a_certificates_folder_is_refused(tmp_path, capsys):
    # it was taken, the report written and nothing certified
    argv = ["report", BREAST, "--out", str(tmp_path / "r.html"), "--certify-budget", "5"]
    assert main(argv) == 2
    assert "is the time for the proofs --certificates DIR writes" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_a_report_s_certify_rows_without_a_certificates_folder_is_refused(tmp_path, capsys):
    argv = ["report", BREAST, "--out", str(tmp_path / "r.html"), "--certify-rows", "3"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--certify-rows 3 is how many audited rows --certificates DIR certifies" in err


def test_a_sweep_s_certify_budget_without_a_certificates_folder_is_refused(capsys):
    argv = ["sweep", BREAST, "--features", "worst_symmetry", "--certify-budget", "5"]
    assert main(argv) == 2
    assert "is the time for the proofs --certificates DIR writes" in capsys.readouterr().err


def test_a_certificate_not_named_json_is_refused_before_the_question(tmp_path, capsys):
    # it wrote JSON into c.csv, which treesens verify DIR (its *.json) then missed
    cert = tmp_path / "c.csv"
    argv = ["check", BREAST, "--vary", "worst_symmetry", "--gap", "0.1"]
    assert main([*argv, "--certificate", str(cert)]) == 2
    err = capsys.readouterr().err
    assert f"{cert}: a certificate is JSON and its name ends in .json" in err
    assert err.rstrip().endswith("name it c.json") and "loaded" not in err
    assert not cert.exists()


def test_a_certificate_named_json_in_capitals_is_written(tmp_path, capsys):
    cert = tmp_path / "C.JSON"
    argv = ["check", BREAST, "--vary", "worst_symmetry", "--gap", "0.1"]
    assert main([*argv, "--certificate", str(cert)]) == 0
    assert cert.exists()


@pytest.mark.parametrize(("backend", "fmt"), [("z3", "mps"), ("highs", "smt2")])
def test_emit_of_a_backend_with_a_format_it_does_not_solve_is_bad_input(
    tmp_path, capsys, backend, fmt
):
    # --backend z3 --format mps wrote HiGHS's problem, the backend ignored in silence
    out = tmp_path / f"q.{fmt}"
    argv = ["emit", BREAST, "--vary", "mean_texture", "--gap", "0.2", "--backend", backend]
    assert main([*argv, "-o", str(out)]) == 2
    assert f"--backend {backend} solves the " in capsys.readouterr().err
    assert not out.exists()


def test_an_audit_s_certify_rows_without_a_certificates_folder_is_refused(capsys):
    argv = ["audit", BREAST, "--data", ROWS, "--vary", "mean_texture", "--certify-rows", "3"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--certify-rows 3 is how many audited rows --certificates DIR certifies" in err


def test_an_audit_s_certify_timeout_without_a_certificates_folder_is_refused(capsys):
    argv = ["audit", BREAST, "--data", ROWS, "--vary", "mean_texture", "--certify-timeout", "2.5"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--certify-timeout 2.5 is for how long audited rows --certificates DIR" in err


def test_a_contract_s_certify_rows_without_a_certificates_folder_is_refused(capsys):
    argv = ["test", str(EXAMPLES / "breast_cancer.sens"), "--certify-rows", "2"]
    assert main(argv) == 2
    assert "give --certificates too" in capsys.readouterr().err


def test_a_report_s_gap_without_protected_features_is_refused(tmp_path, capsys):
    argv = ["report", BREAST, "--data", ROWS, "--out", str(tmp_path / "r.html"), "--gap", "0.3"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--gap 0.3 is the gap asked of the protected features: name them (--protected" in err
    assert not (tmp_path / "r.html").exists()
