"""``treesens verify`` on a file JSON cannot turn into a certificate: one line naming
the file, exit code 2, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.tests.conftest import treesens_here

REPO = Path(__file__).resolve().parents[2]

UNREADABLE = {
    "an integer of 5,000 digits": '{"version": 1' + "0" * 5000 + "}",
    "arrays nested 100,000 deep": "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("text", UNREADABLE.values(), ids=list(UNREADABLE))
def test_a_certificate_json_cannot_read_is_one_line_and_exit_2(tmp_path, text):
    bad = tmp_path / "c.json"
    bad.write_text(text)
    p = treesens_here("verify", bad)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a readable certificate" in lines[0], p.stderr


def _verify_version(tmp_path, version: str):
    cert = tmp_path / "c.json"
    cert.write_text('{"format": "treesens-certificate", "version": ' + version + "}")
    p = treesens_here("verify", cert)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.mark.parametrize("version", ["4.0", '"4"', "true", "null", "[" + "4, " * 30 + "4]"])
def test_a_certificate_version_that_is_no_integer_is_said_to_be_one(tmp_path, version):
    line = _verify_version(tmp_path, version)
    assert "a version is an integer (this checker reads 1, 2, 3, 4)" in line, line
    assert len(line) < 200, line


def test_a_certificate_version_this_checker_does_not_read_is_said_with_those_it_reads(tmp_path):
    line = _verify_version(tmp_path, "5")
    assert line.endswith("c.json: certificate version 5: this checker reads 1, 2, 3, 4"), line


def test_an_empty_certificate_file_is_said_to_be_empty(tmp_path):
    empty = tmp_path / "c.json"
    empty.write_text("\n")
    p = treesens_here("verify", empty)
    assert p.returncode == 2
    assert p.stderr.strip().endswith("c.json: the file is empty, not a certificate"), p.stderr


def test_a_certificate_that_is_not_there_is_said_to_be_not_found(tmp_path):
    p = treesens_here("verify", tmp_path / "nosuch.json")
    assert p.returncode == 2
    assert p.stderr.strip().endswith("nosuch.json: certificate file not found"), p.stderr


def test_a_model_given_to_verify_is_said_to_be_no_certificate_and_how_one_is_written():
    p = treesens_here("verify", REPO / "examples" / "breast_cancer_xgb.json")
    assert p.returncode == 2
    assert p.stderr.strip().endswith(
        "breast_cancer_xgb.json: not a treesens certificate (no 'format', where a "
        "certificate's is 'treesens-certificate': treesens check ... --certificate FILE "
        "writes one)"
    ), p.stderr


@pytest.mark.parametrize("base_score", [1.0, 0.0, 1.5, float("inf")])
def test_a_dump_certificate_stating_a_base_score_that_is_no_probability_is_invalid(
    tmp_path, base_score
):
    """A binary dump's base score is a probability (its logit starts the margin): any
    other is one line saying so, not a division by zero or a math domain error."""
    import json

    from treesens.verify import verify_file

    out = tmp_path / "two.json"
    model = REPO / "examples" / "two_trees_dump.json"
    p = treesens_here("check", model, "--vary", "f1", "--margin-gap", "0.75", "--certificate", out)
    assert p.returncode == 0, p.stderr
    doc = json.loads(out.read_text())
    doc["model"]["base_score"] = base_score
    out.write_text(json.dumps(doc))
    verdict = verify_file(out)
    assert not verdict.valid and "no probability" in verdict.message, verdict.message


def _two_trees_certificate(tmp_path) -> Path:
    out = tmp_path / "two.json"
    model = REPO / "examples" / "two_trees_dump.json"
    p = treesens_here("check", model, "--vary", "f1", "--margin-gap", "0.75", "--certificate", out)
    assert p.returncode == 0, p.stderr
    return out


def _proof(doc):
    return doc["parts"][0]["proof"]


MISSHAPEN = {
    "the model a list": (lambda d: d.update(model=[1]), "'model'"),
    "the question a list": (lambda d: d.update(question=[]), "'question'"),
    "the columns null": (lambda d: d.update(columns=None), "'columns'"),
    "the parts an object": (lambda d: d.update(parts={}), "'parts'"),
    "a part a list": (lambda d: d.update(parts=[[]]), "'parts'"),
    "the proof a string": (lambda d: d["parts"][0].update(proof="x"), "'proof'"),
    "a step a number": (lambda d: _proof(d).__setitem__(0, 5), "step 0"),
    "a step empty": (lambda d: _proof(d).insert(0, []), "step 0"),
    "a prune step without its bound": (
        lambda d: _proof(d).__setitem__(1, ["prune", "x1"]),
        "step 1",
    ),
    # read as version 1 (which stated none), it was said to have no field 'proof'
    "the version removed": (lambda d: d.pop("version"), "no field 'version'"),
    # these were Python's words: 'zip() argument 2 is shorter than argument 1', "'g' is not
    # in list", "float() argument must be a string or a real number, not 'NoneType'"
    "a domain removed": (lambda d: d["question"]["domain"].pop(), "question.domain"),
    "a feature removed": (lambda d: d["question"]["features"].pop(), "question.features"),
    "a varied feature unknown": (lambda d: d["question"]["vary"].__setitem__(0, "g"), "'g'"),
    "a bound null": (lambda d: d["question"]["domain"][1].update(lb=None), "lb"),
    # a number turned into a string was read as the number, and the proof found valid
    "a bound a string": (lambda d: d["question"]["domain"][1].update(lb="0"), 'its lb is "0"'),
    "the gap a string": (lambda d: d["question"]["claim"].update(gap="0.75"), 'gap is "0.75"'),
    # the checker's own words, which were said after 'ValueError: '
    "integer a string": (lambda d: d["question"]["domain"][1].update(integer="no"), "integer"),
    # read by float() and int(), and found VALID
    "the base score a string": (lambda d: d["model"].update(base_score="0.5"), "model.base_score"),
    "the classes a string": (lambda d: d["model"].update(num_class="1"), "model.num_class"),
    "a column's feature a string": (lambda d: d["columns"][1].__setitem__(0, "1"), "columns[1]"),
    "a prune bound a string": (
        lambda d: _proof(d)[1].__setitem__(2, str(_proof(d)[1][2])),
        "step 1: a prune step's bound is a number",
    ),
}


@pytest.mark.parametrize("change, names", MISSHAPEN.values(), ids=list(MISSHAPEN))
def test_a_misshapen_certificate_is_invalid_in_one_line_naming_the_place(tmp_path, change, names):
    import json

    from treesens.verify import verify_file

    out = _two_trees_certificate(tmp_path)
    doc = json.loads(out.read_text())
    change(doc)
    out.write_text(json.dumps(doc))
    verdict = verify_file(out)
    assert not verdict.valid and names in verdict.message, verdict.message
    assert "Error" not in verdict.message, verdict.message


def test_a_claim_that_is_no_object_is_invalid_naming_it(tmp_path):
    import json

    from treesens.verify import verify_file

    out = _two_trees_certificate(tmp_path)
    doc = json.loads(out.read_text())
    doc["question"]["claim"] = None
    out.write_text(json.dumps(doc))
    verdict = verify_file(out)
    assert not verdict.valid and "question.claim is not an object" in verdict.message


def test_cli_verify_names_the_model_file_the_proof_was_checked_against(tmp_path):
    """A certificate rewritten to name another model (its file and hash) is checked
    against that model: the verdict is about it, so verify says which file it read."""
    out = _two_trees_certificate(tmp_path)
    p = treesens_here("verify", out)
    assert p.returncode == 0 and p.stdout.startswith("VALID: "), p.stdout
    assert "two_trees_dump.json" in p.stderr and "sha256" in p.stderr, p.stderr


def test_a_file_that_is_not_json_is_named_as_not_a_certificate_by_its_start(tmp_path):
    page = tmp_path / "report.html"
    page.write_text("<!DOCTYPE html>\n<html><body>a report</body></html>\n")
    p = treesens_here("verify", page)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == (
        f"treesens: error: {page}: not a certificate: not JSON (it starts '<!DOCTYPE html>'; "
        "treesens check ... --certificate FILE writes one)"
    )


def test_a_certificate_cut_short_is_said_to_be_cut_short(tmp_path):
    from treesens.verify.check import CertificateError, verify_file

    cut = tmp_path / "c.json"
    cut.write_text('{"format": "treesens-certificate", "version": 3, "parts": [{"proof": [')
    with pytest.raises(CertificateError, match="the JSON ends before it is complete .* cut short"):
        verify_file(cut)


def test_a_certificate_saved_with_a_byte_order_mark_is_read(tmp_path):
    """An editor that saves UTF-8 with a BOM (Windows Notepad) made it 'not JSON'."""
    from treesens.verify import verify_file

    out = _two_trees_certificate(tmp_path)
    out.write_text("\ufeff" + out.read_text(), encoding="utf-8")
    verdict = verify_file(out)
    assert verdict.valid, verdict.message
