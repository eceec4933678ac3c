"""A max gap's upper bound certified from the boxes of its own search
(questions/certify_tiling.py): the boxes it dropped, resolved and left open tile the pair
space under its upper bound, so the check at the certified gap U' is proven by them with
no second search; where they give no proof, the search at U' certifies it as before."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.query import Gap, GapKind, Query
from treesens.interfaces.cli.main import main
from treesens.questions import certify, certify_tiling
from treesens.search import gap_kernel
from treesens.search.proof_tree import RecordedTiling, recording_proofs
from treesens.verify import verify_file

MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
FEATURE = "mean_texture"  # max gap about 0.433: the search drops, resolves and splits


def _no_second_search(*args, **kwargs):
    raise AssertionError("a search at U' where the max gap's own boxes prove it")


def test_a_max_gap_bound_is_certified_from_its_own_search_without_a_second(tmp_path, monkeypatch):
    monkeypatch.setattr(certify, "certify", _no_second_search)
    out = tmp_path / "mg.json"
    r = treesens.max_gap(str(MODEL), vary=[FEATURE], certificate=out)
    assert r.proof.checked and r.proof.certificate == str(out)
    assert verify_file(out).valid


def test_the_certificate_says_it_came_from_the_max_gap_s_own_search(tmp_path, capsys):
    out = tmp_path / "mg.json"
    argv = ["check", str(MODEL), "--vary", FEATURE, "--max-gap", "--certificate", str(out)]
    main(argv)
    err = capsys.readouterr().err
    assert "certificate: rebuilding its proof from the " in err
    assert "the max gap's own search" in err


def test_a_max_gap_asked_for_no_certificate_records_no_boxes():
    r = treesens.max_gap(str(MODEL), vary=[FEATURE])
    assert r.box_proof is None


def _tiling():
    """The max gap's query, its U' check, and the boxes its search recorded."""
    ens = treesens.load_model(str(MODEL))
    with recording_proofs():
        r = treesens.max_gap(ens, vary=[FEATURE])
    assert isinstance(r.box_proof, RecordedTiling)
    bound = certify.certified_bound(r.max_gap["upper"])
    at = Query(vary=(FEATURE,), gap=Gap(bound, GapKind.PROB))
    return ens, at, r.box_proof


@pytest.fixture(scope="module")
def tiling():
    return _tiling()


def test_the_recorded_boxes_prove_the_check_at_the_certified_gap(tiling, tmp_path):
    ens, at, rec = tiling
    done = certify_tiling.certify_tiling(ens, at, [rec], tmp_path / "c.json", MODEL, 1e12)
    assert done is not None and done.verified


def test_a_tiling_with_a_box_missing_gives_no_proof(tiling, tmp_path):
    ens, at, rec = tiling
    holed = RecordedTiling(rec.enc, rec.tables, np.asarray(rec.boxes)[1:])
    why = certify_tiling.certify_tiling(ens, at, [holed], tmp_path / "c.json", MODEL, 1e12)
    assert why == f"the max gap's {len(holed.boxes):,} boxes do not rebuild a proof at U'"


def test_a_tiling_under_a_bound_below_the_max_gap_gives_no_proof(tiling, tmp_path):
    ens, at, rec = tiling
    low = at.with_(gap=Gap(0.3, GapKind.PROB))  # pairs reach 0.43: some box holds one
    why = certify_tiling.certify_tiling(ens, low, [rec], tmp_path / "c.json", MODEL, 1e12)
    assert why.endswith("boxes do not rebuild a proof at U'")


def test_tables_of_another_feature_are_not_the_same_pair_space(tiling):
    ens, at, rec = tiling
    other = _tables(ens, at.with_(vary=("worst_symmetry",)))
    assert not certify_tiling.same_pair_space(rec.tables, other)
    assert certify_tiling.same_pair_space(rec.tables, _tables(ens, at))


def _tables(ens, q):
    from treesens.search.pair_boxes import pair_tables
    from treesens.search.pair_scope import class_pair_encodings, pair_encoding

    return pair_tables(class_pair_encodings(pair_encoding(ens, q))[0])


def test_a_tiling_not_rebuilt_by_its_deadline_says_so(tiling, tmp_path):
    ens, at, rec = tiling
    late = time.time() - 1
    why = certify_tiling.certify_tiling(ens, at, [rec], tmp_path / "c.json", MODEL, late)
    assert why == f"the rebuild from {len(rec.boxes):,} boxes did not end within its budget of 0s"


@pytest.fixture
def rebuild_past_its_deadline(monkeypatch):
    """Every tiling's rebuild runs as if its deadline had passed as it started."""
    real = certify_tiling.rebuilt_within

    def late(boxes, ft, tab, replays, capped, deadline, **kw):
        return real(boxes, ft, tab, replays, capped, time.time() - 1, -np.inf, **kw)

    monkeypatch.setattr(certify_tiling, "rebuilt_within", late)


def test_a_rebuild_past_its_deadline_says_why_before_the_search_at_u_prime(
    rebuild_past_its_deadline, tmp_path, capsys
):
    out = tmp_path / "mg.json"
    argv = ["check", str(MODEL), "--vary", FEATURE, "--max-gap", "--certificate", str(out)]
    main(argv)
    err = capsys.readouterr().err.splitlines()
    lines = [ln for ln in err if ln.startswith("certificate:") and "searching" in ln]
    assert len(lines) == 1 and lines[0].startswith("certificate: the rebuild from ")
    assert "boxes did not end within its budget of " in lines[0]
    assert "; searching again at U' = 0." in lines[0]
    # its seconds as the rebuild's line says them, three digits: not 'at most 58.8617s'
    assert re.search(r"for its proof \(at most \d+(\.\d)?s\)\.\.\.$", lines[0]), lines[0]
    assert verify_file(out).valid  # the search at U' certified it


def test_a_max_gap_left_uncertified_after_its_rebuild_s_deadline_says_why(
    rebuild_past_its_deadline, tmp_path, monkeypatch
):
    real = certify.certify
    no_time = lambda ens, q, path, model, _budget, **kw: real(ens, q, path, model, 0.0, **kw)  # noqa: E731
    monkeypatch.setattr(certify, "certify", no_time)
    out = tmp_path / "mg.json"
    r = treesens.max_gap(str(MODEL), vary=[FEATURE], certificate=out, certify_budget=30)
    assert not r.proof.checked
    assert r.proof.why_not.startswith("the rebuild from ")
    assert r.proof.why_not.endswith(" boxes did not end within its budget of 20s")  # 2/3 of 30


def test_the_stats_say_how_many_boxes_the_max_gap_recorded_and_their_rebuild(tmp_path):
    r = treesens.max_gap(str(MODEL), vary=[FEATURE], certificate=tmp_path / "mg.json")
    stats = r.stats["certificate"]
    assert r.proof.checked and stats["recorded"] > 100 and stats["rebuild_time"] >= 0.0


def test_a_record_past_its_bound_leaves_the_certificate_to_the_search_at_u_prime(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(gap_kernel, "TILING_BYTES", 0)
    searched = []
    real = certify.certify
    monkeypatch.setattr(certify, "certify", lambda *a, **k: searched.append(1) or real(*a, **k))
    out = tmp_path / "mg.json"
    r = treesens.max_gap(str(MODEL), vary=[FEATURE], certificate=out)
    assert searched and r.proof.checked and verify_file(out).valid


def test_a_box_of_the_tiling_s_tree_already_under_u_prime_ends_its_subtree(tiling, tmp_path):
    ens, at, rec = tiling
    out = tmp_path / "c.json"
    done = certify_tiling.certify_tiling(ens, at, [rec], out, MODEL, 1e12)
    assert done.verified and done.boxes < len(rec.boxes)
    assert verify_file(out).boxes == done.boxes


def test_a_proven_max_gap_s_certificate_is_rebuilt_from_the_boxes_its_search_recorded(tmp_path):
    ens, at, rec = _tiling()
    done = certify_tiling.certify_tiling(ens, at, [rec], tmp_path / "c.json", MODEL, 1e12)
    assert done.verified and done.boxes <= len(rec.boxes)


def test_a_sweep_s_max_gap_certificates_come_from_their_own_searches(tmp_path, monkeypatch):
    monkeypatch.setattr(certify, "certify", _no_second_search)
    certs = tmp_path / "certs"
    argv = ["sweep", str(MODEL), "--max-gap", "--features", FEATURE, "--certificates", str(certs)]
    assert main(argv) == 0
    assert verify_file(certs / f"{FEATURE}.max-gap.json").valid


def test_a_max_gap_certificate_of_a_feature_no_tree_splits_on_needs_no_compiled_code(
    tmp_path, monkeypatch
):
    called = []
    for owner, name in ((gap_kernel, "prepare"), (certify_tiling, "rebuilt_within")):
        real = getattr(owner, name)
        spy = lambda *a, _r=real, _n=name, **k: called.append(_n) or _r(*a, **k)  # noqa: E731
        monkeypatch.setattr(owner, name, spy)
    out = tmp_path / "mg.json"
    r = treesens.max_gap(str(MODEL), vary=["mean_radius"], certificate=out)  # no tree reads it
    assert r.proof.checked and called == []  # one box, the whole space: one alike step
    assert verify_file(out).boxes == 1
    assert json.loads(out.read_text())["parts"][0]["proof"][0][0] == "alike"


def test_a_certificate_of_one_box_says_one_box(tmp_path, capsys):
    out = tmp_path / "mg.json"
    argv = ["check", str(MODEL), "--vary", "mean_radius", "--max-gap", "--certificate", str(out)]
    main(argv)
    err = capsys.readouterr().err
    assert "no pair reaches a gap of 1e-06 (1 box," in err


def test_the_search_after_a_rebuild_that_gave_up_gets_what_the_rebuild_left(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(certify.time, "time", lambda: clock[0])

    def rebuild_spends_30s(*_args, **_kwargs):
        clock[0] += 30.0
        return "the rebuild did not end within its budget"

    searched = []
    monkeypatch.setattr(certify, "_from_own_search", rebuild_spends_30s)
    monkeypatch.setattr(
        certify, "_search_at", lambda *a, **_k: searched.append(a[5]) or certify.refused("no")
    )
    res = treesens.Result(query="a", status="sensitive", backend="boxes", features=["a"], gap=0.3)
    res.max_gap = {"lower": 0.3, "upper": 0.31, "proven": True, "kind": "prob"}
    res.box_proof = RecordedTiling(None, None, np.zeros((1, 2)))
    certify._certify_max_gap(None, Query(vary=("a",)), res, "c.json", "m.json", 100.0)
    assert searched == [pytest.approx(70.0)]


def test_a_max_gap_certificate_s_rebuild_gets_two_thirds_of_its_budget():
    assert certify_tiling.rebuild_share(90.0) == pytest.approx(60.0)


def test_the_search_at_u_prime_keeps_the_rest_after_a_rebuild_past_its_share():
    assert certify_tiling.search_after_rebuild(90.0, 75.0) == pytest.approx(30.0)


def test_the_search_at_u_prime_gets_what_an_early_rebuild_left():
    assert certify_tiling.search_after_rebuild(90.0, 10.0) == pytest.approx(80.0)


def test_with_a_tiny_budget_the_search_at_u_prime_is_reached_with_the_rest(tmp_path, monkeypatch):
    def spends_its_share(boxes, ft, tab, replays, capped, deadline, **kw):
        time.sleep(max(deadline - time.time(), 0.0))  # a rebuild whose estimate was too low
        return None, "rebuilding its proof from 9 boxes ran past its deadline"

    monkeypatch.setattr(certify_tiling, "rebuilt_within", spends_its_share)
    searched = []
    monkeypatch.setattr(
        certify, "certify", lambda *a, **_k: searched.append(a[4]) or certify.refused("no")
    )
    out = tmp_path / "mg.json"
    treesens.max_gap(str(MODEL), vary=[FEATURE], certificate=out, certify_budget=0.003)
    assert searched == [pytest.approx(0.001)]  # the third its rebuild may not take


def test_the_rebuild_s_progress_line_says_its_share_of_the_budget(tmp_path, capsys):
    out = tmp_path / "mg.json"
    argv = ["check", str(MODEL), "--vary", FEATURE, "--max-gap", "--certificate", str(out)]
    main([*argv, "--certify-budget", "90"])
    err = capsys.readouterr().err
    assert "kept (at most 60s, 2/3 of its budget, the rest kept for a search at U')..." in err
