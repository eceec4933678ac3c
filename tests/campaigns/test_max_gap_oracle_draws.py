"""The max-gap oracle (tests/max_gap_oracle.max_gap_problems) takes a bound one float
rounding away from the exact gap for a draw, as the product's replay takes a pair on the
gap's boundary for a near miss, and still flags a bracket that misses the exact gap.

The model's largest gap is met by a pair whose x2 lies below 0.25, where 0.5 - P(x2)
rounds: the product's lower bound is that gap rounded down until the pair meets it, one
ulp below the oracle's unrounded min(P(x1) - 0.5, 0.5 - P(x2)), or equal to it where the
machine's exp rounds the two alike (numpy's exp differs in the last bit across CPUs). A
proof at the pair itself closes the bracket there."""

from __future__ import annotations

import copy

import numpy as np

from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.questions.max_gap import max_gap_query
from treesens.tests.max_gap_oracle import draw_band, exact_max_gap, max_gap_problems
from treesens.tests.oracle import random_ensemble

WRONG = 1e-4  # far past the band (about 3e-7 here), inside the search's tolerance


def _answer():
    ens = random_ensemble(np.random.default_rng(25), 3, 2, 3, 2, leaf_scale=3.0)
    r = max_gap_query(ens, Query(vary=("f0",), plan=Plan(timeout=60.0)))
    return ens, r, exact_max_gap(ens, ("f0",))


def _with_bounds(r, lower: float, upper: float):
    shown = copy.copy(r)
    shown.max_gap = {**r.max_gap, "lower": lower, "upper": upper}
    return shown


def test_the_lower_bound_is_at_most_one_rounding_below_the_oracle_s_gap():
    ens, r, exact = _answer()
    assert np.nextafter(exact, 0.0) <= r.max_gap["lower"] <= exact
    assert not max_gap_problems(exact, r, ens)


def test_a_bracket_closed_one_rounding_below_the_exact_gap_is_a_draw():
    ens, r, exact = _answer()
    below = np.nextafter(exact, 0.0)
    assert exact < below + draw_band(ens)
    assert not max_gap_problems(exact, _with_bounds(r, below, below), ens)


def test_an_upper_bound_below_the_exact_gap_is_flagged():
    ens, r, exact = _answer()
    low = exact - 2 * WRONG
    problems = max_gap_problems(exact, _with_bounds(r, low, exact - WRONG), ens)
    assert any("below the exact max gap" in p for p in problems), problems


def test_a_lower_bound_above_the_exact_gap_is_flagged():
    ens, r, exact = _answer()
    problems = max_gap_problems(exact, _with_bounds(r, exact + WRONG, exact + 2 * WRONG), ens)
    assert any("above the exact max gap" in p for p in problems), problems
