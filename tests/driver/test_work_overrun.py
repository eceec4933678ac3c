"""A work budget the solver runs past (answers/work.SOLVER_OVER): CP-SAT checks its
deterministic limit between its steps and z3 its rlimit between its own, so the step under
way when the budget runs out ends past it. ``stats.work`` and the message say by how much,
where they said "4 of 1 work units", and no solve starts with no work left."""

from __future__ import annotations

import time

import pytest

import treesens
from treesens.backends.registry import available
from treesens.compiler.solver import INFEASIBLE, UNKNOWN, Solution, SolveOptions
from treesens.tests.driver.test_work_budget import FIVE, MODEL

pytestmark = pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)")


def _one_unit():
    """Five features at gap 0.499, the heuristic off: CP-SAT's first steps take about 4
    work units, past a budget of 1."""
    return treesens.check(MODEL, vary=FIVE, gap=0.499, heuristic=False, work=1)


def test_units_the_solver_ran_past_the_budget_are_stated_in_stats():
    work = _one_unit().stats["work"]
    assert work["used"] > work["budget"] == 1
    assert work["over"] == work["used"] - work["budget"]
    assert "CP-SAT checks its deterministic limit between its steps" in work["over_by"]


def test_a_budget_the_solver_ran_past_says_by_how_much_not_n_of_a_smaller_n():
    res = _one_unit()
    over = res.stats["work"]["over"]
    assert res.message.startswith("work budget spent")
    assert f"{over:,} past the budget of 1 in the solver's last step" in res.message
    assert f"{res.stats['work']['used']} of 1 work units" not in res.message


def test_the_units_past_the_budget_are_the_same_asked_twice():
    assert _one_unit().stats["work"] == _one_unit().stats["work"]


def test_a_budget_the_solver_stays_within_has_no_overrun():
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, heuristic=False, work="250k")
    assert res.status == "insensitive"
    assert "over" not in res.stats["work"]


def test_a_proof_to_confirm_with_no_work_left_is_not_asked_again(monkeypatch):
    """A proof at probing level 0 that spent the whole budget is asked again at CP-SAT's
    own level only with work left: a solve given none would still take its first step."""
    from treesens.backends import cpsat
    from treesens.backends.search_schedule import SearchPhase

    calls = []

    def solve_once(model, xs, problem, options, phase, seconds, confirm=False, det=None):
        calls.append(det)
        stats = {"deterministic_time": det, "probing_level": 2 if confirm else 0}
        return Solution(INFEASIBLE, stats=stats)

    monkeypatch.setattr(cpsat, "build", lambda problem: (None, []))
    monkeypatch.setattr(cpsat, "search_phases", lambda *a: (SearchPhase("default", (), 1.0),))
    monkeypatch.setattr(cpsat, "_solve_once", solve_once)
    sol = cpsat.solve(None, SolveOptions(deadline=time.time() + 60, work=0.001))
    assert calls == [0.001]
    assert (sol.status, sol.message) == (UNKNOWN, "work budget spent")
