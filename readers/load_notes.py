"""Lines on what a long model load is doing: a pipeline of 1,500 trees takes 15-20 s to
fold its preprocessing into the trees, in which nothing else is said.

A step of the load (``step``) says its words once it has run ``AFTER`` seconds, on the
callable the caller gave (``saying``: the command line's stderr, none with --json); a
quick load says nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# seconds a step runs before its line is said: well past what a small model's takes on a
# loaded machine, where a refusal that follows must stay the one line said
AFTER = 3.0
_SAY: ContextVar[Callable[[str], None] | None] = ContextVar("treesens_load_say", default=None)


@contextmanager
def saying(say: Callable[[str], None] | None) -> Iterator[None]:
    """The loads within say their long steps' lines on ``say`` (None: nothing)."""
    token = _SAY.set(say)
    try:
        yield
    finally:
        _SAY.reset(token)


@contextmanager
def step(words: str) -> Iterator[None]:
    """A step of a load: ``words`` said once it has run AFTER seconds, if anyone listens."""
    with said_after(AFTER, _SAY.get(), words):
        yield


@contextmanager
def said_after(seconds: float, say: Callable[[str], None] | None, line: str) -> Iterator[None]:
    """``say(line)`` once, from a timer's thread, where the block runs past ``seconds``
    (nothing where ``say`` is None); at once where ``seconds`` is 0 (tests: every step long)."""
    if say is None:
        yield
        return
    if seconds <= 0:
        say(line)
        yield
        return
    timer = threading.Timer(seconds, say, args=(line,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
