"""The box search beside the backend (driver/alongside.py): after its first turn an
unfinished box search goes on in a thread while the backend searches; the first proven
answer is the query's, and the answers agree with brute force."""

from __future__ import annotations

import threading
import time

import pytest

from treesens.answers.result import INSENSITIVE, SENSITIVE, UNKNOWN
from treesens.backends.registry import available
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver import alongside
from treesens.driver.solve import solve_query
from treesens.search import boxes
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

needs_cpsat = pytest.mark.skipif(not available("cpsat"), reason="CP-SAT (ortools) missing")


def _query(vary, gap: Gap, timeout: float = 60.0) -> Query:
    return Query(
        vary=tuple(vary),
        gap=gap,
        plan=Plan(timeout=timeout, options=(("heuristic_effort", 0.001),)),
    )


@pytest.fixture
def no_first_turn(monkeypatch):
    """The box search's first turn ends at once: every box answer comes from beside the
    backend."""
    monkeypatch.setattr(boxes, "FIRST_TURN", 0.0)


@pytest.fixture
def idle_backend(monkeypatch) -> list[str]:
    """A backend that answers nothing: it waits until told to stop, or the deadline. The
    list it returns gets how its wait ended ("halted" or "deadline")."""
    ended: list[str] = []

    def wait(ctx, bp, halt=None):
        while not (halt is not None and halt.is_set()) and time.time() < ctx.deadline:
            time.sleep(0.01)
        ended.append("halted" if halt is not None and halt.is_set() else "deadline")
        ctx.result.status, ctx.result.message = UNKNOWN, "time limit reached"

    monkeypatch.setattr(alongside, "backend_search", wait)
    return ended


@needs_cpsat
@pytest.mark.parametrize("seed", range(8))
def test_the_pipeline_agrees_with_the_oracle_with_the_box_search_beside_the_backend(
    no_first_turn, seed
):
    ens = random_ensemble(300 + seed, 8, 3, 3, 4, leaf_scale=1.0)
    q = _query(("f0",), Gap(0.2))
    res = solve_query(ens, q)
    assert res.status in (SENSITIVE, INSENSITIVE)
    assert (res.status == SENSITIVE) == brute_force_sensitive(ens, q)
    assert res.status == INSENSITIVE or res.validated


@pytest.mark.parametrize("seed", range(6))
def test_the_box_search_beside_an_idle_backend_answers_the_query(no_first_turn, idle_backend, seed):
    ens = random_ensemble(400 + seed, 8, 3, 3, 4, leaf_scale=1.0)
    q = _query(("f0",), Gap(0.2))
    res = solve_query(ens, q)
    assert idle_backend == ["halted"]  # not at the deadline: the box answer stopped it
    assert (res.status == SENSITIVE) == brute_force_sensitive(ens, q)
    assert res.stats["beside"].startswith("the box search answered first")
    assert (
        res.stats.get("found_by") == boxes.FOUND_BY or res.stats.get("proved_by") == boxes.FOUND_BY
    )


def test_a_backend_answer_stops_the_box_search_beside_it(no_first_turn, monkeypatch):
    ens = random_ensemble(7, 40, 5, 6, 8, leaf_scale=0.3)
    q = _query(("f0",), Gap(0.4))

    def answers(ctx, bp, halt=None):
        ctx.result.status, ctx.result.message = INSENSITIVE, "proved (a stand-in backend)"

    monkeypatch.setattr(alongside, "backend_search", answers)
    slow = boxes.BoxStage.run

    def slow_run(self, ctx, deadline, boxes=None):  # beside the backend: the whole limit
        while ctx.stop is not None and not ctx.stop.is_set() and time.time() < deadline:
            time.sleep(0.01)
        return slow(self, ctx, time.time(), boxes)

    monkeypatch.setattr(boxes.BoxStage, "run", slow_run)
    res = solve_query(ens, q)
    assert res.status == INSENSITIVE and "beside" not in res.stats
    boxes_left = [t for t in threading.enumerate() if t.name == "treesens-boxes" and t.is_alive()]
    assert not boxes_left  # it saw its stop request (else it would wait for the deadline)


def test_a_box_answer_and_a_backend_answer_that_disagree_are_an_error(no_first_turn, monkeypatch):
    ens = random_ensemble(400, 8, 3, 3, 4, leaf_scale=1.0)
    q = _query(("f0",), Gap(0.2))
    assert brute_force_sensitive(ens, q)

    def wrong(ctx, bp, halt=None):  # says insensitive once the box search has its pair
        while not (halt is not None and halt.is_set()) and time.time() < ctx.deadline:
            time.sleep(0.01)
        ctx.result.status = INSENSITIVE

    monkeypatch.setattr(alongside, "backend_search", wrong)
    res = solve_query(ens, q)
    assert res.status == "error" and "the box search says sensitive" in res.error
