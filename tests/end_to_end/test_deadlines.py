"""Time limits: counted from when treesens starts, finite and bounded on the command line,
and never an overflow in the worker however far the deadline is."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treesens.backends.registry import available
from treesens.backends.worker import Worker
from treesens.compiler.ir import INT, Linear, Problem, Var
from treesens.compiler.options import MAX_TIMEOUT
from treesens.compiler.solver import SolveOptions
from treesens.interfaces.cli.main import _run_queue_wait, _treesens_start
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLI = [sys.executable, "-m", "treesens.interfaces.cli.main"]
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")
# insensitive: the solver runs (no heuristic) and proves it in well under a second
QUERY = ["--vary", "mean_symmetry,mean_fractal_dimension", "--gap", "0.2", "--no-heuristic"]


def test_treesens_start_is_no_earlier_than_the_cpu_and_run_queue_time_allow():
    now = time.time()
    assert now - _treesens_start() <= time.process_time() + _run_queue_wait() + 0.05


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a shell that execs")
def test_time_spent_before_treesens_started_is_not_counted():
    """The shell sleeps 10 s, then execs treesens in the same process: the run's own total
    leaves the sleep out (at least 5 s under the whole process's wall time). It read an
    8 s limit's answer, which start-up on a loaded machine (waiting for a CPU after the
    exec) could use up; a total counting the sleep is about the wall time itself."""
    cmd = " ".join(["sleep 10 && exec", *CLI, "check", MODEL, *QUERY, "--timeout 120 --json"])
    t0 = time.time()
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=300)
    wall = time.time() - t0
    result = json.loads(out.stdout)
    assert result["status"] == "insensitive", out.stderr
    assert result["time"]["total"] < wall - 5, (result["time"], wall)


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "0", "-1"])
def test_a_timeout_out_of_range_is_one_line_and_exit_2(value):
    out = treesens_here("check", MODEL, *QUERY, "--timeout", value)
    assert out.returncode == 2
    assert out.stderr.startswith("treesens: error: --timeout")
    assert "timeout" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_other_commands_refuse_an_infinite_timeout(command):
    target = str(EXAMPLES / "breast_cancer.sens") if command == "run" else MODEL
    out = treesens_here(command, target, "--timeout", "inf")
    assert out.returncode == 2
    assert "--timeout" in out.stderr and "'inf'" in out.stderr


def test_the_largest_timeout_is_accepted():
    out = treesens_here("check", MODEL, *QUERY, "--timeout", f"{MAX_TIMEOUT:g}", "--json")
    assert json.loads(out.stdout)["status"] == "insensitive", out.stderr


@pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)")
def test_a_worker_waits_for_a_deadline_too_far_for_the_clock():
    problem = Problem((Var("y", INT, 0.0, 5.0),), (Linear((0,), (1.0,), ">=", 3.0),))
    w = Worker("cpsat")
    try:
        sol = w.solve(problem, SolveOptions(deadline=1e300))
    finally:
        w.close()
    assert sol.status in ("feasible", "optimal"), sol


def test_the_api_refuses_an_infinite_timeout():
    from treesens.compiler.errors import InputError
    from treesens.interfaces.api import make_query

    with pytest.raises(InputError, match="timeout"):
        make_query(["a"], gap=0.1, timeout=float("inf"))


def test_main_called_long_after_the_process_started_counts_its_limit_from_the_call(
    monkeypatch,
):
    # a program (or a test process) that calls main() an hour in: that hour is not spent
    monkeypatch.setattr("treesens.interfaces.cli.main.START", time.time() - 3600)
    out = treesens_here("check", MODEL, *QUERY, "--timeout", "30", "--json")
    assert json.loads(out.stdout)["status"] == "insensitive", out.stderr
