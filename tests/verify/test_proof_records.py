"""Every "insensitive" answer says who proved it and whether a checker independent of
treesens re-checked that proof (``Result.proof``): in the CLI's result line, the JSON,
the sweep's table and the report's page; a certificate asked for and not written says
why."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.answers.proof import Proof
from treesens.answers.result import Result, fail, result_from_dict
from treesens.questions import certify as certify_module
from treesens.questions.campaign import Campaign, sweep_campaign
from treesens.questions.certify import certify_answer
from treesens.questions.query_build import make_query
from treesens.questions.sweep import table_rows
from treesens.questions.sweep_certs import SweepCertificates
from treesens.tests.conftest import treesens_here
from treesens.verify.verdict import Verdict

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "breast_cancer_xgb.json"
# an insensitive answer: the box search proves it in a few dozen boxes, CP-SAT at once
ASKED = ("--vary", "worst_symmetry", "--gap", "0.1")


def _verdict_line(stdout: str) -> str:
    return next(s for s in stdout.splitlines() if s.startswith("INSENSITIVE"))


def test_a_solver_proved_answer_says_so_on_the_cli_result_line():
    p = treesens_here("check", MODEL, *ASKED, "--no-box-search")
    assert p.returncode == 0, p.stderr
    assert _verdict_line(p.stdout).endswith("; proved by CP-SAT, not independently checked")


def test_a_solver_proved_answer_has_its_proof_record_in_the_json():
    p = treesens_here("check", MODEL, *ASKED, "--no-box-search", "--json")
    assert p.returncode == 0, p.stderr
    proof = json.loads(p.stdout)["proof"]
    assert proof == {"by": "cpsat", "checked": False, "certificate": None, "why_not": ""}


def test_a_box_search_proof_with_a_certificate_says_certified_and_verified(tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here("check", MODEL, *ASKED, "--certificate", out)
    assert p.returncode == 0, p.stderr
    assert _verdict_line(p.stdout).endswith(f"; certified: {out}, verified")


def test_a_solver_proved_answer_is_certified_by_the_box_search_after_it(tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here("check", MODEL, *ASKED, "--no-box-search", "--certificate", out, "--json")
    assert p.returncode == 0, p.stderr
    proof = json.loads(p.stdout)["proof"]
    assert proof == {"by": "cpsat", "checked": True, "certificate": str(out), "why_not": ""}


def test_a_certificate_searched_for_after_the_answer_is_announced_with_its_budget(tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here(
        "check", MODEL, *ASKED, "--no-box-search", "--certificate", out, "--certify-budget", "30"
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "certificate: searching for its proof (at most 30s)..." in p.stderr


def test_a_certificate_from_the_answer_s_own_proof_announces_no_search(tmp_path):
    p = treesens_here("check", MODEL, *ASKED, "--certificate", tmp_path / "c.json")
    assert p.returncode == 0, p.stderr
    assert "searching for its proof" not in p.stderr


def test_a_certify_budget_too_small_labels_the_answer_not_checked_with_why(tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here(
        "check", MODEL, *ASKED, "--no-box-search", "--certificate", out,
        "--certify-budget", "0.000001",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert _verdict_line(p.stdout).endswith(
        "; proved by CP-SAT, not independently checked: the box search did not finish "
        "within its budget of 1e-06s"
    )
    assert not out.exists()


def test_a_certificate_the_checker_rejects_leaves_the_answer_not_checked(tmp_path, monkeypatch):
    ens = treesens.load_model(MODEL)
    q = make_query(["worst_symmetry"], gap=0.1)
    res = treesens.check(ens, vary="worst_symmetry", gap=0.1)
    monkeypatch.setattr(certify_module, "verify_file", lambda path: Verdict(False, "box 3 fails"))
    certify_answer(ens, q, res, tmp_path / "c.json", MODEL, 60)
    assert not res.proof.checked
    assert res.proof.why_not == "the checker rejects its certificate"


def test_a_sweep_table_says_who_proved_each_insensitive_answer_in_short():
    proved = Result("a", "insensitive", "cpsat", ["a"], 0.2, proof=Proof("cpsat"))
    certified = Result("b", "insensitive", "cpsat", ["b"], 0.2, proof=Proof("box search", True))
    rows = table_rows([proved, certified, Result("c", "sensitive", "cpsat", ["c"], 0.2)])
    assert [r["proof"] for r in rows] == ["cpsat (unchecked)", "certified", ""]


def test_a_results_line_written_before_proof_records_gets_one_from_its_stats():
    line = {
        "query": "a", "status": "insensitive", "backend": "cpsat", "features": ["a"],
        "gap": 0.2, "stats": {"proved_by": "box search"},
    }  # fmt: skip
    assert result_from_dict(line).proof == Proof("box search")


def test_a_resumed_sweep_keeps_the_proof_records_of_the_answers_it_reuses(tmp_path):
    log = tmp_path / "s.jsonl"
    sweep = ("sweep", MODEL, "--features", "worst_symmetry", "--gap", "0.1")
    first = treesens_here(*sweep, "--out", log, "--certificates", tmp_path / "certs")
    assert first.returncode == 0, first.stderr
    again = treesens_here(*sweep, "--resume", log, "--json")
    assert again.returncode == 0 and "1 result reused" in again.stderr, again.stderr
    assert json.loads(again.stdout)["proof"]["checked"] is True


def test_a_resumed_sweep_asked_for_certificates_certifies_the_answers_it_reuses(tmp_path):
    log = tmp_path / "s.jsonl"
    sweep = ("sweep", MODEL, "--features", "worst_symmetry", "--gap", "0.1")
    assert treesens_here(*sweep, "--out", log).returncode == 0
    again = treesens_here(*sweep, "--resume", log, "--certificates", tmp_path / "c", "--json")
    assert again.returncode == 0 and "1 result reused" in again.stderr, again.stderr
    assert json.loads(again.stdout)["proof"]["checked"] is True


def test_the_sweep_campaign_certifies_an_answer_before_its_line_is_written(tmp_path):
    ens = treesens.load_model(MODEL)

    def make(vary, name=""):
        return make_query(vary, gap=0.1, timeout=60, name=name)

    subsets = [("worst_symmetry",)]
    certs = SweepCertificates(ens, make, subsets, tmp_path / "certs", MODEL)
    log = tmp_path / "s.jsonl"
    sweep_campaign(ens, subsets, make, Campaign(out=log), certificates=certs)
    assert json.loads(log.read_text())["proof"]["checked"] is True


def test_a_results_repr_says_who_proved_it_in_short():
    res = Result("a", "insensitive", "cpsat", ["a"], 0.2, proof=Proof("cpsat"))
    assert "proof=cpsat (unchecked)" in repr(res)


def test_an_answer_that_becomes_an_error_loses_its_proof_record():
    res = Result("a", "insensitive", "cpsat", ["a"], 0.2, proof=Proof("cpsat"))
    assert fail(res, "the library disagrees").proof is None


@pytest.fixture(scope="module")
def pickled_report(tmp_path_factory):
    """A report with ``--certificates`` on a pickled scikit-learn model over x0, x1, x2
    that reads only x0 (the checker refuses it: it reads .skops files), protecting x2 (its
    data-aware check is proved by the box search over all inputs): the finished command
    and the page."""
    import joblib
    import pandas as pd
    from sklearn.ensemble import GradientBoostingClassifier

    out = tmp_path_factory.mktemp("pickled")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    joblib.dump(GradientBoostingClassifier(n_estimators=4, max_depth=1).fit(X, y), out / "m.joblib")
    pd.DataFrame(X, columns=["x0", "x1", "x2"]).assign(label=y).to_csv(out / "rows.csv")
    p = treesens_here(
        "report", out / "m.joblib", "--trust-pickle", "--data", out / "rows.csv",
        "--features", "x2", "--protected", "x2", "--budget", "60", "--out", out / "r.html",
        "--certificates", out / "certs", "--no-progress",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return p, (out / "r.html").read_text()


def test_the_report_lists_a_certificate_asked_for_and_not_written(pickled_report):
    p, _ = pickled_report
    assert (
        "not answered: The insensitive answer of x2, proved by the box search, has no "
        "verified certificate: a scikit-learn model is certified from a .skops file."
    ) in p.stderr.splitlines()


def test_the_report_page_says_who_proved_a_claim_and_why_it_was_not_checked(pickled_report):
    _, page = pickled_report
    assert (
        "Proved by the box search, not independently checked: a scikit-learn model is "
        "certified from a .skops file."
    ) in page


def test_a_regressors_certified_bound_reads_as_no_change_on_the_verdict_line():
    from treesens.views.result_view import proof_label

    proof = Proof("box search", checked=True, certificate="c.json", bound=2.5)
    assert proof_label(proof, "change") == "certified: no change of 2.5 or more (c.json, verified)"
    assert proof_label(proof) == "certified: no pair reaches a gap of 2.5 (c.json, verified)"
    ratio = "certified: no pair reaches a probability ratio of 2.5 (c.json, verified)"
    assert proof_label(proof, "ratio") == ratio
