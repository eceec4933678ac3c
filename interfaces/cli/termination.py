"""The ``treesens`` command ends within ``GRACE`` seconds of SIGTERM, SIGHUP or Ctrl-C,
whatever its main thread is doing.

Python runs a signal's handler in the main thread only, between two steps of Python code:
the clean-up (solver processes ended, the one line, exit 128 + the signal) waits while
the main thread is inside one long call (a compiled search step, a library's predict, a
join), and never comes when the handler's exception is raised inside a finaliser or a
weak reference's callback, where Python prints "Exception ignored" and drops it (the
command then goes on with the next query, its solver processes killed, for minutes).

So the command also learns of the signal outside the main thread: the C-level handler
writes the signal's number to a pipe (``signal.set_wakeup_fd``) as soon as the signal
arrives, and a daemon thread reading that pipe gives the main thread's clean-up
``GRACE`` seconds (it normally takes a few hundredths: solver processes killed and
reaped, a partial result printed). Past them it ends the process itself: solver
processes and every other process it started (a process pool's) killed, the same one
line, exit 128 + the signal. Only the command line's
entry point arms this (it ends the process), never the Python API.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Iterator

# the main thread's clean-up's share: it normally ends in 0.02-0.1 s (measured on a sweep
# beside two busy loops: at most 0.2 s), printing an optimisation's best pair included
GRACE = 5.0


@contextlib.contextmanager
def ended_within(grace: float, force_end: Callable[[int], None]) -> Iterator[None]:
    """While the block runs, a signal with a Python handler (the command's SIGTERM,
    SIGHUP and SIGINT) that has not ended the process ``grace`` seconds after it came
    makes a daemon thread call ``force_end(signum)`` (which must end the process).
    Nothing is armed outside the main thread."""
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)  # the C handler must never block
    try:
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(read_fd)
        os.close(write_fd)
        yield
        return
    watcher = threading.Thread(
        target=_watch, args=(read_fd, grace, force_end), daemon=True, name="treesens-signals"
    )
    watcher.start()
    try:
        yield
    finally:
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(previous)
        os.close(write_fd)  # the watcher's read ends (its thread then closes read_fd)


def _watch(read_fd: int, grace: float, force_end: Callable[[int], None]) -> None:
    try:
        got = os.read(read_fd, 1)
        if not got:  # disarmed
            return
        signum = got[0]
        # disarmed meanwhile (the block ended normally): the read sees the pipe close
        if _closed_within(read_fd, grace):
            return
    finally:
        os.close(read_fd)
    force_end(signum)


def _closed_within(read_fd: int, seconds: float) -> bool:
    """Wait ``seconds`` for the pipe's write end to close; later signals are read and
    ignored (the first one's grace counts)."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        ready, _, _ = select.select([read_fd], [], [], left)
        if ready and not os.read(read_fd, 64):
            return True
    return False


def kill_children() -> None:
    """SIGKILL every process this one started (Linux; elsewhere nothing): a process pool's
    processes, whose solver processes die with them."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                pids = [int(pid) for pid in f.read().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def within(seconds: float, action: Callable[[], object]) -> None:
    """Run ``action`` in a daemon thread, waiting for it at most ``seconds`` (a write to a
    pipe nobody reads, a flush behind a lock the stuck main thread holds)."""
    t = threading.Thread(target=action, daemon=True, name="treesens-last-words")
    t.start()
    t.join(seconds)
