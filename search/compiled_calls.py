"""Calls into numba-compiled code that let Ctrl-C and SIGTERM through as themselves.

Compiled code calls back into Python now and then (numba unpickles a constant there). A
signal handler that raises at that moment (Ctrl-C's KeyboardInterrupt, the CLI's
Terminated) makes numba's dispatcher return a SystemError raised from it, which callers
would take for a bug: a max gap interrupted in its compiled search ended "internal error"
without the bounds it had. ``signals_raised`` raises the interruption itself instead.
"""

from __future__ import annotations


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


class _SignalsRaised:
    """``signals_raised``'s context: a class, not a generator's context manager, whose
    entry and exit cost a fifth as much (the heuristic enters one per compiled walk, 44k
    times in a max gap's seeds and polishes on churn's 255-leaf LightGBM model)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, e, _traceback) -> bool:
        if kind is None or not issubclass(kind, SystemError):
            return False
        interruption = interruption_behind(e)
        if interruption is None:
            return False
        raise interruption from None


_SIGNALS_RAISED = _SignalsRaised()  # no state: one serves every call


def signals_raised() -> _SignalsRaised:
    """Inside, a SystemError raised from an interruption is that interruption."""
    return _SIGNALS_RAISED
