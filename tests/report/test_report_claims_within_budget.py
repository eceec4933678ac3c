"""A report's claims are certified within its budget (questions/report_certificates.py):
each protected feature's answer and each ranked max gap's upper bound gets its share of
the time left until the report's deadline, at most --certify-budget; one reached once the
budget is spent is not tried, and the page says so. What an open max gap proved is said
with the certificate of its upper bound."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from treesens.answers.proof import BOX_SEARCH, Proof
from treesens.answers.result import Result
from treesens.questions import report_certificates
from treesens.questions.certify import refused
from treesens.questions.report import Report, report
from treesens.questions.report_certificates import SEARCH_PART, ClaimCertificates
from treesens.tests.report.conftest import MODEL, ROWS

pytest.importorskip("xgboost")
FEATURE = "worst_concave_points"


@pytest.fixture(scope="module")
def spent(tmp_path_factory):
    """A report whose budget (a millisecond) is spent before its certificates begin."""
    folder = tmp_path_factory.mktemp("spent")
    rows = folder / "rows.csv"
    rows.write_text("".join(ROWS.read_text().splitlines(keepends=True)[:13]))  # 12 rows
    lines: list[str] = []
    rep = report(
        str(MODEL), str(rows), features=[FEATURE], protected=[FEATURE], gap=0.1,
        budget=0.001, certificates=folder / "certs", progress=False, note=lines.append,
    )  # fmt: skip
    return rep, folder / "certs", lines


def test_a_max_gap_reached_once_the_budget_is_spent_gets_no_certificate(spent):
    rep, folder, _ = spent
    assert not (folder / f"{FEATURE}.max-gap.json").exists()
    assert rep.ranking[0].proof.why_not.startswith(
        "not tried: the report's budget of 0.001s was spent before it"
    )


def test_a_claim_not_tried_is_listed_as_not_answered_saying_why(spent):
    rep, _, _ = spent
    assert (
        f"The upper bound of the max gap of {FEATURE} has no verified certificate: not "
        "tried: the report's budget of 0.001s was spent before it (a larger --budget leaves "
        "it time)."
    ) in rep.unanswered


def test_the_progress_line_names_the_claims_not_tried(spent):
    _, _, lines = spent
    (line,) = [x for x in lines if "without a certificate" in x]
    assert line.startswith("report: 1 claim without a certificate, not tried: the report's")
    assert line.endswith(f": the upper bound of the max gap of {FEATURE}")


def _claims(monkeypatch, seen: list, *, budget: float, left: float) -> ClaimCertificates:
    """ClaimCertificates on a clock of their own, whose certificates each take 2 s and note
    the time they are given."""
    clock = [1000.0]

    def certify_answer(ens, q, res, path, model_file, seconds):
        seen.append(seconds)
        clock[0] += 2.0
        return refused("not written in this test")

    monkeypatch.setattr(report_certificates, "time", SimpleNamespace(time=lambda: clock[0]))
    monkeypatch.setattr(report_certificates, "certify_answer", certify_answer)
    monkeypatch.setattr(report_certificates, "answer_refusal", lambda res: None)
    monkeypatch.setattr(report_certificates, "query_from_keywords", lambda *a, **k: None)
    return ClaimCertificates(None, None, budget, clock[0] + left, 60.0, lambda _m: None)


def _max_gap(name: str) -> Result:
    return Result(f"max gap {name}", "unknown", "boxes", [name], 0.0, max_gap={"upper": 0.3})


def test_each_claim_gets_its_search_part_of_its_share_of_the_time_left(monkeypatch, tmp_path):
    seen: list = []
    claims = _claims(monkeypatch, seen, budget=120.0, left=8.0)
    claims.folder = tmp_path
    claims.certify(None, [], [_max_gap("a"), _max_gap("b")], {}, None)
    # 8 s left for two, then the 6 s the first left for one
    assert seen == [SEARCH_PART * 8.0 / 2, SEARCH_PART * 6.0]


def test_a_claim_gets_no_more_than_certify_budget_however_much_time_is_left(monkeypatch, tmp_path):
    seen: list = []
    claims = _claims(monkeypatch, seen, budget=1.5, left=600.0)
    claims.folder = tmp_path
    claims.certify(None, [], [_max_gap("a")], {}, None)
    assert seen == [1.5]


def test_a_claim_reached_past_the_deadline_is_not_tried(monkeypatch, tmp_path):
    seen: list = []
    claims = _claims(monkeypatch, seen, budget=120.0, left=1.0)
    claims.folder = tmp_path
    late = [_max_gap("a"), _max_gap("b")]
    claims.certify(None, [], late, {}, None)  # the first takes 2 s: past the deadline
    assert len(seen) == 1 and late[1].proof.why_not.startswith("not tried")


def _not_tried_line(monkeypatch, tmp_path, checks, ranking) -> str:
    """The progress line of the claims not tried, the budget spent before the first."""
    claims = _claims(monkeypatch, [], budget=120.0, left=0.0)
    lines: list[str] = []
    claims.folder, claims.say = tmp_path, lines.append
    claims.certify(None, checks, ranking, {}, None)
    (line,) = [x for x in lines if "without a certificate" in x]
    return line


def test_thirty_max_gaps_not_tried_are_counted_not_named(monkeypatch, tmp_path):
    line = _not_tried_line(monkeypatch, tmp_path, [], [_max_gap(f"f{i}") for i in range(30)])
    assert line.startswith("report: 30 claims without a certificate, not tried: ")
    assert line.endswith("leaves it time): the upper bounds of the max gaps of 30 features")


def test_claims_not_tried_are_grouped_answers_then_bounds(monkeypatch, tmp_path):
    sex = Result("sex", "insensitive", "boxes", ["sex"], 0.0)
    line = _not_tried_line(monkeypatch, tmp_path, [("sex", sex)], [_max_gap("a"), _max_gap("b")])
    assert line.endswith(
        ": the insensitive answer of sex; the upper bounds of the max gaps of a and b"
    )


def _open_gap(lower) -> Result:
    proof = Proof(BOX_SEARCH, checked=True, certificate="c/f.max-gap.json", bound=9e-06)
    mg = {"lower": lower, "upper": 7.988e-06, "proven": False}
    return Result("max gap f", "unknown", "boxes", ["f"], 0.0, max_gap=mg, proof=proof)


def _unanswered(r: Result) -> list[str]:
    rep = Report(None, 0.1, 60.0, [r], [], 1.0, model=None)
    return rep.unanswered


def test_an_open_max_gap_with_no_pair_says_its_certified_upper_bound():
    assert _unanswered(_open_gap(None)) == [
        "The max gap of f is at most 7.988e-06 (certified: no pair reaches a gap of 9e-06, "
        "c/f.max-gap.json, verified): the search stopped at its time limit before a pair "
        "gave it a lower bound."
    ]


def test_an_open_max_gap_between_two_bounds_says_its_upper_bound_is_certified():
    (line,) = _unanswered(_open_gap(1e-06))
    assert line.startswith(
        "The max gap of f is between 1e-06 and 7.988e-06 (certified: no pair reaches"
    )


def test_a_proof_the_report_s_budget_cut_short_names_the_budget_to_ask_for(monkeypatch, tmp_path):
    seen: list = []
    claims = _claims(monkeypatch, seen, budget=120.0, left=8.0)
    why = "rebuilding ... would take about 16s: ask for --certify-budget 40 (certify_budget=40) or more"
    monkeypatch.setattr(report_certificates, "certify_answer", lambda *a: refused(why))
    lines: list[str] = []
    claims.folder, claims.say = tmp_path, lines.append
    claims.certify(None, [], [_max_gap("a")], {}, None)
    assert lines[-1].endswith("about 16s: ask for a larger --budget (the report's 60s left it 6s)")
