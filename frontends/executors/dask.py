"""The dask executor: a dask.distributed cluster at an address, or a ``LocalCluster``.

The model is scattered to the workers once; each query is a task with ``retries=1``. A
worker that dies has its tasks rescheduled by the scheduler; a task that kills workers
repeatedly becomes a ``KilledWorker`` error (our local cluster allows one death per task
before that), reported as the query's error.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .base import RETRIES, Failure, Outcome, TaskFn, failure_text, optional_import


class DaskExecutor:
    """Tasks on a dask.distributed ``Client``."""

    def __init__(self, address: str | None = None, workers: int = 1):
        dask = optional_import("dask", "dask")
        distributed = optional_import("distributed", "dask")
        self._cluster = None
        if address is None:
            # one worker process per task slot, one thread each (one solver thread)
            with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES}):
                self._cluster = distributed.LocalCluster(
                    n_workers=max(1, int(workers)),
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                )
            self.client = distributed.Client(self._cluster)
        else:
            self.client = distributed.Client(address)
        self.workers = len(self.client.scheduler_info().get("workers", {})) or max(1, workers)
        self._as_completed = distributed.as_completed

    def run(self, fn: TaskFn, shared: Any, items: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        if not items:
            return
        model = self.client.scatter(shared, broadcast=True, hash=False)
        futures = {
            self.client.submit(fn, model, item, retries=RETRIES, pure=False): i
            for i, item in enumerate(items)
        }
        try:
            for f in self._as_completed(list(futures)):
                i = futures[f]
                try:
                    yield i, f.result()
                except Exception as e:  # the task's error after its retry, or KilledWorker
                    yield i, Failure(failure_text(e))
        finally:
            self.client.cancel(list(futures), force=True)

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()
