"""The CP-SAT backend's search schedule: which searches run one after another, and for how
long. Imports no solver (the choice is tested without one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..compiler.ir import Problem
from ..compiler.solver import SolveOptions


@dataclass(frozen=True)
class SearchPhase:
    """One CP-SAT search of a schedule: its parameters and its share of the time."""

    name: str
    params: tuple[tuple[str, object], ...]
    share: float  # of the time left when the solve starts; the last phase takes the rest


# CP-SAT's default single-thread search proves "insensitive" and finds almost every pair
# within 70 % of the limit; on the hardest queries two searches of CP-SAT's own portfolio
# find pairs it misses in the whole limit. Restarting costs a presolve, and nothing before
# 70 % changes (docs/benchmarks.md, "Why the defaults are what they are").
SCHEDULE = (
    SearchPhase("default", (), 0.70),
    SearchPhase(
        "lp-branching", (("linearization_level", 2), ("search_branching", "LP_SEARCH")), 0.15
    ),
    SearchPhase("core", (("optimize_with_core", True), ("linearization_level", 0)), 0.15),
)
# a user's parameter among these chooses the search itself: then one search, the user's
SEARCH_PARAMS = frozenset(
    {
        "search_branching",
        "linearization_level",
        "optimize_with_core",
        "interleave_search",
        "num_workers",
        "num_search_workers",
        "subsolvers",
        "extra_subsolvers",
        "ignore_subsolvers",
    }
)


def search_phases(
    problem: Problem, options: SolveOptions, schedule: Sequence[SearchPhase] = SCHEDULE
) -> tuple[SearchPhase, ...]:
    """The searches to run one after another: the schedule for a single-thread search for
    the first point that meets the gap, guided by an objective; else one default search."""
    single = (SearchPhase("default", (), 1.0),)
    if problem.objective is None or not options.first_solution or options.threads > 1:
        return single
    if any(name in SEARCH_PARAMS for name, _ in options.params):
        return single
    return tuple(schedule)
