"""The checker's Python call as a reader of ``treesens verify c.json`` writes it:
``treesens.verify("c.json")``, and ``verify_file``'s model given as ``model=``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.verify import verify_file


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> tuple[Path, Path]:
    """``model.json`` and a certificate ``c.json`` of it (as test_certificate_paths.py's)."""
    import xgboost

    work = tmp_path_factory.mktemp("call")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2).fit(X[:, :2], X[:, 0] > 0)
    model = work / "model.json"
    est.get_booster().save_model(model)
    r = treesens.check(str(model), vary=["f1"], gap=0.2, certificate=work / "c.json")
    assert r.status == "insensitive"
    return model, work / "c.json"


def test_the_package_called_checks_a_certificate(written):
    assert treesens.verify(str(written[1])).valid


def test_the_package_stays_one_to_import_from():
    from treesens.verify import CertificateError  # noqa: F401

    assert treesens.verify.verify_file is verify_file


def test_verify_file_takes_the_model_as_model(written):
    model, certificate = written
    assert verify_file(certificate, model=model).valid


def test_the_model_given_twice_is_a_type_error_naming_both_keywords(written):
    model, certificate = written
    with pytest.raises(TypeError, match="model_path= or model=, not both"):
        verify_file(certificate, model_path=model, model=model)


def test_a_loaded_model_is_a_type_error_saying_the_checker_reads_its_file(written):
    model, certificate = written
    with pytest.raises(TypeError, match="given as its file"):
        verify_file(certificate, model=treesens.load_model(str(model)))
