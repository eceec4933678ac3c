"""PredicateOrdering and PairwiseConsistency (compiler/passes/ordering.py)."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, Tree
from treesens.compiler.ir import Linear, check_constraint
from treesens.compiler.passes import PairwiseConsistency, PredicateOrdering
from treesens.compiler.passes.ordering import predicate_chains
from treesens.compiler.query import DEFAULT_PASSES, Gap
from treesens.tests.oracle import random_ensemble
from treesens.tests.pass_cases import (
    VERDICT_CASES,
    added,
    base_feasible_points,
    compiled,
    oracle_verdict,
    query,
    verdict,
    verdict_case,
)


def three_threshold_ensemble() -> Ensemble:
    """Two stumps on x0 (thresholds 1, 2) and one on x1 (threshold 3), three
    thresholds in all: x0 has two predicates, x1 one."""

    def stump(f: int, th: float, yes: float, no: float) -> Tree:
        return Tree(
            feature=[f, -1, -1],
            threshold=[th, 0.0, 0.0],
            left=[1, -1, -1],
            right=[2, -1, -1],
            default_left=[True] * 3,
            value=np.array([[0.0], [yes], [no]]),
            outputs=(0,),
        )

    return Ensemble(
        trees=(stump(0, 1.0, 1.0, -1.0), stump(0, 2.0, 0.5, -0.5), stump(1, 3.0, 0.2, -0.2)),
        features=(Feature("x0", "real"), Feature("x1", "real")),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        source="three-threshold",
    )


def test_a_shared_feature_has_one_chain_for_both_inputs():
    enc = compiled(three_threshold_ensemble(), query(("x1",))).encoding
    assert list(predicate_chains(enc)) == [(0, 0, enc.pred[0][0])]


def test_a_varied_feature_has_one_chain_per_input():
    enc = compiled(three_threshold_ensemble(), query(("x0",))).encoding
    assert list(predicate_chains(enc)) == [(0, 0, enc.pred[0][0]), (1, 0, enc.pred[1][0])]


def test_a_single_predicate_is_no_chain():
    enc = compiled(three_threshold_ensemble(), query(("x0",))).encoding
    assert all(f != 1 for _, f, _ in predicate_chains(enc))


def test_ordering_chains_adjacent_predicates():
    c = compiled(three_threshold_ensemble(), query(("x1",)))
    q1, q2 = c.encoding.pred[0][0]
    new = added(c, PredicateOrdering().apply(c)[0])
    assert new == (Linear((q1, q2), (1.0, -1.0), "<=", 0.0, ("order", 0, 0, 0)),)


def test_ordering_adds_k_minus_one_constraints_per_chain():
    ens = random_ensemble(4, 6, 3, 2, 5)
    c = compiled(ens, query(("f0",)))
    n = sum(len(qs) - 1 for _, _, qs in predicate_chains(c.encoding))
    assert len(added(c, PredicateOrdering().apply(c)[0])) == n


def test_pairwise_adds_every_pair_of_a_chain():
    ens = random_ensemble(4, 6, 3, 2, 5)
    c = compiled(ens, query(("f0",)))
    n = sum(len(qs) * (len(qs) - 1) // 2 for _, _, qs in predicate_chains(c.encoding))
    assert len(added(c, PairwiseConsistency().apply(c)[0])) == n


def test_ordering_constraints_hold_at_every_point_of_the_base_encoding():
    c = compiled(three_threshold_ensemble(), query(("x0",), gap=Gap(0.0, "margin")))
    new = added(c, PredicateOrdering().apply(c)[0]) + added(c, PairwiseConsistency().apply(c)[0])
    points = list(base_feasible_points(c))
    assert points and all(check_constraint(k, v) for v in points for k in new)


def test_ordering_cuts_an_inconsistent_assignment():
    c = compiled(three_threshold_ensemble(), query(("x1",)))
    q1, q2 = c.encoding.pred[0][0]
    values = np.zeros(c.problem.n_vars)
    values[q1] = 1.0  # x0 < 1 but not x0 < 2
    (con,) = added(c, PredicateOrdering().apply(c)[0])
    assert not check_constraint(con, values)


@pytest.mark.parametrize("cls", [PredicateOrdering, PairwiseConsistency])
def test_consistency_invert_is_the_identity(cls):
    c = compiled(three_threshold_ensemble(), query(("x0",)))
    _, inverse = cls().apply(c)
    values = np.arange(c.problem.n_vars, dtype=float)
    assert cls().invert(values, inverse) is values


@pytest.mark.parametrize("seed,gap", VERDICT_CASES)
def test_verdict_with_ordering_equals_verdict_with_pairwise_and_the_oracle(seed, gap):
    ens, on = verdict_case(seed, gap, DEFAULT_PASSES)
    off = on.planned(passes=DEFAULT_PASSES - {"ordering"})
    assert verdict(ens, on) == verdict(ens, off) == oracle_verdict(ens, on)
