"""Starting a solver worker: silent (a notebook user sees no warning from it), and refused
while the worker refuses starts (a race's stopped losers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"


def test_a_worker_starts_without_a_warning_on_stderr():
    code = (
        "import treesens; "
        f"r = treesens.check({str(EXAMPLE)!r}, vary=['mean_texture'], gap=0.2, "
        "heuristic=False, timeout=60); print(r.status)"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, timeout=120
    )
    assert done.stdout.strip() == "sensitive", done.stderr
    assert "Warning" not in done.stderr, done.stderr


def test_a_worker_refusing_starts_raises_worker_stopped_instead_of_starting_a_process():
    from treesens.backends.worker import Worker, WorkerStopped

    w = Worker("cpsat")
    w.refuse_starts("another backend answered first")
    try:
        with pytest.raises(WorkerStopped, match="another backend answered first"):
            w.solve(None, None)
        assert w.proc is None
    finally:
        w.close()


def test_a_worker_allowed_to_start_again_starts_a_process():
    from treesens.backends.worker import Worker, WorkerStopped

    w = Worker("cpsat")
    w.refuse_starts("stopped")
    w.allow_starts()
    try:
        w._start()
        assert w.alive()
    except WorkerStopped:
        pytest.fail("the worker still refuses to start")
    finally:
        w.close()


def test_a_process_that_starts_while_a_race_stops_its_worker_ends_at_once(monkeypatch):
    # a race won while a loser's process was starting: kill() finds no process of that
    # thread, so the process, once started, ends there instead of solving to the end
    from treesens.backends import worker as W

    w = W.Worker("cpsat")
    started = []
    real_popen = W._SPAWNER.popen

    def popen_then_stopped(argv):
        p = real_popen(argv)
        started.append(p)
        w.refuse_starts("another backend answered first")  # the race, meanwhile
        w.kill()
        return p

    monkeypatch.setattr(W._SPAWNER, "popen", popen_then_stopped)
    try:
        with pytest.raises(W.WorkerStopped, match="another backend answered first"):
            w._start()
        assert w.proc is None
        assert started[0].wait(timeout=10) is not None
    finally:
        w.close()


def test_a_worker_sent_a_message_cut_short_ends_quietly_without_a_traceback():
    # a sweep's Ctrl-C can cut the parent's write of a message, and its clean-up then
    # writes the stop message after it: the worker reads bytes that do not unpickle
    import os
    import struct

    worker = subprocess.Popen(
        [sys.executable, "-m", "treesens.backends.worker_process", "json", "0", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    garbage = b"\x80\x05\x95" + b"\x00" * 61
    _, err = worker.communicate(struct.pack("<Q", len(garbage)) + garbage, timeout=60)
    assert worker.returncode == 0
    assert b"Traceback" not in err, err.decode()
