"""The cores this process may use, and the solver threads a query gets on them
(``--threads N``): at most one per core of the machine that answers it (a worker of a
pool, or a cluster's), since threads past the cores only take turns on them. The query
is answered with those, and its result says so in a note. Kept apart from
executors/machine_cap.py, which sizes pools by memory too, so that a query's answer
imports nothing of the solver layer.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Capped:
    """The workers a local pool starts, or the threads a query gets, and why fewer than
    asked (None: as asked)."""

    workers: int
    why: str | None = None


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


THREADS_CAPPED = "solver threads asked for"  # the note's words, found by a sweep's end


def capped_threads(asked: int, *, cores: int | None = None) -> Capped:
    """``asked`` solver threads for one query, at most one per core this process may use
    (the machine that answers it: a worker of a pool, or a cluster's): threads past the
    cores take turns on them, and the search only slows."""
    cores = usable_cores() if cores is None else cores
    if asked <= cores:
        return Capped(asked)
    used = "1 thread" if cores == 1 else f"{cores} threads"
    why = (
        f"{asked} {THREADS_CAPPED}, {used} used, one per core this "
        "machine gives treesens (more would only take turns on them, and slow the search)"
    )
    return Capped(cores, why)
