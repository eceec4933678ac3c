"""The backend stages: reduce the problem for the backend, solve it in a worker, and
search on past near misses (a cut per failing copy) and past the soft group."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from ..answers.accept import accept
from ..answers.context import SolveContext
from ..answers.result import INSENSITIVE, UNKNOWN, fail
from ..answers.verdict import Accepted, Rejected, check_candidate, near_miss_cuts
from ..answers.work import SPENT, det_seconds, det_units
from ..backends.worker import worker_for
from ..compiler.invert import Witness, values_for_pair
from ..compiler.ir import Problem
from ..compiler.kinds import kind_of
from ..compiler.passes import Chain
from ..compiler.question import where_words
from ..compiler.solver import ERROR as SOLVER_ERROR
from ..compiler.solver import INFEASIBLE, OPTIMAL, Solution, SolveOptions
from ..compiler.usage import note_solver
from . import compile as compile_stage
from .data_fallback import use_fallback
from .optimise import (
    INTERRUPT_STOP,
    TIME_STOP,
    OptimisationWatch,
    optimum_stats,
    tighter_bound,
)

MAX_CUTS = 50
OPTIMIZE_STOP_SECONDS = 10.0  # an optimising run stops this early (at most 15 % of the time left)


@dataclass
class BackendProblem:
    problem: Problem
    chain: Chain
    inverse: Any

    @property
    def optimize(self) -> bool:
        """An "optimize" objective (the data-aware utility) is solved to the best point
        found within the time limit; a "guide" objective stops at the first point."""
        obj = self.problem.objective
        return obj is not None and obj.role == "optimize"


def reduce_for_backend(ctx: SolveContext) -> BackendProblem:
    """The compiled query after the backend's reductions; the heuristic's pair as hint."""
    cq = ctx.cq  # a compile put off until now counts its own time
    t_b = time.time()
    compiled, chain, inverse = compile_stage.for_backend(cq, ctx.q.plan.backend)
    ctx.result.time["compile"] += time.time() - t_b
    problem = compiled.problem
    ctx.stats.update(problem.stats())
    if problem.notes.scaling_error is not None:
        ctx.stats["scaling_error"] = problem.notes.scaling_error
    if ctx.heuristic_pair is not None:
        ctx.hint = values_for_pair(ctx.enc, *ctx.heuristic_pair, problem.n_vars)
    return BackendProblem(problem, chain, inverse)


def _options(ctx: SolveContext, optimize: bool) -> SolveOptions:
    # optimizing runs to the limit: stop it early enough that its best point comes back
    # before the worker's hard kill at the deadline
    stop = 0.0 if not optimize else min(OPTIMIZE_STOP_SECONDS, 0.15 * max(0.0, ctx.time_left()))
    q = ctx.q
    return SolveOptions(
        deadline=ctx.deadline - stop,
        threads=q.plan.threads,
        seed=q.plan.seed,
        first_solution=not optimize,
        log=ctx.log,
        memory_mb=ctx.memory_mb,
        hint=ctx.hint,
        params=tuple(q.plan.options.solver_params or ()),
        incumbents=optimize,
        gap_limit=float(q.plan.options.value("optimality_gap")) if optimize else 0.0,
        work=None if ctx.work is None else det_seconds(ctx.work.allowed("solver")),
    )


def _watch(ctx: SolveContext, bp: BackendProblem) -> OptimisationWatch | None:
    """An optimising solve is followed point by point (progress, stall rule, Ctrl-C).
    Under a work budget its stall and time rules are off: the solver's deterministic time
    ends it (compiler/solver.WORK_STOP)."""
    if not bp.optimize:
        return None
    q = ctx.q
    clock = 1.0 if ctx.work is None else math.inf
    return OptimisationWatch(
        ctx,
        lambda values: ctx.cq.chain.invert(bp.chain.invert(values, bp.inverse), ctx.cq.inverse),
        bp.problem.notes.objective_scale or 1.0,
        clock * float(q.plan.options.value("stall_time")),
        ctx.log or bool(q.plan.options.value("progress")),
        bp.problem.notes.objective_bound,
        clock * float(q.plan.options.value("optimise_time")),
    )


def _accept_best(ctx: SolveContext, watch: OptimisationWatch, stopped_by: str, why: str) -> None:
    """The best replay-checked point the optimiser reported answers (not proven optimal)."""
    best = watch.best
    accept(ctx, best.verdict, found_by=ctx.q.plan.backend)
    ctx.stats.update(optimum_stats(best.objective, best.bound))
    ctx.stats["solver_status"] = "feasible"
    ctx.stats["stopped_by"] = stopped_by
    ctx.result.message = why


def _stopped_unreported(sol) -> bool:
    """Whether the solver's process was stopped (the time limit's kill, the backstop of
    its own deadline) before it reported its deterministic time: its work uncounted."""
    return sol.status == UNKNOWN and "deterministic_time" not in sol.stats


def backend_search(ctx: SolveContext, bp: BackendProblem, halt: Any = None) -> None:
    """Solve until a proven answer, an error, or the time limit: a near miss is cut and
    the search goes on; an infeasible soft group is dropped ("insensitive" is never
    based on data). ``halt``: a threading.Event set when another search has answered
    (alongside.py): the search ends before its next solve."""
    res = ctx.result
    worker = worker_for(ctx.q.plan.backend, ctx.memory_mb)
    problem = bp.problem
    watch = _watch(ctx, bp)
    while True:
        if halt is not None and halt.is_set():
            return
        if time.time() >= ctx.deadline:
            res.status, res.message = UNKNOWN, "time limit reached"
            return
        if ctx.work is not None and ctx.work.allowed("solver") <= 0:
            res.status, res.message = UNKNOWN, SPENT
            return
        t_solve = time.time()
        note_solver(ctx.q.plan.backend)
        try:
            sol = worker.solve(problem, _options(ctx, bp.optimize), watch)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the best pair so far, if any
            ctx.solve_time += time.time() - t_solve
            if watch is not None and watch.best is not None:
                _accept_best(ctx, watch, INTERRUPT_STOP, "interrupted (Ctrl-C or a signal)")
            raise
        ctx.solve_time += sol.time + sol.build_time
        if ctx.work is not None:
            ctx.work.spend("solver", det_units(sol.stats.get("deterministic_time", 0.0)))
            if _stopped_unreported(sol) and "solver" not in ctx.work.unreported:
                ctx.work.unreported.append("solver")
        if watch is not None and watch.best is not None and sol.status == UNKNOWN:
            _accept_best(ctx, watch, watch.stopped or TIME_STOP, sol.message)
            return
        if sol.stats.get("search"):  # which search of the backend's schedule answered
            ctx.stats["search"] = sol.stats["search"]
        if sol.status == INFEASIBLE and problem.soft:
            problem = problem.without_soft()
            ctx.stats["data_restrictions_dropped"] = True
            continue
        if _final(ctx, sol):
            return
        verdict = check_candidate(ctx.ens, ctx.q, ctx.enc, partial(_witness, ctx, bp, sol))
        if isinstance(verdict, Accepted):
            _accept_point(ctx, bp, verdict, sol)
            return
        if isinstance(verdict, Rejected):
            fail(res, verdict.message)
            return
        ctx.cuts += 1
        if ctx.cuts > MAX_CUTS:
            res.status, res.message = UNKNOWN, _gave_up(ctx)
            return
        problem = problem.with_constraints(_for_backend(ctx, bp, near_miss_cuts(ctx.enc, verdict)))


def _gave_up(ctx: SolveContext) -> str:
    lc = ctx.enc.condition.link_change
    if lc is None:
        return f"gave up after excluding {MAX_CUTS} near-miss pairs (rounding band too dense)"
    return (
        f"gave up after {MAX_CUTS} rounds of tangent cuts on the {lc.link} link's change: "
        "the outer approximation did not close in on the answer"
    )


def _cut_words(ctx: SolveContext) -> str:
    """How the search went on past rejected pairs, for the result's message."""
    if ctx.enc.condition.link_change is None:
        return f"excluding {ctx.cuts} near-miss pairs"
    lc, n = ctx.enc.condition.link_change, ctx.cuts
    rounds = f"{n} round{'s' if n != 1 else ''}"
    return f"{rounds} of tangent cuts at pairs below the {lc.link} link's curve"


def _for_backend(ctx: SolveContext, bp: BackendProblem, cuts: list) -> tuple:
    """Cuts written for the compiled query, reduced as the backend's chain reduced it
    (big-M rows for implications, integer coefficients)."""
    alone = replace(bp.problem, constraints=tuple(cuts), soft=(), objective=None)
    fitted, _ = bp.chain.apply(ctx.cq.compiled.with_problem(alone))
    return fitted.problem.constraints


def _final(ctx: SolveContext, sol: Solution) -> bool:
    """Record an answer without a point (infeasible, error, none in time); True if so."""
    res = ctx.result
    if sol.status == INFEASIBLE:
        res.status = INSENSITIVE
        domain = f"{ctx.ens.domain}{where_words(ctx.q)}"
        res.message = f"proved: no pair {domain} meets {kind_of(ctx.q).asks}" + (
            f" (after {_cut_words(ctx)})" if ctx.cuts else ""
        )
        return True
    if sol.status == SOLVER_ERROR:
        fail(res, sol.message or "solver error")
        if sol.stats.get("traceback"):
            res.stats["solver_traceback"] = sol.stats["traceback"]
        return True
    if not sol.has_point:
        res.status, res.message = UNKNOWN, sol.message or "no answer within the time limit"
        use_fallback(ctx)
        return True
    return False


def _witness(ctx: SolveContext, bp: BackendProblem, sol: Solution) -> Witness:
    """The backend's values through both chains, in reverse: the pair of inputs."""
    values = bp.chain.invert(sol.values, bp.inverse)
    return ctx.cq.chain.invert(values, ctx.cq.inverse)


def _accept_point(ctx: SolveContext, bp: BackendProblem, verdict: Accepted, sol: Solution):
    accept(ctx, verdict, found_by=ctx.q.plan.backend)
    scale = bp.problem.notes.objective_scale or 1.0
    ctx.stats["objective"] = None if sol.objective is None else sol.objective / scale
    ctx.stats["solver_status"] = sol.status  # "optimal" or "feasible" (best found in time)
    if bp.optimize:
        bound = None if sol.bound is None else sol.bound / scale
        if bound is None and sol.status == OPTIMAL:  # a proof without a bound (z3): its own
            bound = ctx.stats["objective"]
        bound = tighter_bound(bound, bp.problem.notes.objective_bound)
        ctx.stats.update(optimum_stats(ctx.stats["objective"], bound))
        if sol.status != "optimal":
            ctx.stats["stopped_by"] = sol.stats.get("stopped_by", TIME_STOP)
    if ctx.cuts:
        ctx.result.message = f"found after {_cut_words(ctx)}"
