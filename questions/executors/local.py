"""The local executor: a process pool on this machine (``--jobs N``).

At most ``workers`` tasks are in the pool at once, so when a worker process dies (the
pool breaks) the tasks then running are exactly the suspects. Each suspect is run again
alone, in a fresh one-process pool: the task that kills its worker fails there too and is
reported; the others, which only shared the broken pool, answer.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from ...backends.worker import WAKE_EVERY
from .base import RETRIES, Failure, Outcome, TaskFn, failure_text
from .spawn_guard import raise_worker_note, worker_note

_shared: Any = None  # the batch's shared argument, in each pool process


def _set_shared(shared: Any) -> None:
    global _shared
    _shared = shared


def _call(fn: TaskFn, item: Any) -> Any:
    return fn(_shared, item)


class LocalExecutor:
    """A pool of ``workers`` spawned processes, one task each at a time."""

    def __init__(self, workers: int = 1):
        self.workers = max(1, int(workers))

    def _pool(self, shared: Any, workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_set_shared,
            initargs=(shared,),
        )

    def run(self, fn: TaskFn, shared: Any, items: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        with worker_note() as note:
            yield from self._run(fn, shared, items, note)

    def _run(
        self, fn: TaskFn, shared: Any, items: Sequence[Any], note: Path
    ) -> Iterator[tuple[int, Outcome]]:
        pending = deque(range(len(items)))
        failed = [0] * len(items)
        running: dict[Future, int] = {}
        pool = self._pool(shared, self.workers)
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    i = pending.popleft()
                    running[pool.submit(_call, fn, items[i])] = i
                done, _ = wait(running, timeout=WAKE_EVERY, return_when=FIRST_COMPLETED)
                suspects = []
                for f in done:
                    i = running.pop(f)
                    e = f.exception()
                    if e is None:
                        yield i, f.result()
                    elif isinstance(e, BrokenProcessPool):
                        suspects.append(i)
                    elif failed[i] < RETRIES:
                        failed[i] += 1
                        pending.appendleft(i)
                    else:
                        yield i, Failure(failure_text(e))
                if not suspects:
                    continue
                raise_worker_note(note)  # a script without the main guard: not retried
                pool.shutdown(wait=True, cancel_futures=True)
                for f, i in running.items():
                    if f.done() and f.exception() is None:
                        yield i, f.result()
                    else:
                        suspects.append(i)
                running.clear()
                for i in sorted(suspects):
                    yield i, self._alone(fn, shared, items[i])
                pool = self._pool(shared, self.workers)
        except BaseException:  # Ctrl-C, SIGTERM, an error: the running tasks are not awaited
            _stop_now(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _alone(self, fn: TaskFn, shared: Any, item: Any) -> Outcome:
        """The second attempt of a task that was running when its pool broke."""
        with self._pool(shared, 1) as pool:
            try:
                return pool.submit(_call, fn, item).result()
            except BrokenProcessPool:
                return Failure("its worker process died (twice)")
            except Exception as e:
                return Failure(failure_text(e))

    def close(self) -> None:
        """Nothing outlives ``run``: each batch has its own pool."""


def _stop_now(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's processes (their solver processes die with them), so that its
    shutdown does not wait for the queries they are running (minutes each)."""
    kill = getattr(pool, "kill_workers", None)  # Python 3.14
    if kill is not None:
        kill()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):
            process.kill()
