"""A small XGBoost model of three uniform features saved as JSON, and the checks that the
checker reads it as XGBoost computes it and certifies its max gap: shared by the tests of
objectives whose link the checker must read (logitraw, quantile, squared log error)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import treesens
from treesens.tests.verify.tampering import checker_raw
from treesens.verify import verify_file
from treesens.verify.models import read_model


def trained_file(folder: Path, params: dict, label) -> tuple[Path, np.ndarray]:
    """Four rounds of depth 2 on 300 rows (``label(X, rng)`` their labels), saved in
    ``folder``; the path and 50 of the rows."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(300, 3))
    booster = xgboost.train({"max_depth": 2, **params}, xgboost.DMatrix(X, label=label(X, rng)), 4)
    path = folder / "model.json"
    booster.save_model(path)
    return path, X[:50]


def assert_the_checker_reads_it_as_xgboost(path: Path, X: np.ndarray, margin: bool) -> None:
    import xgboost

    m = read_model(str(path), "xgboost")
    booster = xgboost.Booster(model_file=str(path))
    want = booster.predict(xgboost.DMatrix(X), output_margin=margin)
    np.testing.assert_allclose([checker_raw(m, x) for x in X], want, rtol=1e-6, atol=1e-6)


def assert_its_max_gap_is_certified_and_verified(path: Path, out: Path) -> None:
    r = treesens.max_gap(str(path), vary=["f1"], certificate=out, timeout=60)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid
