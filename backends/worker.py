"""Run backends in separate processes: hard time limits, crash isolation, and no two
solver libraries in one process (python-mip's CBC and OR-Tools cannot share one).

A worker is a plain ``python -m treesens.backends.worker_process MODULE`` subprocess talking
length-prefixed pickles over its stdin/stdout (the solver's own output is sent to
stderr). Unlike multiprocessing's spawn, this never re-imports the caller's main
module, so scripts without an ``if __name__ == "__main__"`` guard work too.

A ``Worker`` is one backend's solver processes: each thread that solves with it gets a
process of its own, kept alive between solves (a sweep pays the start-up once), so
threads never share a pipe. A process that overruns its deadline is killed and replaced
on the next solve; when a thread ends, its process is closed (one is kept as a spare for
the next thread, e.g. the next query of a race).

Solver processes die with the process that started them: on Linux by a parent-death
signal, elsewhere (and as a backstop) by a watchdog thread in the worker that exits when
its parent goes away. Processes are started from one long-lived thread because Linux
sends the parent-death signal when the *thread* that started a process ends.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import dataclasses
import functools
import importlib
import itertools
import os
import pickle
import queue
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import traceback
import weakref
from typing import Protocol

from ..compiler.ir import Problem
from ..compiler.solver import ERROR, UNKNOWN, Incumbent, Solution, SolveOptions
from .registry import get_info

GRACE = 1.0  # seconds past the deadline before the process is killed
# A thread that waits wakes at least this often: a signal the kernel hands to another
# thread runs its Python handler only when the main thread next runs Python code, and a
# main thread asleep in a long wait would leave SIGTERM unanswered until the wait ends.
WAKE_EVERY = 0.25
WATCH_SECONDS = 0.25  # how often the worker's watchdog looks for its parent
WATCH_POLL = 0.25  # how often an IncumbentWatch is asked whether to stop
SPARES = 1  # idle processes of ended threads kept per backend for the next thread
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
_HEADER = struct.Struct("<Q")


def _read_exact(fd: int, n: int) -> bytes:
    chunks = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            raise EOFError("worker pipe closed")
        chunks.append(b)
        n -= len(b)
    return b"".join(chunks)


def _write_msg(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        k = os.write(fd, view)
        view = view[k:]


def _read_msg(fd: int):
    (n,) = _HEADER.unpack(_read_exact(fd, _HEADER.size))
    return pickle.loads(_read_exact(fd, n))


def _die_with_parent(parent: int, in_fd: int) -> None:
    """Make this worker end when its parent does (runs in the child, first thing)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # the parent may have died before prctl took effect: we are then someone else's child
    if parent and os.getppid() != parent:
        os._exit(0)
    with contextlib.suppress(RuntimeError):  # no thread for it: the signal still holds
        threading.Thread(target=_watch_parent, args=(parent, in_fd), daemon=True).start()


def _watch_parent(parent: int, in_fd: int) -> None:
    """The portable backstop: exit when the parent's end of the pipe closes or the parent
    changes (the main loop only reads the pipe between solves)."""
    poller = select.poll() if hasattr(select, "poll") else None
    if poller is not None:
        poller.register(in_fd, 0)  # no events asked: only hang-up and errors are reported
    while True:
        if poller is not None:
            hung_up = any(
                ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL)
                for _, ev in poller.poll(WATCH_SECONDS * 1000)
            )
        else:
            time.sleep(WATCH_SECONDS)
            hung_up = False
        if hung_up or (parent and os.getppid() != parent):
            os._exit(0)


def serve(module_name: str, memory_mb: int, parent: int = 0) -> None:
    """The worker's main loop (runs in the child process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    in_fd = 0
    _die_with_parent(parent, in_fd)
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything the solver prints goes to stderr, not into the protocol
    if memory_mb:
        import resource

        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    load_error = ""
    try:
        module = importlib.import_module(module_name)
    except BaseException as e:  # noqa: BLE001 - reported to the parent
        module = None
        load_error = f"cannot load {module_name}: {type(e).__name__}: {e}"
        if memory_mb:
            load_error = (
                f"the solver cannot start within the memory limit of {memory_mb} MB "
                f"(raise --memory-mb); {load_error}"
            )
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            msg = _read_msg(in_fd)
        except Exception:  # noqa: BLE001
            # the pipe closed, or a message that does not read: the parent's write cut
            # short by its Ctrl-C and another written after it; the parent is ending
            return
        if msg is None:
            return
        problem, options, backend_name = msg
        if getattr(options, "incumbents", False):
            options = dataclasses.replace(options, report=functools.partial(_write_msg, out_fd))
        if module is None:
            sol = Solution(ERROR, message=load_error)
        else:
            try:
                if backend_name is None:
                    sol = module.solve(problem, options)
                else:
                    sol = module.solve(problem, options, backend_name)
            except MemoryError:
                sol = Solution(ERROR, message="the solver ran out of memory (worker memory limit)")
            except BaseException as e:  # noqa: BLE001
                # one line for the user; the traceback goes into the result's stats
                sol = Solution(
                    ERROR,
                    message=f"{type(e).__name__}: {e}".splitlines()[0],
                    stats={"traceback": traceback.format_exc(limit=4)},
                )
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a solver library may have taken it
        try:
            _write_msg(out_fd, sol)
        except (BrokenPipeError, OSError):
            return


class IncumbentWatch(Protocol):
    """What follows an optimising solve from the parent: the points reported before the
    answer, and when to stop the solver early."""

    def take(self, incumbent: Incumbent) -> None: ...

    def stop_reason(self) -> str | None: ...


class _Spawner:
    """Starts solver processes from one long-lived thread, so that Linux's parent-death
    signal (sent when the starting *thread* ends) fires only when this process ends."""

    def __init__(self) -> None:
        self._requests: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv: list[str]) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, daemon=True, name="treesens-spawner"
                )
                self._thread.start()
        answer: queue.Queue = queue.Queue(maxsize=1)
        self._requests.put((argv, answer))
        ok, value = answer.get()
        if not ok:
            raise value
        return value

    def _serve(self) -> None:
        while True:
            argv, answer = self._requests.get()
            try:
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    close_fds=True,
                    # a terminal's Ctrl-C goes to the parent, which decides
                    start_new_session=True,
                )
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                answer.put((False, e))
            else:
                answer.put((True, proc))


_SPAWNER = _Spawner()


class _ThreadMark:
    """Kept in a thread-local slot, so it is dropped when its thread ends."""

    def __init__(self) -> None:
        self.key = next(_THREAD_KEYS)


_THREAD_KEYS = itertools.count(1)
_LOCAL = threading.local()
_REGISTRY = threading.RLock()
_WORKERS: weakref.WeakSet[Worker] = weakref.WeakSet()


def thread_key() -> int:
    """The calling thread's key among a worker's processes (``Worker.kill_thread``)."""
    return _thread_key()


def _thread_key() -> int:
    """A number for the calling thread, never reused (thread idents are)."""
    mark = getattr(_LOCAL, "mark", None)
    if mark is None:
        mark = _LOCAL.mark = _ThreadMark()
        weakref.finalize(mark, _thread_ended, mark.key).atexit = False
    return mark.key


def _thread_ended(key: int) -> None:
    with _REGISTRY:
        workers = list(_WORKERS)
    for w in workers:
        w._release_thread(key)


def _ask_to_stop(p: subprocess.Popen) -> None:
    """Send the stop message without waiting: a process that is not reading (its pipe
    full of a problem it never took) is killed instead (BlockingIOError)."""
    fd = p.stdin.fileno()
    os.set_blocking(fd, False)
    _write_msg(fd, None)


def _close_process(p: subprocess.Popen, *, graceful: bool) -> None:
    """End a solver process and reap it (graceful: ask it to stop first)."""
    if graceful and p.poll() is None:
        with contextlib.suppress(Exception):
            _ask_to_stop(p)
            p.wait(0.2)
    with contextlib.suppress(Exception):
        if p.poll() is None:
            p.kill()
        p.wait(2.0)
    for f in (p.stdin, p.stdout):
        with contextlib.suppress(Exception):
            if f:
                f.close()


class WorkerStopped(Exception):
    """A solve asked of a worker that refuses to start solver processes."""


class Worker:
    """One backend's solver processes, one per thread that solves with it."""

    def __init__(self, backend: str, memory_mb: int | None = None):
        self.info = get_info(backend)
        self.memory_mb = memory_mb
        self._procs: dict[int, subprocess.Popen] = {}  # thread key -> its process
        self._spares: list[subprocess.Popen] = []
        self._busy: set[int] = set()  # threads inside solve()
        self._lock = threading.Lock()
        self._refusal: str | None = None  # why no new process may start (None: they may)
        self._stopped: set[int] = set()  # threads whose solve was stopped (kill_thread)
        with _REGISTRY:
            _WORKERS.add(self)

    @property
    def proc(self) -> subprocess.Popen | None:
        """The calling thread's solver process, if it has one."""
        return self._procs.get(_thread_key())

    def alive(self) -> bool:
        p = self.proc
        return p is not None and p.poll() is None

    def refuse_starts(self, reason: str) -> None:
        """Until ``allow_starts``, a solve that needs a new process raises WorkerStopped
        (a race stops its losers so: killed, they must not start again)."""
        self._refusal = reason

    def allow_starts(self) -> None:
        self._refusal = None

    def _start(self) -> None:
        """Give the calling thread a live process: a spare one, or a new one."""
        if self._refusal is not None:
            raise WorkerStopped(self._refusal)
        key = _thread_key()
        if key in self._stopped:
            raise WorkerStopped("another search answered this query first")
        with self._lock:
            while self._spares:
                p = self._spares.pop()
                if p.poll() is None:
                    self._procs[key] = p
                    return
                _close_process(p, graceful=False)
        argv = [
            sys.executable,
            "-m",
            "treesens.backends.worker_process",
            self.info.module,
            str(self.memory_mb or 0),
            str(os.getpid()),
        ]
        p = _SPAWNER.popen(argv)
        with self._lock:
            # refused or stopped while it started (a race won meanwhile: kill() found no
            # process of this thread to kill), it ends now rather than solve to the end
            why = self._refusal or (
                "another search answered this query first" if key in self._stopped else None
            )
            if why is None:
                self._procs[key] = p
        if why is not None:
            _close_process(p, graceful=False)
            raise WorkerStopped(why)

    def solve(
        self, problem: Problem, options: SolveOptions, watch: IncumbentWatch | None = None
    ) -> Solution:
        """Solve in the calling thread's process. With ``watch`` (and
        ``options.incumbents``), the points the backend reports before its answer go to
        ``watch.take``, and the process is stopped when ``watch.stop_reason()`` gives one
        (the answer is then UNKNOWN with that reason: the watch holds the best point)."""
        key = _thread_key()
        with self._lock:
            self._busy.add(key)
        try:
            p = self.proc
            if p is None or p.poll() is not None:
                if p is not None:
                    self._forget(key, p)
                self._start()
                p = self.proc
            if p is None:  # stopped by kill() from another thread (a race that was won)
                return Solution(ERROR, message="the solver process was stopped")
            return self._exchange(key, p, problem, options, watch)
        finally:
            with self._lock:
                self._busy.discard(key)

    def _exchange(
        self, key: int, p: subprocess.Popen, problem, options: SolveOptions, watch
    ) -> Solution:
        name = self.info.name if self.info.sends_name else None
        t0 = time.time()
        left = max(0.0, options.deadline - t0)
        # the solver stops itself at the deadline; the kill is the backstop, kept within
        # 5% of the time limit so that --timeout is honoured
        end = t0 + left + min(GRACE, max(0.05, 0.05 * left))
        sent = self._send(p, (problem, options, name), end)
        if sent is not None:
            if sent == "late":
                self._forget(key, p)
                return Solution(
                    UNKNOWN,
                    time=time.time() - t0,
                    message="time limit reached (solver process stopped while starting)",
                )
            return self._died(key, p, t0, f"cannot reach the solver process: {sent}")
        out = p.stdout.fileno()
        longest = min(WATCH_POLL, WAKE_EVERY)
        while True:
            try:
                wait = min(longest, max(0.0, end - time.time()))
                ready, _, _ = select.select([out], [], [], wait)
            except (OSError, ValueError):
                return self._died(key, p, t0, "")
            if ready:
                try:
                    msg = _read_msg(out)
                except (EOFError, OSError, ValueError, pickle.UnpicklingError):
                    return self._died(key, p, t0, "")
                if not isinstance(msg, Incumbent):
                    return msg
                if watch is not None:
                    watch.take(msg)
            why = watch.stop_reason() if watch is not None else None
            if why is not None or time.time() >= end:
                self._forget(key, p)
                return Solution(
                    UNKNOWN,
                    time=time.time() - t0,
                    message=why or "time limit reached (solver process stopped)",
                )

    @staticmethod
    def _send(p: subprocess.Popen, msg, end: float) -> str | None:
        """Write ``msg`` to the process by ``end``: None when sent, "late" when the
        process (still starting: a pipe holds 64 KiB) did not read it in time, else why
        not. Written from a helper thread, as a full pipe blocks the writer."""
        failed: list[str] = []

        def write() -> None:
            try:
                _write_msg(p.stdin.fileno(), msg)
            except (OSError, ValueError) as e:
                failed.append(str(e) or type(e).__name__)

        writer = threading.Thread(target=write, daemon=True, name="treesens-send")
        writer.start()
        while writer.is_alive() and time.time() < end:  # in chunks: `end` may be far
            writer.join(min(WAKE_EVERY, max(0.0, end - time.time())))
        if writer.is_alive():
            with contextlib.suppress(OSError):
                p.kill()  # the write ends with a broken pipe
            writer.join(2.0)
            return "late"
        return failed[0] if failed else None

    def _died(self, key: int, p: subprocess.Popen, t0: float, why: str) -> Solution:
        code = None
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = p.wait(2.0)
        self._forget(key, p)
        if code is not None and code < 0:
            how = f"killed by signal {-code}" + (" (out of memory?)" if -code in (6, 9) else "")
        else:
            how = f"exit code {code}"
        return Solution(
            ERROR, time=time.time() - t0, message=f"the solver process died: {how}. {why}".strip()
        )

    def _forget(self, key: int, p: subprocess.Popen) -> None:
        """Drop (and end) the calling thread's process."""
        with self._lock:
            if self._procs.get(key) is p:
                del self._procs[key]
        _close_process(p, graceful=False)

    def _release_thread(self, key: int) -> None:
        """The thread ``key`` ended: keep its process as a spare, or close it."""
        with self._lock:
            p = self._procs.pop(key, None)
            if p is None:
                return
            if p.poll() is None and len(self._spares) < SPARES:
                self._spares.append(p)
                return
        _close_process(p, graceful=True)

    def _take_all(self) -> tuple[list[subprocess.Popen], list[subprocess.Popen]]:
        """Remove every process: (those another thread is solving with, the others)."""
        me = _thread_key()
        with self._lock:
            busy = [p for k, p in self._procs.items() if k in self._busy and k != me]
            idle = [p for k, p in self._procs.items() if k not in self._busy or k == me]
            idle += self._spares
            self._procs.clear()
            self._spares.clear()
        return busy, idle

    def kill_thread(self, key: int) -> None:
        """Stop the solve of one thread (``key``: its ``thread_key()``) now, as ``kill``
        stops every thread's; until ``allow_thread(key)``, a solve of that thread that
        needs a new process raises WorkerStopped."""
        with self._lock:
            self._stopped.add(key)
            p = self._procs.pop(key, None)
            busy = key in self._busy
        if p is None:
            return
        if busy:  # that thread sees the pipe close, answers, and reaps it
            with contextlib.suppress(Exception):
                p.kill()
        else:
            _close_process(p, graceful=False)

    def allow_thread(self, key: int) -> None:
        with self._lock:
            self._stopped.discard(key)

    def kill(self) -> None:
        """Stop every solve of this backend now, in every thread (race stops its losers
        this way); the next solve starts a new process."""
        busy, idle = self._take_all()
        for p in busy:  # its thread sees the pipe close, answers, and reaps it
            with contextlib.suppress(Exception):
                p.kill()
        for p in idle:
            _close_process(p, graceful=False)

    def close(self) -> None:
        """End every process: idle ones are asked to stop, busy ones are killed."""
        busy, idle = self._take_all()
        for p in busy:
            with contextlib.suppress(Exception):
                p.kill()
        for p in idle:
            if p.poll() is None:
                with contextlib.suppress(Exception):
                    _ask_to_stop(p)
        deadline = time.time() + 0.2
        for p in idle:
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(max(0.0, deadline - time.time()))
            _close_process(p, graceful=False)


_POOL: dict[tuple[str, int | None], Worker] = {}


def worker_for(backend: str, memory_mb: int | None = None) -> Worker:
    """The shared worker of a backend (each thread solving with it has its own process)."""
    key = (backend, memory_mb)
    with _REGISTRY:
        if key not in _POOL:
            _POOL[key] = Worker(backend, memory_mb)
        return _POOL[key]


def live_pids() -> list[int]:
    """The pids of every running solver process of this process's workers."""
    with _REGISTRY:
        workers = list(_WORKERS)
    pids = []
    for w in workers:
        with w._lock:
            procs = list(w._procs.values()) + list(w._spares)
        pids += [p.pid for p in procs if p.poll() is None]
    return pids


def kill_now() -> None:
    """SIGKILL every solver process at once, taking no lock and waiting for nothing: safe
    in a signal handler, which may run while this thread holds a worker's lock. The
    processes are reaped by :func:`shutdown` afterwards."""
    for w in list(_WORKERS):
        for _ in range(3):  # another thread may change the table meanwhile: try again
            try:
                procs = list(w._procs.values()) + list(w._spares)
                break
            except RuntimeError:
                procs = []
        for p in procs:
            with contextlib.suppress(OSError):
                if p.returncode is None:
                    os.kill(p.pid, signal.SIGKILL)


def shutdown() -> None:
    """End every solver process of every worker, pooled or not, in every thread."""
    with _REGISTRY:
        workers = list(_WORKERS)
        _POOL.clear()
    for w in workers:
        w.close()


def _after_fork_in_child() -> None:
    # a forked copy of this process inherits the workers but not their processes, which
    # stay its parent's: forget them (without ending them) and start its own when needed
    global _REGISTRY, _SPAWNER
    _REGISTRY = threading.RLock()
    _SPAWNER = _Spawner()
    _POOL.clear()
    for w in list(_WORKERS):
        w._lock = threading.Lock()
        w._procs.clear()
        w._spares.clear()
        w._busy.clear()


atexit.register(shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

if __name__ == "__main__":
    serve(
        sys.argv[1],
        int(sys.argv[2]) if len(sys.argv) > 2 else 0,
        int(sys.argv[3]) if len(sys.argv) > 3 else 0,
    )
