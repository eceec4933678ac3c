"""A solver process the time limit stopped before it reported its deterministic time
(CP-SAT in a long presolve step on a 1,000-tree model: churn lgbm_t1000_l63, `--work 2M
--timeout 300`, 296 s) counted no work: the message said "0 of 2,000,000 work units used",
which a budget would be sized from. ``stats.work.unreported`` and the message say the
solver's units were not reported."""

from __future__ import annotations

import pytest

import treesens
from treesens.answers.work import work_line
from treesens.backends.registry import available
from treesens.compiler.solver import UNKNOWN, Solution
from treesens.driver import backend
from treesens.tests.driver.test_work_budget import FIVE, MODEL

pytestmark = pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)")


class _Stopped:
    """A worker whose solver process the time limit stopped: no stats came back."""

    def solve(self, problem, options, watch=None):
        return Solution(UNKNOWN, time=1.0, message="time limit reached (solver process stopped)")


@pytest.fixture
def stopped(monkeypatch):
    monkeypatch.setattr(backend, "worker_for", lambda *a, **k: _Stopped())
    return treesens.check(MODEL, vary=FIVE, gap=0.499, heuristic=False, work="2M")


def test_a_solver_stopped_before_it_reported_its_work_is_named_in_stats(stopped):
    assert stopped.status == "unknown"
    (why,) = stopped.stats["work"]["unreported"]
    assert why.startswith("solver: its process was stopped")


def test_the_message_of_a_solver_stopped_unreported_says_its_units_are_not_counted(stopped):
    assert "work units counted; the solver's not reported" in stopped.message, stopped.message
    assert "work units used" not in stopped.message


def test_the_work_line_says_the_solver_stopped_before_reporting(stopped):
    line = work_line(stopped.stats["work"])
    assert "solver stopped before reporting its units (not counted)" in line, line


def test_a_solver_that_reported_its_work_has_nothing_unreported():
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, heuristic=False, work="250k")
    assert "unreported" not in res.stats["work"]
