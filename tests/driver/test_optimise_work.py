"""A data-aware optimisation (the utility objective, driver/optimise.py) under a work budget
ends on CP-SAT's deterministic time, its stall_time and optimise_time (the clock's) off,
so its best pair and utility are the same however fast the process's clock runs."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from treesens.backends.registry import available
from treesens.driver.data_fallback import no_pair_text
from treesens.interfaces.api import check
from treesens.tests.driver.test_work_budget import NO_LIMIT, _FastTime
from treesens.tests.oracle import random_ensemble

pytestmark = pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)")

# 120 random trees of depth 5: under 10k work units CP-SAT stops optimising at a utility
# it has not proven optimal (-26.70 against a bound of -25.76; the optimum -26.32 needs
# some 12.5k), about 14 s
WORK = "10k"


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    ens = random_ensemble(3, n_trees=120, depth=5, n_features=10, n_thresholds=12)
    X = np.random.default_rng(0).uniform(-1, 2, size=(1000, ens.n_features)).round(2)
    path = tmp_path_factory.mktemp("optimise_work") / "rows.csv"
    pd.DataFrame(X, columns=ens.feature_names).to_csv(path, index=False)
    return ens, path


def _optimised(problem):
    ens, rows = problem
    return check(ens, ["f0"], gap=0.05, data=rows, data_aware="prob", timeout=NO_LIMIT, work=WORK)


@pytest.fixture(scope="module")
def idle(problem):
    return _optimised(problem)


def test_an_optimisation_the_budget_ends_says_the_budget_ended_it(idle):
    assert idle.status == "sensitive" and idle.stats["solver_status"] == "feasible"
    assert idle.stats["stopped_by"] == "work budget"


def test_an_optimisation_under_a_work_budget_is_not_named_timed(idle):
    assert "timed" not in idle.stats["work"]


def test_an_optimisation_under_a_work_budget_gives_the_same_pair_on_a_fast_clock(
    problem, idle, monkeypatch
):
    """The watch's clock (its stall and optimise times) at a thousand times the real
    pace: the optimise time's 40 s would pass 40 ms after the first pair."""
    from treesens.driver import optimise

    monkeypatch.setattr(optimise, "time", _FastTime(time.time()))
    slow = _optimised(problem)
    assert slow.stats["objective"] == idle.stats["objective"]
    assert slow.to_dict()["witness"] == idle.to_dict()["witness"]
    assert slow.stats["work"] == idle.stats["work"]


def test_a_fallback_pair_under_a_work_budget_says_the_budget_not_the_time():
    """Breast cancer's model under work 20: the optimiser spends its 20 units in its
    presolve and returns no point, so the heuristic's pair from the data rows answers."""
    root = Path(__file__).resolve().parents[2] / "examples"
    res = check(
        str(root / "breast_cancer_xgb.json"),
        ["worst_concave_points", "worst_area"],
        gap=0.45,
        data=str(root / "breast_cancer_rows.csv"),
        data_aware="prob",
        work=20,
    )
    assert res.stats["found_by"] == "heuristic-from-data"
    assert res.message.startswith("the solver found no pair within its work budget")


def test_a_fallback_pair_on_the_clock_says_the_time_limit():
    ctx = SimpleNamespace(work=None, time_left=lambda: 12.0)
    assert no_pair_text(ctx) == "the solver found no pair within the time limit"
