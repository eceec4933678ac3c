"""The box search beside the backend: a box search its first turn left unfinished
(boxes.py) goes on in a thread of this process while the backend's solver runs in its
worker process, until one of them answers. A box answer stops this query's solver
process; a backend answer stops the box search. On one core the two share it, on more
each has its own: either way a pair the solver finds in seconds is not kept waiting for
a box search that would need minutes, nor a proof only the boxes give for a solver that
cannot give it.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import replace

from ..answers.context import SolveContext
from ..answers.result import INSENSITIVE, SENSITIVE, Result, fail
from ..backends.worker import WorkerStopped, thread_key, worker_for
from .backend import BackendProblem, backend_search

JOIN_SECONDS = 10.0  # how long a box search asked to stop may take to see it


class _Either:
    """A stop request: this search's own, or the race's the query runs in."""

    def __init__(self, *events):
        self.events = [e for e in events if e is not None]

    def set(self) -> None:
        self.events[0].set()

    def is_set(self) -> bool:
        return any(e.is_set() for e in self.events)


def proven(res: Result) -> bool:
    """An answer that ends the query: a replay-checked pair, or a proof."""
    return res.status == INSENSITIVE or (res.status == SENSITIVE and res.validated)


def backend_beside_boxes(ctx: SolveContext, bp: BackendProblem) -> None:
    """The backend's search, with the box search ``ctx.boxes`` left unfinished beside it
    (the backend alone when there is none)."""
    stage = ctx.boxes
    if stage is None:
        backend_search(ctx, bp)
        return
    stop = _Either(threading.Event(), ctx.stop)
    box_ctx = replace(ctx, result=copy.deepcopy(ctx.result), stop=stop)
    halt = threading.Event()  # the backend's search ends at its next step
    worker, key = worker_for(ctx.q.plan.backend, ctx.memory_mb), thread_key()
    answered: list[bool] = []

    def search() -> None:
        try:
            if stage.run(box_ctx, ctx.deadline):
                answered.append(True)
                halt.set()
                worker.kill_thread(key)
        except Exception as e:  # noqa: BLE001 - the backend's answer stands
            stage.stats["error"] = f"{type(e).__name__}: {e}"

    thread = threading.Thread(target=search, daemon=True, name="treesens-boxes")
    thread.start()
    try:
        try:
            backend_search(ctx, bp, halt)
        except WorkerStopped:  # stopped between two solves by the box answer
            if not answered:
                raise
        if proven(ctx.result) and not answered:
            stop.set()
            thread.join(JOIN_SECONDS)
        else:  # the box search may still answer: it ends by the deadline
            thread.join()
    except BaseException:  # Ctrl-C, a signal, an error: the box search ends too
        stop.set()
        thread.join(JOIN_SECONDS)
        raise
    finally:
        worker.allow_thread(key)
    if answered:
        _take_box_answer(ctx, box_ctx, stage)


def _take_box_answer(ctx: SolveContext, box_ctx: SolveContext, stage) -> None:
    """The box search's answer is the query's; one from the backend too must agree."""
    backend = ctx.result
    res = box_ctx.result
    res.stats["box_search"] = stage.stats
    res.stats["beside"] = f"the box search answered first; {ctx.q.plan.backend} was stopped"
    if proven(backend) and backend.status != res.status:  # unsound somewhere: no verdict
        fail(
            res, f"the box search says {res.status} and {ctx.q.plan.backend} says {backend.status}"
        )
    ctx.result, ctx.witness = res, box_ctx.witness
    ctx.solve_time = max(ctx.solve_time, box_ctx.solve_time)
