"""The CP-SAT backend's search schedule: the default search first, then two other searches
of CP-SAT's portfolio for the rest of the time (docs/benchmarks.md, "Search schedule")."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest

from treesens.backends.search_schedule import SCHEDULE, search_phases
from treesens.compiler.ir import Objective, Problem, ProblemBuilder
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.compiler.solver import SolveOptions
from treesens.driver import solve_query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble


def _problem(role: str | None) -> Problem:
    b = ProblemBuilder()
    x = b.var("x")
    objective = None if role is None else Objective("max", (x,), (1.0,), 0.0, role=role)
    return b.build(objective)


def _options(**kw) -> SolveOptions:
    return SolveOptions(deadline=time.time() + 60, **kw)


def test_a_single_thread_search_for_a_first_point_runs_the_schedule():
    assert search_phases(_problem("guide"), _options()) == SCHEDULE


def test_the_default_search_comes_first_and_gets_most_of_the_time():
    assert SCHEDULE[0].name == "default" and SCHEDULE[0].params == ()
    assert SCHEDULE[0].share >= 0.5
    assert sum(p.share for p in SCHEDULE) == pytest.approx(1.0)


def test_an_optimizing_objective_runs_one_search():
    phases = search_phases(_problem("optimize"), _options(first_solution=False))
    assert [p.name for p in phases] == ["default"]


def test_a_problem_without_objective_runs_one_search():
    assert [p.name for p in search_phases(_problem(None), _options())] == ["default"]


def test_several_threads_leave_the_searches_to_cp_sat_s_own_portfolio():
    phases = search_phases(_problem("guide"), _options(threads=4))
    assert [p.name for p in phases] == ["default"]


def test_a_user_s_search_parameter_replaces_the_schedule():
    opts = _options(params=(("search_branching", "FIXED_SEARCH"),))
    assert [p.name for p in search_phases(_problem("guide"), opts)] == ["default"]


def test_a_user_s_other_parameter_keeps_the_schedule():
    opts = _options(params=(("cp_model_probing_level", 2),))
    assert search_phases(_problem("guide"), opts) == SCHEDULE


# run in a child process: this process must not import a solver (see test_backends)
_GIVE_UP_FIRST = """
import json, time
import numpy as np
from treesens.backends import cpsat
from treesens.compiler.solver import SolveOptions
from treesens.backends.search_schedule import SCHEDULE, SearchPhase
from treesens.driver import compile_query, for_backend
from treesens.compiler.query import Gap, Plan, Query
from treesens.tests.oracle import random_ensemble

ens = random_ensemble(np.random.default_rng(1003), 4, 3, 3, 3, leaf_scale=1.0)
q = Query(vary=("f0",), gap=Gap(0.1), plan=Plan(timeout=60.0, options=(("heuristic", False),)))
compiled, _, _ = for_backend(compile_query(ens, q), "cpsat")
gives_up = SearchPhase("gives-up", (("stop_after_presolve", True),), 0.5)
out = {}
for n_giving_up in (1, 2, 3):
    schedule = (gives_up,) * n_giving_up + SCHEDULE[n_giving_up:]
    sol = cpsat.solve(compiled.problem, SolveOptions(deadline=time.time() + 60), schedule)
    out[n_giving_up] = [sol.status, sol.stats.get("search")]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def give_up_runs() -> dict:
    """{searches that give up first: [status, search that answered]}"""
    proc = subprocess.run(
        [sys.executable, "-c", _GIVE_UP_FIRST], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_when_the_first_search_gives_up_the_second_answers(give_up_runs):
    status, search = give_up_runs["1"]
    assert search == "lp-branching" and status in ("feasible", "optimal")


def test_when_two_searches_give_up_the_third_answers(give_up_runs):
    status, search = give_up_runs["2"]
    assert search == "core" and status in ("feasible", "optimal")


def test_when_every_search_gives_up_the_answer_is_unknown_and_names_no_search(give_up_runs):
    assert give_up_runs["3"] == ["unknown", None]


@pytest.mark.parametrize("phase", SCHEDULE, ids=lambda p: p.name)
def test_each_search_of_the_schedule_alone_agrees_with_brute_force(phase):
    for seed in range(6):
        ens = random_ensemble(np.random.default_rng(1000 + seed), 4, 3, 3, 3, leaf_scale=1.0)
        q = Query(
            vary=("f0",),
            gap=Gap(0.1),
            plan=Plan(
                timeout=60.0, options=(("heuristic", False), ("solver_params", phase.params))
            ),
        )
        r = solve_query(ens, q)
        expected = "sensitive" if brute_force_sensitive(ens, q) else "insensitive"
        assert r.status == expected, (seed, r.status, r.message, r.error)
        if r.status == "sensitive":
            assert r.validated


def _rendered(stats: dict) -> str:
    from rich.console import Console

    from treesens.answers.result import Result
    from treesens.views.result_view import render_result

    res = Result("q", "sensitive", "cpsat", ["sex"], 0.2, stats=stats)
    console = Console(record=True, width=200)
    render_result(res, console=console)
    return console.export_text()


def test_the_summary_names_a_later_search_of_the_schedule_that_answered():
    assert "backend cpsat (core search)," in _rendered({"search": "core"})


def test_the_summary_is_unchanged_when_the_default_search_answered():
    assert "backend cpsat," in _rendered({"search": "default"})
