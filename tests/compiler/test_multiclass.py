"""Multiclass sensitivity (paper section 6): Gap-multi, 'any' classes, Aff-multi/Obj-multi."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from treesens.compiler.plan import Plan
from treesens.compiler.query import (
    DEFAULT_PASSES,
    SOFTMAX_ROUNDING,
    Gap,
    Query,
    pair_condition,
)
from treesens.compiler.replay import meets
from treesens.driver import solve_query
from treesens.tests.conftest import require_shared
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

C = 3


def _query(vary, classes, ratio=1.5, passes=DEFAULT_PASSES):
    return Query(
        vary=tuple(vary), gap=Gap(ratio), classes=classes, plan=Plan(passes=passes, timeout=60)
    )


def _oracle(ens, vary, classes, ratio):
    c1, c2 = classes
    if c1 == "any" and c2 == "any":
        return any(
            brute_force_sensitive(ens, _query(vary, (a, b), ratio))
            for a, b in itertools.permutations(range(C), 2)
        )
    if c1 == "any":
        return any(
            brute_force_sensitive(ens, _query(vary, (a, c2), ratio)) for a in range(C) if a != c2
        )
    return brute_force_sensitive(ens, _query(vary, classes, ratio))


def _assert_witness_meets(ens, q, res):
    w = res.witness_arrays
    X = np.stack([w.x1, w.x2])
    proba, raw = ens.proba(X), ens.raw(X)
    assert meets(ens, q, proba[0], raw[0], 0)
    assert meets(ens, q, proba[1], raw[1], 1, int(np.argmax(proba[0])))
    outside = [i for i, n in enumerate(ens.feature_names) if n not in q.vary]
    assert np.array_equal(w.x1[outside], w.x2[outside])


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("classes", [(0, 1), (2, 0), (1, "any"), ("any", 1), ("any", "any")])
def test_multiclass_verdict_agrees_with_brute_force(seed, classes):
    ens = random_ensemble(
        seed, n_trees=6, depth=2, n_features=3, n_thresholds=3, n_classes=C, leaf_scale=1.0
    )
    ratio = 1.5
    q = _query(["f0"], classes, ratio)
    res = solve_query(ens, q)
    assert res.status in ("sensitive", "insensitive"), res.error or res.message
    assert (res.status == "sensitive") == _oracle(ens, ["f0"], classes, ratio)
    if res.status == "sensitive":
        _assert_witness_meets(ens, q, res)


@pytest.mark.parametrize("seed", range(6))
def test_aff_multi_and_obj_multi_change_no_status(seed):
    ens = random_ensemble(
        100 + seed, n_trees=9, depth=3, n_features=3, n_thresholds=3, n_classes=C, leaf_scale=1.0
    )
    statuses = {
        passes: solve_query(ens, _query(["f1"], (0, 2), 1.3, frozenset(passes))).status
        for passes in (
            ("ordering", "unaff", "aff", "obj"),
            ("ordering", "unaff"),
            ("ordering",),
            ("ordering", "aff"),
        )
    }
    assert len(set(statuses.values())) == 1, statuses


def test_any_to_any_needs_two_different_classes():
    ens = random_ensemble(
        7, n_trees=6, depth=2, n_features=2, n_thresholds=2, n_classes=C, leaf_scale=1.0
    )
    res = solve_query(ens, _query(["f0"], ("any", "any"), 1.2))
    if res.status == "sensitive":
        w = res.witness_arrays
        p = ens.proba(np.stack([w.x1, w.x2]))
        assert np.argmax(p[0]) != np.argmax(p[1])


def test_any_to_a_class_puts_x1_in_another_class():
    ens = random_ensemble(
        11, n_trees=6, depth=2, n_features=2, n_thresholds=2, n_classes=C, leaf_scale=1.0
    )
    q = _query(["f0"], ("any", 2), 1.2)
    res = solve_query(ens, q)
    assert res.status in ("sensitive", "insensitive"), res.error or res.message
    if res.status == "sensitive":
        p = ens.proba(np.stack([res.witness_arrays.x1, res.witness_arrays.x2]))
        assert np.argmax(p[0]) != 2 and np.argmax(p[1]) == 2


@pytest.mark.shared
def test_iris_witness_is_replayed_by_xgboost():
    root = require_shared()
    import treesens

    ens = treesens.load_model(root / "iris" / "iris_t100_d5.json")
    res = treesens.check(ens, vary=["petal_length"], gap=1.5, classes=(1, 2), timeout=120)
    assert res.status == "sensitive" and res.validated
    p1, p2 = res.outputs["x1"], res.outputs["x2"]
    assert p1[1] >= 1.5 * max(p1[0], p1[2])
    assert p2[2] >= 1.5 * max(p2[0], p2[1])


@pytest.mark.shared
def test_winequality_witness_is_replayed_by_xgboost():
    root = require_shared()
    import treesens

    ens = treesens.load_model(root / "winequality_red" / "winequality_red_t100_d5.json")
    res = treesens.check(ens, vary=["alcohol"], gap=1.5, classes=(2, 3), timeout=300)
    assert res.status in ("sensitive", "insensitive"), res.error or res.message
    if res.status == "sensitive":
        assert res.validated
        p1, p2 = res.outputs["x1"], res.outputs["x2"]
        assert all(p1[2] >= 1.5 * p for k, p in enumerate(p1) if k != 2)
        assert all(p2[3] >= 1.5 * p for k, p in enumerate(p2) if k != 3)


def _softmax_rows(gap: Gap) -> set[float]:
    ens = random_ensemble(np.random.default_rng(0), 3, 2, 3, 3, n_classes=C)
    q = Query(vary=("f0",), gap=gap, classes=(0, 1))
    return {rhs for rows in pair_condition(ens, q).rows for _, rhs in rows}


def test_a_softmax_margin_gap_s_rows_ask_the_gap_as_stated():
    # ln(exp(0.35)) is 0.3499999999999999: the rows asked an ulp less than the gap
    assert _softmax_rows(Gap(0.35, kind="margin")) == {0.35}


def test_a_softmax_ratio_s_rows_ask_the_library_s_rounding_less():
    # XGBoost's float32 softmax may read a ratio above exp(raw_c - raw_o): its replay decides
    assert _softmax_rows(Gap(1.5)) == {math.log(1.5) - SOFTMAX_ROUNDING}
