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
solver, no model read."""

from __future__ import annotations

import json
import os
import socket
import struct
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


def _child(conn: socket.socket, req: dict, fds: list[int]) -> None:
    """The command of ``req`` in this forked process, its exit code sent on ``conn``."""
    import atexit

    for i, fd in enumerate(fds):
        os.dup2(fd, i)
        os.close(fd)
    os.chdir(req["cwd"])
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
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(path)
    srv.listen(64)
    while True:
        conn, _ = srv.accept()
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        if os.fork() == 0:
            srv.close()
            _child(conn, json.loads(msg), fds)
        for fd in fds:
            os.close(fd)
        conn.close()
        while True:  # reap the children that ended
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break


if __name__ == "__main__":
    serve(sys.argv[1])
