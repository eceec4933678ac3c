"""Absurd gaps are bad input (the solvers' arithmetic breaks long before such gaps)."""

from __future__ import annotations

import pytest

from treesens.compiler.errors import InputError
from treesens.compiler.kinds import resolve_condition
from treesens.compiler.query import Gap, Query
from treesens.tests.oracle import random_ensemble


def _multiclass():
    return random_ensemble(
        1, n_trees=3, depth=2, n_features=2, n_thresholds=2, n_classes=3, leaf_scale=1.0
    )


def test_a_huge_multiclass_ratio_is_rejected():
    with pytest.raises(InputError, match="at most 1e\\+06"):
        resolve_condition(_multiclass(), Query(vary=("f0",), gap=Gap(1e15), classes=(0, 1)))


def test_a_huge_multiclass_margin_gap_is_rejected_before_exp_overflows():
    q = Query(vary=("f0",), gap=Gap(800.0, "margin"), classes=(0, 1))
    with pytest.raises(InputError, match="too large"):
        resolve_condition(_multiclass(), q)


def test_a_huge_binary_margin_gap_is_rejected():
    ens = random_ensemble(2, n_trees=3, depth=2, n_features=2, n_thresholds=2)
    with pytest.raises(InputError, match="too large"):
        resolve_condition(ens, Query(vary=("f0",), gap=Gap(1e300, "margin")))


def test_an_ordinary_ratio_is_accepted():
    assert resolve_condition(_multiclass(), Query(vary=("f0",), gap=Gap(3.0), classes=(0, 1)))
