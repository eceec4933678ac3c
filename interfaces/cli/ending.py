"""How the ``treesens`` command's own process ends once the command is done.

When the command returns, the interpreter's tear-down would clear every module and collect
every object left (the model, the compiled structure, numpy's and the libraries' modules):
0.05-0.07 CPU s of a check that takes about 0.5 s in all, spent after the answer is out.
The process ends instead as the interpreter would end it, less that tear-down: its output
flushed, then the ``atexit`` handlers run (solver processes ended, logs and coverage data
written, ``weakref.finalize`` clean-ups done), then ``os._exit`` with the command's exit
code.

The interpreter is left to end the process itself whenever the quick end could differ
from it: a thread that is not a daemon still runs (the interpreter waits for it), or
flushing the output fails (a closed pipe: the interpreter reports it and exits 120, as
before). Only the command line's entry point calls this, never the Python API.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

from .termination import within


def end_process(code: int) -> int:
    """End this process now with exit code ``code`` when that is safe; else return
    ``code`` for the interpreter's usual exit."""
    if _other_threads_running() or not _flushed():
        return code
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # not CPython: its own exit, as before
        return code
    run_exit_handlers()
    if not _flushed():  # what a handler printed could not be written
        return code
    os._exit(code)


def end_at_once(code: int) -> None:
    """After a signal: the output flushed as far as it can be, then the process ended
    (the command has already ended its solver processes)."""
    _flushed()
    os._exit(code)


def end_from_another_thread(code: int, line: str | None) -> None:
    """The main thread is stuck after a signal: ``line`` (if any) written to stderr and the
    output flushed, each given at most ``LAST_WORDS`` s (a lock the stuck thread holds, a
    pipe nobody reads), then the process ended."""
    if line is not None:
        within(LAST_WORDS, lambda: print(line, file=sys.stderr))
    within(LAST_WORDS, _flushed)
    os._exit(code)


LAST_WORDS = 0.5


def _other_threads_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _flushed() -> bool:
    """Flush stdout and stderr; False when either could not be written."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe or stream, reported by the exit
            ok = False
    return ok
