"""A certificate's domain says which features may be missing: one edited to let a
feature the proof took as never missing be NaN is rejected where NaN reaches the gap.

The model is an XGBoost dump of three stumps on f0 whose missing branches disagree: every
value of f0 scores -1 or -1.5, NaN (left in the first and third, right in the second)
scores 3, so varying f0 reaches gap 0.1 only through NaN; and a stump on f1."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import treesens
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file


def _stump(feature: str, threshold: float, yes: float, no: float, missing_yes: bool) -> dict:
    return {
        "nodeid": 0,
        "depth": 0,
        "split": feature,
        "split_condition": threshold,
        "yes": 1,
        "no": 2,
        "missing": 1 if missing_yes else 2,
        "children": [{"nodeid": 1, "leaf": yes}, {"nodeid": 2, "leaf": no}],
    }


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    folder = tmp_path_factory.mktemp("missing")
    model = folder / "dump.json"
    trees = [
        _stump("f0", 0.5, 2.0, -2.0, True),
        _stump("f0", 0.5, -2.0, 2.0, False),
        _stump("f0", 0.7, -1.0, -1.5, True),
        _stump("f1", 0.5, 0.25, -0.25, True),
    ]
    model.write_text(json.dumps(trees))
    ens = treesens.load_model(str(model))
    out = folder / "c.json"
    r = treesens.check(ens, vary=["f0"], gap=0.1, certificate=str(out), timeout=60)
    assert r.status == "insensitive" and r.proof.checked, r.message
    return ens, out


def test_nan_alone_reaches_the_gap_varying_f0(certified):
    ens, _ = certified
    p = ens.proba(np.array([[math.nan, 0.0], [0.2, 0.0], [0.6, 0.0], [0.9, 0.0]]))[:, 1]
    assert p[0] >= 0.6 and max(p[1:]) <= 0.4


def test_a_domain_edited_to_let_f0_be_missing_is_rejected(certified, tmp_path):
    _, certificate = certified
    assert verify_file(certificate).valid

    def let_f0_be_missing(doc: dict) -> None:
        doc["question"]["domain"][0]["missing"] = True
        doc["version"] = max(doc["version"], 3)  # NaN in a domain is version 3

    verdict = verify_file(tampered(certificate, tmp_path, let_f0_be_missing))
    assert not verdict.valid
