"""Margin gaps on multiclass forests, whose raw scores are class probabilities."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.compiler.kinds import resolve_condition
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver import solve_query
from treesens.tests.oracle import brute_force_sensitive


@pytest.fixture(scope="module")
def forest():
    from sklearn.ensemble import RandomForestClassifier

    rng = np.random.default_rng(3)
    X = rng.random((300, 3))
    y = (X[:, 0] * 2.2 + X[:, 1]).astype(int) % 3
    rf = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
    return treesens.load_model(rf)


def _query(vary, d, classes=(0, 1)):
    return Query(vary=(vary,), gap=Gap(d, "margin"), classes=classes, plan=Plan(timeout=60))


def test_a_forest_margin_gap_is_a_difference_of_probabilities(forest):
    cond = resolve_condition(forest, _query("x0", 0.3))
    assert cond.rows[0] == (((1.0, -1.0, 0.0), 0.3), ((1.0, 0.0, -1.0), 0.3))


def test_a_forest_margin_gap_of_1_is_an_input_error(forest):
    with pytest.raises(InputError, match="probabilities"):
        resolve_condition(forest, _query("x0", 1.0))


@pytest.mark.parametrize("vary", ["x0", "x1", "x2"])
@pytest.mark.parametrize("d", [0.1, 0.4])
def test_forest_margin_gap_verdicts_match_the_brute_force_oracle(forest, vary, d):
    q = _query(vary, d)
    res = solve_query(forest, q)
    assert res.status in ("sensitive", "insensitive"), res.error
    assert (res.status == "sensitive") == brute_force_sensitive(forest, q)
