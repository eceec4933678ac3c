"""The solve driver: compiles a query, runs the solve stages, and races backends.

Layers: compiler < backends < driver < frontends. The driver is the only layer that
joins the pure compiler with the solver backends.
"""

from .chain import backend_chain
from .compile import CompiledQuery, compile_query, for_backend
from .heuristic import heuristic_work
from .race import is_race, race_backends
from .solve import solve_query

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
