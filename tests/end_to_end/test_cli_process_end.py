"""How the ``treesens`` command's process ends (interfaces/cli/ending.py): without the
interpreter's tear-down, and with nothing else lost: its output, the files it writes, its
exit code, the ``atexit`` handlers, and threads that are not daemons.

Each command runs as a user runs it, ``console_main`` in a fresh interpreter; the script
around it adds what a test looks for (an object whose deletion prints, an atexit handler,
a thread)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from treesens.tests.conftest import run_treesens

pytest.importorskip("xgboost")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
CHECK = ["check", str(MODEL), "--vary", "worst_area", "--gap", "0.3", "--json"]

# console_main as the `treesens` script runs it, after the lines a test adds (ADDED)
SCRIPT = """
import atexit, json, sys, threading, time
from treesens.interfaces.cli.main import console_main
ADDED
sys.argv = ["treesens", *json.loads(sys.argv[1])]
sys.exit(console_main())
"""


def _run(added: str, argv: list[str]) -> subprocess.CompletedProcess:
    script = SCRIPT.replace("ADDED", added)
    return subprocess.run(
        [sys.executable, "-c", script, json.dumps(argv)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_command_ends_its_process_without_the_interpreters_tear_down():
    canary = (
        "class Canary:\n"
        "    def __del__(self):\n"
        "        print('torn down', file=sys.stderr)\n"
        "canary = Canary()"
    )
    p = _run(canary, CHECK)
    assert p.returncode == 0, p.stderr
    assert "torn down" not in p.stderr


def test_the_atexit_handlers_run_before_the_process_ends():
    p = _run("atexit.register(lambda: print('atexit ran', file=sys.stderr))", CHECK)
    assert p.returncode == 0, p.stderr
    assert "atexit ran" in p.stderr


def test_what_an_atexit_handler_prints_is_flushed():
    p = _run("atexit.register(lambda: sys.stdout.write('last words'))", CHECK)
    assert p.stdout.endswith("last words")


def test_the_process_waits_for_a_thread_that_is_not_a_daemon():
    slow = (
        "def slow():\n"
        "    time.sleep(1.0)\n"
        "    print('thread done', file=sys.stderr, flush=True)\n"
        "threading.Thread(target=slow).start()"
    )
    p = _run(slow, CHECK)
    assert p.returncode == 0, p.stderr
    assert "thread done" in p.stderr


def test_the_checks_json_on_stdout_is_whole():
    p = run_treesens(*CHECK)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert result["status"] == "sensitive" and result["validated"] is True


def test_bad_input_still_exits_2_with_its_one_line(tmp_path):
    p = run_treesens("check", str(tmp_path / "missing.json"), "--vary", "x")
    assert p.returncode == 2
    assert p.stderr.count("error") == 1 and "missing.json" in p.stderr


def test_a_certificate_written_by_check_is_whole(tmp_path):
    cert = tmp_path / "proof.json"
    argv = ["check", str(MODEL), "--vary", "mean_radius", "--gap", "0.3", "--json"]
    p = run_treesens(*argv, "--certificate", cert)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["status"] == "insensitive"
    assert run_treesens("verify", cert).returncode == 0


def test_a_sweeps_out_file_and_table_file_are_whole(tmp_path):
    out, table = tmp_path / "rows.jsonl", tmp_path / "table.md"
    features = "worst_area,mean_radius"
    argv = ["sweep", str(MODEL), "--features", features, "--gap", "0.3", "--json"]
    p = run_treesens(*argv, "--out", out, "--table-out", table)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["sensitive", "insensitive"]
    assert "mean_radius" in table.read_text()


def test_output_into_a_pipe_closed_after_its_first_line_ends_the_command_with_exit_0():
    script = SCRIPT.replace("ADDED", "")
    text_check = [a for a in CHECK if a != "--json"]  # the verdict and table, through rich
    p = subprocess.Popen(
        [sys.executable, "-c", script, json.dumps(text_check)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout.readline().startswith(b"SENSITIVE")
    p.stdout.close()  # as `| head -1` does
    err = p.stderr.read().decode()
    assert p.wait(timeout=600) == 0, err
    assert "Traceback" not in err
