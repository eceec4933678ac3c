"""A certificate asked for with the answer is written from the proof the answer's own box
search recorded (search/proof_tree.py, questions/certify_recorded.py): no second search,
the same proof a second search writes, checked by the independent checker as any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import treesens
from treesens.questions.certify import certify, certify_answer
from treesens.questions.query_build import make_query
from treesens.search import box_search
from treesens.search.proof_tree import ProofTree, recording_proofs
from treesens.tests.conftest import treesens_here
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "examples" / "breast_cancer_xgb.json"
# insensitive: the box search proves it in a few dozen boxes
FEATURE, GAP = "worst_symmetry", 0.1


@pytest.fixture(scope="module")
def ens():
    return treesens.load_model(MODEL)


def _answer(ens, record: bool = True, **options):
    with recording_proofs(record):
        res = treesens.check(ens, vary=[FEATURE], gap=GAP, timeout=60, **options)
    assert res.status == "insensitive", res.message
    return res


def _box_searches(monkeypatch) -> list:
    """Every box search run from now on (its turns), counted."""
    runs: list = []
    run = box_search.BoxSearch.run

    def counted(self, deadline):
        runs.append(self)
        return run(self, deadline)

    monkeypatch.setattr(box_search.BoxSearch, "run", counted)
    return runs


def test_an_answer_the_box_search_proved_keeps_its_proof_when_recording(ens):
    res = _answer(ens)
    assert res.stats["proved_by"] == "box search" and res.box_proof is not None
    assert "box_proof" not in res.to_dict()


def test_an_answer_keeps_no_proof_when_no_certificate_is_asked_for(ens):
    assert _answer(ens, record=False).box_proof is None


def test_the_certificate_from_the_answers_proof_verifies(ens, tmp_path):
    out = tmp_path / "c.json"
    done = certify_answer(ens, make_query([FEATURE], gap=GAP), _answer(ens), out, MODEL, 60)
    assert done.verified, done.message
    assert "the answer's own proof" in done.message
    assert verify_file(out).valid


def test_the_certificate_from_the_answers_proof_needs_no_second_search(ens, tmp_path, monkeypatch):
    res = _answer(ens)
    runs = _box_searches(monkeypatch)
    done = certify_answer(ens, make_query([FEATURE], gap=GAP), res, tmp_path / "c.json", MODEL, 60)
    assert done.verified and runs == []


def test_an_answer_without_a_recorded_proof_is_certified_by_a_second_search(
    ens, tmp_path, monkeypatch
):
    res = _answer(ens, record=False)
    runs = _box_searches(monkeypatch)
    done = certify_answer(ens, make_query([FEATURE], gap=GAP), res, tmp_path / "c.json", MODEL, 60)
    assert done.verified and len(runs) == 1


def test_a_solver_proved_answer_is_certified_by_the_box_search_after_it(ens, tmp_path):
    res = _answer(ens, box_search=False)
    assert res.box_proof is None
    done = certify_answer(ens, make_query([FEATURE], gap=GAP), res, tmp_path / "c.json", MODEL, 60)
    assert done.verified and "the answer's own proof" not in done.message


def test_the_answers_proof_is_the_proof_a_second_search_writes_in_any_search_order(
    ens, tmp_path, monkeypatch
):
    # the answer's search enters the child with more room first from its first box (the
    # order a recorded list cannot follow); the certificate is still read in preorder
    monkeypatch.setattr(box_search, "PROBE_BOXES", 0)
    q = make_query([FEATURE], gap=GAP)
    recorded, searched = tmp_path / "recorded.json", tmp_path / "searched.json"
    assert certify_answer(ens, q, _answer(ens), recorded, MODEL, 60).verified
    assert certify(ens, q, searched, MODEL, 60).verified
    one, other = json.loads(recorded.read_text()), json.loads(searched.read_text())
    assert one["parts"] == other["parts"] and len(one["parts"][0]["proof"]) > 3


def test_a_recorded_certificate_with_a_box_removed_is_rejected(ens, tmp_path):
    out = tmp_path / "c.json"
    assert certify_answer(
        ens, make_query([FEATURE], gap=GAP), _answer(ens), out, MODEL, 60
    ).verified
    assert not verify_file(tampered(out, tmp_path, drop_last_box)).valid


def test_a_recorded_certificate_with_a_bound_lowered_is_rejected(ens, tmp_path):
    out = tmp_path / "c.json"
    assert certify_answer(
        ens, make_query([FEATURE], gap=GAP), _answer(ens), out, MODEL, 60
    ).verified

    def lower_a_bound(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
        step[2] -= 1.0

    assert not verify_file(tampered(out, tmp_path, lower_a_bound)).valid


def test_cli_check_writes_the_certificate_from_the_answers_proof(tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here("check", MODEL, "--vary", FEATURE, "--gap", str(GAP), "--certificate", out)
    assert p.returncode == 0 and "INSENSITIVE" in p.stdout, p.stderr
    assert "the answer's own proof" in p.stderr and "verified" in p.stderr
    assert verify_file(out).valid


def test_a_proof_tree_reads_in_preorder_whatever_order_it_was_recorded_in():
    tree = ProofTree()
    yes, no = tree.split(ProofTree.ROOT, 0, 3)
    tree.leaf(no, ("prune", 0, -1.0))  # the "no" box visited first
    yes_yes, yes_no = tree.split(yes, 1, 2)
    tree.leaf(yes_no, ("prune", 1, -2.0))
    tree.leaf(yes_yes, ("prune", 0, -3.0))
    assert tree.preorder() == [
        ("split", 0, 3),
        ("split", 1, 2),
        ("prune", 0, -3.0),
        ("prune", 1, -2.0),
        ("prune", 0, -1.0),
    ]


def test_a_proof_tree_with_a_box_not_settled_reads_as_none():
    tree = ProofTree()
    _, no = tree.split(ProofTree.ROOT, 0, 3)
    tree.leaf(no, ("prune", 0, -1.0))
    assert tree.preorder() is None


def test_a_recording_past_its_limit_is_dropped_and_the_answer_certified_by_a_search(
    ens, tmp_path, monkeypatch
):
    from treesens.search import proof_tree

    monkeypatch.setattr(proof_tree, "MAX_RECORDED", 3)
    res = _answer(ens)
    assert res.box_proof is None
    done = certify_answer(ens, make_query([FEATURE], gap=GAP), res, tmp_path / "c.json", MODEL, 60)
    assert done.verified and "the answer's own proof" not in done.message


def test_a_sweep_certifies_its_answers_from_their_own_proofs(ens, tmp_path, monkeypatch):
    from treesens.questions import certify as certify_module
    from treesens.questions.campaign import Campaign, sweep_campaign
    from treesens.questions.sweep_certs import SweepCertificates

    def second_search(*_args, **_kwargs):
        raise AssertionError("a second search")

    monkeypatch.setattr(certify_module, "certify", second_search)

    def make(vary, name=""):
        return make_query(vary, gap=GAP, timeout=60, name=name)

    subsets = [(FEATURE,)]
    certs = SweepCertificates(ens, make, subsets, tmp_path / "certs", MODEL)
    log = tmp_path / "s.jsonl"
    sweep_campaign(ens, subsets, make, Campaign(out=log), certificates=certs)
    assert json.loads(log.read_text())["proof"]["checked"] is True
