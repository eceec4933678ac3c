"""What a backend receives and returns."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

FEASIBLE, OPTIMAL, INFEASIBLE, UNKNOWN, ERROR = (
    "feasible",
    "optimal",
    "infeasible",
    "unknown",
    "error",
)


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

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.time())


@dataclass
class Solution:
    status: str
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


def point_solution(
    problem,
    values: np.ndarray,
    proven: bool,
    objective,
    bound,
    solve_time: float,
    build_time: float,
    stats: dict,
) -> Solution:
    """A solver's point: integral variables rounded (solvers return them within a tolerance)."""
    for i, v in enumerate(problem.vars):
        if v.kind != "real":
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
