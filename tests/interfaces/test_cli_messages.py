"""Bad flags and values are told in one line and exit 2, in the voice of every input
error; the audit words a gap's range as check does; a misspelt --by gets a suggestion."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main
from treesens.readers import load_notes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")
ROWS = str(EXAMPLES / "breast_cancer_rows.csv")


def _stderr_lines(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


def test_a_gap_that_is_not_a_number_is_one_line(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "abc"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: --gap: 'abc' is not a number (see treesens check --help)"
    ]


def test_an_unknown_choice_is_one_line_that_points_to_help(capsys):
    assert main(["emit", "--format", "xyz", MODEL]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith("treesens: error: --format: invalid choice: 'xyz'")
    assert line.endswith("(see treesens emit --help)")


def test_a_misspelt_command_is_one_line_with_the_closest_command(capsys):
    assert main(["chek", MODEL]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith(
        "treesens: error: COMMAND: invalid choice: 'chek' (did you mean 'check'?)"
    )


def test_a_max_gap_command_is_told_the_flag_that_asks_it(capsys):
    assert main(["max-gap", MODEL, "--vary", "mean_texture"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith(
        "treesens: error: COMMAND: invalid choice: 'max-gap' (a max gap is asked with check "
        "MODEL --vary F --max-gap, a ranking of every feature with sweep MODEL --max-gap)"
    )


def test_a_certify_command_is_told_the_flag_that_writes_a_certificate(capsys):
    assert main(["certify", MODEL]) == 2
    (line,) = _stderr_lines(capsys)
    assert "'certify' (a certificate is written by check MODEL ... --certificate FILE" in line


def test_an_unknown_backend_is_named_by_its_flag(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--backend", "boxs"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith("treesens: error: --backend: unknown backend 'boxs' (did you mean")


def test_an_unknown_backend_of_a_comparison_is_named_by_its_flag(capsys):
    assert main(["compare", MODEL, "--vary", "mean_texture", "--backends", "cpsat,boxs"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith("treesens: error: --backends: unknown backend 'boxs' (did you mean")


def test_a_comparisons_backend_listed_twice_names_the_flag_once(capsys):
    assert main(["compare", MODEL, "--vary", "mean_texture", "--backends", "cpsat,cpsat"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line == "treesens: error: --backends: backend 'cpsat' listed twice"


def test_an_unknown_backend_lists_race_among_the_names_backend_takes(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--backend", "nope"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.endswith(
        "boxes, race (or race:NAME,NAME to race those; race:NAME+NAME in a list of backends)"
    )


def test_a_missing_required_flag_is_one_line(capsys):
    assert main(["check", MODEL]) == 2
    assert len(_stderr_lines(capsys)) == 1


def test_an_infinite_gap_is_refused_by_the_flag(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "inf"]) == 2
    assert "--gap: 'inf' is not a finite number" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "audit"])
def test_a_binary_gap_out_of_range_is_worded_alike_by_check_and_audit(command, capsys):
    args = [command, MODEL, "--vary", "mean_texture", "--gap", "0.7"]
    assert main(args + (["--data", ROWS] if command == "audit" else [])) == 2
    err = capsys.readouterr().err
    assert "gap 0.7 out of range: a binary gap g needs 0 <= g < 0.5" in err


@pytest.mark.parametrize("command", ["check", "audit"])
def test_a_negative_margin_gap_is_refused_alike_by_check_and_audit(command, capsys):
    args = [command, MODEL, "--vary", "mean_texture", "--margin-gap", "-1"]
    assert main(args + (["--data", ROWS] if command == "audit" else [])) == 2
    assert _stderr_lines(capsys) == ["treesens: error: --margin-gap -1 must be >= 0"]


@pytest.mark.parametrize(
    "flags, said",
    [
        (["--seed", "-1"], "--seed takes a whole number"),
        (["--data", ROWS, "--data-aware", "clause", "--clause-time", "-1"], "--clause-time takes"),
        (["--data", ROWS, "--data-aware", "prob", "--prob-alpha", "-1"], "--prob-alpha takes"),
        (["--data", ROWS, "--data-aware", "prob", "--stall-time", "-1"], "--stall-time takes"),
        (
            ["--data", ROWS, "--data-aware", "prob", "--optimise-time", "-1"],
            "--optimise-time takes",
        ),
        (
            ["--data", ROWS, "--data-aware", "prob", "--optimality-gap", "-1"],
            "--optimality-gap takes",
        ),
    ],
)
def test_a_numeric_flag_out_of_range_is_named_by_its_flag(capsys, flags, said):
    assert main(["check", MODEL, "--vary", "mean_texture", *flags]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith(f"treesens: error: {said}")


def test_a_delta_out_of_range_is_named_by_its_flag(capsys):
    model = str(EXAMPLES / "diabetes_lgbm.txt")
    assert main(["check", model, "--vary", "sex", "--delta", "-1"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: --delta -1.0 must be a finite number above 0"
    ]


GAMMA = str(EXAMPLES / "gamma_stump.json")  # a regressor (exp link)


@pytest.mark.parametrize(
    "model, flags, said",
    [
        (GAMMA, ["--above", "0.3", "--below", "0.5"], "--above 0.3 and --below 0.5: "),
        (GAMMA, ["--above", "1.5"], "--above 1.5 needs --below B too"),
        (GAMMA, ["--below", "2"], "--below 2 needs --above A too"),
        (GAMMA, ["--above", "3", "--below", "2", "--gap", "0.2"], "--gap 0.2 and --above 3"),
        (
            GAMMA,
            ["--above", "3", "--below", "2", "--delta", "1"],
            "--above 3 --below 2 and --delta",
        ),
        (GAMMA, ["--direction", "up"], "--direction up goes with --delta D"),
        (GAMMA, ["--above", "-1", "--below", "-2"], "--above -1: this model's predictions"),
        (GAMMA, ["--delta", "1", "--classes", "0,1"], "--classes 0,1: classes are for classifiers"),
        (MODEL, ["--above", "0.6", "--below", "0.4"], "--above 0.6 --below 0.4: the threshold"),
        (MODEL, ["--classes", "0,1"], "--classes 0,1 given for a binary model"),
    ],
)
def test_a_conflicting_or_out_of_range_flag_is_named_with_its_value(model, flags, said, capsys):
    vary = "a" if model == GAMMA else "mean_texture"
    assert main(["check", model, "--vary", vary, *flags]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith(f"treesens: error: {said}")


IRIS = str(EXAMPLES / "iris_lgbm.txt")  # 3 classes


def test_a_class_out_of_range_names_the_classes_flag_with_its_value(capsys):
    args = ["check", IRIS, "--vary", "petal_length_cm", "--gap", "2", "--classes", "0,3"]
    assert main(args) == 2
    (line,) = _stderr_lines(capsys)
    assert line == (
        "treesens: error: --classes 0,3: class 3 out of range: the model has classes 0..2"
    )


def _iris_audit(tmp_path) -> list[str]:
    """An audit of the iris model over one row (the arguments before --classes)."""
    rows = tmp_path / "iris_rows.csv"
    rows.write_text("sepal_length_cm,sepal_width_cm,petal_length_cm,petal_width_cm\n5,3,1.4,0.2\n")
    return ["audit", IRIS, "--data", str(rows), "--vary", "petal_length_cm", "--gap", "2"]


def test_an_audits_class_out_of_range_names_the_classes_flag(tmp_path, capsys):
    args = _iris_audit(tmp_path)
    assert main([*args, "--classes", "3"]) == 2
    assert _stderr_lines(capsys)[-1] == (
        "treesens: error: --classes 3: class 3 out of range: the model has classes 0..2"
    )


def test_an_audits_class_pair_says_it_takes_x2s_class_alone(tmp_path, capsys):
    """check's --classes C1,C2 given to audit, where x1 is the row."""
    args = _iris_audit(tmp_path)
    assert main([*args, "--classes", "any,2"]) == 2
    assert _stderr_lines(capsys)[-1] == (
        "treesens: error: --classes any,2: an audit takes one class, x2's (2, or any): "
        "x1 is the row, whatever its class"
    )


def test_a_misspelt_by_column_gets_a_did_you_mean(capsys):
    args = ["audit", MODEL, "--data", ROWS, "--vary", "mean_texture", "--by", "lable"]
    assert main(args) == 2
    assert "did you mean 'label'" in capsys.readouterr().err


def test_a_timeout_beyond_the_cap_names_the_flag_and_the_cap(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--timeout", "1e12"]) == 2
    assert "--timeout 1e+12: takes a number of seconds above 0 and at most 1e+09" in (
        capsys.readouterr().err
    )


def test_a_base_score_outside_0_1_names_the_flag(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--base-score", "2"]) == 2
    assert "--base-score 2: must be a probability in (0, 1)" in capsys.readouterr().err


def test_a_misspelt_by_column_is_named_by_its_flag(capsys):
    args = ["audit", MODEL, "--data", ROWS, "--vary", "mean_texture", "--by", "lable"]
    assert main(args) == 2
    assert "treesens: error: --by 'lable'" in capsys.readouterr().err


def test_an_unknown_sweep_feature_is_named_by_its_flag(capsys):
    assert main(["sweep", MODEL, "--features", "mean_textur"]) == 2
    assert "treesens: error: --features: unknown feature 'mean_textur'" in capsys.readouterr().err


def test_an_unknown_audit_feature_is_named_by_its_flag(capsys):
    assert main(["audit", MODEL, "--data", ROWS, "--vary", "mean_textur"]) == 2
    assert "treesens: error: --vary: unknown feature 'mean_textur'" in capsys.readouterr().err


def _loading_lines(capsys) -> list[str]:
    return [ln for ln in _stderr_lines(capsys) if ln.startswith("loading ")]


def test_a_model_load_past_a_few_seconds_is_said_to_be_loading_whatever_its_size(
    capsys, monkeypatch
):
    monkeypatch.setattr(load_notes, "AFTER", 0.0)  # every load is long
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.1"]) in (0, 1)
    (line,) = _loading_lines(capsys)
    assert line.startswith(f"loading {MODEL} (") and line.endswith(" MB)...")


def test_a_small_model_file_loading_is_said_in_kilobytes_not_0_0_mb(tmp_path):
    from treesens.readers.load import loading_words

    small = tmp_path / "m.pkl"
    small.write_bytes(b"x" * 2_000)
    assert loading_words(small, at_least=0) == f"loading {small} (2 KB)..."


def test_a_quick_model_load_has_no_loading_line(capsys, monkeypatch):
    monkeypatch.setattr(load_notes, "AFTER", 60.0)
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.1"]) in (0, 1)
    assert _loading_lines(capsys) == []


def test_a_long_model_load_says_nothing_with_json(capsys, monkeypatch):
    monkeypatch.setattr(load_notes, "AFTER", 0.0)
    main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.1", "--json"])
    assert _loading_lines(capsys) == []


def test_a_fix_flag_says_constraints_are_given_with_where(capsys):
    args = ["check", MODEL, "--vary", "mean_texture", "--fix", "mean_radius=12"]
    assert main(args) == 2
    (line,) = _stderr_lines(capsys)
    assert "unrecognized arguments: --fix" in line and "given with --where CONSTRAINT" in line


def test_a_where_flag_on_a_command_without_it_names_the_commands_with_it(capsys):
    args = [
        "audit",
        MODEL,
        "--data",
        ROWS,
        "--vary",
        "mean_texture",
        "--where",
        "x1.mean_radius <= 12",
    ]
    assert main(args) == 2
    (line,) = _stderr_lines(capsys)
    assert "unrecognized arguments: --where" in line and "taken by check, sweep" in line


def test_another_unknown_flag_gets_no_word_about_constraints(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--wherever", "1"]) == 2
    assert ".sens" not in capsys.readouterr().err


def test_a_sens_files_long_model_load_is_said_to_be_loading(capsys, monkeypatch):
    monkeypatch.setattr(load_notes, "AFTER", 0.0)
    assert main(["run", str(EXAMPLES / "breast_cancer.sens"), "--list"]) == 0
    (line,) = _loading_lines(capsys)
    assert line.startswith(f"loading {MODEL} (")


def test_a_contracts_long_model_load_is_said_to_be_loading(capsys, monkeypatch, tmp_path):
    sens = tmp_path / "contract.sens"
    sens.write_text(
        f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  gap 0.1\n  expect sensitive\n}}\n'
    )
    monkeypatch.setattr(load_notes, "AFTER", 0.0)
    assert main(["test", str(sens), "--model", MODEL]) == 0
    (line,) = _loading_lines(capsys)
    assert line.startswith(f"loading {MODEL} (")


def test_the_api_logs_that_a_large_model_file_is_loading(caplog, monkeypatch):
    import treesens
    from treesens.readers import load

    monkeypatch.setattr(load, "LOADING_NOTE_BYTES", 1)
    with caplog.at_level("INFO", logger="treesens"):
        treesens.load_model(MODEL)
    (record,) = [r for r in caplog.records if r.name == "treesens"]
    assert record.getMessage().startswith(f"loading {MODEL} (")


def test_the_api_logs_nothing_as_a_small_model_file_loads(caplog):
    import treesens

    with caplog.at_level("INFO", logger="treesens"):
        treesens.load_model(MODEL)
    assert not [r for r in caplog.records if r.name == "treesens"]


def test_compare_over_a_files_queries_names_each_query_before_its_backends(capsys):
    sens = str(EXAMPLES / "breast_cancer.sens")
    assert main(["compare", sens, "--backends", "cpsat", "--timeout", "20"]) == 0
    lines = _stderr_lines(capsys)
    assert lines[1] == "texture:" and lines[2].startswith("  cpsat: ")
    assert "texture_smoothness:" in lines


def test_compare_s_table_of_a_max_gap_query_says_it_asks_the_max_gap(capsys):
    sens = str(EXAMPLES / "contract.sens")
    args = ["compare", sens, "--query", "standard_errors", "--backends", "cpsat"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "query standard_errors/texture_error: vary texture_error, gap max" in out
    assert ", gap 0.2" not in out


def test_verify_names_the_model_without_the_dot_dots_of_its_relative_path(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(EXAMPLES)  # the model given relative: the certificate states it so
    cert = str(tmp_path / "c.json")
    args = ["check", "breast_cancer_xgb.json", "--vary", "worst_symmetry", "--gap", "0.1"]
    assert main([*args, "--certificate", cert]) == 0
    capsys.readouterr()
    assert main(["verify", cert]) == 0
    (line,) = [ln for ln in _stderr_lines(capsys) if "checked against the model" in ln]
    assert f"checked against the model {Path(MODEL).resolve()} (sha256" in line


def test_a_subset_size_out_of_range_names_the_flag(capsys):
    assert main(["sweep", MODEL, "--subsets", "0", "--gap", "0.1"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: --subsets 0 out of range 1..30 (the features of each query, of the "
        "30 swept)"
    ]


@pytest.mark.parametrize("command", ["compare", "emit"])
def test_an_audit_block_named_to_compare_or_emit_is_said_to_be_one(command, capsys):
    sens = str(EXAMPLES / "breast_cancer_audit.sens")
    extra = ["--format", "lp", "-o", "unused.lp"] if command == "emit" else []
    assert main([command, sens, "--query", "texture_rows", *extra]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.endswith(
        "'texture_rows' is an audit block, which treesens run answers; "
        "this command takes a query or a sweep (texture)"
    )


def test_an_unrecognized_argument_points_to_its_command_s_help(capsys):
    assert main(["verify", "c.json", "--no-such-flag"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith("treesens: error: unrecognized arguments: ")
    assert line.endswith("(see treesens verify --help)")


@pytest.mark.parametrize("command", ["compare", "emit"])
def test_a_gap_out_of_range_is_the_only_line_of_compare_and_emit(command, capsys):
    args = [command, MODEL, "--vary", "mean_texture", "--gap", "-0.2"]
    assert main(args + (["--format", "lp"] if command == "emit" else [])) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: --gap -0.2 out of range: a binary gap g needs 0 <= g < 0.5 "
        "(P(x1) >= 0.5+g and P(x2) <= 0.5-g)"
    ]


@pytest.mark.parametrize("command", ["check", "audit"])
def test_a_sens_file_given_to_a_command_that_needs_vary_is_told_to_run_it(command, capsys):
    """`treesens check FILE.sens` said '--vary' was required, as if a model had been given."""
    sens = str(EXAMPLES / "breast_cancer.sens")
    assert main([command, sens]) == 2
    assert _stderr_lines(capsys) == [
        f"treesens: error: {sens}: a .sens query file, not a model: run it with treesens "
        f"run FILE.sens (see treesens {command} --help)"
    ]
