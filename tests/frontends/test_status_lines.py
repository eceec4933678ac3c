"""A max-gap query's status lines in a sweep (questions/campaign._throttled): its brackets
so far at most one per ``STATUS_EVERY`` seconds, its notes (making the box search's kernel
ready) at once, without taking a bracket's turn."""

from __future__ import annotations

from treesens.answers.phrases import max_gap_searching
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
