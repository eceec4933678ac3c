"""Small things the command says or prints: help that lists only what a command takes,
`fmt --check` naming what would change, bad gaps and classes refused before any progress,
sweep progress counted in a log, and long feature names kept whole in the witness table."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from treesens.answers.result import SENSITIVE, Result
from treesens.interfaces.cli.main import main
from treesens.views.result_view import render_result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
WINE = str(EXAMPLES / "wine_xgb.json")
BREAST = str(EXAMPLES / "breast_cancer_xgb.json")
IRIS = str(EXAMPLES / "iris_lgbm.txt")
LONG = "mean_texture_measured_over_the_whole_digitised_image_of_the_fine_needle_aspirate"


def test_sweep_help_does_not_list_vary(capsys):
    assert main(["sweep", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--features" in out and "--vary" not in out


def test_sweep_still_refuses_vary_with_the_reason(capsys):
    assert main(["sweep", BREAST, "--vary", "mean_texture"]) == 2
    assert "use --features" in capsys.readouterr().err


def test_fmt_check_names_the_file_and_line_that_would_change(tmp_path, capsys):
    f = tmp_path / "q.sens"
    f.write_text('model "m.json"\nquery a {   vary x\n}\n')
    assert main(["fmt", "--check", str(f)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{f}: not in canonical form (first difference at line 2)" in captured.err
    assert f"treesens fmt -w {f}" in captured.err


def test_fmt_check_is_silent_on_a_canonical_file(capsys):
    assert main(["fmt", "--check", str(EXAMPLES / "wine.sens")]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.mark.parametrize(
    "args, message",
    [
        ([WINE, "--vary", "proline", "--gap", "2"], "give the two classes"),
        ([WINE, "--vary", "proline", "--gap", "2", "--classes", "0,7"], "class 7 out of range"),
        ([BREAST, "--vary", "mean_texture", "--gap", "0.6"], "gap 0.6 out of range"),
        ([BREAST, "--vary", "mean_texture", "--classes", "0,1"], "given for a binary model"),
    ],
    ids=["no-classes", "class-out-of-range", "binary-gap", "classes-on-binary"],
)
def test_check_refuses_a_bad_gap_or_classes_before_any_progress(args, message, capsys):
    assert main(["check", *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "solving" not in err and "loaded" not in err


def test_classes_on_a_binary_model_are_refused_saying_the_other_order_is_the_same_question(
    capsys,
):
    assert main(["check", BREAST, "--vary", "mean_texture", "--classes", "0,1"]) == 2
    assert "the other order is the same question" in capsys.readouterr().err


def test_sweep_refuses_a_bad_gap_before_any_progress(capsys):
    assert main(["sweep", WINE, "--gap", "0.2", "--timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert "give the two classes" in err
    assert "sweep of" not in err


def test_sweep_progress_without_a_terminal_counts_the_queries(capsys):
    code = main(
        [
            "sweep",
            IRIS,
            "--features",
            "petal_length_cm,petal_width_cm",
            "--gap",
            "2",
            "--classes",
            "any,any",
            "--timeout",
            "60",
            "--table",
            "none",
        ]
    )
    assert code == 0
    lines = capsys.readouterr().err.splitlines()
    assert any(ln.startswith("[1/2] ") for ln in lines), lines
    assert any(ln.startswith("[2/2] ") for ln in lines), lines


def test_sweep_progress_without_a_terminal_leaves_json_on_stdout_alone(capsys):
    args = ["sweep", BREAST, "--features", "mean_texture,radius_error", "--gap", "0.1", "--json"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert [json.loads(ln)["query"] for ln in out.splitlines()] == ["mean_texture", "radius_error"]
    assert "[1/2] mean_texture: " in err and "[2/2] radius_error: " in err


def _long_named_result() -> Result:
    x1 = {LONG: 1.0, "short": 2.0}
    x2 = {LONG: 3.0, "short": 2.0}
    return Result("q", SENSITIVE, "cpsat", [LONG], 0.2, witness={"x1": x1, "x2": x2})


def test_witness_table_keeps_long_names_whole_in_a_file():
    buf = io.StringIO()
    render_result(_long_named_result(), console=Console(file=buf, width=60, highlight=False))
    rows = [ln for ln in buf.getvalue().splitlines() if ln.startswith(LONG)]
    assert len(rows) == 1 and "<- varied" in rows[0]


def test_witness_table_wraps_long_names_in_a_narrow_terminal():
    buf = io.StringIO()
    con = Console(file=buf, width=60, force_terminal=True, color_system=None, highlight=False)
    render_result(_long_named_result(), console=con)
    text = buf.getvalue()
    assert "…" not in text
    assert all(len(ln) <= 60 for ln in text.splitlines()[1:])
    assert LONG in "".join(ln.split(" ")[0] for ln in text.splitlines())


def test_witness_table_names_the_nearest_data_row_counted_from_1_with_its_index():
    """Data errors count rows from 1; stats.nearest_row.index counts from 0: the header
    gives both, so the row a user opens is the one meant."""
    res = _long_named_result()
    res.stats["nearest_row"] = {"index": 291, "values": {LONG: 1.0, "short": 2.0}}
    buf = io.StringIO()
    render_result(res, console=Console(file=buf, width=200, highlight=False))
    assert "nearest data row 292 (index 291)" in buf.getvalue()


def _options_of_every_command():
    import argparse

    from treesens.interfaces.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        for action in parser._actions:
            if action.option_strings and action.help != argparse.SUPPRESS and action.dest != "help":
                yield name, action


def test_every_option_of_every_command_has_help():
    assert [(n, a.option_strings) for n, a in _options_of_every_command() if not a.help] == []


def test_every_option_with_a_default_says_it_in_its_help():
    unsaid = [
        (n, a.option_strings)
        for n, a in _options_of_every_command()
        if a.default not in (None, False, [], ()) and "default" not in a.help
    ]
    assert unsaid == []
