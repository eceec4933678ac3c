"""How many workers a pool on this machine starts: those asked for (``--jobs N``), at
most one per core this process may use and as many as the memory available holds
copies of the model's first stage (its load and search, compiler/memory_estimate.py).

More would not answer sooner: each query is CPU-bound on one solver thread, so a
second worker on a core halves both queries' speed within time limits that count
wall-clock seconds, and workers past the memory each start a query the system then
refuses or kills. The pool is made smaller, with one line saying so, rather than
refused: the queries are the same and answer as they would have. A remote cluster
(dask or ray at an address) sizes itself and is not capped.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import warnings

from ...compiler.ensemble import Ensemble
from ...compiler.errors import TreesensWarning
from ...compiler.memory_estimate import ModelSize, estimate_mb
from ...driver.solver_memory import resident_mb
from ..cores import Capped, usable_cores
from ..memory import available_mb


def free_for_workers_mb() -> float | None:
    """The memory the workers could have: what is available less what this process
    holds (``available_mb`` counts it, for a query run here)."""
    free = available_mb()
    return None if free is None else max(0.0, free - (resident_mb() or 0.0))


def capped_workers(
    asked: int,
    ens: Ensemble | None = None,
    *,
    cores: int | None = None,
    free_mb: float | None = None,
) -> Capped:
    """``asked`` workers, fewer where the machine's cores or memory (for ``ens``'s
    first stage each) cannot hold them; at least one."""
    cores = usable_cores() if cores is None else cores
    if asked > cores:
        why = (
            f"{asked} jobs asked for, {_workers(cores)} started, one per core this machine "
            "gives treesens (each query uses one; more would only slow them all, within "
            "time limits that count wall-clock seconds)"
        )
        capped = Capped(cores, why)
    else:
        capped = Capped(asked)
    if ens is None:
        return capped
    free_mb = free_for_workers_mb() if free_mb is None else free_mb
    need = estimate_mb(ModelSize.of(ens))
    if free_mb is None or capped.workers * need <= free_mb:
        return capped
    fits = max(1, math.floor(free_mb / need))
    why = (
        f"{asked} jobs asked for, {_workers(fits)} started, as many as the memory "
        f"available holds ({free_mb:,.0f} MB; each needs about {need:,.0f} MB to load and "
        "search this model)"
    )
    return Capped(fits, why)


def _workers(n: int) -> str:
    return f"{n} worker" if n == 1 else f"{n} workers"


_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_OURS = (_PACKAGE + os.sep, os.path.dirname(contextlib.__file__) + os.sep + "contextlib")


def warn_from_caller(message: str) -> None:
    """``message`` as a TreesensWarning pointing at the first line outside treesens (the
    script's ``sweep(..., jobs=64)``), however deep the campaign that raises it."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OURS):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, TreesensWarning, stacklevel=level)
