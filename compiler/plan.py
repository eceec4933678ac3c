"""How a question is solved: the backend (or search method), the time limit, threads,
seed, the paper's passes, the data-aware mode and the query options (compiler/options.py)
-- apart from what is asked (compiler/question.py), as cvxpy keeps ``solve()``'s
arguments apart from the Problem."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from .options import (
    DEFAULT_BACKEND,
    DEFAULT_SEED,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT,
    DataAwareMode,
    QueryOptions,
)

# the switchable passes of the paper, by their CLI names
PASS_NAMES = ("ordering", "unaff", "aff", "obj")
DEFAULT_PASSES = frozenset(PASS_NAMES)
# Kantchelian et al.'s encoding already orders each feature's predicates (their
# consistency constraints); the paper's baseline "Kant" is that encoding, nothing more.
KANT_PASSES = frozenset({"ordering"})


@dataclass(frozen=True)
class Plan:
    """How to answer: ``backend`` (a solver, a search method such as ``boxes``, or a
    ``race``), ``timeout`` (seconds, compile included), ``threads``, ``seed``, the
    ``passes`` switched on, the ``data_aware`` mode and the ``options``."""

    backend: str = DEFAULT_BACKEND
    timeout: float = DEFAULT_TIMEOUT
    threads: int = DEFAULT_THREADS
    seed: int = DEFAULT_SEED
    # a work budget in work units (answers/work.py; None: the time limit decides)
    work: int | None = None
    passes: frozenset[str] = DEFAULT_PASSES
    data_aware: DataAwareMode = DataAwareMode.NONE
    # given as a QueryOptions, a dict or (name, value) pairs; always held as QueryOptions
    options: QueryOptions = field(default=QueryOptions())

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_aware", DataAwareMode.parse(self.data_aware))
        object.__setattr__(self, "options", QueryOptions.of(self.options))

    def deadline(self, start: float | None = None) -> float:
        """When the answer is due: ``start`` (a ``time.time()``; default now) plus the
        time limit. The one place a time limit becomes a deadline."""
        return (time.time() if start is None else start) + self.timeout

    def with_(self, **kw: Any) -> Plan:
        return replace(self, **kw)
