"""Ctrl-C that is not lost: Python drops a KeyboardInterrupt raised while a weak
reference's callback or a finaliser runs ("Exception ignored in ..."), so the command
would go on. The handler also records the interrupt, and long loops ask
``raise_if_interrupted`` between steps, where it cannot be lost."""

from __future__ import annotations

import contextlib
import signal
import threading

_INTERRUPTED = threading.Event()


def _interrupt(signum: int, frame) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


def raise_if_interrupted() -> None:
    """Raise KeyboardInterrupt again when Ctrl-C came and its first raise was lost."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_recorded():
    """SIGINT raises KeyboardInterrupt and is recorded while the command runs (only where
    SIGINT raises already: a shell that ignores it for a background job keeps that)."""
    _INTERRUPTED.clear()
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
