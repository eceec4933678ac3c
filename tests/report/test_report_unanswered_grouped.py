"""A report's "What was not answered" says each reason once: the claims left for one
reason share a line naming their features, or counting them past a handful
(questions/report_certificates.HANDFUL), on the page as in Report.unanswered (the CLI's lines)."""

from __future__ import annotations

from treesens.answers.proof import BOX_SEARCH, Proof
from treesens.answers.result import Result
from treesens.questions.report import ProtectedFinding, Report
from treesens.questions.report_certificates import HANDFUL
from treesens.views.report_html import _unanswered as unanswered_section

SPENT = (
    "not tried: the report's budget of 2s was spent before it (a larger --budget leaves it time)"
)


def _ranked(name: str, why: str = SPENT, upper: float | None = 0.3) -> Result:
    """A ranked max gap, proven, whose upper bound's certificate was not written: ``why``."""
    mg = {"lower": upper, "upper": upper, "proven": upper is not None}
    proof = Proof(BOX_SEARCH, why_not=why)
    return Result(f"max gap {name}", "unknown", "boxes", [name], 0.0, max_gap=mg, proof=proof)


def _report(ranking: list[Result], protected: list[ProtectedFinding] = ()) -> Report:
    return Report(None, 0.1, 2.0, ranking, list(protected), 1.0, model=None, certificates="c")


def _names(n: int) -> list[str]:
    return [f"f{i}" for i in range(n)]


def test_upper_bounds_not_tried_for_one_reason_are_one_line_counting_them():
    rep = _report([_ranked(f) for f in _names(30)])
    assert rep.unanswered == [
        f"The upper bounds of the max gaps of 30 features have no verified certificate: {SPENT}."
    ]


def test_a_handful_of_features_of_one_reason_are_named():
    rep = _report([_ranked(f) for f in _names(HANDFUL)])
    (line,) = rep.unanswered
    assert line.startswith("The upper bounds of the max gaps of f0, f1, f2, f3 and f4 have no ")


def test_one_feature_keeps_its_sentence():
    assert _report([_ranked("f0")]).unanswered == [
        f"The upper bound of the max gap of f0 has no verified certificate: {SPENT}."
    ]


def test_each_reason_has_its_own_line_in_the_order_first_met():
    other = "the box search did not finish within its budget of 120s"
    rep = _report([_ranked("a"), _ranked("b", other), _ranked("c"), _ranked("d", other)])
    assert rep.unanswered == [
        f"The upper bounds of the max gaps of a and c have no verified certificate: {SPENT}.",
        f"The upper bounds of the max gaps of b and d have no verified certificate: {other}.",
    ]


def test_max_gaps_left_unbounded_are_one_line():
    rep = _report([_ranked(f, upper=None) for f in ("a", "b")])
    assert rep.unanswered[0] == "The max gaps of a and b were not bounded within their time limit."


def test_insensitive_answers_without_a_certificate_for_one_reason_are_one_line():
    def finding(name: str) -> ProtectedFinding:
        proof = Proof("cpsat", why_not=SPENT)
        return ProtectedFinding(
            name, Result(f"check {name}", "insensitive", "cpsat", [name], 0.0, proof=proof)
        )

    rep = _report([], [finding("sex"), finding("race")])
    assert rep.unanswered == [
        f"The insensitive answers of sex and race, proved by CP-SAT, have no verified "
        f"certificate: {SPENT}."
    ]


def test_the_page_lists_the_lines_the_report_gives():
    rep = _report([_ranked(f) for f in _names(30)] + [_ranked("g", "none was written")])
    html = unanswered_section(rep)
    assert html.count("<li>") == len(rep.unanswered) == 2
