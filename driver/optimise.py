"""Following an optimising solve (the data-aware utility) from the parent process.

Each better point the backend reports is replay-checked and measured against the data;
a progress line goes to stderr; the solve is stopped by the stopping rules
(``optimise_time`` seconds of optimising with a pair known, or no better point for
``stall_time`` seconds; docs/data-aware.md). When the solver is stopped, runs out of
time or is interrupted, the best replay-checked point so far answers; the result carries
the utility, its proven bound and their relative gap.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..answers.context import SolveContext
from ..answers.verdict import Accepted, check_candidate
from ..compiler.distance import distance_to_data
from ..compiler.invert import Witness
from ..compiler.solver import Incumbent

HEARTBEAT_SECONDS = 30.0  # a progress line at least this often while nothing improves
STALL_STOP = "stall"  # stats["stopped_by"] values
BUDGET_STOP = "time budget"
TIME_STOP = "time limit"
INTERRUPT_STOP = "interrupted"


@dataclass(frozen=True)
class Best:
    """The best replay-checked point so far."""

    verdict: Accepted
    objective: float  # in the problem's own units (before the backend's scaling)
    bound: float | None
    distance: float | None
    at: float  # seconds since the optimisation started


class OptimisationWatch:
    """The ``IncumbentWatch`` of backends/worker.py for one query."""

    def __init__(
        self,
        ctx: SolveContext,
        decode: Callable[[np.ndarray], Witness],
        scale: float,
        stall_time: float,
        progress: bool,
        known_bound: float | None = None,
        budget: float = float("inf"),
    ) -> None:
        self.ctx, self.decode, self.scale = ctx, decode, scale or 1.0
        self.known_bound = known_bound  # Notes.objective_bound: caps the solver's bound
        self.budget = budget  # optimise_time: seconds of optimising, once a pair is known
        self.stall_time, self.progress = stall_time, progress and sys.stderr is not None
        self.best: Best | None = None
        self.stopped: str | None = None  # why the watch stopped the solver
        self.t0 = time.time()
        self.last_better = self.t0
        self.last_line = self.t0

    def take(self, inc: Incumbent) -> None:
        objective = inc.objective / self.scale
        if self.best is not None and objective <= self.best.objective:
            return
        ctx = self.ctx
        verdict = check_candidate(ctx.ens, ctx.q, ctx.enc, lambda: self.decode(inc.values))
        if not isinstance(verdict, Accepted):
            return  # a near miss or worse: the solver's answer is checked as usual
        bound = tighter_bound(
            None if inc.bound is None else inc.bound / self.scale, self.known_bound
        )
        self.best = Best(verdict, objective, bound, self._distance(verdict), time.time() - self.t0)
        self.last_better = time.time()
        self._line("better pair")

    def stop_reason(self) -> str | None:
        now = time.time()
        if self.best is not None and now - self.t0 >= self.budget:
            self.stopped = BUDGET_STOP
            return f"stopped: optimised for {self.budget:g}s (optimise_time)"
        if self.best is not None and now - self.last_better >= self.stall_time:
            self.stopped = STALL_STOP
            return f"stopped: no better pair for {self.stall_time:g}s (stall_time)"
        if now - self.last_line >= HEARTBEAT_SECONDS:
            self._line("still optimising")
        return None

    def _distance(self, verdict: Accepted) -> float | None:
        data = self.ctx.data
        if data is None:
            return None
        _, rng = data.ranges()
        leaves = verdict.witness.leaves
        return float(distance_to_data(self.ctx.ens, leaves, self.ctx.enc.varying, data.X, rng)[0])

    def _line(self, what: str) -> None:
        self.last_line = time.time()
        if not self.progress:
            return
        elapsed = time.time() - self.t0
        b = self.best
        if b is None:
            msg = f"optimising: no pair yet, {elapsed:.0f}s"
        else:
            gap = relative_gap(b.objective, b.bound)
            msg = (
                f"optimising: {what}, utility {b.objective:.4g}"
                + ("" if gap is None else f" (bound {b.bound:.4g}, gap {100 * gap:.1f}%)")
                + ("" if b.distance is None else f", distance {b.distance:.4f}")
                + f", {elapsed:.1f}s"
            )
        print(msg, file=sys.stderr, flush=True)


def relative_gap(objective: float, bound: float | None) -> float | None:
    """How far the bound is above the objective, relative to the objective's size:
    |bound - objective| / max(1, |objective|) (docs/data-aware.md, "Long optimisations")."""
    if bound is None:
        return None
    return abs(bound - objective) / max(1.0, abs(objective))


def tighter_bound(solver_bound: float | None, known_bound: float | None) -> float | None:
    """The smaller of the solver's bound and the one known before solving (a max
    objective: both are upper bounds, so the smaller one holds too)."""
    if solver_bound is None or known_bound is None:
        return known_bound if solver_bound is None else solver_bound
    return min(solver_bound, known_bound)


def optimum_stats(objective: float | None, bound: float | None) -> dict:
    """The result's ``stats`` of an optimising run: the utility, its bound and their
    relative gap (``objective_gap``, 0 when proven optimal)."""
    gap = None if objective is None else relative_gap(objective, bound)
    return {"objective": objective, "objective_bound": bound, "objective_gap": gap}
