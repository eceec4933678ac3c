"""Feature.admits is the one domain check of a value (its bounds, whole where integral,
NaN where it may be missing) that the report's ranking, the audit, the domain's values
and the anchored search read, where each spelled it out."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treesens.compiler.ensemble import Feature

GRID = [float(v) for v in np.arange(-4.0, 9.0, 0.25)]


@pytest.mark.parametrize("kind", ["integer", "categorical"])
def test_an_integral_feature_admits_exactly_the_whole_values_within_its_bounds(kind):
    feat = Feature("f", kind=kind, lb=-1.0, ub=5.0)
    whole = {float(v) for v in range(-1, 6)}
    assert [v for v in GRID if feat.admits(v)] == [v for v in GRID if v in whole]


def test_a_real_feature_admits_every_value_within_its_bounds_and_none_past_them():
    feat = Feature("f", lb=-1.5, ub=2.25)
    assert [v for v in GRID if feat.admits(v)] == [v for v in GRID if -1.5 <= v <= 2.25]


@pytest.mark.parametrize("missing", [True, False])
def test_nan_is_admitted_only_where_the_feature_may_be_missing(missing):
    assert Feature("f", may_be_missing=missing).admits(math.nan) is missing


def test_an_unbounded_integer_feature_does_not_admit_infinity():
    assert not Feature("f", kind="integer").admits(math.inf)
