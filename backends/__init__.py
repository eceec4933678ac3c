"""Solver backends. Each runs in its own worker process and is imported only there.

``registry`` describes the backends without importing any solver; ``worker`` runs a
backend's ``solve(problem, options)`` in a separate process with a hard time limit.
"""

from .registry import BACKENDS, BackendInfo, available, get_info

__all__ = ["BACKENDS", "BackendInfo", "available", "get_info"]
