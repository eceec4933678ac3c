"""Solving from many threads of one process: each thread gets its own solver process, so
concurrent queries never share a pipe, and give the verdicts a sequential run gives."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import treesens
from treesens.backends import worker
from treesens.driver import solve_query
from treesens.interfaces.api import make_query

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
THREADS = 8


@pytest.fixture(scope="module")
def model():
    return treesens.load_model(
        EXAMPLES / "breast_cancer_xgb.json", details=EXAMPLES / "breast_cancer_details.csv"
    )


def _queries(model) -> list[tuple[list[str], float]]:
    names = list(model.feature_names)
    pairs = [names[i : i + 2] for i in range(0, 16, 2)]
    return [(vary, gap) for vary in pairs for gap in (0.2, 0.4)]


def _solve(model, vary, gap):
    # heuristic off: every query goes to the solver process
    q = make_query(vary, gap=gap, timeout=120, options={"heuristic": False})
    return solve_query(model, q, deadline=time.time() + q.plan.timeout)


def _at_once(fn, jobs):
    """Run ``fn(*job)`` for every job on THREADS threads released together."""
    start = threading.Barrier(min(THREADS, len(jobs)))

    def run(job):
        if job[-1] < THREADS:
            start.wait(timeout=60)
        return fn(*job[:-1])

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(run, [(*j, i) for i, j in enumerate(jobs)]))


def test_threads_solving_at_once_give_the_sequential_verdicts(model):
    jobs = [(model, vary, gap) for vary, gap in _queries(model)]
    sequential = [_solve(*j).status for j in jobs]
    concurrent = _at_once(_solve, jobs)
    assert [r.error for r in concurrent if r.status == "error"] == []
    assert [r.status for r in concurrent] == sequential
    assert {"sensitive", "insensitive"} <= set(sequential)


def test_eight_threads_calling_check_at_once_give_no_error(model):
    jobs = [(vary, gap) for vary, gap in _queries(model)][:THREADS]
    sequential = [treesens.check(model, vary, gap=gap, timeout=120).status for vary, gap in jobs]

    def check(vary, gap):
        return treesens.check(model, vary, gap=gap, timeout=120)

    concurrent = _at_once(check, jobs)
    assert [r.error for r in concurrent if r.status == "error"] == []
    assert [r.status for r in concurrent] == sequential


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead but not yet reaped
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def _four_threads_holding_a_process(model, query: int) -> list[int]:
    """Solve in four threads that all keep their process until every one has solved;
    the pids of their processes."""
    vary, gap = _queries(model)[query]
    started: list[int] = []
    hold = threading.Barrier(4)

    def run():
        _solve(model, vary, gap)
        started.append(worker.worker_for("cpsat").proc.pid)
        hold.wait(timeout=120)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return started


def test_threads_solving_at_the_same_time_use_distinct_processes(model):
    assert len(set(_four_threads_holding_a_process(model, 0))) == 4


def test_processes_of_ended_threads_are_closed_but_one_spare(model):
    before = set(worker.live_pids())
    started = _four_threads_holding_a_process(model, 1)
    end = time.time() + 10.0  # the ended threads' processes are closed as they end
    while len(kept := [pid for pid in started if _alive(pid)]) > worker.SPARES:
        if time.time() > end:
            break
        time.sleep(0.05)
    assert len(kept) <= worker.SPARES
    assert set(worker.live_pids()) - before <= set(kept)


def test_a_spare_process_serves_the_next_thread(model):
    vary, gap = _queries(model)[2]
    pids: list[int] = []

    def run():
        _solve(model, vary, gap)
        pids.append(worker.worker_for("cpsat").proc.pid)

    for _ in range(2):
        t = threading.Thread(target=run)
        t.start()
        t.join(timeout=120)
    assert pids[0] == pids[1]


def test_shutdown_ends_the_processes_of_every_thread(model):
    vary, gap = _queries(model)[3]
    hold = threading.Event()
    ready = threading.Barrier(3)

    def run():
        _solve(model, vary, gap)
        ready.wait(timeout=120)
        hold.wait(timeout=120)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    ready.wait(timeout=120)
    pids = worker.live_pids()
    assert len(pids) >= 2
    worker.shutdown()
    assert not any(_alive(p) for p in pids)
    hold.set()
    for t in threads:
        t.join(timeout=10)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_process_solves_with_processes_of_its_own(model):
    import multiprocessing

    # an insensitive query: no replay, so the library's OpenMP (unsafe after fork) is not used
    vary, gap = _queries(model)[3]
    expected = _solve(model, vary, gap).status
    assert expected == "insensitive"
    parent_pid = worker.worker_for("cpsat").proc.pid
    ctx = multiprocessing.get_context("fork")
    answers = ctx.SimpleQueue()
    child = ctx.Process(target=_solve_in_child, args=(model, vary, gap, answers))
    child.start()
    child.join(120)
    status, child_pid = answers.get()
    assert (status, child_pid != parent_pid) == (expected, True)
    assert _solve(model, vary, gap).status == expected  # the parent's process still serves


def _solve_in_child(model, vary, gap, answers) -> None:
    status = _solve(model, vary, gap).status
    answers.put((status, worker.worker_for("cpsat").proc.pid))
