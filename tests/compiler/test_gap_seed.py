"""A binary max gap's first floor (search/gap_seed.py): the heuristic's pairs, replayed
with the model's own predict before the box search, are its first lower bound, so a
search that resolves no box still states a pair (the scale tier's 1,000-tree LightGBM
models: hundreds of boxes before a first dive resolves one)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.search import gap_search
from treesens.search.gap_boxes import GapBoxOutcome
from treesens.search.gap_search import SEED_FOUND_BY, achieved_gap, box_largest_gap
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

FAR = 1e9
TOLERANCE = 1e-3


def _case(i: int):
    rng = np.random.default_rng([4750, i])
    ens = random_ensemble(rng, 8, 3, 3, 4, leaf_scale=1.0)
    return ens, Query(vary=(ens.feature_names[0],), plan=Plan(timeout=60.0))


def _no_box_resolved(monkeypatch):
    """The box search stopped before it resolved a box: no pair of its own."""

    def stopped(enc, tab, to_gap, offer, tolerance, deadline, *a, **k):
        return GapBoxOutcome(False, 0.5, None, 1)

    monkeypatch.setattr(gap_search, "largest_gap", stopped)
    monkeypatch.setattr(gap_search.gap_kernel, "available", lambda: False)


def _sensitive_case() -> int:
    return next(i for i in range(40) if exact_max_gap(*_case(i)[:1], _case(i)[1].vary) > 0.1)


def test_a_search_that_resolves_no_box_states_the_heuristics_replayed_pair(monkeypatch):
    _no_box_resolved(monkeypatch)
    ens, q = _case(_sensitive_case())
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert res.status == "sensitive" and res.validated
    assert res.stats["found_by"] == SEED_FOUND_BY
    assert out.lower == achieved_gap(res.outputs["x1"][1], res.outputs["x2"][1])
    assert not out.proven


def test_the_seeded_lower_bound_is_at_most_the_exact_largest_gap(monkeypatch):
    _no_box_resolved(monkeypatch)
    ens, q = _case(_sensitive_case())
    _, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert out.lower <= exact_max_gap(ens, q.vary) + 1e-9


def test_the_heuristic_turned_off_seeds_no_pair(monkeypatch):
    _no_box_resolved(monkeypatch)
    ens, q = _case(_sensitive_case())
    off = q.planned(options=q.plan.options.with_(heuristic=False))
    res, out = box_largest_gap(ens, off, TOLERANCE, time.time() + FAR)
    assert out.lower is None and res.stats["box_search"]["seed"]["pairs"] == 0


@pytest.mark.parametrize("i", range(12))
def test_a_seeded_search_proves_bounds_that_hold_the_exact_gap(i, monkeypatch):
    monkeypatch.setattr(gap_search.gap_kernel, "available", lambda: False)
    ens, q = _case(i)
    exact = exact_max_gap(ens, q.vary)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert out.proven and out.upper >= exact - 1e-9
    if out.lower is not None:
        assert out.lower <= exact + 1e-9 and out.upper - out.lower <= TOLERANCE
