"""A certificate's domain is part of its claim: one that holds no value would make every
box empty, so every bound minus infinity and any claim "proved". The checker rejects
such a domain, whatever the proof states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.tests.verify.tampering import tampered, worst_symmetry_certificate
from treesens.verify import verify_file


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> Path:
    return worst_symmetry_certificate(tmp_path_factory.mktemp("cert"))


def _emptied(edit: dict):
    """The first feature outside the varied ones given the domain ``edit``, the claim
    made false (gap 0) and the proof one box stated at minus infinity."""

    def change(doc: dict) -> None:
        q = doc["question"]
        first = next(i for i, f in enumerate(q["features"]) if f not in q["vary"])
        q["domain"][first].update(edit)
        q["claim"]["gap"] = 0.0
        doc["parts"][0]["proof"] = [["prune", "x1", "-inf"]]

    return change


EMPTY_DOMAINS = {
    "lb above ub": {"lb": 1.0, "ub": 0.0},
    "lb NaN": {"lb": float("nan")},
    "at plus infinity": {"lb": "inf", "ub": "inf"},
    "at minus infinity": {"lb": "-inf", "ub": "-inf"},
    "integers with none in range": {"lb": 0.1, "ub": 0.9, "integer": True},
}


@pytest.mark.parametrize("edit", EMPTY_DOMAINS.values(), ids=list(EMPTY_DOMAINS))
def test_a_domain_holding_no_value_is_rejected(certificate, tmp_path, edit):
    verdict = verify_file(tampered(certificate, tmp_path, _emptied(edit)))
    assert not verdict.valid and "holds no value" in verdict.message, verdict.message


def test_a_domain_whose_integer_flag_is_no_boolean_is_rejected(certificate, tmp_path):
    def change(doc: dict) -> None:
        doc["question"]["domain"][0]["integer"] = "false"

    verdict = verify_file(tampered(certificate, tmp_path, change))
    assert not verdict.valid and "true or false" in verdict.message, verdict.message


def test_the_untampered_certificate_still_verifies(certificate):
    assert json.loads(certificate.read_text())["question"]["domain"]
    assert verify_file(certificate).valid
