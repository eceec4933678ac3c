"""CP-SAT (OR-Tools). Imported only inside a worker process.

Accepts booleans and integers with integer coefficients (IntegerScaling runs first),
exactly-one and implications natively.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from ortools.sat.python import cp_model

from ..compiler.ir import BOOL, GE, LE, ExactlyOne, Implication, Linear, Objective, Problem
from ..compiler.solver import (
    ERROR,
    FEASIBLE,
    INFEASIBLE,
    OPTIMAL,
    UNKNOWN,
    WORK_STOP,
    Incumbent,
    Solution,
    SolveOptions,
)
from .search_schedule import SCHEDULE, SearchPhase, search_phases

REPORT_SECONDS = 0.5  # optimising: at most one better point reported per this many seconds


class _Reporter(cp_model.CpSolverSolutionCallback):
    """Sends each better point (at most one per REPORT_SECONDS) as an Incumbent."""

    def __init__(self, xs, const: float, report) -> None:
        super().__init__()
        self.xs, self.const, self.report = xs, const, report
        self.t0 = time.time()
        self.last = -REPORT_SECONDS

    def on_solution_callback(self) -> None:
        now = time.time() - self.t0
        if now - self.last < REPORT_SECONDS:
            return
        self.last = now
        values = np.fromiter((self.value(x) for x in self.xs), np.float64, len(self.xs))
        bound = self.best_objective_bound + self.const
        self.report(Incumbent(values, self.objective_value + self.const, bound, now))


def _expr(xs, c: Linear):
    return cp_model.LinearExpr.weighted_sum([xs[v] for v in c.vars], [int(k) for k in c.coefs])


def _add_linear(model, xs, c: Linear):
    e = _expr(xs, c)
    rhs = int(c.rhs)
    if c.sense == "<=":
        return model.add(e <= rhs)
    if c.sense == ">=":
        return model.add(e >= rhs)
    return model.add(e == rhs)


def parallel_to_guide(c: Linear, obj: Objective | None) -> bool:
    """Whether ``c`` bounds a guiding objective: the objective's own sum (or a positive
    multiple of it) on the side the objective pushes, ``>=`` when maximising.

    CP-SAT's presolve turns such a row into a domain of the objective, and CP-SAT 9.15
    at probing level 0 (PROBING_LEVEL) can then call a feasible model infeasible: a wrong
    "insensitive" (tests/backends/test_cpsat_guide_row.py, model seed 502). Such a model
    is solved at CP-SAT's own probing level (GUIDE_ROW_PROBING_LEVEL), which does not.
    The row (AffectedLeafGap's) stays: leaving it out loses what it adds over the gap rows
    after rounding (a regressor's change beyond its largest then ends in near misses)."""
    if obj is None or obj.role != "guide" or not c.vars or len(c.vars) != len(obj.vars):
        return False
    if c.sense != (GE if obj.sense == "max" else LE):
        return False
    mine = dict(zip(c.vars, c.coefs))
    if set(mine) != set(obj.vars):
        return False
    ratio = None
    for v, k in zip(obj.vars, obj.coefs):
        if k == 0.0:
            if mine[v] != 0.0:
                return False
            continue
        r = mine[v] / k
        if r <= 0.0 or (ratio is not None and r != ratio):
            return False
        ratio = r
    return ratio is not None


def build(problem: Problem) -> tuple[cp_model.CpModel, list]:
    model = cp_model.CpModel()
    xs = []
    for v in problem.vars:
        if v.kind == BOOL:
            xs.append(model.new_bool_var(v.name))
        elif v.kind == "int":
            xs.append(model.new_int_var(int(v.lb), int(v.ub), v.name))
        else:
            raise ValueError(f"CP-SAT takes no real variables ({v.name})")
    for c in problem.constraints:
        if isinstance(c, ExactlyOne):
            model.add_exactly_one([xs[v] for v in c.vars])
        elif isinstance(c, Implication):
            lit = xs[c.var] if c.value else ~xs[c.var]
            _add_linear(model, xs, c.then).only_enforce_if(lit)
        else:
            _add_linear(model, xs, c)
    obj = problem.objective
    if obj is not None:
        e = cp_model.LinearExpr.weighted_sum([xs[v] for v in obj.vars], [int(k) for k in obj.coefs])
        if obj.sense == "max":
            model.maximize(e)
        else:
            model.minimize(e)
    return model, xs


PROBING_LEVEL = 0  # CP-SAT's own default is 2; --solver-param cp_model_probing_level=2
GUIDE_ROW_PROBING_LEVEL = 2  # a model with a row parallel to its guide (parallel_to_guide)
# an infeasible answer at a lower level is solved again at this one (CP-SAT's own) before
# it is taken: CP-SAT 9.15's presolve at level 0 has called feasible models infeasible, a
# row parallel to the guide's (above) and a multiclass query's class "any" (with every
# pass off too: tests/backends/test_cpsat_probing.py), so its proofs there are not
# proofs; the pairs it finds are replay-checked, and stand
CONFIRM_PROBING_LEVEL = 2
# optimising (the data-aware utility): CP-SAT's level 1 leaves the clauses its presolve
# makes of the predicate ordering out of the LP, so the LP bound ignores the ordering;
# level 2 keeps them, and found better pairs sooner (docs/data-aware.md, "Why these
# defaults")
OPTIMISE_LINEARIZATION = 2


def _set_parameter(params, name: str, value) -> None:
    """Set a SatParameters field; enum fields take their member's name or number
    (``search_branching=FIXED_SEARCH`` or ``=1``), which the bindings do not convert."""
    current = getattr(params, name)  # AttributeError: no such field
    members = getattr(type(current), "__members__", None)
    if members is not None and not isinstance(value, type(current)):
        if isinstance(value, str):
            if value.upper() not in members:
                raise ValueError(f"not one of {', '.join(members)}")
            value = members[value.upper()]
        elif isinstance(value, int) and not isinstance(value, bool):
            by_number = {int(m): m for m in members.values()}
            if value not in by_number:
                raise ValueError(
                    f"not one of {', '.join(f'{int(m)}={k}' for k, m in members.items())}"
                )
            value = by_number[value]
    setattr(params, name, value)


def solve(
    problem: Problem, options: SolveOptions, schedule: Sequence[SearchPhase] = SCHEDULE
) -> Solution:
    t0 = time.time()
    model, xs = build(problem)
    if options.hint is not None:
        for x, v in zip(xs, options.hint):
            model.add_hint(x, int(round(v)))
    build_time = time.time() - t0
    phases = search_phases(problem, options, schedule)
    start_left = options.remaining()
    solve_time = 0.0
    work = _WorkLeft(options.work)
    for i, phase in enumerate(phases):
        last = i == len(phases) - 1
        left = options.remaining()
        # each phase ends at its share of the time (or the work) the schedule started with
        seconds = left if last else min(left, phase.share * start_left)
        sol = _solve_once(model, xs, problem, options, phase, seconds, det=work.phase(phase, last))
        work.spend(sol)
        if sol.status == INFEASIBLE and sol.stats["probing_level"] < CONFIRM_PROBING_LEVEL:
            solve_time += sol.time  # its proof is not taken: asked again at CP-SAT's level
            if work.spent():  # not with no work left: its first step would pass the budget
                sol = _unconfirmed(sol)
                break
            left = options.remaining()
            sol = _solve_once(model, xs, problem, options, phase, left, True, work.left())
            work.spend(sol)
        solve_time += sol.time
        if sol.status != UNKNOWN or last or options.remaining() <= 0.1 or work.spent():
            break
    sol.time, sol.build_time = solve_time, build_time
    work.record(sol)
    if len(phases) > 1 and sol.status != UNKNOWN:
        sol.stats["search"] = phase.name  # the search that answered
    return sol


def _unconfirmed(sol: Solution) -> Solution:
    """A proof at a probing level below CONFIRM_PROBING_LEVEL with no work left to ask
    again at CP-SAT's own: not taken, the budget spent."""
    stats = {**sol.stats, "work_spent": True}
    return Solution(UNKNOWN, time=0.0, message="time limit reached", stats=stats)


class _WorkLeft:
    """A work budget's deterministic time (``SolveOptions.work``) over the schedule's
    phases: each phase its share of what the schedule started with, the last the rest."""

    def __init__(self, total: float | None):
        self.total, self.used, self.ended = total, 0.0, False

    def left(self) -> float | None:
        return None if self.total is None else max(0.0, self.total - self.used)

    def phase(self, phase, last: bool) -> float | None:
        if self.total is None:
            return None
        return self.left() if last else min(self.left(), phase.share * self.total)

    def spend(self, sol: Solution) -> None:
        self.used += sol.stats.get("deterministic_time", 0.0)
        self.ended = self.ended or bool(sol.stats.get("work_spent"))

    def spent(self) -> bool:
        return self.total is not None and self.left() <= 0.0

    def record(self, sol: Solution) -> None:
        """The schedule's deterministic time in all on the answer, and whether the last
        solve ended on the work budget (not the clock)."""
        sol.stats["deterministic_time"] = self.used
        if self.total is not None and sol.status == UNKNOWN and sol.stats.get("work_spent"):
            sol.message = "work budget spent"


def _solve_once(
    model,
    xs,
    problem: Problem,
    options: SolveOptions,
    phase,
    seconds,
    confirm: bool = False,
    det: float | None = None,
) -> Solution:
    """One solve within ``seconds`` (and ``det``, under a work budget: that deterministic
    time, on one worker, the only way CP-SAT's search is the same on every run);
    ``confirm``: at CP-SAT's own probing level (CONFIRM_PROBING_LEVEL), whatever the
    defaults and parameters set."""
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.num_workers = max(1, int(options.threads)) if det is None else 1
    if det is not None:
        p.max_deterministic_time = max(det, 1e-6)
    p.random_seed = int(options.seed)
    # leave time to reply
    p.max_time_in_seconds = max(0.05, min(0.97 * options.remaining() - 0.05, seconds))
    p.log_search_progress = bool(options.log)
    p.catch_sigint_signal = False  # the parent process handles Ctrl-C
    # probing off: faster on the benchmark models, proofs included (docs/benchmarks.md,
    # "Why the defaults are what they are")
    p.cp_model_probing_level = PROBING_LEVEL
    if any(
        isinstance(c, Linear) and parallel_to_guide(c, problem.objective)
        for c in problem.constraints
    ):
        p.cp_model_probing_level = GUIDE_ROW_PROBING_LEVEL
    if problem.objective is not None and options.first_solution:
        p.stop_after_first_solution = True
    optimizing = problem.objective is not None and not options.first_solution
    if optimizing:
        p.linearization_level = OPTIMISE_LINEARIZATION
    if optimizing and options.gap_limit > 0:
        p.relative_gap_limit = float(options.gap_limit)
    for name, value in (*phase.params, *options.params):
        try:
            _set_parameter(p, name, value)
        except (AttributeError, TypeError, ValueError, KeyError) as e:
            return Solution(ERROR, message=f"CP-SAT parameter {name}={value!r}: {e}")
    if confirm:
        p.cp_model_probing_level = CONFIRM_PROBING_LEVEL
    level = p.cp_model_probing_level
    # the model leaves the objective's constant out (CP-SAT's objective is integral)
    const = problem.objective.constant if problem.objective is not None else 0.0
    reporter = None
    if optimizing and options.report is not None:
        reporter = _Reporter(xs, const, options.report)
    t1 = time.time()
    status = solver.solve(model, reporter)
    solve_time = time.time() - t1
    stats = {"conflicts": solver.num_conflicts, "branches": solver.num_branches}
    stats["deterministic_time"] = solver.deterministic_time
    if det is not None and status == cp_model.UNKNOWN:
        stats["work_spent"] = solver.deterministic_time >= 0.99 * det
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        values = np.fromiter((solver.value(x) for x in xs), dtype=np.float64, count=len(xs))
        obj = solver.objective_value + const if problem.objective is not None else None
        bound = solver.best_objective_bound + const if problem.objective else None
        # a relative gap limit also ends with OPTIMAL: proven only when the bound is met
        proven = problem.objective is None or (status == cp_model.OPTIMAL and obj == bound)
        if status == cp_model.OPTIMAL and not proven:
            stats["stopped_by"] = "gap"
        elif not proven and det is not None and solver.deterministic_time >= 0.99 * det:
            stats["stopped_by"] = WORK_STOP
        return Solution(
            OPTIMAL if proven else FEASIBLE, values, obj, bound, solve_time, stats=stats
        )
    if status == cp_model.INFEASIBLE:
        return Solution(INFEASIBLE, time=solve_time, stats={**stats, "probing_level": level})
    if status == cp_model.MODEL_INVALID:
        return Solution(ERROR, time=solve_time, message=model.validate() or "invalid model")
    return Solution(UNKNOWN, time=solve_time, message="time limit reached", stats=stats)
