"""Executors: run a batch of independent tasks and yield their outcomes as they end.

One interface (``base.Executor``) with three implementations: ``local`` (a process pool on
this machine), ``dask`` (dask.distributed) and ``ray``. ``make_executor`` builds one from a
spec such as ``"local"``, ``"dask"``, ``"dask=tcp://host:8786"`` or ``"ray=auto"``.
"""

from __future__ import annotations

from .base import Executor, Failure, Outcome, parse_executor
from .dask import DaskExecutor
from .local import LocalExecutor
from .ray import RayExecutor
from .spawn_guard import refuse_while_importing_main


def make_executor(spec: str = "local", workers: int = 1) -> Executor:
    """An executor from its spec; ``workers`` is the pool size of a local pool or of the
    local cluster started when dask/ray are given no address."""
    kind, address = parse_executor(spec)
    refuse_while_importing_main()
    if kind == "local":
        return LocalExecutor(workers)
    if kind == "dask":
        return DaskExecutor(address, workers)
    return RayExecutor(address, workers)


__all__ = ["Executor", "Failure", "Outcome", "make_executor", "parse_executor"]
