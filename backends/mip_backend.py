"""CBC and HiGHS through python-mip. Imported only inside a worker process.

One module serves both: the worker passes the backend's name. Implications become big-M
rows (``linearize.big_m_rows``: M from the variables' bounds, exact and rounded up),
exactly-one groups become equalities. "infeasible" is reported only when the solver
proved it; a time limit without a point is "unknown".
"""

from __future__ import annotations

import math
import time

import mip
import numpy as np

from ..compiler.ir import BOOL, INT, Problem
from ..compiler.solver import ERROR, INFEASIBLE, UNKNOWN, Solution, SolveOptions, point_solution
from .linearize import all_bounded, rows

SOLVERS = {"cbc": mip.CBC, "highs": "highs"}

# Tighter than the solvers' defaults (1e-6): the encoding keeps a margin of about 1e-6
# on its gap rows, and every point is re-checked by the replay anyway.
INFEAS_TOL = 1e-8
INTEGER_TOL = 1e-8


# the largest |coefficient| or |right-hand side| given to CBC or HiGHS: HiGHS refuses a
# row with a larger one (its large_matrix_value: "Unknown error in call to HiGHS"), CBC
# errs from 1e20 on (its infinity), and at the 1e-8 tolerances above no row that large
# is solved to the precision the gap rows need. Only a model whose scores are that large
# (a leaf value of 1e28 in a degenerate scikit-learn boosting) reaches it.
LARGEST_NUMBER = 1e15

# the statuses that end a run without a point as a proof (see _no_point)
NO_POINT_PROOFS = (
    mip.OptimizationStatus.INFEASIBLE,
    mip.OptimizationStatus.INT_INFEASIBLE,
    mip.OptimizationStatus.UNBOUNDED,
    mip.OptimizationStatus.INF_OR_UNBD,
)


def _empty_row_holds(r) -> bool:
    return (
        (r.sense == "<=" and r.rhs >= 0.0)
        or (r.sense == ">=" and r.rhs <= 0.0)
        or (r.sense == "==" and r.rhs == 0.0)
    )


def too_large(problem_rows: list, backend_name: str) -> str | None:
    """Why the solver cannot take these rows (a number beyond ``LARGEST_NUMBER``), or
    None."""
    for r in problem_rows:
        worst = max((abs(v) for v in (*r.coefs, r.rhs) if math.isfinite(v)), default=0.0)
        if worst >= LARGEST_NUMBER:
            return (
                f"{backend_name} cannot take this problem: its row {r.name} has a number of "
                f"{worst:.3g}, where {backend_name} takes at most {LARGEST_NUMBER:.0e} (the "
                "model's scores are that large: a leaf value or intercept); cpsat or z3 may "
                "answer it"
            )
    return None


def build(
    problem: Problem, backend_name: str, log: bool = False, problem_rows: list | None = None
) -> tuple[mip.Model, list]:
    if problem_rows is None:
        problem_rows = rows(problem)
    model = mip.Model(sense=mip.MINIMIZE, solver_name=SOLVERS[backend_name])
    model.verbose = 1 if log else 0
    xs = []
    for i, v in enumerate(problem.vars):
        if v.kind == BOOL:
            xs.append(model.add_var(f"x{i}", lb=0.0, ub=1.0, var_type=mip.BINARY))
        elif v.kind == INT:
            xs.append(model.add_var(f"x{i}", lb=v.lb, ub=v.ub, var_type=mip.INTEGER))
        else:
            xs.append(model.add_var(f"x{i}", lb=v.lb, ub=v.ub, var_type=mip.CONTINUOUS))
    empty_violated = []
    for r in problem_rows:
        if not r.vars:
            if not _empty_row_holds(r):
                empty_violated.append(r.name)
            continue
        e = mip.LinExpr([xs[v] for v in r.vars], list(r.coefs))
        if r.sense == "<=":
            model.add_constr(e <= r.rhs, name=r.name)
        elif r.sense == ">=":
            model.add_constr(e >= r.rhs, name=r.name)
        else:
            model.add_constr(e == r.rhs, name=r.name)
    obj = problem.objective
    if obj is not None and obj.vars:
        e = mip.LinExpr([xs[v] for v in obj.vars], list(obj.coefs), const=obj.constant)
        model.objective = mip.maximize(e) if obj.sense == "max" else mip.minimize(e)
    return model, xs, empty_violated


def solve(problem: Problem, options: SolveOptions, backend_name: str = "cbc") -> Solution:
    if backend_name not in SOLVERS:
        return Solution(
            ERROR, message=f"python-mip backend {backend_name!r} unknown (cbc or highs)"
        )
    t0 = time.time()
    problem_rows = rows(problem)
    why = too_large(problem_rows, backend_name)
    if why is not None:
        return Solution(ERROR, message=why, build_time=time.time() - t0)
    model, xs, empty_violated = build(problem, backend_name, options.log, problem_rows)
    build_time = time.time() - t0
    if empty_violated:
        return Solution(
            INFEASIBLE,
            build_time=build_time,
            message=f"constraint {empty_violated[0]} has no variables and cannot hold",
        )
    has_obj = problem.objective is not None and bool(problem.objective.vars)
    t1 = time.time()
    status = _optimize(model, options, backend_name, has_obj)
    solve_time = time.time() - t1
    stats = {"solver": backend_name, "rows": model.num_rows, "cols": model.num_cols}
    times = {"time": solve_time, "build_time": build_time}
    OS = mip.OptimizationStatus
    if status in (OS.OPTIMAL, OS.FEASIBLE) and model.num_solutions > 0:
        values = np.fromiter(
            (x.x if x.x is not None else np.nan for x in xs), dtype=np.float64, count=len(xs)
        )
        if np.isnan(values).any():
            return Solution(
                ERROR, message=f"{backend_name} reported a solution without values", **times
            )
        proven = status == OS.OPTIMAL or not has_obj
        objective = model.objective_value if has_obj else None
        bound = model.objective_bound if has_obj else None
        return point_solution(
            problem, values, proven, objective, bound, solve_time, build_time, stats
        )
    return _no_point(status, problem, options, backend_name, stats, **times)


def _optimize(
    model: mip.Model, options: SolveOptions, backend_name: str, has_obj: bool
) -> mip.OptimizationStatus:
    """Set the solver's parameters and run it (HiGHS again without presolve if it fails)."""
    model.threads = max(1, int(options.threads))
    model.seed = int(options.seed)
    model.infeas_tol = INFEAS_TOL
    model.integer_tol = INTEGER_TOL
    model.max_mip_gap = 1e-9
    model.max_mip_gap_abs = 1e-9
    kw = {"max_seconds": max(0.05, options.remaining())}
    if has_obj and options.first_solution:
        kw["max_solutions"] = 1
    OS = mip.OptimizationStatus
    try:
        status = model.optimize(**kw)
    except mip.exceptions.InterfacingError:
        if backend_name != "highs":
            raise
        status = OS.ERROR
    if backend_name == "highs" and status in (OS.ERROR, *NO_POINT_PROOFS):
        # HiGHS' presolve fails on some of these models ("solve error", or postsolve
        # returns an infeasible point), and on some it calls a feasible model infeasible
        # (tests/backends/test_highs_presolve.py): retry once without it, so that
        # "infeasible" is only HiGHS' answer without presolve
        if options.remaining() <= 0.1:
            return OS.ERROR if status == OS.ERROR else OS.NO_SOLUTION_FOUND
        model.solver._set_string_option_value("presolve", "off")
        kw["max_seconds"] = max(0.05, options.remaining())
        status = model.optimize(**kw)
    return status


def _no_point(
    status: mip.OptimizationStatus,
    problem: Problem,
    options: SolveOptions,
    backend_name: str,
    stats: dict,
    **times: float,
) -> Solution:
    """The Solution of a run that gave no point, by its status."""
    OS = mip.OptimizationStatus
    if status in (OS.INFEASIBLE, OS.INT_INFEASIBLE):
        return Solution(INFEASIBLE, stats=stats, **times)
    if status in (OS.UNBOUNDED, OS.INF_OR_UNBD) and all_bounded(problem):
        # every variable is bounded, so the problem cannot be unbounded: it is infeasible
        message = f"{backend_name}: infeasible or unbounded, and every variable is bounded"
        return Solution(INFEASIBLE, stats=stats, message=message, **times)
    if status == OS.ERROR:
        return Solution(ERROR, stats=stats, message=f"{backend_name} reported an error", **times)
    why = (
        "time limit reached"
        if time.time() >= options.deadline - 0.05
        else f"{backend_name} stopped: {status.name}"
    )
    return Solution(UNKNOWN, message=why, stats=stats, **times)
