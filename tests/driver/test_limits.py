"""Limits: time limits, memory limits, crashes and interruptions lose nothing else."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver import solve_query
from treesens.tests.conftest import require_shared
from treesens.tests.oracle import random_ensemble
from treesens.tests.processes import sigint_as_from_a_terminal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _cli(*args, **kw):
    return subprocess.run(
        [sys.executable, "-m", "treesens.interfaces.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )


def test_same_query_and_seed_give_the_same_status_and_witness():
    ens = random_ensemble(11, n_trees=8, depth=3, n_features=4, n_thresholds=3)
    q = Query(vary=("f0",), gap=Gap(0.05), plan=Plan(timeout=60, seed=3))
    a, b = solve_query(ens, q), solve_query(ens, q)
    assert a.status == b.status
    assert a.witness == b.witness


@pytest.mark.parametrize("backend", ["cpsat", "cbc", "highs", "gurobi", "z3"])
def test_each_backend_gives_the_same_witness_for_the_same_query_and_seed(backend):
    from treesens.backends.registry import available

    if not available(backend):
        pytest.skip(f"{backend} not installed")
    ens = random_ensemble(12, n_trees=6, depth=3, n_features=4, n_thresholds=3)
    q = Query(
        vary=("f1",),
        gap=Gap(0.05),
        plan=Plan(backend=backend, timeout=60, seed=5, options=(("heuristic", False),)),
    )
    a, b = solve_query(ens, q), solve_query(ens, q)
    assert a.status in ("sensitive", "insensitive"), a.error
    assert (a.status, a.witness) == (b.status, b.witness)


def test_cli_runs_are_deterministic():
    args = [
        "check",
        str(EXAMPLES / "breast_cancer_xgb.json"),
        "--details",
        str(EXAMPLES / "breast_cancer_details.csv"),
        "--vary",
        "worst_area",
        "--gap",
        "0.3",
        "--json",
    ]
    r1, r2 = _cli(*args), _cli(*args)
    j1, j2 = json.loads(r1.stdout), json.loads(r2.stdout)
    assert (j1["status"], j1["witness"]) == (j2["status"], j2["witness"])


def test_a_worker_out_of_memory_is_an_error_for_that_query_only(monkeypatch):
    from treesens.driver import solve

    # the solver stage let through (its own check, driver/solver_memory.py, would skip
    # it at 40 MB): the worker process itself runs out of memory
    monkeypatch.setattr(solve, "solver_stage_over", lambda *_a: None)
    ens = random_ensemble(5, n_trees=4, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.05), plan=Plan(timeout=60, options=(("heuristic", False),)))
    starved = solve_query(ens, q, memory_mb=40)  # too little to even load the solver
    assert starved.status == "error"
    assert starved.error
    assert solve_query(ens, q).status in ("sensitive", "insensitive")


@pytest.mark.shared
def test_timeout_is_honoured_within_ten_percent():
    # this query stays unknown for minutes (no heuristic): the limit is what ends it
    model = require_shared() / "churn" / "churn_t500_d6.json"
    ask = ["--vary", "DeviceProtection", "--gap", "0.3", "--no-heuristic"]
    t0 = time.time()
    r = _cli("check", str(model), *ask, "--timeout", "8", "--json")
    wall = time.time() - t0
    res = json.loads(r.stdout)
    assert res["status"] == "unknown" and res["message"].startswith("time limit reached"), r.stderr
    assert res["time"]["total"] <= 8 * 1.1  # counted from the process's start
    assert wall <= 8 * 1.1 + 2.0  # the process then ends: its exit and the harness's start


def test_interrupted_sweep_keeps_finished_results(tmp_path):
    out = tmp_path / "sweep.jsonl"
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "treesens.interfaces.cli.main",
            "sweep",
            str(EXAMPLES / "wine_xgb.json"),
            "--subsets",  # 78 pairs of features: still running when the signal comes
            "2",
            "--classes",
            "0,any",
            "--gap",
            "2",
            "--timeout",
            "60",
            "--out",
            str(out),
            "--table",
            "none",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 2):
        time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    lines = out.read_text().splitlines()
    assert len(lines) >= 2
    assert all(json.loads(x)["status"] != "error" for x in lines)
    # no solver process outlives the command
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "ppid,args"], capture_output=True, text=True).stdout
    assert not any(line.split()[0] == str(p.pid) for line in ps.splitlines()[1:] if line.strip())


def test_worker_processes_ignore_ctrl_c_of_the_terminal():
    # the parent decides: a SIGINT to the worker must not kill a solve in progress
    from treesens.backends.worker import Worker
    from treesens.driver import compile_query, for_backend

    ens = random_ensemble(1, n_trees=4, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.05), plan=Plan(timeout=60))
    w = Worker("cpsat")
    comp, _, _ = for_backend(compile_query(ens, q), "cpsat")
    from treesens.compiler.solver import SolveOptions

    w.solve(comp.problem, SolveOptions(deadline=time.time() + 30))
    os.kill(w.proc.pid, signal.SIGINT)
    time.sleep(0.3)
    assert w.alive()
    assert w.solve(comp.problem, SolveOptions(deadline=time.time() + 30)).status in (
        "optimal",
        "feasible",
        "infeasible",
    )
    w.close()
