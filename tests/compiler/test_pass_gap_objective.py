"""Obj-bin / Obj-multi (compiler/passes/gap_objective.py)."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.invert import values_for_pair
from treesens.compiler.ir import Objective
from treesens.compiler.passes import GapObjective
from treesens.compiler.passes.gap_sum import gap_sum
from treesens.compiler.query import ANY, DEFAULT_PASSES, Gap
from treesens.tests.oracle import random_ensemble
from treesens.tests.pass_cases import (
    VERDICT_CASES,
    compiled,
    oracle_verdict,
    query,
    two_feature_ensemble,
    verdict,
    verdict_case,
)


def _vary_x1():
    return compiled(two_feature_ensemble(), query(("x1",)))


def test_obj_maximises_the_gap_sum():
    c = _vary_x1()
    s = gap_sum(c.encoding)
    out, _ = GapObjective().apply(c)
    assert out.problem.objective == Objective("max", s.vars, s.coefs, s.constant, role="guide")


def test_obj_only_guides_the_search():
    out, _ = GapObjective().apply(_vary_x1())
    assert out.problem.objective.role == "guide"


def test_obj_adds_no_constraint():
    c = _vary_x1()
    out, _ = GapObjective().apply(c)
    assert out.problem.constraints == c.problem.constraints


def test_obj_is_the_difference_of_the_two_raw_scores_at_a_pair():
    c = _vary_x1()
    ens, obj = c.encoding.ensemble, GapObjective().apply(c)[0].problem.objective
    x1, x2 = np.array([0.0, 0.0]), np.array([0.0, 2.0])
    vals = values_for_pair(c.encoding, x1, x2, c.problem.n_vars)
    value = obj.constant + sum(k * vals[v] for v, k in zip(obj.vars, obj.coefs))
    assert value == pytest.approx(ens.raw(x1[None])[0, 0] - ens.raw(x2[None])[0, 0])


def test_obj_keeps_an_objective_already_set():
    c = _vary_x1()
    other = Objective("min", (0,), (1.0,), role="optimize")
    assert not GapObjective().accepts(c.with_problem(c.problem.with_objective(other)))


def test_obj_skips_a_query_without_a_gap_sum():
    ens = random_ensemble(5, 6, 2, 3, 3, n_classes=3)
    c = compiled(ens, query(("f0",), gap=Gap(1.5), classes=(0, ANY)))
    assert not GapObjective().accepts(c)


def test_obj_multi_maximises_the_two_class_differences():
    ens = random_ensemble(5, 6, 2, 3, 3, n_classes=3)
    c = compiled(ens, query(("f0",), gap=Gap(1.5), classes=(0, 1)))
    out, _ = GapObjective().apply(c)
    assert out.problem.objective.vars == gap_sum(c.encoding).vars


def test_obj_invert_is_the_identity():
    c = _vary_x1()
    _, inverse = GapObjective().apply(c)
    values = np.arange(c.problem.n_vars, dtype=float)
    assert GapObjective().invert(values, inverse) is values


@pytest.mark.parametrize("seed,gap", VERDICT_CASES)
def test_verdict_with_obj_equals_verdict_without_and_the_oracle(seed, gap):
    ens, on = verdict_case(seed, gap, DEFAULT_PASSES)
    off = on.planned(passes=DEFAULT_PASSES - {"obj"})
    assert verdict(ens, on) == verdict(ens, off) == oracle_verdict(ens, on)


@pytest.mark.parametrize("seed", [1, 2])
def test_multiclass_verdict_with_obj_equals_verdict_without_and_the_oracle(seed):
    ens = random_ensemble(seed, 6, 2, 3, 3, n_classes=3)
    on = query(("f0",), gap=Gap(1.2), classes=(0, 1), passes=DEFAULT_PASSES)
    off = on.planned(passes=DEFAULT_PASSES - {"obj"})
    assert verdict(ens, on) == verdict(ens, off) == oracle_verdict(ens, on)
