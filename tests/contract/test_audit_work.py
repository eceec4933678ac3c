"""An audit block's work budget (``work N`` in the block: each row's, answers/work.py):
the rows past the enumeration end on counted work, their query's box search and solver
and the capped search of their smallest change alike, so that the block's lines and its
verdict are the same however fast the process runs; on the clock alone they are not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from treesens.interfaces.sens_contract import load_contract, run_contract
from treesens.interfaces.sens_run import run_audit_plan
from treesens.language import load_queries
from treesens.questions.contract import PASS
from treesens.tests.driver.test_work_budget import _FastTime

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# five features at gap 0.45: past the enumeration, so each row is a query; the flipped
# rows' capped search of their smallest change visits 100-350 boxes
FIVE = "worst_concave_points, worst_area, worst_texture, mean_texture, area_error"
NO_LIMIT = 1_000_000  # seconds per row: the time limit far away, at either speed

pytest.importorskip("xgboost")


def _sens(tmp_path: Path, audit: str, extra: str = "") -> Path:
    p = tmp_path / "a.sens"
    p.write_text(
        f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
        f'data "{EXAMPLES / "breast_cancer_rows.csv"}"\n{extra}'
        f"audit a {{\n vary {FIVE}\n gap 0.45\n limit 6\n{audit}\n"
        " expect audit flippable <= 50%\n}\n"
    )
    return p


@pytest.fixture
def fast_clock(monkeypatch):
    """The clock of the box search and of the audit's rows (search/box_search.py,
    boxes.py, compiled_check.py, questions/audit_solve.py) running 1000x the real one,
    as a process that gets a thousandth of the CPU it asks for sees it."""
    from treesens.questions import audit_solve
    from treesens.search import box_search, boxes, compiled_check

    def turn() -> None:
        fast = _FastTime(time.time())
        for module in (box_search, boxes, compiled_check, audit_solve):
            monkeypatch.setattr(module, "time", fast)

    return turn


def _lines(path: Path) -> list[dict]:
    sf = load_queries(path)
    return run_audit_plan(sf.ensemble, sf.select_audits(None)[0], jobs=1)


def _answers(lines: list[dict]) -> list[tuple]:
    """What a row's line says, less its times."""
    return [(d["status"], d.get("witness"), d.get("stats"), d["message"]) for d in lines]


def test_work_in_an_audit_block_is_each_row_s_budget(tmp_path):
    plan = load_queries(_sens(tmp_path, " work 100k")).select_audits(None)[0]
    assert plan.run.work_per_row == 100_000
    assert "work per row 100,000" in plan.listing()


def test_an_audit_under_work_gives_the_same_lines_on_a_fast_clock(tmp_path, fast_clock):
    path = _sens(tmp_path, f" work 100k\n timeout {NO_LIMIT}")
    idle = _lines(path)
    fast_clock()
    assert _answers(_lines(path)) == _answers(idle)
    assert all(d["stats"]["work"]["used"] > 0 for d in idle)  # every row a query


def test_an_audit_on_the_clock_alone_differs_on_a_fast_clock(tmp_path, fast_clock):
    path = _sens(tmp_path, " timeout 30")
    idle = _lines(path)
    fast_clock()
    fast = _lines(path)
    assert [d["stats"].get("smallest") for d in idle if d["status"] == "sensitive"] == [True] * 3
    assert False in [d["stats"].get("smallest") for d in fast if d["status"] == "sensitive"]


def test_a_row_s_smallest_change_search_stops_at_its_budget(tmp_path, fast_clock):
    path = _sens(tmp_path, f" work 50\n timeout {NO_LIMIT}")
    idle = _lines(path)
    flipped = [d for d in idle if d["status"] == "sensitive"]
    assert flipped and all(d["stats"]["work"]["used"] == 50 for d in flipped)
    assert not any(d["stats"]["smallest"] for d in flipped)  # its search cut short
    fast_clock()
    assert _answers(_lines(path)) == _answers(idle)


def test_a_contract_s_audit_under_work_is_not_timed_and_says_its_work(tmp_path):
    contract = load_contract(_sens(tmp_path, " work 100k"))
    (out,) = run_contract(contract)
    assert out.verdict == PASS and "timed" not in out.message
    assert "units a row;" in out.detail and "at most" in out.detail


def test_a_contract_s_audit_without_work_beside_a_query_s_work_says_it_is_timed(tmp_path):
    query = "query q {\n vary worst_texture\n gap 0.1\n work 10k\n expect insensitive\n}\n"
    contract = load_contract(_sens(tmp_path, "", extra=query))
    outs = run_contract(contract)
    assert "(timed: an audit's rows end on its time per row" in outs[-1].message


def test_each_row_s_line_records_its_work_budget(tmp_path):
    lines = _lines(_sens(tmp_path, " work 100k"))
    assert {d["stats"]["asked"]["work_per_row"] for d in lines} == {100_000}


def test_a_resume_under_work_asks_again_an_unknown_row_that_had_less_work():
    from treesens.questions.audit_run import reusable

    record = {"ensemble": "e", "data": {}, "timeout_per_row": 60.0, "work_per_row": 1000}
    line = {"row": 0, "status": "unknown", "stats": {"asked": record}}
    assert reusable([line], 1, 60.0, work_per_row=10_000).retried == 1
    assert reusable([line], 1, 60.0, work_per_row=1000).retried == 0
