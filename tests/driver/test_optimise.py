"""Data-aware optimisation that speaks: progress lines with the incumbent's utility and
distance, a stall rule, the wording of a best pair not proven optimal, and Ctrl-C
returning the best pair so far."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from treesens.backends.registry import available
from treesens.driver.optimise import BUDGET_STOP, STALL_STOP, OptimisationWatch, relative_gap
from treesens.interfaces.api import check
from treesens.tests.oracle import random_ensemble
from treesens.tests.processes import sigint_as_from_a_terminal
from treesens.views.result_view import optimum_line

needs_cpsat = pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)")


def _watch(stall_time: float = 1e9, budget: float = float("inf")) -> OptimisationWatch:
    return OptimisationWatch(None, lambda v: None, 1.0, stall_time, progress=False, budget=budget)


def test_the_watch_stops_a_search_whose_best_pair_has_not_improved_for_stall_time():
    w = _watch(5.0)
    w.best = object()
    w.last_better = time.time() - 6.0
    assert "no better pair for 5s" in w.stop_reason()
    assert w.stopped == STALL_STOP


def test_the_watch_never_stops_a_search_that_has_no_pair_yet():
    w = _watch(5.0)
    w.last_better = time.time() - 60.0
    assert w.stop_reason() is None


def test_the_watch_stops_once_its_time_budget_has_passed_with_a_pair():
    w = _watch(budget=5.0)
    w.best = object()
    w.t0 = time.time() - 6.0
    assert "optimised for 5s (optimise_time)" in w.stop_reason()
    assert w.stopped == BUDGET_STOP


def test_the_time_budget_never_stops_a_search_that_has_no_pair_yet():
    w = _watch(budget=5.0)
    w.t0 = time.time() - 60.0
    assert w.stop_reason() is None


def test_relative_gap_is_measured_against_the_objectives_size():
    assert relative_gap(-50.0, -49.0) == pytest.approx(0.02)
    assert relative_gap(-0.5, 0.0) == pytest.approx(0.5)  # small objectives: absolute
    assert relative_gap(-50.0, None) is None


@pytest.mark.parametrize(
    ("stopped_by", "words"),
    [
        ("time limit", "best found in the time limit (not proven optimal)"),
        ("stall", "before the search stalled"),
        ("interrupted", "before the interruption"),
        ("gap", "within the optimality gap"),
    ],
)
def test_a_best_pair_not_proven_optimal_says_how_the_search_ended(stopped_by, words):
    stats = {
        "objective": -3.0,
        "objective_bound": -1.0,
        "solver_status": "feasible",
        "stopped_by": stopped_by,
    }
    assert words in optimum_line(stats)


def test_a_proven_optimum_says_so():
    stats = {"objective": -3.0, "objective_bound": -3.0, "solver_status": "optimal"}
    assert "proven optimal" in optimum_line(stats) and "not" not in optimum_line(stats)


def test_a_query_that_does_not_optimise_has_no_optimum_line():
    assert optimum_line({"objective": 1.0, "solver_status": "feasible"}) == ""


def _data_file(tmp_path, ens, n=400, seed=0):
    X = np.random.default_rng(seed).uniform(-1, 2, size=(n, ens.n_features)).round(2)
    path = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=ens.feature_names).to_csv(path, index=False)
    return path


@needs_cpsat
def test_an_optimising_run_prints_the_incumbents_utility_and_distance(tmp_path, capsys):
    ens = random_ensemble(2, n_trees=6, depth=3, n_features=4, n_thresholds=4)
    r = check(
        ens,
        ["f0"],
        gap=0.05,
        data=_data_file(tmp_path, ens),
        data_aware="prob",
        timeout=60,
        progress=True,
    )
    assert r.status == "sensitive" and r.validated
    assert "objective_bound" in r.stats and r.stats["solver_status"] in ("optimal", "feasible")
    err = capsys.readouterr().err
    assert "optimising: better pair, utility" in err and "distance" in err


def _hard_model():
    """A model whose utility optimisation keeps CP-SAT busy for seconds: on an idle
    machine it proves the optimum in about 10 s, and a stall time of half a second stops
    it about 3 s in, far from the proof."""
    return random_ensemble(3, n_trees=200, depth=6, n_features=12, n_thresholds=16)


@needs_cpsat
def test_the_stall_rule_stops_the_optimisation_with_the_best_pair(tmp_path):
    ens = _hard_model()
    t0 = time.time()
    r = check(
        ens,
        ["f0"],
        gap=0.05,
        data=_data_file(tmp_path, ens, n=2000),
        data_aware="prob",
        timeout=120,
        stall_time=0.5,
    )
    assert time.time() - t0 < 60
    assert r.status == "sensitive" and r.validated
    assert r.stats["stopped_by"] == "stall" and r.stats["solver_status"] == "feasible"
    assert "stall_time" in r.message and r.distance is not None


def _start_cli(tmp_path, ens):
    import subprocess
    import sys

    from treesens.readers.formats.xgboost_replay import native_model_bytes

    model = tmp_path / "model.json"
    model.write_bytes(native_model_bytes(ens))
    data = _data_file(tmp_path, ens, n=2000)
    argv = ["check", str(model), "--vary", "f0", "--gap", "0.05", "--data", str(data)]
    argv += ["--data-aware", "prob", "--timeout", "300", "--stall-time", "300", "--json"]
    return subprocess.Popen(
        [sys.executable, "-m", "treesens.interfaces.cli.main", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )


@needs_cpsat
@pytest.mark.parametrize(("signame", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_interrupting_an_optimisation_prints_the_best_pair_so_far(tmp_path, signame, code):
    import json
    import signal

    proc = _start_cli(tmp_path, _hard_model())
    try:
        for line in proc.stderr:  # wait for the first replay-checked pair
            if line.startswith("optimising: better pair"):
                break
        proc.send_signal(getattr(signal, signame))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    res = json.loads(out)
    assert res["status"] == "sensitive" and res["validated"]
    assert res["stats"]["stopped_by"] == "interrupted" and res["distance"] is not None
