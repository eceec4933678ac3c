"""A command run in a process forked after treesens' import (a server that imports it
once and forks a process a command, as tests/end_to_end/fork_server.py does) counts its
time limit from its own start, not from its parent's import."""

from __future__ import annotations

import os
import time

from treesens.interfaces.cli import main as cli


def test_a_forked_command_counts_its_time_from_the_fork(monkeypatch):
    monkeypatch.setattr(cli, "START", time.time() - 1000.0)  # imported long ago
    read, write = os.pipe()
    forked = time.time()
    pid = os.fork()
    if pid == 0:  # the child: its start, written as text, then gone at once
        os.write(write, repr(cli.command_start()).encode())
        os._exit(0)
    os.close(write)
    started = float(os.read(read, 64).decode())
    os.close(read)
    os.waitpid(pid, 0)
    assert started >= forked - 1.0, time.time() - started
