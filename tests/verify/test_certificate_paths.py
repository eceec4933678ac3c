"""A certificate names its model relative to its own folder, so `treesens verify` reads it
from any working directory; a model it cannot read is one line that names --model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from treesens.tests.conftest import treesens_here
from treesens.verify.check import named_model


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    """A certificate written from the model's folder into certs/ below it: ``work/model.json``
    and ``work/certs/c.json`` (feature c, which the model never reads)."""
    import xgboost

    work = tmp_path_factory.mktemp("paths") / "work"
    work.mkdir()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2).fit(X[:, :2], X[:, 0] > 0)
    est.get_booster().save_model(work / "model.json")
    (work / "certs").mkdir()
    p = treesens_here(
        "check", "model.json", "--vary", "f1", "--gap", "0.2", "--certificate", "certs/c.json",
        cwd=work,
    )  # fmt: skip
    assert p.returncode == 0 and "certificate written" in p.stderr, p.stderr
    return work / "certs" / "c.json"


def test_the_certificate_names_its_model_from_its_own_folder(written):
    assert json.loads(written.read_text())["model"]["file"] == "../model.json"


def test_verify_run_from_another_folder_finds_the_model(written):
    p = treesens_here("verify", written.relative_to(written.parents[2]), cwd=written.parents[2])
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("VALID:")


def test_a_valid_verdict_says_valid_once(written):
    p = treesens_here("verify", written)
    assert p.stdout.lower().count("valid") == 1
    assert "1 box covers the pair space" in p.stdout or "boxes cover" in p.stdout


def test_a_model_the_certificate_names_but_that_is_gone_is_one_line_naming_model(written, tmp_path):
    moved = tmp_path / "c.json"
    moved.write_text(written.read_text())  # its ../model.json is not there
    p = treesens_here("verify", moved)
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    assert "cannot read the model" in line and "--model FILE" in line


def test_a_model_given_to_model_that_cannot_be_read_names_the_flag(written, tmp_path):
    p = treesens_here("verify", written, "--model", tmp_path / "none.json")
    assert p.returncode == 2
    assert "none.json" in p.stderr and "--model" in p.stderr


def test_a_certificate_naming_its_model_from_the_working_directory_still_finds_it(
    tmp_path, monkeypatch
):
    (tmp_path / "model.json").write_text("{}")  # an earlier treesens wrote cwd paths
    (tmp_path / "certs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert named_model("model.json", Path("certs")) == Path("model.json")
    assert named_model("../model.json", Path("certs")) == Path("certs/../model.json")


def test_a_certificate_under_a_file_is_refused_before_the_answer(written, tmp_path):
    (tmp_path / "a_file").write_text("")
    p = treesens_here(
        "check", written.parents[1] / "model.json", "--vary", "f1", "--gap", "0.2",
        "--certificate", tmp_path / "a_file" / "c.json",
    )  # fmt: skip
    assert p.returncode == 2
    (line,) = p.stderr.strip().splitlines()
    unmade = f"cannot make its folder {tmp_path / 'a_file'}: file exists"
    assert unmade in line and "internal error" not in line


def test_a_check_whose_answer_gets_no_certificate_leaves_no_earlier_one_in_its_file(
    written, tmp_path
):
    """The same --certificate FILE asked again of a question that is sensitive: the file
    of the earlier answer is not left to verify as this one's."""
    c = tmp_path / "c.json"
    c.write_bytes(written.read_bytes())
    model = written.parents[1] / "model.json"
    p = treesens_here("check", model, "--vary", "f0", "--gap", "0.2", "--certificate", c)
    assert p.returncode == 0 and p.stdout.startswith("SENSITIVE"), p.stdout + p.stderr
    assert "no certificate: the answer is sensitive" in p.stderr + p.stdout
    assert not c.exists()


def test_a_check_naming_a_file_that_is_no_certificate_is_refused_and_leaves_it(written, tmp_path):
    """--certificate naming another file by a slip (here the model's own copy) is refused
    before the question is asked (an insensitive answer wrote over it), and the file stays."""
    model = written.parents[1] / "model.json"
    slip = tmp_path / "model.json"
    slip.write_bytes(model.read_bytes())
    p = treesens_here("check", model, "--vary", "f0", "--gap", "0.2", "--certificate", slip)
    assert p.returncode == 2 and "is a file and not a treesens certificate" in p.stderr, p.stderr
    assert slip.read_bytes() == model.read_bytes()
