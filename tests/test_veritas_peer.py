"""bench/veritas_peer.py: the Veritas peer answers like the brute-force oracle on tiny
ensembles, in both posings (the paper's sum relaxation and the exact min of the sides)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

pytest.importorskip("veritas")

CHECKOUT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "veritas_peer", CHECKOUT / "bench" / "veritas_peer.py"
)
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)

POSES = [{"pose": "sum"}, {"pose": "sides"}, {"pose": "sides", "focal_eps": 0.0, "prune": False}]
# Veritas tests x < v in doubles: the XGBoost comparison and LightGBM's (x <= t in doubles)
# map onto it exactly; scikit-learn's float32(x) <= t does not, and is not benchmarked.
COMPARISONS = [("<", "float32"), ("<=", "float64")]


def _oracle(ens, features, gap, classes=None) -> bool:
    q = Query(vary=tuple(features), gap=Gap(gap), classes=classes)
    return brute_force_sensitive(ens, q)


def test_the_exact_posing_computes_the_smaller_side_minus_the_target():
    ens = random_ensemble(np.random.default_rng(7), 6, 3, 3, 3, leaf_scale=1.0)
    target = math.log(0.6 / 0.4)
    at = peer.build_sides_addtree(ens, [1], [(0, np.array([1.0])), (1, np.array([-1.0]))], target)
    rng = np.random.default_rng(0)
    X1 = rng.uniform(-3, 3, size=(300, 3)).astype(np.float32).astype(np.float64)
    X2 = X1.copy()
    X2[:, 1] = rng.uniform(-3, 3, size=300).astype(np.float32)
    m1, m2 = ens.raw(X1)[:, 0], ens.raw(X2)[:, 0]
    out = at.eval(np.hstack([X1, X2[:, [1]]]))
    objective = out[:, 0] - out[:, 1:].max(axis=1)
    assert np.allclose(objective, np.minimum(m1, -m2) - target, atol=1e-5)


@pytest.mark.parametrize("params", POSES, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
@pytest.mark.parametrize("op,cast", COMPARISONS)
def test_binary_answers_agree_with_brute_force(params, op, cast):
    answered = 0
    for seed in range(12):
        rng = np.random.default_rng(500 + seed)
        ens = random_ensemble(rng, 4, 3, 3, 3, leaf_scale=1.0, op=op, cast=cast)
        features = [ens.feature_names[seed % 3]]
        for gap in (0.1, 0.3):
            r = peer.verify(ens, features, gap, None, 20.0, params)
            if r["status"] == "unknown":
                continue
            answered += 1
            assert (r["status"] == "sensitive") == _oracle(ens, features, gap), (seed, gap, r)
    assert answered >= 20  # tiny ensembles: the search completes


@pytest.mark.parametrize("pose", ["sum", "sides"])
def test_multiclass_answers_agree_with_brute_force(pose):
    for seed in range(8):
        rng = np.random.default_rng(900 + seed)
        ens = random_ensemble(rng, 6, 2, 3, 3, n_classes=3, leaf_scale=1.0)
        features = [ens.feature_names[seed % 3]]
        r = peer.verify(ens, features, 1.5, (0, 2), 20.0, {"pose": pose})
        assert r["status"] != "unknown", r
        expected = _oracle(ens, features, 1.5, (0, 2))
        assert (r["status"] == "sensitive") == expected, (seed, r)


def test_a_sensitive_answer_carries_the_replayed_probabilities_of_both_sides():
    for seed in range(20):
        ens = random_ensemble(np.random.default_rng(seed), 4, 3, 3, 3, leaf_scale=1.0)
        r = peer.verify(ens, [ens.feature_names[0]], 0.1, None, 20.0, {"pose": "sides"})
        if r["status"] == "sensitive":
            p1, p2 = r["veritas"]["outputs"]["x1"], r["veritas"]["outputs"]["x2"]
            assert p1[1] >= 0.6 and p2[1] <= 0.4
            return
    pytest.fail("no sensitive instance among the seeds")
