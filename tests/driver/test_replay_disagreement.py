"""A library that disagrees with treesens' model of it yields an error, never a verdict."""

from __future__ import annotations

import dataclasses

import numpy as np

from treesens.answers import verdict
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver import solve_query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble


class _LyingReplayer:
    """The IR's own scores, except that x1-side probabilities are pulled to 0.5."""

    library = "fake"

    def __init__(self, ens):
        self.ens = ens

    def predict_raw(self, X):
        return np.zeros((len(X), self.ens.n_outputs))

    def predict_proba(self, X):
        return np.full((len(X), 2), 0.5)


def _sensitive_case():
    for seed in range(50):
        ens = random_ensemble(seed, n_trees=4, depth=2, n_features=2, n_thresholds=2)
        q = Query(
            vary=("f0",), gap=Gap(0.05), plan=Plan(timeout=30, options=(("heuristic", False),))
        )
        if brute_force_sensitive(ens, q):
            return ens, q
    raise AssertionError("no sensitive tiny ensemble found")


def test_a_disagreeing_library_on_a_pair_that_barely_meets_the_gap_is_an_error(monkeypatch):
    ens, q = _sensitive_case()
    ens = dataclasses.replace(ens, replayer=_LyingReplayer(ens))
    # every IR pair "meets the gap by a hair": without comparing scores it would be taken
    # for a rounding near-miss and cut, until the search wrongly ran out of pairs
    monkeypatch.setattr(verdict, "condition_slack", lambda enc, raw, copy: 0.0)
    res = solve_query(ens, q)
    assert res.status == "error" and "disagrees" in res.error
