"""Feature domains: representative values of the intervals between thresholds."""

from __future__ import annotations

import math
import warnings

from treesens.compiler.domain import candidates
from treesens.compiler.ensemble import Feature


def test_a_threshold_beyond_float32_range_gives_candidates_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = candidates(1e39, math.inf, Feature("x"))
    assert math.inf in out and all(not math.isnan(v) for v in out)


def test_candidates_between_two_thresholds_start_with_their_midpoint():
    assert candidates(1.0, 3.0, Feature("x"))[0] == 2.0
