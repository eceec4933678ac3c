"""The Python API's ``certificate=`` keyword: check() and max_gap() write the proof and
check it with the independent checker, as the CLI's --certificate does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.verify import verify_file

MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
FEATURE = "worst_symmetry"  # insensitive at 0.1, max gap about 0.092


def test_check_with_a_certificate_writes_one_the_checker_accepts(tmp_path):
    out = tmp_path / "c.json"
    r = treesens.check(str(MODEL), vary=[FEATURE], gap=0.1, certificate=out)
    assert r.status == "insensitive"
    assert r.proof.checked and r.proof.certificate == str(out)
    assert verify_file(out).valid


def test_check_of_a_loaded_model_certifies_from_the_file_it_was_read_from(tmp_path):
    out = tmp_path / "c.json"
    ens = treesens.load_model(str(MODEL))
    r = treesens.check(ens, vary=[FEATURE], gap=0.1, certificate=out)
    assert r.proof.checked and verify_file(out).valid


def test_max_gap_with_a_certificate_certifies_its_upper_bound(tmp_path):
    out = tmp_path / "mg.json"
    r = treesens.max_gap(str(MODEL), vary=[FEATURE], certificate=out)
    assert r.proof.checked and r.proof.bound > r.max_gap["upper"]
    assert json.loads(out.read_text())["question"]["max_gap_upper"] is True
    assert verify_file(out).valid


def test_a_sensitive_answer_gets_no_certificate_and_its_proof_record_says_nothing_written(
    tmp_path,
):
    out = tmp_path / "c.json"
    r = treesens.check(str(MODEL), vary=["mean_texture"], gap=0.2, certificate=out)
    assert r.status == "sensitive" and not out.exists()


def test_a_certificate_in_a_folder_not_there_yet_is_written_its_folder_made(tmp_path):
    out = tmp_path / "new" / "c.json"
    treesens.check(str(MODEL), vary=[FEATURE], gap=0.1, certificate=out)
    assert verify_file(out).valid


def test_a_certificate_whose_folder_a_file_holds_is_an_input_error(tmp_path):
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(InputError):
        treesens.check(str(MODEL), vary=[FEATURE], gap=0.1, certificate=tmp_path / "a_file" / "c")
