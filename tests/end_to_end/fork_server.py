"""Test helper (not tests): the ``treesens`` command of the docs' bash blocks, each run
a process of its own forked from one interpreter that imported treesens and the model
libraries once (tests/end_to_end/test_docs_run.py), where each started an interpreter
of its own and imported them again (about a second of CPU a command, 54 commands).

``python -m treesens.tests.end_to_end.fork_server SOCKET`` imports, listens on the Unix
socket SOCKET and, per request, forks: the child takes the request's standard input,
output and error (passed as file descriptors), its working folder, environment and
arguments, runs the command as ``treesens`` does (interfaces/cli/main.console_main, its
exit handlers after it) and sends its exit code back. ``CLIENT`` is the command's
stand-in the blocks run (a ``treesens`` on their PATH): it sends the request and exits
with that code. Nothing runs in the server before a fork but imports: no thread, no
solver, no model read.

A command dies with its client: each child leads a process group of its own, which the
server kills (SIGKILL) when the client's connection drops before the child ended (a
block killed at its timeout kills its client), and the server, told to end (SIGTERM),
kills every group still running. A request whose environment sets what is read when an
interpreter starts or numba and numpy are imported (``IMPORT_READ``: ``NUMBA_*``,
``PYTHON*``, thread counts) otherwise than the server's own runs in a fresh interpreter,
the child waiting for it: in the fork those would not take effect. ``TREESENS_*`` are
read when used, not at import, so the fork reads them."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys

# the shim's Python, without site (it imports only the standard library's socket)
CLIENT = """
import json, os, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
req = {"argv": sys.argv[2:], "cwd": os.getcwd(), "env": dict(os.environ)}
socket.send_fds(s, [json.dumps(req).encode()], [0, 1, 2])
got = s.recv(4)
sys.exit(struct.unpack("i", got)[0] if len(got) == 4 else 1)
"""
# imported before any fork: what a command's start-up imports, and the model libraries
# (not the model libraries: the command imports them lean, scikit-learn hidden, on use)
PRELOAD = ("treesens.interfaces.cli.main", "treesens.questions.ask", "numba")
# variables read at an interpreter's start or at numba's and numpy's import, as prefixes
IMPORT_READ = ("NUMBA_", "PYTHON", "OMP_", "OPENBLAS_", "MKL_", "LD_")


def needs_fresh_interpreter(env: dict, served: dict) -> bool:
    """Whether ``env`` sets a variable of ``IMPORT_READ`` otherwise than ``served`` (the
    server's environment, which its imports read)."""

    def read(e: dict) -> dict:
        return {k: v for k, v in e.items() if k.startswith(IMPORT_READ)}

    return read(env) != read(served)


def _child(conn: socket.socket, req: dict, fds: list[int], served: dict) -> None:
    """The command of ``req`` in this forked process, its exit code sent on ``conn``."""
    import atexit

    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.setpgid(0, 0)  # a group of its own, which the server kills with it
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    os.chdir(req["cwd"])
    if needs_fresh_interpreter(req["env"], served):
        argv = [sys.executable, "-m", "treesens.interfaces.cli.main", *req["argv"]]
        code = subprocess.call(argv, env=req["env"])
        conn.send(struct.pack("i", code if code >= 0 else 128 - code))
        os._exit(0)
    os.environ.clear()
    os.environ.update(req["env"])
    sys.argv = ["treesens", *req["argv"]]
    from treesens.interfaces.cli import main as cli

    end = os._exit

    def ended(code: int) -> None:  # the command ends its process itself (cli/ending.py)
        try:
            conn.send(struct.pack("i", code))
        finally:
            end(code)

    os._exit = ended
    try:
        code = cli.console_main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    atexit._run_exitfuncs()  # noqa: SLF001 - as the interpreter's exit runs them
    sys.stdout.flush()
    sys.stderr.flush()
    ended(code)


def serve(path: str) -> None:
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    served = dict(os.environ)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(64)
    live: dict[int, tuple[socket.socket, int]] = {}  # a connection's fd: it, its child

    def end(*_) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, end)
    poll = select.poll()
    poll.register(srv, select.POLLIN)
    try:
        while True:
            for fd, _ in poll.poll():
                if fd == srv.fileno():
                    conn, pid = _fork(srv, live, served)
                    live[conn.fileno()] = conn, pid
                    poll.register(conn, select.POLLIN)  # readable: the client is gone
                else:
                    conn, pid = live.pop(fd)
                    poll.unregister(fd)
                    _stop(pid)
                    conn.close()
    finally:
        for _, pid in live.values():
            _stop(pid)


def _fork(srv: socket.socket, live: dict, served: dict) -> tuple[socket.socket, int]:
    """Accept a request and fork its command: the connection and the child's pid."""
    conn, _ = srv.accept()
    msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    pid = os.fork()
    if pid == 0:
        srv.close()
        for other, _ in live.values():
            other.close()
        _child(conn, json.loads(msg), fds, served)
    with contextlib.suppress(OSError):
        os.setpgid(pid, pid)  # as the child does, whichever runs first
    for fd in fds:
        os.close(fd)
    return conn, pid


def _stop(pid: int) -> None:
    """Kill the group of a child not yet reaped (its pid still names it), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    serve(sys.argv[1])
