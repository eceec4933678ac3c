"""Aff-bin / Aff-multi (compiler/passes/affected_gap.py) and the summed gap rows it
adds (compiler/passes/gap_sum.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.ir import Linear, check_constraint
from treesens.compiler.passes import AffectedLeafGap
from treesens.compiler.passes.gap_sum import gap_sum
from treesens.compiler.query import ANY, DEFAULT_PASSES, Gap
from treesens.tests.oracle import random_ensemble
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


def _vary_x1():
    return compiled(two_feature_ensemble(), query(("x1",)))


def test_gap_sum_weighs_each_affected_leaf_by_its_value_and_the_rows_signs():
    enc = _vary_x1().encoding
    (t0a, t1a), (t0b, t1b) = enc.leaves
    s = gap_sum(enc)
    assert dict(zip(s.vars, s.coefs)) == {
        t0a[3]: 1.0, t0a[4]: -1.0, t0b[3]: -1.0, t0b[4]: 1.0,
        t1a[1]: 0.5, t1a[2]: -0.5, t1b[1]: -0.5, t1b[2]: 0.5,
    }  # fmt: skip


def test_gap_sum_drops_an_unaffected_leaf_whose_terms_cancel():
    enc = _vary_x1().encoding
    s = gap_sum(enc)
    assert enc.leaves[0][0][1] not in s.vars and enc.leaves[1][0][1] not in s.vars


def test_gap_sum_constant_is_the_intercepts_of_both_rows():
    assert gap_sum(_vary_x1().encoding).constant == 0.25 - 0.25


def test_gap_sum_rhs_is_both_rows_rhs_relaxed_like_the_rows():
    enc = _vary_x1().encoding
    assert gap_sum(enc).rhs == 2 * 0.25 - enc.relax * 2


def test_gap_sum_merges_an_unaffected_leaf_only_the_second_row_weighs():
    enc = _vary_x1().encoding
    cond = replace(enc.condition, pair_sum=((0.0,), (-1.0,), 0.25))
    s = gap_sum(replace(enc, condition=cond))
    assert dict(zip(s.vars, s.coefs))[enc.leaves[0][0][1]] == -2.0


def test_gap_sum_is_none_when_the_second_class_is_any():
    ens = random_ensemble(5, 6, 2, 3, 3, n_classes=3)
    enc = compiled(ens, query(("f0",), gap=Gap(1.5), classes=(0, ANY))).encoding
    assert gap_sum(enc) is None


def test_aff_adds_the_gap_sum_as_one_constraint():
    c = _vary_x1()
    s = gap_sum(c.encoding)
    new = added(c, AffectedLeafGap().apply(c)[0])
    assert new == (Linear(s.vars, s.coefs, ">=", s.rhs - s.constant, ("aff",)),)


def test_aff_skips_a_query_without_a_gap_sum():
    ens = random_ensemble(5, 6, 2, 3, 3, n_classes=3)
    c = compiled(ens, query(("f0",), gap=Gap(1.5), classes=(0, ANY)))
    assert not AffectedLeafGap().accepts(c)


def test_aff_multi_sums_the_two_class_differences():
    ens = random_ensemble(5, 6, 2, 3, 3, n_classes=3)
    c = compiled(ens, query(("f0",), gap=Gap(1.5), classes=(0, 1)))
    assert gap_sum(c.encoding).rhs <= 2 * np.log(1.5)
    assert AffectedLeafGap().accepts(c)


@pytest.mark.parametrize("classes", [None, (0, 1)], ids=["binary", "multiclass"])
def test_aff_holds_at_every_point_of_the_base_encoding(classes):
    if classes is None:
        ens, gap = two_feature_ensemble(), Gap(0.25, "margin")
    else:
        ens, gap = random_ensemble(3, 6, 2, 2, 2, n_classes=3), Gap(1.05)
    c = compiled(ens, query(("x1",) if classes is None else ("f0",), gap=gap, classes=classes))
    new = added(c, AffectedLeafGap().apply(c)[0])
    points = list(base_feasible_points(c))
    assert points and all(check_constraint(k, v) for v in points for k in new)


def test_aff_invert_is_the_identity():
    c = _vary_x1()
    _, inverse = AffectedLeafGap().apply(c)
    values = np.arange(c.problem.n_vars, dtype=float)
    assert AffectedLeafGap().invert(values, inverse) is values


@pytest.mark.parametrize("seed,gap", VERDICT_CASES)
def test_verdict_with_aff_equals_verdict_without_and_the_oracle(seed, gap):
    ens, on = verdict_case(seed, gap, DEFAULT_PASSES)
    off = on.planned(passes=DEFAULT_PASSES - {"aff"})
    assert verdict(ens, on) == verdict(ens, off) == oracle_verdict(ens, on)


@pytest.mark.parametrize("seed", [1, 2])
def test_multiclass_verdict_with_aff_equals_verdict_without_and_the_oracle(seed):
    ens = random_ensemble(seed, 6, 2, 3, 3, n_classes=3)
    on = query(("f0",), gap=Gap(1.2), classes=(0, 1), passes=DEFAULT_PASSES)
    off = on.planned(passes=DEFAULT_PASSES - {"aff"})
    assert verdict(ens, on) == verdict(ens, off) == oracle_verdict(ens, on)
