"""`treesens run FILE.sens --query` names one block or several: `--query a --query b`
ran b alone (the last one given), and `--query a,b` was "no query named 'a,b'"."""

from __future__ import annotations

from pathlib import Path

from treesens.interfaces.cli.main import main

SENS = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer.sens")


def _listed(capsys, *flags: str) -> list[str]:
    assert main(["run", SENS, "--list", *flags]) == 0
    return [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]


def test_query_given_twice_runs_both_blocks(capsys):
    assert _listed(capsys, "--query", "texture", "--query", "texture_smoothness") == [
        "texture",
        "texture_smoothness",
    ]


def test_query_takes_names_separated_by_commas(capsys):
    assert _listed(capsys, "--query", "texture,texture_smoothness") == [
        "texture",
        "texture_smoothness",
    ]


def test_a_sweep_named_with_a_query_runs_its_queries_then_the_query(capsys):
    assert _listed(capsys, "--query", "worst,texture") == [
        "worst/worst_radius",
        "worst/worst_texture",
        "worst/worst_concave_points",
        "texture",
    ]


def test_a_block_named_twice_runs_once(capsys):
    assert _listed(capsys, "--query", "texture", "--query", "texture") == ["texture"]


def test_an_unknown_name_among_several_is_one_line_and_exit_2(capsys):
    assert main(["run", SENS, "--list", "--query", "texture,nosuch"]) == 2
    assert "no query named 'nosuch'" in capsys.readouterr().err
