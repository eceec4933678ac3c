"""A certificate's ``model`` section describes the model it proves: of a model file that
holds them (every format but an XGBoost dump), its number of classes and a classifier's
base score are the file's, its test (every library but ONNX) the library's comparison,
and a section stating others (the checker read them from the file and took no notice)
is rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.tests.verify.tampering import tampered, worst_symmetry_certificate
from treesens.verify import verify_file


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> Path:
    return worst_symmetry_certificate(tmp_path_factory.mktemp("cert"))


STATED = {
    "num_class": (3, "num_class 3, and the model has 1"),
    "base_score": (0.9, "base_score 0.9, and the model's is"),
    "test": ("<=", "test '<=', and xgboost compares '<'"),
}


@pytest.mark.parametrize("field", sorted(STATED))
def test_a_model_section_stating_another_model_is_rejected(certificate, tmp_path, field):
    value, said = STATED[field]

    def change(doc: dict) -> None:
        doc["model"][field] = value

    verdict = verify_file(tampered(certificate, tmp_path, change))
    assert not verdict.valid
    assert verdict.message.startswith(f"the certificate states {said}")
