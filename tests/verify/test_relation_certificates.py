"""Certificates of "insensitive" under relations between the inputs (``where
x1.worst_texture > x2.worst_texture``): the claim states the relations, and a box the box
search dropped because no pair of its ranks meets one is a ``relation`` step, which the
independent checker re-derives from the box alone (verify/relations.py). A certificate
whose claim or steps are changed is rejected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import treesens
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, FeatureRelation, Gap, Query
from treesens.interfaces.cli.main import main
from treesens.questions.certify import certify
from treesens.search import compiled_check
from treesens.tests.compiler.test_relations_on_unlisted_categories import _lightgbm_coded
from treesens.tests.verify.tampering import tampered
from treesens.tests.verify.test_per_input_certificates import rising_regressor
from treesens.verify import verify_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONTRACT = """model "{model}"
features from "{details}"
query texture_down {{
  vary worst_texture
  gap 0.2
  where x1.worst_texture > x2.worst_texture
  expect insensitive
}}
query both_down {{
  vary mean_texture, worst_smoothness
  gap 0.45
  where x1.worst_smoothness >= x2.worst_smoothness and x1.mean_texture >= x2.mean_texture
  where mean_radius in [10, 15]
  expect insensitive
}}
"""


def _certified(folder: Path) -> Path:
    """The contract's certificates, written by ``treesens test`` into ``folder``."""
    sens = folder / "relations.sens"
    model, details = EXAMPLES / "breast_cancer_xgb.json", EXAMPLES / "breast_cancer_details.csv"
    sens.write_text(CONTRACT.format(model=model, details=details))
    assert main(["test", str(sens), "--certificates", str(folder / "certs")]) == 0
    return folder / "certs"


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> Path:
    return _certified(tmp_path_factory.mktemp("relations"))


def _steps(certificate: Path) -> list:
    return [s for p in json.loads(certificate.read_text())["parts"] for s in p["proof"]]


def test_an_insensitive_answer_under_a_relation_is_certified_and_verified(certs):
    verdict = verify_file(certs / "texture_down.json")
    assert verdict.valid, verdict.message
    assert "where x1.worst_texture > x2.worst_texture" in verdict.message


def test_two_relations_and_a_bound_read_as_a_domain_are_certified(certs):
    assert verify_file(certs / "both_down.json").valid


def test_the_claim_states_the_relations_as_x1_op_x2(certs):
    question = json.loads((certs / "both_down.json").read_text())["question"]
    assert question["relations"] == [["mean_texture", ">="], ["worst_smoothness", ">="]]


def test_boxes_no_pair_of_which_meets_the_relation_are_relation_steps(certs):
    doc = json.loads((certs / "texture_down.json").read_text())
    f = doc["question"]["features"].index("worst_texture")
    assert ["relation", f, ">"] in _steps(certs / "texture_down.json")


def test_the_compiled_search_s_proof_states_its_relation_steps_too(tmp_path, monkeypatch):
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)  # the kernel from the first box
    out = _certified(tmp_path)
    assert any(s[0] == "relation" for s in _steps(out / "texture_down.json"))
    assert verify_file(out / "texture_down.json").valid


def _rejected(certs: Path, tmp_path: Path, name: str, change) -> str:
    verdict = verify_file(tampered(certs / name, tmp_path, change))
    assert not verdict.valid
    return verdict.message


def test_a_relation_removed_from_the_claim_is_rejected(certs, tmp_path):
    def change(doc):
        del doc["question"]["relations"]

    assert "states no relation" in _rejected(certs, tmp_path, "texture_down.json", change)


def _turned_around(doc):
    """The claim's relation and every relation step's turned around (> to <): the boxes
    dropped hold pairs meeting it."""
    doc["question"]["relations"] = [["worst_texture", "<"]]
    for part in doc["parts"]:
        for step in part["proof"]:
            if step[0] == "relation":
                step[2] = "<"


def test_a_box_dropped_by_a_relation_it_holds_pairs_of_is_rejected(certs, tmp_path):
    why = _rejected(certs, tmp_path, "texture_down.json", _turned_around)
    assert "holds a pair with x1.worst_texture < x2.worst_texture" in why


def test_a_relation_step_that_is_not_the_claim_s_is_rejected(certs, tmp_path):
    def change(doc):
        for part in doc["parts"]:
            for step in part["proof"]:
                if step[0] == "relation":
                    step[2] = ">="

    assert "is not the claim's" in _rejected(certs, tmp_path, "texture_down.json", change)


def test_a_relation_on_a_feature_not_varied_is_rejected(certs, tmp_path):
    def change(doc):
        doc["question"]["relations"].append(["mean_radius", "<="])

    _rejected(certs, tmp_path, "texture_down.json", change)


WHOLE_NUMBERS = """model "{model}"
features from "{details}"
query sex_down {{
  vary sex
  gap 0.3
  where x1.sex > x2.sex
  expect insensitive
}}
"""


def test_relation_steps_on_a_binary_feature_of_a_lightgbm_model_are_verified(tmp_path):
    # sex is 0 or 1 and LightGBM tests x <= t on float64 values: the boxes where x1.sex
    # can only be 0 or x2.sex only 1 are closed by relation steps the checker re-derives
    sens = tmp_path / "whole.sens"
    model, details = EXAMPLES / "diabetes_lgbm.txt", EXAMPLES / "diabetes_details.csv"
    sens.write_text(WHOLE_NUMBERS.format(model=model, details=details))
    assert main(["test", str(sens), "--certificates", str(tmp_path / "certs")]) == 0
    out = tmp_path / "certs" / "sex_down.json"
    assert ["relation", 1, ">"] in _steps(out)
    assert verify_file(out).valid


@pytest.fixture(scope="module")
def rising(tmp_path_factory) -> tuple:
    """An XGBoost regressor rising with f0 (3 f0 + f0 f1), its file and folder."""
    folder = tmp_path_factory.mktemp("rising")
    model = rising_regressor(folder)
    return treesens.load_model(str(model)), model, folder


def _change(ens, model: Path, out: Path, delta: float, direction: str):
    """The certificate of ``ens``'s change by ``delta`` in ``direction`` (vary f0, where
    x1.f0 <= x2.f0), written to ``out`` and verified."""
    rel = (FeatureRelation("f0", 1, "<=", 2),)
    q = Query(vary=("f0",), delta=delta, direction=direction, relations=rel)
    return certify(ens, q.with_(plan=Plan(timeout=30.0)), out, model, 30.0)


def test_a_change_either_way_under_a_relation_gets_no_certificate(rising):
    # the box search takes one direction at a time under a relation: "either" is the
    # solvers' (a certificate would need a part per direction), so none is written
    ens, model, folder = rising
    done = _change(ens, model, folder / "either.json", 8.0, "either")
    assert not done.written and not (folder / "either.json").exists()
    assert "does not apply to this query" in done.message


@pytest.mark.parametrize("direction", ["up", "down"])
def test_a_change_one_way_under_a_relation_is_certified_and_verified(rising, direction):
    ens, model, folder = rising
    done = _change(ens, model, folder / f"{direction}.json", 8.0, direction)
    assert done.verified, done.message


def _one_part(direction: str | None):
    def change(doc):
        part = next(p for p in doc["parts"] if p["direction"] == "down")
        if direction is None:
            del part["direction"]
        doc["parts"] = [part]
        doc["question"]["claim"]["direction"] = "either"

    return change


@pytest.mark.parametrize("direction", [None, "down", "up"])
def test_a_change_either_way_under_a_relation_stated_by_one_part_is_rejected(
    rising, direction, tmp_path
):
    # with x1.f0 <= x2.f0 the prediction goes up by up to about 3.5, down by little: a
    # proof that no pair goes down by 2 says nothing of the pairs going up
    ens, model, folder = rising
    done = _change(ens, model, folder / "down.json", 2.0, "down")
    assert done.verified, done.message
    forged = tampered(folder / "down.json", tmp_path, _one_part(direction))
    verdict = verify_file(forged)
    assert not verdict.valid and "the proof's parts are not the ones" in verdict.message


def test_a_relation_on_categories_no_split_lists_is_certified_over_two_of_them(tmp_path):
    # LightGBM's splits list c's codes 0..5 (c declared 0..9); x2.c in [6, 9] with
    # x1.c > x2.c needs two unlisted codes in order: the claim's x2 takes 6 and 7 (one
    # code, 6, left no x1 above it: 'x2.c < x1.c cannot hold')
    ens = _lightgbm_coded(tmp_path)
    q = Query(vary=("c", "x"), gap=Gap(0.2), relations=(FeatureRelation("c", 1, ">", 2),))
    q = q.with_(bounds=(FeatureBound("c", 6.0, 9.0, (2,)),), plan=Plan(timeout=30.0))
    out = tmp_path / "c.json"
    done = certify(ens, q, out, tmp_path / "m.txt", 30.0)
    assert done.verified, done.message
    assert json.loads(out.read_text())["question"]["domain"][0]["x2"]["codes"] == [6, 7]
    assert ["relation", 0, ">"] in _steps(out)
