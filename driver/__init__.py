"""The solve driver: compiles a query, runs the solve stages, and races backends.

The driver sits above compiler, answers, backends and search (README, "Architecture"):
it joins the pure compiler with the solver backends, and runs the searches of search/
(the heuristic, the box search) as stages around the backend. Its names are loaded when
first used, so that importing the package (e.g. for ``driver.data``) starts no machinery
of the worker processes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .chain import backend_chain
    from .compile import CompiledQuery, compile_query, for_backend
    from .race_spec import is_race, race_backends
    from .solve import solve_query

_WHERE = {
    "backend_chain": "chain",
    "CompiledQuery": "compile",
    "compile_query": "compile",
    "for_backend": "compile",
    "is_race": "race_spec",
    "race_backends": "race_spec",
    "solve_query": "solve",
}

__all__ = [
    "CompiledQuery",
    "backend_chain",
    "compile_query",
    "for_backend",
    "is_race",
    "race_backends",
    "solve_query",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
