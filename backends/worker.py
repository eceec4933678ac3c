"""Run backends in separate processes: hard time limits, crash isolation, and no two
solver libraries in one process (python-mip's CBC and OR-Tools cannot share one).

A worker is a plain ``python -m treesens.backends.worker MODULE`` subprocess talking
length-prefixed pickles over its stdin/stdout (the solver's own output is sent to
stderr). Unlike multiprocessing's spawn, this never re-imports the caller's main
module, so scripts without an ``if __name__ == "__main__"`` guard work too.

A ``Worker`` keeps its process alive between solves (a sweep pays the start-up once);
a process that overruns its deadline is killed and replaced on the next solve.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
import traceback

from ..compiler.solver import ERROR, UNKNOWN, Solution, SolveOptions
from .registry import get_info

GRACE = 1.0  # seconds past the deadline before the process is killed
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


def serve(module_name: str, memory_mb: int) -> None:
    """The worker's main loop (runs in the child process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything the solver prints goes to stderr, not into the protocol
    in_fd = 0
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
        except (EOFError, OSError):
            return
        if msg is None:
            return
        problem, options, backend_name = msg
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


class Worker:
    def __init__(self, backend: str, memory_mb: int | None = None):
        self.info = get_info(backend)
        self.memory_mb = memory_mb
        self.proc: subprocess.Popen | None = None

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "treesens.backends.worker",
                self.info.module,
                str(self.memory_mb or 0),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
            start_new_session=True,  # a terminal's Ctrl-C goes to the parent, which decides
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def solve(self, problem, options: SolveOptions) -> Solution:
        if not self.alive():
            self._start()
        # one module serves two backends (cbc and highs through python-mip): say which
        name = self.info.name if self.info.module.endswith("mip_backend") else None
        t0 = time.time()
        try:
            _write_msg(self.proc.stdin.fileno(), (problem, options, name))
        except (BrokenPipeError, OSError) as e:
            return self._died(t0, f"cannot reach the solver process: {e}")
        out = self.proc.stdout.fileno()
        left = max(0.0, options.deadline - time.time())
        # the solver stops itself at the deadline; the kill is the backstop, kept within
        # 5% of the time limit so that --timeout is honoured
        wait = left + min(GRACE, max(0.05, 0.05 * left))
        ready, _, _ = select.select([out], [], [], wait)
        if not ready:
            self.kill()
            return Solution(
                UNKNOWN,
                time=time.time() - t0,
                message="time limit reached (solver process stopped)",
            )
        try:
            return _read_msg(out)
        except (EOFError, OSError, pickle.UnpicklingError):
            return self._died(t0, "")

    def _died(self, t0: float, why: str) -> Solution:
        code = None
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.proc.wait(2.0)
        self.kill()
        if code is not None and code < 0:
            how = f"killed by signal {-code}" + (" (out of memory?)" if -code in (6, 9) else "")
        else:
            how = f"exit code {code}"
        return Solution(
            ERROR, time=time.time() - t0, message=f"the solver process died: {how}. {why}".strip()
        )

    def kill(self) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        try:
            if p.poll() is None:
                p.kill()
            p.wait(2.0)
        except Exception:  # noqa: BLE001
            pass
        for f in (p.stdin, p.stdout):
            try:
                if f:
                    f.close()
            except Exception:  # noqa: BLE001
                pass

    def close(self) -> None:
        if self.alive():
            try:
                _write_msg(self.proc.stdin.fileno(), None)
                self.proc.wait(0.2)
            except Exception:  # noqa: BLE001
                pass
        self.kill()


_POOL: dict[tuple[str, int | None], Worker] = {}


def worker_for(backend: str, memory_mb: int | None = None) -> Worker:
    key = (backend, memory_mb)
    if key not in _POOL:
        _POOL[key] = Worker(backend, memory_mb)
    return _POOL[key]


def shutdown() -> None:
    for w in list(_POOL.values()):
        w.close()
    _POOL.clear()


atexit.register(shutdown)

if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
