"""A max-gap query's status lines in a sweep (questions/campaign._throttled): its brackets
so far at most one per ``STATUS_EVERY`` seconds, its notes (making the box search's kernel
ready) at once, without taking a bracket's turn; a check in flight, which says nothing
as it runs, said to be still running every ``STILL_RUNNING_EVERY`` seconds."""

from __future__ import annotations

import time

from treesens.answers.phrases import max_gap_searching
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.questions import campaign

NOTE = "max gap: compiled the box search in 18.5s (not counted in the time limit)"


def _said(*lines: str) -> list[str]:
    shown: list[str] = []
    log = campaign._throttled(shown.append, "f")
    for text in lines:
        log(text)
    return shown


def _bracket(upper: float) -> str:
    return max_gap_searching("gap", 0.1, upper, "3 boxes")


def test_a_second_bracket_within_the_interval_is_not_shown():
    assert _said(_bracket(0.5), _bracket(0.4)) == [f"f: {_bracket(0.5)}"]


def test_a_note_is_shown_at_once_after_a_bracket():
    assert _said(_bracket(0.5), NOTE) == [f"f: {_bracket(0.5)}", f"f: {NOTE}"]


def test_the_bracket_after_a_note_is_shown_at_once():
    assert _said(NOTE, _bracket(0.5)) == [f"f: {NOTE}", f"f: {_bracket(0.5)}"]


def test_the_bracket_after_a_note_following_a_bracket_is_shown_at_once():
    said = _said(_bracket(0.5), NOTE, _bracket(0.4))
    assert said == [f"f: {_bracket(0.5)}", f"f: {NOTE}", f"f: {_bracket(0.4)}"]


def _heard_while(seconds: float) -> tuple[list[str], list[str]]:
    """The lines ``_still_running`` says while a check runs ``seconds``, and after."""
    shown: list[str] = []
    query = Query(vary=("f",), gap=0.2, plan=Plan(timeout=5))
    with campaign._still_running(shown.append, query, every=0.02):
        time.sleep(seconds)
    during = list(shown)
    time.sleep(0.1)
    return during, shown[len(during) :]


def test_a_check_in_flight_is_said_to_still_run_with_its_time_limit():
    during, _ = _heard_while(0.15)
    assert during and all(line.startswith("f: still running, ") for line in during)
    assert during[0].endswith("s of 5s")


def test_nothing_is_said_of_a_check_once_it_ended():
    _, after = _heard_while(0.05)
    assert after == []


def test_a_check_that_ends_within_the_interval_says_nothing():
    shown: list[str] = []
    query = Query(vary=("f",), gap=0.2)
    with campaign._still_running(shown.append, query, every=10):
        pass
    assert shown == []


class _SlowWorkers:
    """An executor whose workers answer each task after ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def run(self, fn, ens, tasks):
        for i, _ in enumerate(tasks):
            time.sleep(self.seconds)
            yield i, f"answer {i}"


def test_a_sweep_on_workers_says_how_many_are_answered_while_it_waits(monkeypatch):
    monkeypatch.setattr(campaign, "STILL_RUNNING_EVERY", 0.02)
    shown: list[str] = []
    tasks = [object(), object()]
    answers = campaign.answer_all(None, tasks, executor=_SlowWorkers(0.1), status=shown.append)
    assert answers == ["answer 0", "answer 1"]
    assert shown[0].startswith("still running: 0 of 2 answered, ")
    assert shown[-1].startswith("still running: 1 of 2 answered, ")
