"""The solve driver: compiles a query, runs the solve stages, and races backends.

The driver sits above compiler, answers and backends (README, "Architecture"): it is
the only layer that joins the pure compiler with the solver backends. Its names are loaded when first
used, so that importing the package (e.g. for ``driver.data``) starts no machinery of
the worker processes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .chain import backend_chain
    from .compile import CompiledQuery, compile_query, for_backend
    from .heuristic import heuristic_work
    from .race import is_race, race_backends
    from .solve import solve_query

_WHERE = {
    "backend_chain": "chain",
    "CompiledQuery": "compile",
    "compile_query": "compile",
    "for_backend": "compile",
    "heuristic_work": "heuristic",
    "is_race": "race",
    "race_backends": "race",
    "solve_query": "solve",
}

__all__ = [
    "CompiledQuery",
    "backend_chain",
    "compile_query",
    "for_backend",
    "heuristic_work",
    "is_race",
    "race_backends",
    "solve_query",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
