"""Certificates of a multiclass XGBoost model given as its JSON text dump: the dump
records neither the number of classes nor the base score, so the certificate states
both (``model.num_class``, ``model.base_score``) and the checker reads tree i as class
i mod K's. Accepted when the claim lies above the supremum XGBoost's own margins give,
and rejected when tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import xgboost

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.oracle import cell_grid
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file

VARY = ["f1"]
CLASSES = ("any", "any")


def _booster(seed: int = 0) -> xgboost.Booster:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(400, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.15 * X[:, 2], [0.6, 1.0])
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2, learning_rate=0.8, base_score=0.5)
    return est.fit(X, y).get_booster()


def _dump(booster: xgboost.Booster, path: Path) -> Path:
    path.write_text("[" + ",".join(booster.get_dump(dump_format="json")) + "]")
    return path


def _supremum(booster: xgboost.Booster, ens) -> float:
    """The largest ratio P_c1 / P_o (every other o) both inputs of a pair reach for two
    different classes, by XGBoost's margins over one point per threshold cell."""
    X, ns, nv = cell_grid(ens, VARY)
    m = booster.predict(xgboost.DMatrix(X), output_margin=True).reshape(ns, nv, 3)
    lead = np.stack(
        [np.min([m[..., c] - m[..., o] for o in range(3) if o != c], axis=0) for c in range(3)]
    ).max(axis=2)  # [class, ns]: the largest lead of c over the others within a row's pairs
    best = max(
        float(np.minimum(lead[a], lead[b]).max()) for a in range(3) for b in range(3) if a != b
    )
    return float(np.exp(best))


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    """(dump path, supremum, certificate of 1.3 times the supremum's distance above 1)."""
    folder = tmp_path_factory.mktemp("dump")
    booster = _booster()
    path = _dump(booster, folder / "three.dump.json")
    ens = treesens.load_model(str(path), format="xgboost-dump", n_classes=3)
    sup = _supremum(booster, ens)
    out = folder / "certificate.json"
    q = make_query(VARY, gap=1.0 + 1.3 * (sup - 1.0), classes=CLASSES)
    done = certify(ens, q, out, path, 60)
    assert done.written and done.verified, done.message
    return path, sup, out


def test_a_multiclass_dump_certificate_states_its_number_of_classes(dumped):
    model = json.loads(dumped[2].read_text())["model"]
    assert model["library"] == "xgboost-dump" and model["num_class"] == 3
    assert model["base_score"] == 0.5


def test_a_multiclass_dump_certificate_verifies(dumped):
    assert verify_file(dumped[2]).valid


def test_a_dump_certificates_verdict_names_the_base_score_and_classes_it_assumes(dumped):
    """The dump holds neither: the claim is of the model with the ones stated."""
    assert verify_file(dumped[2]).message.endswith(
        "; the dump's base score taken as 0.5, its classes as 3"
    )


def test_a_binary_dump_certificates_verdict_names_its_base_score(tmp_path):
    from treesens.tests.conftest import treesens_here

    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "c.json"
    p = treesens_here(
        "check", repo / "examples" / "two_trees_dump.json", "--vary", "f1", "--gap", "0.1",
        "--base-score", "0.05", "--certificate", out,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert verify_file(out).message.endswith("; the dump's base score taken as 0.05")


def test_a_multiclass_dump_claim_below_the_supremum_gets_no_certificate(dumped, tmp_path):
    path, sup, _ = dumped
    ens = treesens.load_model(str(path), format="xgboost-dump", n_classes=3)
    q = make_query(VARY, gap=1.0 + 0.9 * (sup - 1.0), classes=CLASSES)
    assert not certify(ens, q, tmp_path / "c.json", path, 60).written


def test_a_multiclass_dump_certificate_with_its_claim_lowered_is_rejected(dumped, tmp_path):
    _, sup, out = dumped

    def below(doc):
        doc["question"]["claim"]["gap"] = 1.0 + 0.95 * (sup - 1.0)

    assert not verify_file(tampered(out, tmp_path, below)).valid


def test_a_multiclass_dump_certificate_with_a_box_removed_is_rejected(dumped, tmp_path):
    assert not verify_file(tampered(dumped[2], tmp_path, drop_last_box)).valid


def test_a_multiclass_dump_certificate_with_a_bound_changed_is_rejected(dumped, tmp_path):
    def lower_a_bound(doc):
        step = next(s for part in doc["parts"] for s in part["proof"] if s[0] == "prune")
        step[2] -= 0.5

    assert not verify_file(tampered(dumped[2], tmp_path, lower_a_bound)).valid


@pytest.mark.parametrize("num_class", [2, 4])
def test_a_multiclass_dump_certificate_stating_another_number_of_classes_is_rejected(
    dumped, num_class, tmp_path
):
    def other(doc):
        doc["model"]["num_class"] = num_class

    assert not verify_file(tampered(dumped[2], tmp_path, other)).valid


def test_a_multiclass_dump_certificate_checked_against_another_dump_is_rejected(dumped, tmp_path):
    other = _dump(_booster(seed=1), tmp_path / "other.dump.json")
    verdict = verify_file(dumped[2], str(other))
    assert not verdict.valid and "not the model" in verdict.message
