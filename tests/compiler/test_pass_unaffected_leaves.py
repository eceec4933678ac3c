"""UnAff (compiler/passes/unaffected_leaves.py) and its analysis (compiler/affected.py)."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.affected import affected_leaves, unaffected_leaves
from treesens.compiler.ir import Linear, check_constraint
from treesens.compiler.passes import UnaffectedLeaves
from treesens.compiler.query import DEFAULT_PASSES, Gap
from treesens.tests.pass_cases import (
    VERDICT_CASES,
    added,
    base_feasible_points,
    compiled,
    oracle_verdict,
    query,
    two_feature_ensemble,
    verdict,
    verdict_case,
)


def test_affected_leaves_are_those_below_a_test_of_a_varied_feature():
    t0 = two_feature_ensemble().trees[0]
    assert affected_leaves(t0, frozenset({1})) == {3, 4}


def test_every_leaf_below_a_varied_root_is_affected():
    t0 = two_feature_ensemble().trees[0]
    assert affected_leaves(t0, frozenset({0})) == {1, 3, 4}


def test_unaffected_leaves_are_per_tree_the_complement():
    ens = two_feature_ensemble()
    assert unaffected_leaves(ens, frozenset({0})) == (frozenset(), frozenset({1, 2}))


def test_unaffected_leaves_follow_the_varied_set_asked():
    ens = two_feature_ensemble()
    unaffected_leaves(ens, frozenset({0}))
    assert unaffected_leaves(ens, frozenset({1})) == (frozenset({1}), frozenset())


def test_unaff_adds_one_equality_per_unaffected_leaf():
    c = compiled(two_feature_ensemble(), query(("x0",)))
    enc = c.encoding
    new = added(c, UnaffectedLeaves().apply(c)[0])
    l1, l2 = enc.leaves[0][1], enc.leaves[1][1]
    assert new == (
        Linear((l1[1], l2[1]), (1.0, -1.0), "==", 0.0, ("unaff", 1, 1)),
        Linear((l1[2], l2[2]), (1.0, -1.0), "==", 0.0, ("unaff", 1, 2)),
    )


def test_unaff_adds_nothing_when_every_leaf_is_affected():
    c = compiled(two_feature_ensemble(), query(("x0", "x1")))
    assert added(c, UnaffectedLeaves().apply(c)[0]) == ()


def test_unaff_changes_neither_variables_nor_objective():
    c = compiled(two_feature_ensemble(), query(("x0",)))
    out, _ = UnaffectedLeaves().apply(c)
    assert (out.problem.vars, out.problem.objective) == (c.problem.vars, c.problem.objective)


def test_unaff_keeps_the_encoding():
    c = compiled(two_feature_ensemble(), query(("x0",)))
    assert UnaffectedLeaves().apply(c)[0].encoding is c.encoding


def test_unaff_equalities_hold_at_every_point_of_the_base_encoding():
    c = compiled(two_feature_ensemble(), query(("x1",), gap=Gap(0.0, "margin")))
    new = added(c, UnaffectedLeaves().apply(c)[0])
    points = list(base_feasible_points(c))
    assert points and all(check_constraint(k, v) for v in points for k in new)


def test_unaff_invert_is_the_identity():
    c = compiled(two_feature_ensemble(), query(("x0",)))
    _, inverse = UnaffectedLeaves().apply(c)
    values = np.arange(c.problem.n_vars, dtype=float)
    assert UnaffectedLeaves().invert(values, inverse) is values


@pytest.mark.parametrize("seed,gap", VERDICT_CASES)
def test_verdict_with_unaff_equals_verdict_without_and_the_oracle(seed, gap):
    ens, on = verdict_case(seed, gap, DEFAULT_PASSES)
    off = on.planned(passes=DEFAULT_PASSES - {"unaff"})
    assert verdict(ens, on) == verdict(ens, off) == oracle_verdict(ens, on)
