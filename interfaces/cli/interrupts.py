"""Ctrl-C and SIGTERM that are not lost: Python drops a KeyboardInterrupt raised while a
weak reference's callback or a finaliser runs ("Exception ignored in ..."), so the command
would go on. The handlers also record the signal, and long loops ask
``raise_if_interrupted`` between steps, where it cannot be lost."""

from __future__ import annotations

import contextlib
import signal
import threading

_INTERRUPTED = threading.Event()
_SIGNAL: list[int] = []  # the signal recorded (SIGINT, SIGTERM, SIGHUP)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so that the same clean-up runs."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def record(signum: int) -> None:
    """Note that ``signum`` asked the command to end (its handler is about to raise)."""
    _SIGNAL[:] = [signum]
    _INTERRUPTED.set()


def recorded_signal() -> int | None:
    """The signal that asked the command to end, if one did."""
    return _SIGNAL[0] if _INTERRUPTED.is_set() and _SIGNAL else None


def _interrupt(signum: int, frame) -> None:
    record(signum)
    raise KeyboardInterrupt


# where a compile's error comes from when a signal broke into it: llvmlite's callbacks
# swallow the signal's exception ("Exception ignored ... Terminated: 15") and numba goes on
# to fail ("RuntimeError: no compiled object yet for <Library 'sweep_from'>")
_COMPILERS = ("numba", "llvmlite")


def signal_behind(e: BaseException) -> int | None:
    """The signal recorded, where ``e`` is a RuntimeError or SystemError that numba or
    llvmlite raised after it: an interruption during a compile, not a bug."""
    signum = recorded_signal()
    if signum is None or not isinstance(e, (RuntimeError, SystemError)):
        return None
    tb = e.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module.split(".")[0] in _COMPILERS:
            return signum
        tb = tb.tb_next
    return None


def raise_if_interrupted() -> None:
    """Raise again when a signal came and its first raise was lost: KeyboardInterrupt
    for Ctrl-C, Terminated for SIGTERM and SIGHUP."""
    signum = recorded_signal()
    if signum is None:
        return
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


@contextlib.contextmanager
def interrupts_recorded():
    """SIGINT raises KeyboardInterrupt and is recorded while the command runs (only where
    SIGINT raises already: a shell that ignores it for a background job keeps that)."""
    _INTERRUPTED.clear()
    _SIGNAL.clear()
    previous = None
    with contextlib.suppress(ValueError, OSError):  # not the main thread: leave it
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous = signal.signal(signal.SIGINT, _interrupt)
    try:
        yield
    finally:
        if previous is not None:
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signal.SIGINT, previous)
