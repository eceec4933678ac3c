"""The solver stage held to the memory limit: before its compile (the Problem), what it
would add (compiler/memory_estimate.py, ``solver_stage_mb``: in this process and in the
solver's) to the memory this process holds then is checked against the query's limit. A query that compiles lazily (the
heuristic and the box search first) skips the stage and stays "unknown" with the reason
(a pair or a proof found before it still stands); one that compiles first (data-aware,
a race, a given dataset) is refused before it, in one line."""

from __future__ import annotations

from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.memory_estimate import ModelSize, solver_stage_mb

RAISE_IT = (
    "raise it with --memory-mb MB (memory_mb= in Python, option memory_mb = MB in a .sens file)"
)


class QueryTooLarge(InputError):
    """A query whose own search or compile would pass its memory limit (another query of
    the model may fit): its answer is an "error" result saying so, whatever else a
    sweep or a .sens file asks (questions/ask.py), not an input error that ends them."""


class SolverStageTooLarge(QueryTooLarge):
    """A query that compiles before any search, whose compile would pass its limit."""


def resident_mb() -> float | None:
    """The resident memory of this process now (MB; None where it cannot be read)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def solver_stage_over(ens: Ensemble, limit_mb: float | None, given: bool) -> str | None:
    """Why the solver stage's compile on ``ens`` would pass the limit ``limit_mb`` (MB,
    ``given`` or the default) from the memory held now; None when it fits (or no limit)."""
    if limit_mb is None:
        return None
    size = ModelSize.of(ens)
    held = resident_mb() or 0.0
    add = solver_stage_mb(size)
    if held + add <= limit_mb:
        return None
    which = "" if given else " (the default)"
    return (
        f"the solver stage ({size}: its compile and the solver's process) would need about "
        f"{add:,.0f} MB more than the {held:,.0f} MB held, {held + add:,.0f} MB in all, "
        "above the memory limit of "
        f"{limit_mb:,.0f} MB{which}; {RAISE_IT}"
    )


def refuse_solver_stage(ens: Ensemble, limit_mb: float | None, given: bool) -> None:
    """Raise SolverStageTooLarge when a compile before any search would pass the limit."""
    why = solver_stage_over(ens, limit_mb, given)
    if why is not None:
        raise SolverStageTooLarge(f"refused: {why}")
