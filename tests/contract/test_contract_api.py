"""treesens.expect_*: the outcome when an expectation holds, an AssertionError whose message
is the witness when it does not (as a plain assert reads in pytest); and the JUnit writer."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.questions.contract import ERROR, FAIL, PASS, UNKNOWN, Expectation, Outcome
from treesens.tests.contract.junit_schema import schema_problems
from treesens.views.junit import junit_xml

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = str(EXAMPLES / "breast_cancer_xgb.json")
DEEP = str(EXAMPLES / "breast_cancer_deep_xgb.json")
DETAILS = str(EXAMPLES / "breast_cancer_details.csv")
ROWS = str(EXAMPLES / "breast_cancer_rows.csv")

pytest.importorskip("xgboost")


def test_expect_insensitive_returns_its_outcome_with_the_proof():
    out = treesens.expect_insensitive(BC, ["radius_error"], gap=0.1, details=DETAILS)
    assert out.verdict == PASS and out.result.status == "insensitive"


def test_expect_insensitive_raises_with_the_witness_as_its_message():
    with pytest.raises(AssertionError) as e:
        treesens.expect_insensitive(DEEP, ["radius_error"], gap=0.1, details=DETAILS)
    first = str(e.value).splitlines()[0]
    assert first.startswith("FAIL    radius_error: expect insensitive: sensitive at gap 0.1")
    assert "x1.radius_error = " in first and "x2.radius_error = " in first
    assert "replay-checked with the library's predict" in str(e.value)  # the witness table


def test_expect_sensitive_raises_when_proven_insensitive():
    with pytest.raises(AssertionError, match="proven insensitive at gap 0.1"):
        treesens.expect_sensitive(BC, ["radius_error"], gap=0.1, details=DETAILS)


def test_expect_max_gap_raises_with_the_gap_the_pair_reaches():
    with pytest.raises(AssertionError, match=r"a replay-checked pair reaches 0\.\d+ > 0\.02"):
        treesens.expect_max_gap(BC, ["texture_error"], 0.02, details=DETAILS)


def test_expect_max_gap_refuses_a_gap():
    with pytest.raises(InputError, match="drop gap="):
        treesens.expect_max_gap(BC, ["texture_error"], 0.1, gap=0.2, details=DETAILS)


def test_a_time_limit_fails_unless_allowed():
    kw = dict(gap=0.1, details=DETAILS, timeout=0.001)
    with pytest.raises(AssertionError, match="UNKNOWN"):
        treesens.expect_insensitive(BC, ["radius_error"], **kw)
    out = treesens.expect_insensitive(BC, ["radius_error"], allow_unknown=True, **kw)
    assert out.verdict == UNKNOWN and out.ok


def test_expect_audit_needs_one_limit():
    with pytest.raises(InputError, match="max_percent or max_rows"):
        treesens.expect_audit(BC, ROWS, ["worst_texture"], gap=0.1, details=DETAILS)


def test_expect_audit_raises_with_a_flippable_row_as_its_message():
    kw = dict(gap=0.1, details=DETAILS, max_rows=2, by="label")
    with pytest.raises(AssertionError) as e:
        treesens.expect_audit(BC, ROWS, ["worst_texture"], **kw)
    first = str(e.value).splitlines()[0]
    assert first.startswith("FAIL    audit of worst_texture: expect audit flippable <= 2 by label")
    assert "rows flippable" in first and "> 2 rows; e.g. row " in first
    assert "flips with worst_texture = " in first and first.endswith("replay-checked)")
    assert "label      0" in str(e.value)  # the audit's summary, per group


def test_expect_audit_over_its_memory_limit_fails_as_an_error_not_an_exception():
    # as expect_insensitive's refused query: an ERROR outcome, raised as its assertion
    with pytest.raises(AssertionError, match=r"^ERROR +audit of worst_texture: .*error: refused: "):
        treesens.expect_audit(BC, ROWS, ["worst_texture"], max_percent=5, memory_mb=1)


def test_expect_audit_takes_audits_whole_time_limit():
    kw = dict(gap=0.1, details=DETAILS, max_rows=0, timeout=0.001)
    out = treesens.expect_audit(BC, ROWS, ["worst_texture"], allow_unknown=True, **kw)
    assert out.verdict == UNKNOWN and "unknown" in out.message


def _outcome(verdict, message, allow_unknown=False) -> Outcome:
    return Outcome("q", Expectation("insensitive", allow_unknown=allow_unknown), verdict, message)


def _every_verdict() -> list[Outcome]:
    return [
        _outcome(PASS, "proven"),
        _outcome(FAIL, "pair"),
        _outcome(UNKNOWN, "open"),
        _outcome(UNKNOWN, "open", allow_unknown=True),
        _outcome(ERROR, "error: the solver crashed"),
    ]


def test_the_junit_report_counts_each_verdict_where_ci_systems_look():
    outs = _every_verdict()
    root = ET.fromstring(junit_xml(outs, suite="c.sens", classname="c", seconds=1.0))
    counts = [root.find("testsuite").get(k) for k in ("tests", "failures", "skipped", "errors")]
    assert counts == ["5", "2", "1", "1"]
    assert [root.get(k) for k in ("tests", "failures", "errors")] == ["5", "2", "1"]
    kinds = [[child.tag for child in case] for case in root.iter("testcase")]
    assert kinds == [
        ["system-out"],
        ["failure", "system-out"],
        ["failure", "system-out"],
        ["skipped", "system-out"],
        ["error", "system-out"],
    ]


def test_the_junit_report_is_xml_whatever_a_message_holds():
    text = junit_xml(
        [_outcome(FAIL, 'x1 <- "a" & \x1b[1mbold\x1b[0m')], suite="c", classname="c", seconds=0.0
    )
    failure = ET.fromstring(text).find("testsuite/testcase/failure")
    assert failure.get("message") == 'x1 <- "a" & ?[1mbold?[0m'


def test_the_junit_report_of_every_verdict_is_valid_against_the_common_junit_schema():
    outs = _every_verdict()
    text = junit_xml(
        outs, suite="c.sens", classname="c", seconds=12345.678, properties={"model": "m.json"}
    )
    assert schema_problems(text) == []


@pytest.mark.parametrize(
    "xml,problem",
    [
        ('<testsuites skipped="0"/>', "testsuites: attribute 'skipped' is not declared"),
        ('<testsuite name="s" tests="1" failures="0"/>', "attribute 'errors' is required"),
        (
            '<testsuite name="s" tests="1" failures="0" errors="0"><testcase/></testsuite>',
            "testsuite/testcase: attribute 'name' is required",
        ),
        ('<testsuites time="1.5s"/>', "time '1.5s' is not a number of seconds"),
        (
            '<testsuites><testcase name="t"/></testsuites>',
            "<testcase> is not allowed in <testsuites>",
        ),
    ],
    ids=["undeclared", "required", "testcase-name", "time", "child"],
)
def test_the_schema_check_finds_what_the_junit_schema_rejects(xml, problem):
    assert any(problem in p for p in schema_problems(xml))


def test_a_failed_audit_expectation_counts_its_row_from_1_as_data_errors_do():
    import re

    import pandas as pd

    kw = dict(gap=0.1, details=DETAILS, max_rows=2, by="label")
    with pytest.raises(AssertionError) as e:
        treesens.expect_audit(BC, ROWS, ["worst_texture"], **kw)
    number, index = map(int, re.search(r"e\.g\. row (\d+) \(index (\d+)\)", str(e.value)).groups())
    assert number == index + 1
    rows = pd.read_csv(ROWS)
    model = treesens.load_model(BC, details=DETAILS)
    p = model.replayer.predict_proba(rows[model.feature_names].to_numpy()[[index]])[0, 1]
    assert f"(prediction {p:.4g} -> " in str(e.value)  # that index is the row the text names
