"""Executors: run a batch of independent tasks and yield their outcomes as they end.

One interface (``base.Executor``) with three implementations: ``local`` (a process pool on
this machine), ``dask`` (dask.distributed) and ``ray``. ``make_executor`` builds one from a
spec such as ``"local"``, ``"dask"``, ``"dask=tcp://host:8786"`` or ``"ray=auto"``.
"""

from __future__ import annotations

from .base import Executor, Failure, Outcome, make_executor, parse_executor

__all__ = ["Executor", "Failure", "Outcome", "make_executor", "parse_executor"]
