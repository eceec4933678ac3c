"""``--backend race``: several backends on one query at once, the first proven answer wins.

Each backend runs in its own worker process, driven by one thread of the parent (the
threads mostly wait on pipes). The first answer that is proven -- "sensitive" with a
replayed witness, or "insensitive" -- is returned; the other workers are killed at once.
A backend that errors (e.g. Gurobi's size-limited license) does not end the race.

``q.plan.backend`` is ``"race"`` (the installed backends of ``DEFAULT_RACE``) or
``"race:cpsat,z3"`` (those backends).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ..answers.result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result, error_result
from ..answers.stats import RACE_STOPPED, SKIPPED_MEMORY
from ..backends.registry import is_search_method
from ..backends.worker import WAKE_EVERY, WorkerStopped, worker_for
from ..compiler.ensemble import Ensemble
from ..compiler.kinds import with_question_fields
from ..compiler.query import Query
from ..search.boxes import tables_refused
from .compile import compile_query
from .race_spec import DEFAULT_RACE, RACE, is_race, race_backends  # noqa: F401
from .solver_memory import refuse_solver_stage, solver_stage_over

# answers one query on one backend: solve_query's signature
SolveOne = Callable[..., Result]

JOIN_SECONDS = 10.0  # how long to wait for stopped backends' threads to wind down


def solve_race(
    ens: Ensemble,
    q: Query,
    solve_one: SolveOne,
    deadline: float | None = None,
    memory_mb: int | None = None,
    **given: Any,
) -> Result:
    """Race the backends; ``solve_one`` answers the query on one of them. ``given``:
    ``solve_one``'s other keywords (``compiled``, ``log``, ``prefer``, ``data``: the
    Dataset the query names, driver/data.py; ``after_heuristic``: the heuristic ran
    before the race, driver/solve.py, and its pair short of the gap; ``note``: a
    progress line, each text told once however many backends build box-search tables)."""
    t0 = time.time()
    deadline = deadline if deadline is not None else q.plan.deadline(t0)
    names, skipped = _within_limit(ens, race_backends(q.plan.backend), memory_mb, given)
    note = said_once(given.get("note"))
    cq = given.get("compiled") or (None if skipped else _compiled(ens, q, names, deadline, given))
    done: queue.Queue = queue.Queue()
    # a search method answers in this process (a thread of the race): it has no worker
    workers = {b: worker_for(b, memory_mb) for b in names if not is_search_method(b)}
    stop = threading.Event()

    def run(i: int, b: str) -> None:
        # only the first backend runs the (pure-Python) heuristic's data-aware stages: it
        # would compete for the GIL (its pair search ran before the race, driver/solve.py)
        qb = q.planned(
            backend=b,
            options=q.plan.options.with_(
                heuristic=bool(q.plan.options.value("heuristic")) and i == 0
            ),
        )
        try:
            res = solve_one(
                ens,
                qb,
                compiled=cq,
                deadline=deadline,
                memory_mb=memory_mb,
                log=given.get("log", False),
                prefer=given.get("prefer"),
                data=given.get("data"),  # the data read: the query names it by its path
                stop=stop,
                tables_mb=given.get("tables_mb"),
                after_heuristic=given.get("after_heuristic", False),
                note=note,  # each text once
            )
        except WorkerStopped:
            res = None
        except Exception as e:  # noqa: BLE001 - reported as this backend's error
            res = error_result(ens, q, f"{type(e).__name__}: {e}", backend=b)
            with_question_fields(res, q)
        if stop.is_set() and res is not None and res.status in (ERROR, UNKNOWN):
            res = None  # killed because another backend won
        done.put((b, res))

    threads = [
        threading.Thread(target=run, args=(i, b), daemon=True, name=f"race-{b}")
        for i, b in enumerate(names)
    ]
    for t in threads:
        t.start()
    results: dict[str, Result | None] = {}
    winner: Result | None = None
    while len(results) < len(names):
        try:
            b, res = done.get(timeout=WAKE_EVERY)
        except queue.Empty:
            if time.time() < deadline + 5.0:
                continue
            break
        results[b] = res
        if res is not None and (
            res.status == INSENSITIVE or (res.status == SENSITIVE and res.validated)
        ):
            winner = res
            break
    stop.set()
    _stop_others(workers, results, threads, deadline)
    summary = _summary(names, results, done)
    if winner is None:
        winner = _best(ens, q, names, results)
    winner.stats["race"] = summary
    winner.stats["winner"] = winner.backend
    _left_out(winner, race_backends(q.plan.backend), skipped)
    winner.time["total"] = time.time() - t0
    return winner


def _within_limit(ens: Ensemble, names: list[str], memory_mb, given: dict) -> tuple:
    """The backends that race, and why its solvers are left out ("": none are). A race
    compiles once for its solvers before any search, held to the memory limit now:
    where that compile would pass it, a race with a search method (the box search) runs
    those alone, each reading the trees as it needs, as a check's box search goes on
    with its solver stage skipped; one without is refused (SolverStageTooLarge)."""
    if given.get("compiled") is not None:
        return names, ""
    limit_mb = memory_mb if memory_mb is not None else given.get("tables_mb")
    if not any(is_search_method(b) for b in names):
        refuse_solver_stage(ens, limit_mb, memory_mb is not None)
        return names, ""
    why = solver_stage_over(ens, limit_mb, memory_mb is not None) or ""
    return ([b for b in names if is_search_method(b)] if why else names), why


def _compiled(ens: Ensemble, q: Query, names: list[str], deadline: float, given: dict):
    """The query compiled once for the racing backends."""
    return compile_query(
        ens, q.planned(backend=names[0]), deadline=deadline, data=given.get("data")
    )


def _left_out(res: Result, asked: list[str], why: str) -> None:
    """The race's result says which solvers the memory limit left out of it, and why
    (``why`` "": none were)."""
    if not why:
        return
    solvers = [b for b in asked if not is_search_method(b)]
    res.stats["race"].update({b: SKIPPED_MEMORY for b in solvers})
    res.notes.append(f"{', '.join(solvers)} left out of the race: {why}")
    tables = res.stats.get("box_search", {})
    if res.status == ERROR and tables.get("status") == "skipped":  # its fix: not a solver
        res.error = f"{res.backend}: {tables_refused(tables['reason'], ', '.join(solvers))}"


def said_once(note: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """``note`` telling each text once: the racing threads each build the box search's
    tables (the box search itself, and a solver backend's first stage)."""
    if note is None:
        return None
    told: set[str] = set()
    lock = threading.Lock()

    def once(text: str) -> None:
        with lock:
            if text in told:
                return
            told.add(text)
        note(text)

    return once


def _summary(names: list[str], results: dict, done: queue.Queue) -> dict[str, str]:
    """``stats["race"]``: each backend's status, with the answers that came while the
    others were stopped; RACE_STOPPED where none came (killed, or past the limit)."""
    while True:
        try:
            b, res = done.get_nowait()
        except queue.Empty:
            break
        results.setdefault(b, res)
    got = {b: r.status for b, r in results.items() if r is not None}
    return {b: got.get(b, RACE_STOPPED) for b in names}


def _stop_others(workers: dict, results: dict, threads: list, deadline: float) -> None:
    """No new solver process may start, running ones are killed; then wait for their
    threads (quick: their solver process is gone), so that no thread still drives a
    pooled worker when the caller uses it next."""
    for b, w in workers.items():
        if b not in results:
            w.refuse_starts("another backend answered first")
            w.kill()
    for t in threads:
        t.join(timeout=max(1.0, min(JOIN_SECONDS, deadline + 5.0 - time.time())))
    for w in workers.values():
        w.allow_starts()


def _best(ens, q, names, results) -> Result:
    """No proven answer: unknown if any backend ran out of time, else the first error."""
    got = [r for r in results.values() if r is not None]
    unknown = [r for r in got if r.status == UNKNOWN]
    if unknown:
        return unknown[0]
    errors = [r for r in got if r.status == ERROR]
    if errors and len(errors) == len(names):
        r = errors[0]
        r.error = "; ".join(f"{e.backend}: {e.error}" for e in errors)
        return r
    why = "; ".join(f"{e.backend}: {e.error}" for e in errors)
    res = with_question_fields(error_result(ens, q, "", backend=RACE), q)
    res.status, res.error = UNKNOWN, None
    res.message = "no backend answered within the time limit" + (f" (errors: {why})" if why else "")
    return res
