"""A report asked for certificates (``--certificates DIR``) certifies the upper bound of
every ranked max gap and says, per claim, whether it was certified or why not."""

from __future__ import annotations

import pytest

from treesens.answers.proof import TRIVIAL_BOUND, Proof
from treesens.answers.result import Result
from treesens.questions.report import Report, report
from treesens.tests.report.conftest import MODEL, ROWS
from treesens.verify import verify_file
from treesens.views.report_html import render

RANKED = ["mean_texture", "mean_radius"]


@pytest.fixture(scope="module")
def certified(tmp_path_factory) -> Report:
    folder = tmp_path_factory.mktemp("certs")
    # both max gaps close and certify in a few seconds; the budget is a cap, kept far
    # above them so a slow or loaded machine still ends them within it
    return report(
        str(MODEL), str(ROWS), features=RANKED, budget=200, certificates=folder, progress=False
    )


def test_each_ranked_max_gap_gets_a_certificate_of_its_upper_bound_that_verifies(certified):
    for r in certified.ranking:
        assert r.proof.checked, r.proof
        assert r.proof.certificate.endswith(f"{r.features[0]}.max-gap.json")
        assert r.proof.bound > r.max_gap["upper"]
        assert verify_file(r.proof.certificate).valid


def test_the_page_says_per_ranked_feature_which_gap_is_certified_with_its_file(certified):
    page = render(certified)
    for r in certified.ranking:
        assert (
            f"certified: no pair reaches a gap of {r.proof.bound:g} "
            f"(<code>{r.proof.certificate}</code>, verified)"
        ) in page


def test_certified_max_gaps_leave_nothing_unanswered(certified):
    assert certified.missing_certificates == []


def test_a_max_gap_without_its_certificate_is_listed_as_not_answered_with_why(certified):
    r = certified.ranking[0]
    why = "the box search did not finish within its budget of 1s"
    missed = Result(**{**r.__dict__, "proof": Proof("box search", bound=0.5, why_not=why)})
    rep = Report(**{**certified.__dict__, "ranking": [missed]})
    assert rep.missing_certificates == [
        f"The upper bound of the max gap of {r.features[0]} has no verified certificate: {why}."
    ]
    assert f"not certified: {why}" in render(rep)


def test_a_max_gap_of_0_5_needs_no_certificate_and_is_not_listed_as_not_answered(certified):
    r = certified.ranking[0]
    trivial = Proof("box search", bound=0.500001, why_not=TRIVIAL_BOUND)
    rep = Report(**{**certified.__dict__, "ranking": [Result(**{**r.__dict__, "proof": trivial})]})
    assert rep.missing_certificates == []
    assert f"no certificate needed: {TRIVIAL_BOUND}" in render(rep)


def test_a_model_loaded_from_its_file_is_certified_from_that_file(tmp_path):
    # its ranked max gap's certificate was "a certificate needs the model's file"
    from treesens import load_model

    rep = report(
        load_model(str(MODEL)), str(ROWS), features=["worst_symmetry"], budget=200,
        certificates=tmp_path, progress=False,
    )  # fmt: skip
    (ranked,) = rep.ranking
    assert ranked.proof.checked, ranked.proof
    assert verify_file(tmp_path / "worst_symmetry.max-gap.json").valid
