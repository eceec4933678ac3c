"""Calls into numba-compiled code that let Ctrl-C and SIGTERM through as themselves.

Compiled code calls back into Python now and then (numba unpickles a constant there). A
signal handler that raises at that moment (Ctrl-C's KeyboardInterrupt, the CLI's
Terminated) makes numba's dispatcher return a SystemError raised from it, which callers
would take for a bug: a max gap interrupted in its compiled search ended "internal error"
without the bounds it had. ``signals_raised`` raises the interruption itself instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def interruption_behind(e: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt (or subclass) ``e`` was raised from, directly or not."""
    seen: set[int] = set()
    at: BaseException | None = e
    while at is not None and id(at) not in seen:
        if isinstance(at, KeyboardInterrupt):
            return at
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return None


@contextmanager
def signals_raised() -> Iterator[None]:
    """Inside, a SystemError raised from an interruption is that interruption."""
    try:
        yield
    except SystemError as e:
        interruption = interruption_behind(e)
        if interruption is None:
            raise
        raise interruption from None
