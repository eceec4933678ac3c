"""The dask executor: a dask.distributed cluster at an address, or a ``LocalCluster``.

The model is sent to the cluster once (as the output of a task, which the scheduler can
compute again when the workers holding it die, unlike scattered data); each query is a task with ``retries=1``. A
worker that dies has its tasks rescheduled by the scheduler; a task that kills workers
repeatedly becomes a ``KilledWorker`` error (our local cluster allows one death per task
before that), reported as the query's error. The scheduler counts a death against every
task assigned to that worker, so no more tasks are submitted than the cluster has
threads: a task that kills its worker takes no queued bystander with it.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ...compiler.errors import InputError
from .base import RETRIES, Failure, Outcome, TaskFn, failure_text, optional_import
from .spawn_guard import raise_worker_note, worker_note

# Dask retries an address where no scheduler answers for 30 s before it gives up
# (distributed.comm.timeouts.connect); a scheduler that is there answers within this, as
# a Ray cluster is given (executors/ray.py)
CONNECT_SECONDS = 5.0


class DaskExecutor:
    """Tasks on a dask.distributed ``Client``."""

    def __init__(self, address: str | None = None, workers: int = 1):
        dask = optional_import("dask", "dask")
        distributed = optional_import("distributed", "dask")
        self._cluster = None
        if address is None:
            # one worker process per task slot, one thread each (one solver thread)
            self._cluster = _local_cluster(dask, distributed, workers)
            self.client = distributed.Client(self._cluster)
        else:
            try:
                self.client = distributed.Client(address, timeout=CONNECT_SECONDS)
            except OSError as e:  # no scheduler there (a refused or timed-out connection)
                raise InputError(
                    f"no Dask scheduler answers there: {e}", f"--executor dask={address}"
                ) from None
        self.workers = len(self.client.scheduler_info().get("workers", {})) or max(1, workers)
        self._as_completed = distributed.as_completed

    def run(self, fn: TaskFn, shared: Any, items: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        if not items:
            return
        # a task's output, not scattered data: recomputed if the workers holding it die
        model = self.client.submit(_value, shared, pure=False)
        queue = iter(enumerate(items))
        futures: dict = {}

        def submit_next():
            task = next(queue, None)
            if task is None:
                return None
            f = self.client.submit(fn, model, task[1], retries=RETRIES, pure=False)
            futures[f] = task[0]
            return f

        first = [submit_next() for _ in range(min(self._threads(), len(items)))]
        running = self._as_completed(first)
        try:
            for f in running:
                i = futures.pop(f)
                try:
                    out = f.result()
                except Exception as e:  # the task's error after its retry, or KilledWorker
                    out = Failure(failure_text(e))
                following = submit_next()
                if following is not None:
                    running.add(following)
                yield i, out
        finally:
            self.client.cancel(list(futures), force=True)

    def _threads(self) -> int:
        """Task slots of the cluster now (at least one)."""
        workers = self.client.scheduler_info().get("workers", {})
        return max(1, sum(w.get("nthreads", 1) for w in workers.values()))

    def close(self) -> None:
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def _local_cluster(dask: Any, distributed: Any, workers: int) -> Any:
    """A ``LocalCluster`` of ``workers`` one-thread worker processes. Its workers are
    spawned, each importing the main script afresh: one refused as a script without the
    main guard (spawn_guard) leaves its line in a note, raised here in its one line where
    the cluster would fail with 'Nanny failed to start' and the workers' tracebacks."""
    # the processes ignore Ctrl-C, which reaches the terminal's whole process group: this
    # process stops them, instead of each printing its own traceback
    config = {"distributed.scheduler.allowed-failures": RETRIES}
    with worker_note() as note, dask.config.set(config), _ctrl_c_ignored():
        try:
            return distributed.LocalCluster(
                n_workers=max(1, int(workers)),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # its warnings on cancelled tasks and stopped workers (an interrupted
                # sweep's) are not the user's; a task's failure is its query's error
                silence_logs=logging.ERROR,
            )
        except Exception:
            raise_worker_note(note)  # a script without the main guard: its one line
            raise


def _value(x: Any) -> Any:
    return x


@contextmanager
def _ctrl_c_ignored():
    """SIGINT ignored while the processes started here start (they keep it ignored);
    nothing changes outside the main thread, where no handler can be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)
