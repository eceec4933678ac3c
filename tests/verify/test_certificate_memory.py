"""A certificate's memory is counted against the memory limit (compiler/memory_estimate.py
``certificate_mb``): a proof whose rebuild, file and check would pass it is refused
before it is rebuilt, in one line naming its boxes, the memory it needs and the limit,
and the answer stands."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.compiler import memory_estimate
from treesens.interfaces.cli.main import main
from treesens.questions import certify

MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
MAX_GAP_FEATURE = "mean_texture"  # its max gap's search records a few hundred boxes
INSENSITIVE_FEATURE, GAP = "worst_symmetry", 0.1  # proven in a few dozen boxes
LIMIT_MB = 2000


@pytest.fixture
def huge_boxes(monkeypatch):
    """Each box of a proof needs a gigabyte: any proof of more than one passes the limit."""
    monkeypatch.setattr(memory_estimate, "CERTIFICATE_BYTES_PER_BOX", 1 << 30)


def _max_gap(tmp_path, capsys) -> tuple[int, str, Path]:
    out = tmp_path / "mg.json"
    argv = ["check", str(MODEL), "--vary", MAX_GAP_FEATURE, "--max-gap"]
    code = main([*argv, "--certificate", str(out), "--memory-mb", str(LIMIT_MB)])
    return code, capsys.readouterr().err, out


def test_a_max_gap_certificate_past_the_memory_limit_is_refused_naming_its_size(
    huge_boxes, tmp_path, capsys
):
    code, err, out = _max_gap(tmp_path, capsys)
    assert code == 0 and not out.exists()
    line = next(x for x in err.splitlines() if x.startswith("no certificate"))
    assert line.startswith("no certificate: its proof from ")
    assert "boxes would need about " in line and "memory limit of 2,000 MB" in line
    assert "--memory-mb" in line


def test_a_max_gap_certificate_past_the_memory_limit_is_not_announced_as_rebuilt(
    huge_boxes, tmp_path, capsys
):
    _code, err, _out = _max_gap(tmp_path, capsys)
    assert "certificate: rebuilding its proof" not in err


def test_a_max_gap_certificate_past_the_memory_limit_is_not_searched_for_again(
    huge_boxes, tmp_path, capsys, monkeypatch
):
    searched = []
    monkeypatch.setattr(certify, "certify", lambda *a, **k: searched.append(1))
    _max_gap(tmp_path, capsys)
    assert not searched


def test_an_answer_s_certificate_past_the_memory_limit_is_refused_and_the_answer_stands(
    huge_boxes, tmp_path
):
    out = tmp_path / "c.json"
    r = treesens.check(
        str(MODEL), vary=[INSENSITIVE_FEATURE], gap=GAP, certificate=out, memory_mb=LIMIT_MB
    )
    assert r.status == "insensitive" and not out.exists()
    assert not r.proof.checked and "memory limit" in r.proof.why_not


def test_a_certificate_within_the_memory_limit_is_written(tmp_path):
    out = tmp_path / "c.json"
    r = treesens.check(
        str(MODEL), vary=[INSENSITIVE_FEATURE], gap=GAP, certificate=out, memory_mb=LIMIT_MB
    )
    assert r.proof.checked and out.exists()


def test_the_certificate_estimate_covers_what_its_proofs_were_measured_to_add():
    from treesens.compiler.memory_estimate import certificate_mb

    # adult xgb_t1000_d8 sex (bench/reports/memory-estimate.md, "A certificate's proof"):
    # its check's 17,987 boxes at gap 0.499 added 26 MB, its max gap's 430,682 boxes 94 MB
    assert certificate_mb(17_987) >= 26.0
    assert certificate_mb(430_682) >= 94.0


def test_the_certificate_estimate_covers_its_growth_from_its_start_with_a_margin():
    from treesens.compiler.memory_estimate import certificate_mb

    # resident memory from the certificate's start to its peak (VmHWM reset there;
    # compiler/memory_estimate.py): adult xgb_t1000_d8 sex at 0.4995, 53,210 leaves and
    # 6,581 boxes, 147 MB; breast_cancer_deep_xgb mean_texture at 0.45, 389 leaves and
    # 3 boxes, 118 MB
    assert certificate_mb(6_581, 53_210) >= 1.35 * 147
    assert certificate_mb(3, 389) >= 1.35 * 118


def test_a_certificate_counts_the_memory_the_process_holds_past_the_model_s_estimate(
    monkeypatch,
):
    from treesens.questions import memory

    ens = treesens.load_model(str(MODEL))
    assert memory.certificate_refusal(ens, 10, 0, LIMIT_MB) is None
    monkeypatch.setattr(memory, "resident_mb", lambda: LIMIT_MB - 100.0)  # freed, not returned
    why = memory.certificate_refusal(ens, 10, 0, LIMIT_MB)
    assert why is not None and "memory limit of 2,000 MB" in why
