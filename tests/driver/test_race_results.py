"""A race's results that no backend proved (every backend failed, or none answered)
record the question as any result of it does: the features varied and a regressor's
change, so that a results log reads them as the question asked. A race given a data file
answers as each of its backends alone (the data read reaches every one of them). The
heuristic runs once, before the race: its pair ends it before any solver starts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import treesens
from treesens.backends.worker import WorkerStopped
from treesens.compiler.ensemble import IDENTITY
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.driver.race import solve_race
from treesens.tests.oracle import random_ensemble

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DIABETES = EXAMPLES / "diabetes_lgbm.txt"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
ROWS = EXAMPLES / "breast_cancer_rows.csv"


def _regressor_race():
    ens = random_ensemble(0, n_trees=3, depth=2, n_features=2, n_thresholds=2)
    ens = dataclasses.replace(ens, n_classes=0, link=IDENTITY)
    q = Query(vary=("f0",), delta=0.5, direction="up", plan=Plan(backend="race", timeout=30))
    return ens, q


def _failing(*_args, **_kw):
    raise RuntimeError("solver crashed")


def _stopped(*_args, **_kw):
    raise WorkerStopped("stopped")


def test_a_race_every_backend_of_which_failed_records_the_change_asked():
    ens, q = _regressor_race()
    res = solve_race(ens, q, _failing)
    assert res.status == "error" and "solver crashed" in res.error
    assert res.delta == {"at_least": 0.5, "direction": "up"}


def test_a_race_no_backend_answered_records_the_features_and_the_change_asked():
    ens, q = _regressor_race()
    res = solve_race(ens, q, _stopped)
    assert res.status == "unknown" and res.error is None
    assert res.features == ["f0"]
    assert res.delta == {"at_least": 0.5, "direction": "up"}
    assert res.message.startswith("no backend answered within the time limit")


@pytest.mark.parametrize("data_aware", ["none", "prob"])
def test_a_race_given_a_data_file_answers_as_each_of_its_backends_alone(data_aware):
    ask = dict(vary=["mean_texture"], gap=0.2, data=ROWS, data_aware=data_aware, timeout=60)
    alone = {b: treesens.check(MODEL, backend=b, **ask) for b in ("boxes", "cpsat")}
    res = treesens.check(MODEL, backend="race:boxes,cpsat", **ask)
    for b, status in res.stats["race"].items():
        assert status in ("stopped", "not started", alone[b].status), (b, status, res.error)
    winner = alone.get(res.backend, alone["cpsat"])  # the race itself: the heuristic's answer
    assert res.status == winner.status == "sensitive"
    assert res.distance is not None  # measured against the data read


def _first_proves_then_the_other(ens, q, **kw):
    """cpsat proves at once; z3 proves a moment after, once the race has its winner."""
    import time

    from treesens.answers.result import error_result

    if q.plan.backend != "cpsat":
        time.sleep(0.3)
    res = error_result(ens, q, "", backend=q.plan.backend)
    res.status, res.error = "insensitive", None
    return res


def test_a_race_s_stats_give_each_backend_its_answer_or_stopped():
    ens, q = _regressor_race()
    q = q.planned(backend="race:cpsat,z3")
    res = solve_race(ens, q, _first_proves_then_the_other, compiled=object())
    assert res.backend == "cpsat"
    assert res.stats["race"] == {"cpsat": "insensitive", "z3": "insensitive"}


def test_a_race_s_backend_that_never_answered_is_stopped():
    ens, q = _regressor_race()
    q = q.planned(backend="race:cpsat,z3")
    res = solve_race(ens, q, _stopped, compiled=object())
    assert res.stats["race"] == {"cpsat": "stopped", "z3": "stopped"}


def _no_race(*_args, **_kw):
    raise AssertionError("the race started its solvers")


def test_a_race_the_heuristic_answers_starts_no_solver_and_names_the_heuristic(monkeypatch):
    # README's quick start, examples/diabetes.sens bmi_race
    monkeypatch.setattr("treesens.driver.race.solve_race", _no_race)
    res = treesens.check(DIABETES, vary="bmi", gap=0.2, backend="race", timeout=30)
    assert res.status == "sensitive" and res.validated
    assert res.stats["found_by"] == "heuristic" and res.stats["winner"] == "heuristic"
    assert res.backend == "race"
    assert set(res.stats["race"].values()) == {"not started"}


def test_a_race_the_heuristic_does_not_answer_runs_it_once(monkeypatch):
    from treesens.search import heuristic_stage

    runs = []
    find = heuristic_stage.find_witness

    def counted(*args, **kw):
        runs.append(1)
        return find(*args, **kw)

    monkeypatch.setattr(heuristic_stage, "find_witness", counted)
    res = treesens.check(MODEL, vary="mean_texture", gap=0.45, backend="race:cpsat", timeout=60)
    assert res.status == "insensitive" and res.stats["winner"] == "cpsat"
    assert len(runs) == 1
