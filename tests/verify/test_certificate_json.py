"""A certificate's JSON written piece by piece (questions/certificate_json.py): the bytes
``json.dumps`` gives of the whole document, without the document held as one string."""

from __future__ import annotations

import json

import pytest

from treesens.questions import certificate_json
from treesens.questions.certificate_json import write_json


def _doc(proof) -> dict:
    return {
        "format": "treesens-certificate",
        "question": {"vary": ["sex"], "claim": {"kind": "gap", "gap": 0.496}},
        "parts": [{"classes": [0, 1], "proof": proof}, {"proof": []}],
        "maps": None,
    }


STEPS = [["split", 3, 0.25], ["prune", "sum", -1.5e-07], ["prune", "x1", 2.0]] * 7


def test_a_document_written_piece_by_piece_is_json_dumps_s_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(certificate_json, "STEPS_PER_PIECE", 4)  # steps over several pieces
    out = tmp_path / "c.json"
    write_json(out, _doc(iter(STEPS)))
    assert out.read_bytes() == (json.dumps(_doc(STEPS), allow_nan=False) + "\n").encode()


def test_a_proof_with_a_nan_leaves_no_half_written_file(tmp_path):
    out = tmp_path / "c.json"
    with pytest.raises(ValueError):
        write_json(out, _doc(iter([["prune", "sum", float("nan")]])))
    assert not out.exists()
