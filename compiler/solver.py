"""The solver protocol: what a backend receives, what it returns, what it declares.

Pure: no solver is imported here. ``backends/`` implements ``Solver`` (a module with
``solve(problem, options) -> Solution``) and declares a ``Capabilities`` record; the
driver reads the record to build each backend's chain of reductions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from .enums import StrValue
from .ir import BOOL, INT, REAL, Problem


class SolveStatus(StrValue):
    """A solver's answer; str-valued, so pickles and JSON carry the plain words."""

    FEASIBLE = "feasible"
    OPTIMAL = "optimal"
    INFEASIBLE = "infeasible"
    UNKNOWN = "unknown"
    ERROR = "error"


FEASIBLE, OPTIMAL, INFEASIBLE, UNKNOWN, ERROR = SolveStatus  # the members, in their order
# Solution.stats["stopped_by"] of an optimising solve its work budget (SolveOptions.work:
# deterministic time) ended, not proven optimal; under a budget the driver's stall and
# optimise times are off (driver/backend._watch), as they are the clock's
WORK_STOP = "work budget"


@dataclass(frozen=True)
class SolveOptions:
    deadline: float  # absolute time.time() by which the solver must have returned
    threads: int = 1
    seed: int = 0
    first_solution: bool = True  # stop at the first feasible point (objective only guides)
    log: bool = False
    memory_mb: int | None = None
    hint: object = None  # optional values of every variable: a starting point to steer by
    # solver-specific parameters, (name, value) pairs (CP-SAT: SatParameters fields)
    params: tuple[tuple[str, object], ...] = ()
    # optimising: report each better point as an Incumbent before the answer, and stop
    # when the objective is within this relative gap of the bound (0: proven optimal)
    incumbents: bool = False
    gap_limit: float = 0.0
    # a work budget's share (answers/work.py): the solver's deterministic time, in its
    # own seconds (CP-SAT's max_deterministic_time, on one worker); None: the deadline
    work: float | None = None
    # set by the worker process (never pickled across): where the backend reports them
    report: Callable[[Incumbent], None] | None = field(default=None, compare=False)

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.time())


@dataclass
class Solution:
    status: SolveStatus
    values: np.ndarray | None = None
    objective: float | None = None
    bound: float | None = None
    time: float = 0.0  # seconds inside the solver
    build_time: float = 0.0  # seconds building the solver's model
    message: str = ""
    stats: dict = field(default_factory=dict)

    @property
    def has_point(self) -> bool:
        return self.status in (FEASIBLE, OPTIMAL) and self.values is not None


@dataclass
class Incumbent:
    """A better point found while optimising, reported before the solver's answer."""

    values: np.ndarray
    objective: float
    bound: float | None
    time: float  # seconds since the solver started


class Solver(Protocol):
    """What a backend module provides."""

    def solve(self, problem: Problem, options: SolveOptions) -> Solution: ...


@dataclass(frozen=True)
class Capabilities:
    """What a solver accepts; the driver adds the reductions a problem needs to fit."""

    integer_coefficients: bool = False  # needs integer data: IntegerScaling is added
    implications: bool = True  # takes Implication constraints natively (else big-M rows)
    variable_kinds: tuple[str, ...] = (BOOL, INT, REAL)
    size_limit: tuple[int, int] | None = None  # (vars, constraints) a license accepts


def point_solution(
    problem: Problem,
    values: np.ndarray,
    proven: bool,
    objective: float | None,
    bound: float | None,
    solve_time: float,
    build_time: float,
    stats: dict,
) -> Solution:
    """A solver's point: integral variables rounded (solvers return them within a tolerance)."""
    for i, v in enumerate(problem.vars):
        if v.kind != REAL:
            values[i] = float(round(values[i]))
    return Solution(
        OPTIMAL if proven else FEASIBLE,
        values,
        objective,
        bound,
        solve_time,
        build_time,
        stats=stats,
    )
