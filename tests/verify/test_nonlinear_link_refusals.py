"""What still gets no certificate among regressors with a nonlinear link: a probability
model asked a change (CatBoost CrossEntropy: its prediction is sigmoid(raw), for which
the format has no step), refused in one line naming why. Those predicting exp(raw) are
certified by ``link`` steps (tests/verify/test_link_certificates.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

import treesens
from treesens.questions.certify import certify, nonlinear_link_refusal
from treesens.questions.query_build import make_query

REASON = "the regressor predicts sigmoid(raw score)"


def _cross_entropy_model(folder: Path) -> Path:
    import catboost

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, (300, 3)), columns=["a", "b", "c"])
    p = (0.2 + 0.6 * (X["b"] > 0.5)).to_numpy()
    est = catboost.CatBoostClassifier(
        iterations=3, depth=2, loss_function="CrossEntropy", verbose=0, allow_writing_files=False
    )
    path = folder / "cross-entropy.cbm"
    est.fit(X, p).save_model(str(path))
    return path


def test_a_change_of_a_sigmoid_link_model_gets_no_certificate_naming_why(tmp_path):
    path = _cross_entropy_model(tmp_path)
    ens = treesens.load_model(str(path))
    out = tmp_path / "c.json"
    done = certify(ens, make_query(["b"], delta=0.9), out, path, 60)
    assert not done.written and not out.exists()
    assert done.reason.startswith(REASON) and "\n" not in done.reason


def test_the_nonlinear_link_refusal_names_what_certificates_cover():
    why = nonlinear_link_refusal("sigmoid")
    assert why.startswith(REASON) and "raw score or exp of it" in why
