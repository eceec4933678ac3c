"""Gurobi through gurobipy. Imported only inside a worker process.

Implications are Gurobi's native indicator constraints; exactly-one groups are
equalities. A size-limited license refuses models over its limits: that is reported as
an error naming the model's size and the limits, never as a verdict.
"""

from __future__ import annotations

import math
import time

import gurobipy as gp
import numpy as np
from gurobipy import GRB

from ..compiler.ir import BOOL, INT, ExactlyOne, Implication, Linear, Problem
from ..compiler.solver import ERROR, INFEASIBLE, UNKNOWN, Solution, SolveOptions, point_solution
from .linearize import all_bounded
from .registry import BACKENDS

# (variables, constraints) of the size-limited (pip) license, as the registry declares
SIZE_LIMIT = BACKENDS["gurobi"].size_limit
LICENSE_ERRORS = (10010,)  # GRB_ERROR_SIZE_LIMIT_EXCEEDED

_SENSE = {"<=": GRB.LESS_EQUAL, ">=": GRB.GREATER_EQUAL, "==": GRB.EQUAL}


def _env(log: bool) -> gp.Env:
    env = gp.Env(empty=True)
    env.setParam("OutputFlag", 1 if log else 0)
    env.start()
    return env


def build(problem: Problem, env: gp.Env) -> tuple[gp.Model, list]:
    model = gp.Model("treesens", env=env)
    lb = [v.lb if math.isfinite(v.lb) else -GRB.INFINITY for v in problem.vars]
    ub = [v.ub if math.isfinite(v.ub) else GRB.INFINITY for v in problem.vars]
    vtype = [
        GRB.BINARY if v.kind == BOOL else GRB.INTEGER if v.kind == INT else GRB.CONTINUOUS
        for v in problem.vars
    ]
    xs = model.addVars(len(problem.vars), lb=lb, ub=ub, vtype=vtype)
    xs = [xs[i] for i in range(len(problem.vars))]
    for i, c in enumerate(problem.constraints):
        if isinstance(c, ExactlyOne):
            model.addLConstr(
                gp.LinExpr([1.0] * len(c.vars), [xs[v] for v in c.vars]), GRB.EQUAL, 1.0, f"c{i}"
            )
        elif isinstance(c, Implication):
            t = c.then
            e = gp.LinExpr(list(t.coefs), [xs[v] for v in t.vars])
            model.addGenConstrIndicator(
                xs[c.var], bool(c.value), e, _SENSE[t.sense], t.rhs, name=f"c{i}"
            )
        elif isinstance(c, Linear):
            e = gp.LinExpr(list(c.coefs), [xs[v] for v in c.vars])
            model.addLConstr(e, _SENSE[c.sense], c.rhs, f"c{i}")
        else:
            raise TypeError(f"unknown constraint type {type(c).__name__}")
    obj = problem.objective
    if obj is not None and obj.vars:
        e = gp.LinExpr(list(obj.coefs), [xs[v] for v in obj.vars]) + obj.constant
        model.setObjective(e, GRB.MAXIMIZE if obj.sense == "max" else GRB.MINIMIZE)
    model.update()
    return model, xs


def license_message(n_vars: int, n_constrs: int, detail: str = "") -> str:
    return (
        f"the Gurobi license refused the model as too large: {n_vars} variables and {n_constrs} constraints, "
        f"but this size-limited license accepts at most {SIZE_LIMIT[0]} variables and {SIZE_LIMIT[1]} "
        f"constraints (use another backend, or a full Gurobi license)"
        + (f" [{detail}]" if detail else "")
    )


def solve(problem: Problem, options: SolveOptions) -> Solution:
    t0 = time.time()
    try:
        env = _env(options.log)
        model, xs = build(problem, env)
    except gp.GurobiError as e:
        n_constrs = len(problem.constraints)
        return _error_solution(e, problem.n_vars, n_constrs, build_time=time.time() - t0)
    build_time = time.time() - t0
    has_obj = _set_params(model, xs, problem, options)
    t1 = time.time()
    stats = {"vars": model.NumVars, "constrs": model.NumConstrs, "indicators": model.NumGenConstrs}
    try:
        model.optimize()
    except gp.GurobiError as e:
        n_constrs = model.NumConstrs + model.NumGenConstrs
        return _error_solution(
            e, model.NumVars, n_constrs, build_time=build_time, time=time.time() - t1
        )
    solve_time = time.time() - t1
    stats["nodes"] = model.NodeCount
    try:
        return _read_solution(model, xs, problem, has_obj, solve_time, build_time, stats)
    finally:
        model.dispose()
        env.dispose()


def _error_solution(e: Exception, n_vars: int, n_constrs: int, **times: float) -> Solution:
    """A Gurobi error as a Solution: a size-limited license says so and what was asked."""
    if getattr(e, "errno", None) in LICENSE_ERRORS or "size-limited" in str(e).lower():
        return Solution(ERROR, message=license_message(n_vars, n_constrs, str(e)), **times)
    return Solution(ERROR, message=f"Gurobi error {getattr(e, 'errno', None)}: {e}", **times)


def _set_params(model: gp.Model, xs: list, problem: Problem, options: SolveOptions) -> bool:
    """Set the solver's parameters and hint; whether the problem has an objective."""
    p = model.Params
    p.Threads = max(1, int(options.threads))
    p.Seed = int(options.seed)
    p.TimeLimit = max(0.05, options.remaining())
    p.FeasibilityTol = 1e-9
    p.IntFeasTol = 1e-9
    p.MIPGap = 0.0
    if options.memory_mb:
        p.MemLimit = max(0.1, options.memory_mb / 1024.0 * 0.9)
    has_obj = problem.objective is not None and bool(problem.objective.vars)
    if has_obj and options.first_solution:
        p.SolutionLimit = 1
    if options.hint is not None:
        for x, v in zip(xs, options.hint):
            x.VarHintVal = float(v)
    return has_obj


# statuses with which a solution found so far can be read
_WITH_SOLUTION = (
    GRB.OPTIMAL,
    GRB.SOLUTION_LIMIT,
    GRB.TIME_LIMIT,
    GRB.INTERRUPTED,
    GRB.NODE_LIMIT,
    GRB.MEM_LIMIT,
    GRB.SUBOPTIMAL,
)


def _read_solution(
    model: gp.Model,
    xs: list,
    problem: Problem,
    has_obj: bool,
    solve_time: float,
    build_time: float,
    stats: dict,
) -> Solution:
    """The Solution of an optimised model, by its status."""
    status = model.Status
    times = {"time": solve_time, "build_time": build_time, "stats": stats}
    if model.SolCount > 0 and status in _WITH_SOLUTION:
        values = np.array(model.getAttr("X", xs), dtype=np.float64)
        proven = status == GRB.OPTIMAL or not has_obj
        objective = model.ObjVal if has_obj else None
        bound = model.ObjBound if has_obj else None
        return point_solution(
            problem, values, proven, objective, bound, solve_time, build_time, stats
        )
    if status == GRB.INFEASIBLE:
        return Solution(INFEASIBLE, **times)
    if status in (GRB.INF_OR_UNBD, GRB.UNBOUNDED) and all_bounded(problem):
        message = "Gurobi: infeasible or unbounded, and every variable is bounded"
        return Solution(INFEASIBLE, message=message, **times)
    if status == GRB.TIME_LIMIT:
        return Solution(UNKNOWN, message="time limit reached", **times)
    if status == GRB.MEM_LIMIT:
        return Solution(ERROR, message="Gurobi reached its memory limit", **times)
    return Solution(UNKNOWN, message=f"Gurobi stopped with status {status}", **times)
