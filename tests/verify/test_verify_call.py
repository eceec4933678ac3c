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
