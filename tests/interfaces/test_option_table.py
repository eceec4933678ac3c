"""One table of the query's keywords makes the API's keywords and the CLI's flags with one
help text; compiler/ holds no presentation; every query is built by one call."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from treesens.compiler.options import OptionSpec
from treesens.interfaces.cli.common import data_options
from treesens.interfaces.cli.main import build_parser
from treesens.questions.keywords import API_KEYWORDS, MODEL

ROOT = Path(__file__).resolve().parents[2]
FLAGGED = [k for k in API_KEYWORDS.values() if k.role != MODEL]


def _check_actions() -> dict:
    check = build_parser()._subparsers._group_actions[0].choices["check"]
    return {a.dest: a for a in check._actions}


@pytest.mark.parametrize("keyword", FLAGGED, ids=lambda k: k.name)
def test_every_query_keyword_is_a_check_flag_with_the_same_help(keyword):
    assert _check_actions()[keyword.name].help == keyword.help


@pytest.mark.parametrize("keyword", FLAGGED, ids=lambda k: k.name)
def test_every_query_flag_defaults_as_its_keyword(keyword):
    assert _check_actions()[keyword.name].default == keyword.default


def test_the_compiler_option_rows_hold_no_command_line_presentation():
    assert not {"metavar", "cli_flag", "api_keyword"} & set(OptionSpec.__dataclass_fields__)


def _calls_make_query(text: str) -> bool:
    imported = re.search(r"query_build import \(?[^)]*\bmake_query\b", text)
    return bool(imported) and re.search(r"\bmake_query\(", text) is not None


def test_make_query_is_called_only_by_the_one_query_building_path():
    callers = [
        str(path.relative_to(ROOT))
        for room in ROOT.iterdir()
        # the package's own folders (a virtual environment inside the clone is not one)
        if (room / "__init__.py").is_file() and room.name not in ("tests", "bench")
        for path in room.rglob("*.py")
        if _calls_make_query(path.read_text())
    ]
    assert callers == []


def _options(*argv: str) -> dict:
    return data_options(build_parser().parse_args(["check", "m.json", "--vary", "a", *argv]))


def test_no_heuristic_turns_the_heuristic_off():
    assert _options("--no-heuristic")["heuristic"] is False


def test_progress_is_on_with_data_unless_turned_off():
    assert _options("--data", "d.csv")["progress"] is True
    assert _options("--data", "d.csv", "--no-progress")["progress"] is False


def test_gap_and_margin_gap_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(
            ["check", "m", "--vary", "a", "--gap", "0.1", "--margin-gap", "1"]
        )
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_data_flag_says_what_the_data_option_says():
    from treesens.compiler.options import OPTION_BY_NAME

    assert _check_actions()["data"].help == OPTION_BY_NAME["data"].help


def test_the_label_flag_says_what_the_label_keyword_says():
    assert _check_actions()["label"].help == API_KEYWORDS["label"].help
