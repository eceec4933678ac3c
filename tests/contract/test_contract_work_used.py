"""Sizing a contract's work budget from one ``treesens test`` run: under ``-v`` and in the
JUnit report each query's expectation says what it used of its budget
(answers/work.work_line), the units its ``stats.work`` holds."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.tests.driver.test_work_budget import MODEL

# the heuristic off, the box search alone: it visits 243 boxes to its pair, so the
# budget's units are its boxes
VARY = "worst_concave_points,worst_area"
QUERY = f"vary {VARY.replace(',', ', ')} gap 0.45 option heuristic = false"


def _contract(tmp_path: Path, work: str = "1M") -> Path:
    path = tmp_path / "c.sens"
    path.write_text(
        f'model "{MODEL}"\ndefaults {{ work {work} }}\n'
        f"query five {{ {QUERY} backend boxes expect sensitive }}\n"
    )
    return path


@pytest.fixture(scope="module")
def used():
    """What the query uses of a budget of 1M, as treesens.check says it."""
    q = dict(vary=VARY, gap=0.45, heuristic=False, backend="boxes", work="1M")
    return treesens.check(MODEL, **q).stats["work"]["used"]


def test_test_verbose_says_what_each_expectation_used_of_its_budget(tmp_path, capsys, used):
    assert main(["test", str(_contract(tmp_path)), "-v"]) == 0
    out = capsys.readouterr().out
    assert f"work: {used:,} of 1,000,000 units used (box_search {used:,})" in out


def test_the_junit_report_says_what_each_expectation_used_of_its_budget(tmp_path, used):
    report = tmp_path / "r.xml"
    assert main(["test", str(_contract(tmp_path)), "--junit", str(report)]) == 0
    (case,) = ET.parse(report).getroot().iter("testcase")
    assert f"work: {used:,} of 1,000,000 units used" in case.find("system-out").text


def test_a_budget_sized_from_what_test_said_keeps_the_verdict(tmp_path, capsys, used):
    """The line's units are the budget the query needs: that many passes, one fewer is
    unknown ("work budget spent")."""
    assert main(["test", str(_contract(tmp_path, str(used)))]) == 0
    assert main(["test", str(_contract(tmp_path, str(used - 1)))]) == 1
    assert "work budget of" in capsys.readouterr().out
