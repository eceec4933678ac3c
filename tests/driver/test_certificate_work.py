"""A certificate asked for under a work budget (``work=``, ``--work``, ``.sens`` ``work``;
answers/work.py): the rebuild of the answer's proof from the compiled search's record is
not refused on its estimate, timed on a sample of the boxes and so the machine's load,
but run, the certificate's budget only the net midway: the same query writes the same
certificate on an idle runner and a busy one (docs/certificates.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.answers.result import INSENSITIVE
from treesens.search import compiled_check, compiled_proof, gap_kernel

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")
BUSY = 1e6  # the estimate of a rebuild timed beside busy loops, against an idle one's


@pytest.fixture
def busy_estimate(monkeypatch):
    """The compiled search from the check's first box, its kernels ready, and every
    rebuild's estimate ``BUSY`` times what it was timed at (on 4 boxes of the record)."""
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)
    monkeypatch.setattr(compiled_proof, "REBUILD_SAMPLE", 4)
    gap_kernel.prepare(None, compiled_proof.ready_rebuild)
    timed = compiled_proof.rebuild_estimate

    def busy(boxes, ft):
        seconds = timed(boxes, ft)
        return None if seconds is None else max(seconds, 1e-3) * BUSY

    monkeypatch.setattr(compiled_proof, "rebuild_estimate", busy)


def _check(out: Path, **work):
    return treesens.check(
        MODEL,
        vary=["worst_symmetry"],
        gap=0.1,
        timeout=60,
        certificate=out,
        certify_budget=60,
        **work,
    )


def test_a_certificate_under_work_is_written_however_long_its_rebuild_s_estimate(
    busy_estimate, tmp_path
):
    out = tmp_path / "c.json"
    r = _check(out, work=10**6)
    assert r.status == INSENSITIVE and r.proof.checked and out.exists()


def test_a_certificate_with_no_work_budget_is_refused_on_its_rebuild_s_estimate(
    busy_estimate, tmp_path
):
    """The time limit decides: the estimate, the load's, past the budget refuses it."""
    out = tmp_path / "c.json"
    r = _check(out)
    assert r.status == INSENSITIVE and not out.exists()
    assert "would take about" in r.proof.why_not
