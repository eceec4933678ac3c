"""The pipeline agrees with a brute-force oracle on small random ensembles, whatever
subset of the paper's passes is switched on (SPEC section 4)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from treesens.compiler.pipeline import solve_query
from treesens.compiler.query import PASS_NAMES, Gap, Query
from treesens.tests.oracle import brute_force_sensitive, brute_force_witness, random_ensemble

ALL_PASS_SETS = [
    frozenset(c) for r in range(len(PASS_NAMES) + 1) for c in itertools.combinations(PASS_NAMES, r)
]
NO_HEURISTIC = (("heuristic", False),)

SETTINGS = settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@st.composite
def instances(draw, n_classes: int = 2):
    seed = draw(st.integers(0, 2**32 - 1))
    n_trees = draw(st.integers(2, 4))
    depth = draw(st.integers(1, 3))
    n_features = draw(st.integers(2, 4))
    n_thresholds = draw(st.integers(1, 3))
    integer = draw(st.booleans())
    ens = random_ensemble(
        np.random.default_rng(seed),
        n_trees,
        depth,
        n_features,
        n_thresholds,
        n_classes,
        leaf_scale=1.0,
        integer_features=integer,
    )
    vary = draw(
        st.lists(st.sampled_from(ens.feature_names), min_size=1, max_size=n_features, unique=True)
    )
    if n_classes == 2:
        gap = Gap(draw(st.sampled_from([0.0, 0.1, 0.2, 0.3])))
        classes = None
    else:
        gap = Gap(draw(st.sampled_from([1.0, 1.5, 2.0])))
        c1 = draw(st.integers(0, n_classes - 1))
        c2 = draw(st.sampled_from([c for c in range(n_classes) if c != c1]))
        classes = (c1, c2)
    return ens, Query(
        vary=tuple(sorted(vary)), gap=gap, classes=classes, timeout=60.0, options=NO_HEURISTIC
    )


def _check_agrees(ens, q, passes) -> None:
    expected = brute_force_sensitive(ens, q)
    r = solve_query(ens, q.with_(passes=passes))
    assert r.status in ("sensitive", "insensitive"), (r.status, r.error, r.message, sorted(passes))
    assert (r.status == "sensitive") == expected, (
        f"passes {sorted(passes)}: pipeline says {r.status}, oracle says "
        f"{'sensitive' if expected else 'insensitive'}"
    )
    if r.status == "sensitive":
        _check_witness(ens, q, r)


def _check_witness(ens, q, r) -> None:
    assert r.validated
    names = ens.feature_names
    x1 = np.array([r.witness["x1"][n] for n in names], dtype=np.float64)
    x2 = np.array([r.witness["x2"][n] for n in names], dtype=np.float64)
    for i, n in enumerate(names):
        if n not in q.vary:
            assert x1[i] == x2[i], f"witness differs on {n}, which is not varied"
    p = ens.proba(np.stack([x1, x2]))
    if ens.n_classes == 2:
        assert p[0, 1] >= 0.5 + q.gap.value
        assert p[1, 1] <= 0.5 - q.gap.value
    else:
        c1, c2 = q.classes
        for k in range(ens.n_classes):
            if k != c1:
                assert p[0, c1] >= q.gap.value * p[0, k]
            if k != c2:
                assert p[1, c2] >= q.gap.value * p[1, k]


@SETTINGS
@given(instances(), st.randoms(use_true_random=False))
def test_every_pass_combination_agrees_with_brute_force(inst, rnd):
    ens, q = inst
    combos = [frozenset(PASS_NAMES), frozenset()] + rnd.sample(ALL_PASS_SETS[1:-1], 4)
    for passes in combos:
        _check_agrees(ens, q, passes)


@pytest.mark.parametrize("passes", ALL_PASS_SETS, ids=lambda p: "+".join(sorted(p)) or "none")
def test_each_pass_combination_agrees_with_brute_force_on_fixed_instances(passes):
    for seed in range(6):
        rng = np.random.default_rng(1000 + seed)
        ens = random_ensemble(rng, 4, 3, 3, 3, leaf_scale=1.0)
        q = Query(vary=("f0",), gap=Gap(0.1), timeout=60.0, options=NO_HEURISTIC)
        _check_agrees(ens, q, passes)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(instances(n_classes=3))
def test_multiclass_pipeline_agrees_with_brute_force(inst):
    ens, q = inst
    for passes in (frozenset(PASS_NAMES), frozenset()):
        _check_agrees(ens, q, passes)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(instances())
def test_heuristic_witnesses_agree_with_brute_force(inst):
    ens, q = inst
    q = q.with_(options=(), timeout=5.0)  # heuristic on, at most 0.5 s of it
    _check_agrees(ens, q, frozenset(PASS_NAMES))


@settings(max_examples=15, deadline=None, derandomize=True)
@given(instances())
def test_oracle_interval_representatives_match_the_domain_module(inst):
    ens, q = inst
    assert brute_force_sensitive(ens, q) == brute_force_sensitive(ens, q, reps="domain")


def test_oracle_witness_meets_the_gap():
    for seed in range(20):
        ens = random_ensemble(seed, 3, 2, 2, 2, leaf_scale=1.5)
        q = Query(vary=("f0",), gap=Gap(0.1))
        w = brute_force_witness(ens, q)
        if w is None:
            continue
        p = ens.proba(np.stack(w))[:, 1]
        assert p[0] >= 0.6 and p[1] <= 0.4
        assert w[0][1] == w[1][1]
