"""bench/veritas_peer.py: the Veritas peer answers like the brute-force oracle on tiny
ensembles, in both posings (the paper's sum relaxation and the exact min of the sides).

Veritas imports gurobipy and z3, which this process must not (see test_backends): the
peer runs in one child process and the tests read what it printed.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("veritas") is None:
    pytest.skip("dtai-veritas is not installed", allow_module_level=True)

PEER = Path(__file__).resolve().parents[2] / "bench" / "veritas_peer.py"
POSES = {
    "sum": {"pose": "sum"},
    "sides": {"pose": "sides"},
    "sides-greedy": {"pose": "sides", "focal_eps": 0.0, "prune": False},
}
# Veritas tests x < v in doubles: the XGBoost comparison and LightGBM's (x <= t in doubles)
# map onto it exactly; scikit-learn's float32(x) <= t does not, and is not benchmarked.
COMPARISONS = {"xgboost": ("<", "float32"), "lightgbm": ("<=", "float64")}

_CHILD = """
import importlib.util, json, math, sys
import numpy as np
from treesens.compiler.query import Gap, Query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

spec = importlib.util.spec_from_file_location("veritas_peer", sys.argv[1])
peer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(peer)
poses, comparisons = json.loads(sys.argv[2]), json.loads(sys.argv[3])

def oracle(ens, features, gap, classes=None):
    return brute_force_sensitive(ens, Query(vary=tuple(features), gap=Gap(gap), classes=classes))

out = {}
ens = random_ensemble(np.random.default_rng(7), 6, 3, 3, 3, leaf_scale=1.0)
target = math.log(0.6 / 0.4)
at = peer.build_sides_addtree(ens, [1], [(0, np.array([1.0])), (1, np.array([-1.0]))], target)
rng = np.random.default_rng(0)
X1 = rng.uniform(-3, 3, size=(300, 3)).astype(np.float32).astype(np.float64)
X2 = X1.copy()
X2[:, 1] = rng.uniform(-3, 3, size=300).astype(np.float32)
m1, m2 = ens.raw(X1)[:, 0], ens.raw(X2)[:, 0]
y = at.eval(np.hstack([X1, X2[:, [1]]]))
out["objective_error"] = float(np.max(np.abs(y[:, 0] - y[:, 1:].max(axis=1) - (np.minimum(m1, -m2) - target))))

out["binary"] = {}
for pname, params in poses.items():
    for cname, (op, cast) in comparisons.items():
        rows = []
        for seed in range(12):
            e = random_ensemble(np.random.default_rng(500 + seed), 4, 3, 3, 3, leaf_scale=1.0, op=op, cast=cast)
            features = [e.feature_names[seed % 3]]
            for gap in (0.1, 0.3):
                r = peer.verify(e, features, gap, None, 20.0, params)
                rows.append([seed, gap, r["status"], oracle(e, features, gap)])
        out["binary"][pname + "/" + cname] = rows

out["multiclass"] = {}
for pname in ("sum", "sides"):
    rows = []
    for seed in range(8):
        e = random_ensemble(np.random.default_rng(900 + seed), 6, 2, 3, 3, n_classes=3, leaf_scale=1.0)
        features = [e.feature_names[seed % 3]]
        r = peer.verify(e, features, 1.5, (0, 2), 20.0, {"pose": pname})
        rows.append([seed, r["status"], oracle(e, features, 1.5, (0, 2))])
    out["multiclass"][pname] = rows

for seed in range(20):
    e = random_ensemble(np.random.default_rng(seed), 4, 3, 3, 3, leaf_scale=1.0)
    r = peer.verify(e, [e.feature_names[0]], 0.1, None, 20.0, {"pose": "sides"})
    if r["status"] == "sensitive":
        out["replayed"] = r["veritas"]["outputs"]
        break
out["imported"] = sorted(m for m in ("veritas", "gurobipy", "z3") if m in sys.modules)
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def runs() -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(PEER), json.dumps(POSES), json.dumps(COMPARISONS)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_peer_ran_in_a_child_process_that_imported_veritas(runs):
    assert "veritas" in runs["imported"]
    assert "veritas" not in sys.modules


def test_the_exact_posing_computes_the_smaller_side_minus_the_target(runs):
    assert runs["objective_error"] < 1e-5


@pytest.mark.parametrize("comparison", COMPARISONS)
@pytest.mark.parametrize("pose", POSES)
def test_binary_answers_agree_with_brute_force(runs, pose, comparison):
    rows = runs["binary"][f"{pose}/{comparison}"]
    answered = [r for r in rows if r[2] != "unknown"]
    assert len(answered) >= 20  # tiny ensembles: the search completes
    for seed, gap, status, sensitive in answered:
        assert (status == "sensitive") == sensitive, (seed, gap, status)


def test_binary_cases_include_sensitive_and_insensitive_queries(runs):
    truths = {r[3] for rows in runs["binary"].values() for r in rows}
    assert truths == {True, False}


@pytest.mark.parametrize("pose", ["sum", "sides"])
def test_multiclass_answers_agree_with_brute_force(runs, pose):
    for seed, status, sensitive in runs["multiclass"][pose]:
        assert status != "unknown", seed
        assert (status == "sensitive") == sensitive, (seed, status)


def test_a_sensitive_answer_carries_the_replayed_probabilities_of_both_sides(runs):
    p1, p2 = runs["replayed"]["x1"], runs["replayed"]["x2"]
    assert p1[1] >= 0.6 and p2[1] <= 0.4
