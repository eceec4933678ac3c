"""A certificate whose domain lets a feature be missing, for a model whose library refuses
missing values (scikit-learn's GradientBoosting: predict raises on NaN), claims about
inputs the model cannot score: the checker refuses it as vacuous, where it accepted it.
A forest, whose predict takes NaN, has such a claim checked against its proof."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file


def _certified(folder, est):
    from skops.io import dump

    X = np.random.default_rng(0).uniform(0, 1, (200, 3))
    est.fit(X, (X[:, 0] > 0.5).astype(int))
    model = folder / "model.skops"
    dump(est, model)
    out = folder / "c.json"
    r = treesens.check(str(model), vary=["x2"], gap=0.2, certificate=str(out), timeout=60)
    assert r.status == "insensitive" and r.proof.checked, r.message
    return est, out


def _let_x0_be_missing(doc: dict) -> None:
    doc["question"]["domain"][0]["missing"] = True
    doc["version"] = max(doc["version"], 3)  # NaN in a domain is version 3


def test_a_gradient_boosting_certificate_saying_a_feature_may_be_missing_is_refused(tmp_path):
    from sklearn.ensemble import GradientBoostingClassifier

    est, certificate = _certified(tmp_path, GradientBoostingClassifier(n_estimators=5))
    with pytest.raises(ValueError, match="NaN"):
        est.predict_proba(np.array([[np.nan, 0.5, 0.5]]))  # the vacuous part of the claim
    verdict = verify_file(tampered(certificate, tmp_path, _let_x0_be_missing))
    assert not verdict.valid
    assert "'x0' may be missing, and the model's library refuses missing values" in verdict.message


def test_a_forest_certificate_saying_a_feature_may_be_missing_is_checked_box_by_box(tmp_path):
    from sklearn.ensemble import RandomForestClassifier

    _, certificate = _certified(tmp_path, RandomForestClassifier(n_estimators=5, random_state=0))
    verdict = verify_file(tampered(certificate, tmp_path, _let_x0_be_missing))
    # read as a claim: NaN's routes change a box's bound, which the proof did not state
    assert verdict.message.startswith("box "), verdict.message
