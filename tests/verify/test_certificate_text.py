"""A certificate's JSON read with its proofs' steps as arrays (verify/certificate_text.py):
the document ``json.loads`` gives, step by step, and the same refusal of what is not
JSON."""

from __future__ import annotations

import json

import pytest

from treesens.tests.conftest import treesens_here
from treesens.tests.verify.tampering import worst_symmetry_certificate
from treesens.verify.certificate_text import Steps, read_certificate


def _plain(value):
    """A read document with its ``Steps`` as lists: what ``json.loads`` gives."""
    if isinstance(value, Steps):
        return [_plain(step) for step in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _doc(proof) -> dict:
    return {"format": "treesens-certificate", "version": 3, "parts": [{"proof": proof}]}


ODD_STEPS = [
    ["split", 0, 1],  # a whole number: an int, kept as read
    ["split", 2, "nan"],
    ["split", 1, {"codes": [0, 2]}],
    ["replay", [1.0, "inf"], [0.5, "-inf"]],
    ["prune", 3, 0.5],  # a row named by no string
    ["split", True, 0.5],
    ["split", 2**40, 0.5],  # a column past int32's
    ["prune", "sum", -0.0],
    ["split"],
    "step",
]


def test_a_written_certificate_reads_as_json_loads_reads_it(tmp_path):
    text = worst_symmetry_certificate(tmp_path).read_text()
    assert _plain(read_certificate(text)) == json.loads(text)


def test_a_written_certificate_s_steps_are_all_held_in_arrays(tmp_path):
    doc = read_certificate(worst_symmetry_certificate(tmp_path).read_text())
    proof = doc["parts"][0]["proof"]
    assert isinstance(proof, Steps) and len(proof) > 0 and not proof.others


def test_steps_of_other_shapes_are_given_back_as_read():
    text = json.dumps(_doc(ODD_STEPS))
    proof = read_certificate(text)["parts"][0]["proof"]
    assert [proof[i] for i in range(len(proof))] == ODD_STEPS
    assert list(proof) == ODD_STEPS


def test_a_step_given_back_keeps_its_number_s_type_and_sign():
    proof = read_certificate(json.dumps(_doc([["split", 0, 1], ["prune", "sum", -0.0]])))
    one, zero = (proof["parts"][0]["proof"][i][2] for i in (0, 1))
    assert type(one) is int and str(zero) == "-0.0"


def test_a_proof_read_as_steps_names_the_kinds_it_holds():
    proof = read_certificate(json.dumps(_doc(ODD_STEPS)))["parts"][0]["proof"]
    assert proof.kinds_present() == {"split", "replay", "prune"}


def test_a_version_1_proof_and_json_s_spacing_read_as_json_loads_reads_them():
    doc = {"format": "treesens-certificate", "proof": [["split", 0, 0.5], ["prune", "x1", 1.5]]}
    text = json.dumps(doc, indent=2)
    read = read_certificate(text)
    assert isinstance(read["proof"], Steps) and _plain(read) == doc


@pytest.mark.parametrize(
    "text",
    [
        '{"parts": [{"proof": [["split", 0, 0.5], ["prune", "sum"',  # cut off
        '{"parts": [{"proof": [["split", 0, 0.5] ["prune", "sum", 1.0]]}]}',
        '{"parts": [{"proof": [["split", 0, 0.5],]}]}',
        '{"parts": []} {}',
        '{"parts" []}',
        "{'parts': []}",
    ],
    ids=["cut off", "no comma", "trailing comma", "extra data", "no colon", "single quotes"],
)
def test_text_json_loads_refuses_is_refused_as_json_loads_refuses_it(text):
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        read_certificate(text)


def test_a_certificate_cut_off_in_its_proof_is_one_line_and_exit_2(tmp_path):
    text = worst_symmetry_certificate(tmp_path).read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index('"proof"') + 40])
    p = treesens_here("verify", cut)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "cut.json: not a readable certificate" in lines[0], p.stderr
