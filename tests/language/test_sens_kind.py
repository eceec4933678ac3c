"""A query's kind from every interface: `kind NAME p = v` in a .sens query, --kind with
--param on the command line, kind= and params= in the API; an unknown kind or parameter
is one error at its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.interfaces.cli.main import main
from treesens.interfaces.sens_run import run_file
from treesens.language import format_sens, load_queries, parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"


def _write(tmp_path, body: str) -> Path:
    path = tmp_path / "a.sens"
    path.write_text(f'model "{BC}"\nfeatures from "{BC_DETAILS}"\n{body}')
    return path


def test_a_kind_line_sets_the_query_kind_and_its_parameters(tmp_path):
    body = "query t {\n  vary mean_texture\n  kind max_gap tolerance = 0.01\n}\n"
    (q,) = load_queries(_write(tmp_path, body)).queries
    assert (q.kind, q.params) == ("max_gap", (("tolerance", 0.01),))


def test_a_gap_from_defaults_gives_way_to_the_max_gap_kind_as_to_gap_max(tmp_path):
    body = "defaults {\n  gap 0.1\n}\nquery t {\n  vary mean_texture\n  kind max_gap\n}\n"
    (res,) = run_file(_write(tmp_path, body))
    assert res.max_gap is not None and res.max_gap["proven"]


def test_the_max_gap_kind_with_the_blocks_own_gap_is_an_error_at_the_gap(tmp_path, capsys):
    body = "query t {\n  vary mean_texture\n  gap 0.1\n  kind max_gap\n}\n"
    assert main(["run", str(_write(tmp_path, body))]) == 2
    assert "a.sens:5:3: max_gap searches the gap itself" in capsys.readouterr().err


def test_the_max_gap_kind_answers_as_gap_max(tmp_path):
    body = "query t {\n  vary mean_texture\n  kind max_gap tolerance = 0.01\n  timeout 60\n}\n"
    (res,) = run_file(_write(tmp_path, body))
    assert res.max_gap["tolerance"] == 0.01 and res.stats["asked"]["max_gap"] == 0.01


def test_an_unknown_kind_is_reported_at_its_line(tmp_path, capsys):
    path = _write(tmp_path, "query t {\n  vary mean_texture\n  kind robustt\n}\n")
    assert main(["run", str(path), "--list"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{path}:5:3: ") and "unknown query kind 'robustt'" in first


def test_a_parameter_the_kind_does_not_take_is_reported_at_its_line(tmp_path, capsys):
    path = _write(tmp_path, "query t {\n  vary mean_texture\n  kind max_gap eps = 1\n}\n")
    assert main(["run", str(path), "--list"]) == 2
    assert "the max_gap kind takes no parameter 'eps'" in capsys.readouterr().err


def test_a_kind_line_round_trips_through_fmt():
    text = 'model "m.json"\nquery q {\n  vary a\n  kind robust eps = 5, row = 40\n}\n'
    assert "  kind robust eps = 5, row = 40\n" in format_sens(parse(text))


def test_a_plugin_line_round_trips_through_fmt():
    text = 'plugin "kinds.py"\nmodel "m.json"\nquery q {\n  vary a\n}\n'
    assert format_sens(parse(text)).startswith('plugin "kinds.py"\n')


def test_a_missing_plugin_file_is_reported_at_its_line(tmp_path, capsys):
    path = tmp_path / "a.sens"
    path.write_text(f'plugin "nope.py"\nmodel "{BC}"\nquery q {{\n  vary mean_texture\n}}\n')
    assert main(["run", str(path), "--list"]) == 2
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"{path}:1:8: ") and "no such plugin file" in first


def test_the_cli_kind_flag_asks_what_max_gap_asks(capsys):
    common = ["check", str(BC), "--vary", "mean_texture", "--timeout", "60", "--json"]
    assert main([*common, "--kind", "max_gap", "--param", "tolerance=0.01"]) == 0
    by_kind = json.loads(capsys.readouterr().out)
    assert main([*common, "--max-gap", "--max-gap-tolerance", "0.01"]) == 0
    by_flag = json.loads(capsys.readouterr().out)
    assert by_kind["max_gap"]["tolerance"] == by_flag["max_gap"]["tolerance"] == 0.01
    assert by_kind["stats"]["asked"] == by_flag["stats"]["asked"]


def test_an_unknown_kind_flag_is_one_line_and_exit_2(capsys):
    assert main(["check", str(BC), "--vary", "mean_texture", "--kind", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("treesens: error: unknown query kind 'nope'") and err.count("\n") == 1


def test_the_api_takes_a_kind_and_its_parameters():
    r = treesens.check(str(BC), ["mean_texture"], kind="max_gap", params={"tolerance": 0.01})
    assert r.max_gap["tolerance"] == 0.01


def test_the_api_refuses_a_parameter_the_kind_does_not_take():
    with pytest.raises(InputError, match="the pair kind takes no parameter 'eps'"):
        treesens.check(str(BC), ["mean_texture"], params={"eps": 1.0})


def test_run_list_shows_a_max_gap_query_as_gap_max(tmp_path, capsys):
    path = _write(tmp_path, "query t {\n  vary mean_texture\n  gap max\n}\n")
    assert main(["run", str(path), "--list"]) == 0
    assert capsys.readouterr().out.split("\t")[:3] == ["t", "vary mean_texture", "gap max"]
