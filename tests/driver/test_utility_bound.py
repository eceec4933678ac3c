"""The data-aware utility's bound: the separable maximum is recorded and added as a row,
the reported bound never exceeds it, and the optimum found is the true one."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from treesens.backends.registry import available
from treesens.compiler.chain import SensitivityQuestion, sensitivity_chain
from treesens.compiler.encode import encode
from treesens.compiler.ir import check_constraint
from treesens.compiler.passes.data_aware import UtilityObjective, feature_ranks, marginals
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver.optimise import (
    optimum_stats,
    tighter_bound,
)
from treesens.interfaces.api import check
from treesens.tests.oracle import cell_grid, random_ensemble
from treesens.views.result_view import optimum_line

needs_cpsat = pytest.mark.skipif(not available("cpsat"), reason="needs ortools (CP-SAT)")


def _ensemble():
    return random_ensemble(3, n_trees=5, depth=2, n_features=3, n_thresholds=3)


def _data(ens, n=300, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 2, size=(n, ens.n_features)).round(2)


def _compiled(ens, vary="f0", X=None, empty="smooth"):
    q = Query(vary=(vary,), gap=Gap(0.05), plan=Plan(data_aware="prob"))
    chain = sensitivity_chain(q.plan.passes, [UtilityObjective(X, empty=empty)])
    return chain.apply(SensitivityQuestion(ens, q))[0]


def _separable_maximum(enc, X) -> float:
    total = 0.0
    for f, m in marginals(enc, X, 1.0).items():
        probs = m.probs
        copies = (0, 1) if f in enc.varying else (0,)
        weight = 1.0 if f in enc.varying else 2.0
        for c in copies:
            if enc.pred[c].get(f) or enc.onehot[c].get(f):
                total += weight * max(math.log(p) for p in probs)
    return total


def _objective_at(problem, values) -> float:
    obj = problem.objective
    return sum(k * values[v] for v, k in zip(obj.vars, obj.coefs)) + obj.constant


def test_the_utility_records_its_separable_maximum_as_the_objective_bound():
    ens = _ensemble()
    X = _data(ens)
    c = _compiled(ens, X=X)
    assert c.problem.notes.objective_bound == pytest.approx(_separable_maximum(c.encoding, X))


def test_the_separable_maximum_is_added_as_a_hard_row_on_the_objective():
    ens = _ensemble()
    c = _compiled(ens, X=_data(ens))
    (row,) = [k for k in c.problem.constraints if getattr(k, "tag", None) == ("prob-bound",)]
    obj = c.problem.objective
    assert row.vars == obj.vars and row.coefs == obj.coefs and row.sense == "<="
    assert row.rhs == pytest.approx(c.problem.notes.objective_bound - obj.constant)
    assert not c.problem.soft  # smoothing forbids nothing: the row is not in the soft group


def test_the_bound_row_holds_at_the_point_of_highest_utility_in_every_interval():
    ens = _ensemble()
    X = _data(ens)
    c = _compiled(ens, X=X)
    enc, problem = c.encoding, c.problem
    (row,) = [k for k in problem.constraints if getattr(k, "tag", None) == ("prob-bound",)]
    # every feature at each of its intervals (q_r = [rank < r]), others at rank 0
    for f in enc.domains:
        for rank in range(len(enc.domains[f].valid)):
            v = np.zeros(problem.n_vars)
            for copy in (0, 1):
                for g, qs in enc.pred[copy].items():
                    at = rank if g == f else 0
                    for r, var in enumerate(qs, start=1):
                        v[var] = 1.0 if at < r else 0.0
            assert check_constraint(row, v)
            assert _objective_at(problem, v) <= problem.notes.objective_bound + 1e-9


def test_the_separable_maximum_with_forbidden_intervals_is_over_the_intervals_with_data():
    ens = _ensemble()
    X = _data(ens)
    X = X[X[:, 1] < 0.5]  # feature f1's intervals above 0.5 get no data
    c = _compiled(ens, X=X, empty="forbid")
    total = 0.0
    for f, m in marginals(c.encoding, X, 0.0).items():
        counts, probs = m.counts, m.probs
        weight = 1.0 if f in c.encoding.varying else 2.0
        for copy in (0, 1) if f in c.encoding.varying else (0,):
            if c.encoding.pred[copy].get(f) or c.encoding.onehot[copy].get(f):
                total += weight * max(math.log(p) for p in probs[counts > 0])
    assert c.problem.notes.objective_bound == pytest.approx(total)


def test_the_smaller_of_the_solvers_and_the_known_bound_is_reported():
    assert tighter_bound(313.3, -28.95) == -28.95
    assert tighter_bound(-40.0, -28.95) == -40.0
    assert tighter_bound(None, -28.95) == -28.95
    assert tighter_bound(-40.0, None) == -40.0


def test_an_optimising_runs_stats_carry_the_relative_gap():
    stats = optimum_stats(-50.0, -40.0)
    assert stats == {"objective": -50.0, "objective_bound": -40.0, "objective_gap": 0.2}


def _data_file(tmp_path, ens, X):
    path = tmp_path / "rows.csv"
    pd.DataFrame(X, columns=ens.feature_names).to_csv(path, index=False)
    return path


@needs_cpsat
def test_the_reported_bound_never_exceeds_the_separable_maximum(tmp_path):
    ens = random_ensemble(3, n_trees=40, depth=5, n_features=10, n_thresholds=12)
    X = _data(ens, n=2000)
    r = check(
        ens, ["f0"], gap=0.05, data=_data_file(tmp_path, ens, X), data_aware="prob", timeout=60
    )
    problem, enc = encode(ens, Query(vary=("f0",), gap=Gap(0.05)))
    assert r.status == "sensitive"
    assert r.stats["objective_bound"] <= _separable_maximum(enc, X) + 1e-6


def _brute_force_best_utility(ens, vary: str, gap: float, X: np.ndarray) -> float:
    """max over sensitive pairs of threshold cells of log u(x1) + log u(x2)."""
    _, enc = encode(ens, Query(vary=(vary,), gap=Gap(gap)))
    grid, ns, nv = cell_grid(ens, [vary], reps="domain")
    probs = marginals(enc, X, 1.0)
    u = np.zeros(len(grid))
    for f, m in probs.items():
        p = m.probs
        ranks = feature_ranks(enc, f, grid[:, f])
        assert (ranks >= 0).all()
        u += np.log(p[ranks])
    proba = ens.proba(grid)[:, 1]
    hi = np.where(proba >= 0.5 + gap, u, -np.inf).reshape(ns, nv).max(axis=1)
    lo = np.where(proba <= 0.5 - gap, u, -np.inf).reshape(ns, nv).max(axis=1)
    return float((hi + lo).max())


@needs_cpsat
def test_the_optimum_on_a_tiny_ensemble_is_the_brute_force_maximum_of_the_utility(tmp_path):
    ens = _ensemble()
    X = _data(ens)
    best = _brute_force_best_utility(ens, "f0", 0.05, X)
    assert math.isfinite(best)  # the query is sensitive
    r = check(
        ens, ["f0"], gap=0.05, data=_data_file(tmp_path, ens, X), data_aware="prob", timeout=60
    )
    assert r.status == "sensitive" and r.stats["solver_status"] == "optimal"
    assert r.stats["objective"] == pytest.approx(best, rel=1e-6)
    assert r.stats["objective_gap"] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.skipif(not available("z3"), reason="needs z3")
def test_an_optimum_z3_proves_reports_its_utility_as_the_bound_and_a_gap_of_0(tmp_path):
    # z3's optimiser gives no bound of its own: the separable maximum (above the
    # optimum here) was reported, a gap of some percent beside "optimal"
    ens = _ensemble()
    X = _data(ens)
    r = check(
        ens, ["f0"], gap=0.05, data=_data_file(tmp_path, ens, X), data_aware="prob",
        timeout=60, backend="z3", heuristic=False,
    )  # fmt: skip
    assert r.status == "sensitive" and r.stats["solver_status"] == "optimal"
    assert r.stats["objective_bound"] == pytest.approx(r.stats["objective"], rel=1e-9)
    assert r.stats["objective_gap"] == pytest.approx(0.0, abs=1e-9)


def test_a_pair_not_proven_optimal_shows_its_utility_bound_and_gap():
    stats = {"solver_status": "feasible", "stopped_by": "time budget"}
    stats |= optimum_stats(-60.0, -30.0)
    line = optimum_line(stats)
    assert "optimisation's time budget" in line
    assert "utility -60, bound -30, gap 50.0%" in line
