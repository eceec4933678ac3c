"""A work budget per row on ``treesens audit --work N`` and ``treesens.audit(work=N)``, as an
audit block's ``work N`` (tests/contract/test_audit_work.py): each row past the
enumeration, and a flipped row's capped search of its smallest change, end on counted
work, so the rows' answers are the same however fast the process's clock runs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.interfaces.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")
ROWS = str(EXAMPLES / "breast_cancer_rows.csv")
# five features at gap 0.45: past the enumeration, so each row is a query; the flipped
# rows' capped search of their smallest change visits 100-350 boxes
FIVE = "worst_concave_points,worst_area,worst_texture,mean_texture,area_error"
NO_LIMIT = 1_000_000  # seconds per row: the time limit far away, at either speed

pytest.importorskip("xgboost")


class _FastTime:
    """The time module, but for ``time()``: 10x the real clock's pace."""

    def __init__(self, t0: float):
        self.t0 = t0

    def time(self) -> float:
        return self.t0 + 10.0 * (time.time() - self.t0)

    def __getattr__(self, name: str):
        return getattr(time, name)


@pytest.fixture
def fast_clock(monkeypatch):
    """The clock of the box search and of the audit's rows running 10x the real one."""
    from treesens.questions import audit, audit_solve
    from treesens.search import box_search, boxes, compiled_check

    def turn() -> None:
        fast = _FastTime(time.time())
        for module in (box_search, boxes, compiled_check, audit_solve, audit):
            monkeypatch.setattr(module, "time", fast)

    return turn


def _cli_lines(capsys, *extra: str) -> list[dict]:
    args = ["audit", MODEL, "--data", ROWS, "--vary", FIVE, "--gap", "0.45", "--limit", "6"]
    assert main([*args, "--json", *extra]) == 0
    lines = [json.loads(t) for t in capsys.readouterr().out.splitlines() if t.startswith("{")]
    return [{k: v for k, v in d.items() if k != "time"} for d in lines]


def test_the_audit_command_gives_each_row_the_work_budget(capsys):
    lines = _cli_lines(capsys, "--work", "50", "--timeout-per-row", str(NO_LIMIT))
    assert [d["stats"]["work"]["budget"] for d in lines] == [50] * 6
    assert all(d["stats"]["work"]["used"] <= 50 for d in lines)


def test_the_audit_command_under_work_writes_the_same_lines_on_a_fast_clock(capsys, fast_clock):
    per_row = ("--work", "10k", "--timeout-per-row", str(NO_LIMIT))
    idle = _cli_lines(capsys, *per_row)
    fast_clock()
    assert _cli_lines(capsys, *per_row) == idle


def test_the_audit_command_ends_its_report_with_the_work_the_rows_used(capsys):
    args = ["audit", MODEL, "--data", ROWS, "--vary", FIVE, "--gap", "0.45", "--limit", "2"]
    assert main([*args, "--work", "50"]) == 0
    assert "work: 50 units a row; " in capsys.readouterr().out


def test_the_audit_command_refuses_a_work_budget_of_no_units(capsys):
    args = ["audit", MODEL, "--data", ROWS, "--vary", FIVE, "--work", "0"]
    assert main(args) == 2
    assert "whole number of work units" in capsys.readouterr().err


def _api(**kw):
    return treesens.audit(MODEL, ROWS, FIVE.split(","), gap=0.45, limit=6, **kw)


def test_the_audit_function_under_work_gives_the_same_rows_on_a_fast_clock(fast_clock):
    idle = _api(work="10k", timeout_per_row=NO_LIMIT)
    fast_clock()
    slow = _api(work="10k", timeout_per_row=NO_LIMIT)
    columns = [c for c in idle.columns if c != "time"]
    assert idle[columns].equals(slow[columns])
    assert idle.attrs["work"] == slow.attrs["work"]
    assert sorted(idle.attrs["work"]) == list(range(6))


def test_the_audit_function_refuses_a_work_budget_that_is_not_a_number():
    with pytest.raises(InputError, match="work='lots'"):
        _api(work="lots")


def test_the_audit_function_refuses_a_work_budget_beside_the_whole_audit_s_timeout():
    with pytest.raises(InputError, match="work= and timeout= together"):
        _api(work="10k", timeout=60)
