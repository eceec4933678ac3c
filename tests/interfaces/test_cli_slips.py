"""Command-line slips a new user makes, each told in one line with exit 2: emit given a
flag of the solve it does not run (and its help not listing them), a gap as a percent,
a time limit as a .sens file writes one (10s), the features without --vary (or
space-separated after it),
a file to write named as a folder (out/), a TREESENS_CUT_WALK or TREESENS_CUT_WALK_OWN that
does not parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.interfaces.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")
EMIT = ["emit", MODEL, "--vary", "mean_texture", "--gap", "0.2", "--format", "lp"]


def _stderr_lines(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]


@pytest.mark.parametrize(
    "flag, named",
    [
        (["--timeout", "5"], "--timeout"),
        (["--threads", "2"], "--threads"),
        (["--no-heuristic"], "--heuristic/--no-heuristic"),
        (["--json"], "--json"),
    ],
)
def test_emit_refuses_a_flag_of_the_solve_it_does_not_run(capsys, flag, named):
    # these were taken and changed nothing in the written problem
    assert main([*EMIT, *flag]) == 2
    assert _stderr_lines(capsys) == [
        f"treesens: error: {named} is a setting of the solve, which emit does not run: it "
        "writes the compiled problem only"
    ]


def test_emit_help_lists_no_flag_of_the_solve(capsys):
    assert main(["emit", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--data-aware" in out and "--where" in out
    for flag in ("--timeout", "--threads", "--heuristic", "--box-search", "--json", "--seed"):
        assert flag not in out


def test_emit_takes_the_memory_limit_it_checks_before_compiling(tmp_path):
    assert main([*EMIT, "--memory-mb", "500", "-o", str(tmp_path / "q.lp")]) == 0


def test_a_gap_given_as_a_percent_says_the_number_it_stands_for(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "20%"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: --gap: '20%' is not a number; 20% is written 0.2 "
        "(see treesens check --help)"
    ]


def test_a_binary_gap_written_as_a_percent_s_number_asks_whether_it_is_one(capsys):
    # was the range alone: "--gap 20 out of range: a binary gap g needs 0 <= g < 0.5 (...)"
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "20"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.endswith("; a percent? 20% is written 0.2")


def test_a_binary_gap_just_out_of_range_is_not_asked_about_percent(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.7"]) == 2
    assert "percent" not in capsys.readouterr().err


@pytest.mark.parametrize("given, seconds", [("10s", "10"), ("2m", "120"), ("500ms", "0.5")])
def test_a_timeout_written_as_a_duration_says_its_seconds(capsys, given, seconds):
    assert main(["check", MODEL, "--vary", "mean_texture", "--timeout", given]) == 2
    (line,) = _stderr_lines(capsys)
    assert f"'{given}' is not a number; {given} is written {seconds} (seconds)" in line


def test_features_given_without_vary_are_told_the_flag(capsys):
    # was "the following arguments are required: --vary", the word given unmentioned
    assert main(["check", MODEL, "mean_texture"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: the following arguments are required: --vary; 'mean_texture' after "
        "the model names no flag: --vary mean_texture (see treesens check --help)"
    ]


@pytest.mark.parametrize(
    "command, flag",
    [
        ("compare", "--vary mean_texture"),
        ("emit", "--vary mean_texture"),
        ("sweep", "--features mean_texture"),
    ],
)
def test_a_feature_after_the_model_of_a_command_where_vary_is_optional_is_told_the_flag(
    capsys, command, flag
):
    # was "unrecognized arguments: mean_texture" alone
    assert main([command, MODEL, "mean_texture"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: unrecognized arguments: mean_texture; 'mean_texture' after the model "
        f"names no flag: {flag} (see treesens {command} --help)"
    ]


def test_a_word_after_a_sens_file_given_to_compare_is_told_query(capsys):
    assert main(["compare", str(EXAMPLES / "breast_cancer.sens"), "q1"]) == 2
    (line,) = _stderr_lines(capsys)
    assert "'q1' after the model names no flag: --query q1" in line


@pytest.mark.parametrize("command", ["check", "compare", "audit"])
def test_features_separated_by_a_space_are_told_the_list_is_comma_separated(capsys, command):
    assert main([command, MODEL, "--vary", "mean_texture", "mean_radius", "--gap", "0.2"]) == 2
    (line,) = _stderr_lines(capsys)
    assert line.startswith(
        "treesens: error: unrecognized arguments: mean_radius; --vary takes one comma-separated "
        "list: --vary mean_texture,mean_radius"
    )


@pytest.mark.parametrize(
    ("command", "flag", "given"),
    [("compare", "--backends", ["cpsat", "z3"]), ("check", "--passes", ["ordering", "unaff"])],
)
def test_a_list_of_backends_or_passes_given_as_words_is_told_its_commas(
    capsys, command, flag, given
):
    # compare's was "'z3' after the model names no flag: --vary z3"; check's said nothing
    assert main([command, MODEL, flag, *given, "--vary", "mean_texture"]) == 2
    told = f"; {flag} takes one comma-separated list: {flag} {','.join(given)}"
    assert told in capsys.readouterr().err


def test_run_s_queries_given_as_words_are_told_their_commas(capsys):
    # was "unrecognized arguments: texture_smoothness" alone
    sens = str(EXAMPLES / "breast_cancer.sens")
    assert main(["run", sens, "--query", "texture", "texture_smoothness"]) == 2
    told = "; --query takes one comma-separated list: --query texture,texture_smoothness"
    assert told in capsys.readouterr().err


def test_an_unrecognized_word_after_other_flags_is_told_as_before(capsys):
    assert main(["compare", MODEL, "--vary", "mean_texture", "--json", "extra"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: unrecognized arguments: extra (see treesens compare --help)"
    ]


def test_a_misspelt_flag_after_a_list_flag_is_told_the_flag_it_meant(capsys):
    # was "--vary takes one comma-separated list: --vary mean_texture,--gaps"
    assert main(["check", MODEL, "--vary", "mean_texture", "--gaps", "0.2"]) == 2
    assert capsys.readouterr().err == (
        "treesens: error: unrecognized arguments: --gaps 0.2; did you mean --gap for --gaps? "
        "(see treesens check --help)\n"
    )


def test_a_misspelt_flag_given_with_its_value_after_equals_is_told_the_flag(capsys):
    assert main(["check", MODEL, "--vary", "mean_texture", "--treads=2"]) == 2
    assert "did you mean --threads for --treads?" in capsys.readouterr().err


def test_a_required_flag_in_another_case_is_told_the_flag_not_only_missing(capsys):
    assert main(["check", MODEL, "--Vary", "mean_texture"]) == 2
    assert capsys.readouterr().err.startswith(
        "treesens: error: the following arguments are required: --vary; did you mean --vary "
        "for --Vary?"
    )


def test_a_missing_vary_with_no_word_after_the_model_is_told_as_before(capsys):
    assert main(["check", MODEL, "--gap", "0.2"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: the following arguments are required: --vary (see treesens check --help)"
    ]


@pytest.mark.parametrize(
    "command, flag",
    [
        (["check", MODEL, "--vary", "mean_texture", "--certificate"], "--certificate"),
        (["sweep", MODEL, "--features", "mean_texture", "--out"], "--out"),
        ([*EMIT, "-o"], "-o"),
        (["test", str(EXAMPLES / "contract.sens"), "--junit"], "--junit"),
    ],
)
def test_a_file_to_write_named_as_a_folder_is_refused(capsys, tmp_path, command, flag):
    # --junit out/ wrote a file named out: the trailing '/' dropped
    folder = f"{tmp_path / 'out'}/"
    assert main([*command, folder]) == 2
    assert _stderr_lines(capsys) == [
        f"treesens: error: {flag} {folder}: names a folder (it ends in '/'): give a file's name"
    ]
    assert not (tmp_path / "out").exists()


def test_a_cut_walk_setting_that_does_not_parse_is_refused_in_one_line(capsys, monkeypatch):
    # it was taken as off: a search other than the one asked for, silently
    monkeypatch.setenv("TREESENS_CUT_WALK", "4.4;200000")
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.2"]) == 2
    assert _stderr_lines(capsys) == [
        "treesens: error: TREESENS_CUT_WALK='4.4;200000': expected \"rise_rows,after_boxes\" or "
        '"rise_rows,after_boxes,least_values" (e.g. "4.4,200000,8": a number of at least 0, a '
        'whole number of boxes, of values) or "off"'
    ]


def test_an_own_cuts_setting_that_does_not_parse_is_refused_in_one_line(capsys, monkeypatch):
    # any value but "1" was taken as off: a search other than the one asked for, silently
    monkeypatch.setenv("TREESENS_CUT_WALK_OWN", "yes")
    assert main(["check", MODEL, "--vary", "mean_texture", "--gap", "0.2"]) == 2
    assert _stderr_lines(capsys) == [
        'treesens: error: TREESENS_CUT_WALK_OWN=\'yes\': expected "1" or "on", or "0", '
        '"off" or empty'
    ]
