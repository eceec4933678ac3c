"""The pre-solver heuristic on the models it once skipped: LightGBM's (which read values
within 1e-35 of zero as zero) and multiclass queries whose class may be any."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.compiler.replay import meets
from treesens.driver import compile_query
from treesens.readers.load import load_model
from treesens.search.heuristic import find_witness
from treesens.tests.oracle import random_ensemble

lightgbm = pytest.importorskip("lightgbm")


def _lightgbm_model(n_classes: int = 2):
    """A LightGBM model over two 0/1 columns (split at LightGBM's 1e-35, inside the zero
    band) and two continuous ones."""
    rng = np.random.default_rng(0)
    X = np.column_stack(
        [rng.integers(0, 2, 600), rng.integers(0, 2, 600), rng.normal(size=(600, 2))]
    )
    score = 2 * X[:, 0] - X[:, 1] + X[:, 2]
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    est = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=6, verbose=-1).fit(X, y)
    return load_model(est)


def _meets_both(ens, q, x1, x2) -> bool:
    """Both sides of ``q`` as the library reads them (treesens' own reading for a model
    made here)."""
    X = np.stack([x1, x2])
    lib = ens.replayer or ens
    proba = lib.predict_proba(X) if ens.replayer else ens.proba(X)
    raw = lib.predict_raw(X) if ens.replayer else ens.raw(X)
    return all(meets(ens, q, proba[c], raw[c], c) for c in (0, 1))


def test_the_heuristic_finds_a_pair_on_a_lightgbm_model_that_its_own_reading_confirms():
    ens = _lightgbm_model()
    assert ens.cast == "float64z"
    q = Query(vary=("Column_0",), gap=Gap(0.2))
    enc = compile_query(ens, q).encoding
    x1, x2, found = find_witness(enc, 30.0, margin=2 * enc.relax, work=200_000)
    assert found and _meets_both(ens, q, x1, x2)


def test_a_class_that_may_be_any_is_reached_by_the_heuristic():
    ens = random_ensemble(5, 20, 3, 4, 4, n_classes=3, leaf_scale=1.0)
    found_pairs = 0
    for seed in range(5):
        q = Query(vary=("f0",), gap=Gap(1.2), classes=(seed % 3, "any"))
        enc = compile_query(ens, q).encoding
        assert any(enc.condition.alternatives)
        got = find_witness(enc, 30.0, seed=seed, margin=2 * enc.relax, work=100_000)
        if got is not None and got[2]:
            assert _meets_both(ens, q, got[0], got[1])
            found_pairs += 1
    assert found_pairs >= 2  # the sample must exercise the claim


def test_any_class_against_any_class_is_left_to_the_solver():
    ens = random_ensemble(5, 20, 3, 4, 4, n_classes=3, leaf_scale=1.0)
    enc = compile_query(ens, Query(vary=("f0",), gap=Gap(1.2), classes=("any", "any"))).encoding
    assert find_witness(enc, 30.0, work=100_000) is None
