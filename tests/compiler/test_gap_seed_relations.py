"""The max gap's seed and late polish under relations between the inputs (``where x1.age
<= x2.age``; search/gap_seed.py, gap_polish.py): the heuristic's starts, moves and
perturbations meet the query's relations (heuristic.py), so such a search gets a first
floor from the heuristic's replayed pairs as any binary max gap does, and each pair the
seed or the polish makes meets the relations before the offer replays it."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.ensemble import Feature
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureRelation, Query
from treesens.search import gap_seed, gap_units
from treesens.search.gap_polish import polish_pair
from treesens.search.gap_search import SEED_FOUND_BY, at_gap_zero, box_largest_gap
from treesens.search.gap_units import gap_bound
from treesens.search.heuristic import find_witness
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_bounds_as_domains import binary_library_model
from treesens.tests.compiler.test_gap_seed import _no_box_resolved
from treesens.tests.oracle import random_ensemble

FAR = 1e9
TOLERANCE = 1e-3
ORDERS = ("<", "<=", ">", ">=", "==")
# the draw of test_bounds_as_domains' trained models whose features are all numbers (the
# heuristic searches those) in both families
NUMERIC_MODEL = 73
POLISH_WORK = 20000


def _related(ens, op: str, vary: int = 0) -> Query:
    name = ens.feature_names[vary]
    return Query(vary=(name,), relations=(FeatureRelation(name, 1, op, 2),), plan=Plan(timeout=60))


def _seeded_pairs(ens, q: Query) -> list[tuple[np.ndarray, np.ndarray]]:
    """The pairs the seed offers for ``q``'s max gap, before the offer's replay."""
    enc = pair_encoding(ens, at_gap_zero(ens, q))
    pairs: list[tuple[np.ndarray, np.ndarray]] = []

    def offer(x1, x2):
        pairs.append((x1.copy(), x2.copy()))
        return None

    saturation = gap_seed.saturation_slack(gap_bound(ens), TOLERANCE)
    gap_seed.seed_floor(enc, offer, time.time() + FAR, saturation)
    return pairs


@pytest.mark.parametrize("op", ["<=", ">="])
def test_a_max_gap_under_a_relation_states_the_seeds_replayed_pair(op, monkeypatch):
    _no_box_resolved(monkeypatch)
    ens = random_ensemble(np.random.default_rng([4750, 3]), 8, 3, 3, 4, leaf_scale=1.0)
    res, out = box_largest_gap(ens, _related(ens, op), TOLERANCE, time.time() + FAR)
    assert res.stats["box_search"]["seed"]["pairs"] >= 1
    assert res.stats["found_by"] == SEED_FOUND_BY and out.lower is not None


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary"])
@pytest.mark.parametrize("op", ORDERS)
def test_the_seeds_pairs_meet_the_relation_on_a_trained_model(family, op, tmp_path):
    ens = binary_library_model(family, NUMERIC_MODEL, tmp_path)
    q = _related(ens, op)
    pairs = _seeded_pairs(ens, q)
    assert pairs and not [p for p in pairs if constraint_violations(ens, q, *p)]


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary"])
@pytest.mark.parametrize("op", ORDERS)
def test_the_polished_pair_meets_the_relation_on_a_trained_model(family, op, tmp_path):
    ens = binary_library_model(family, NUMERIC_MODEL, tmp_path)
    q = _related(ens, op)
    enc = pair_encoding(ens, at_gap_zero(ens, q))
    x1, x2, _met = find_witness(enc, FAR, margin=50.0, work=2000)  # an ask it misses
    p1, p2, _slack = polish_pair(enc, x1, x2, 50.0, POLISH_WORK, time.time() + FAR, patient=True)
    assert not constraint_violations(ens, q, p1, p2)


def test_the_late_polish_offers_a_pair_under_a_relation(tmp_path):
    ens = binary_library_model("xgb-binary", NUMERIC_MODEL, tmp_path)
    q = _related(ens, "<=")
    enc = pair_encoding(ens, at_gap_zero(ens, q))
    best = gap_units.BestPair(ens, q)
    x1, x2, _met = find_witness(enc, FAR, margin=1.0, work=2000)
    best.offer_for(enc)(x1, x2)
    saturation = gap_seed.saturation_slack(gap_bound(ens), TOLERANCE)
    got = gap_seed.late_polish(enc, best.pair, best.offer_for(enc), saturation, time.time() + 60)
    assert got is not None and best.offered == 2


def test_a_strict_relation_on_an_unsplit_integer_feature_seeds_whole_numbers():
    # no tree reads g: its one interval has one representative, so the start pair breaks
    # x1.g < x2.g and x2.g is moved next to x1.g, a whole number as g's rows hold
    ens = random_ensemble(3, 20, 3, 4, 5)
    ens = replace(ens, features=(*ens.features, Feature("g", "integer", 0, 10)))
    q = Query(vary=("f0", "g"), relations=(FeatureRelation("g", 1, "<", 2),), plan=Plan(60))
    pairs = _seeded_pairs(ens, q)
    assert pairs and all(a[4] < b[4] and b[4] == round(b[4]) for a, b in pairs)


def test_a_strict_relation_on_an_unsplit_real_feature_seeds_values_a_float32_model_reads_apart():
    # no tree reads g: x2.g is moved next to x1.g, to the next float32 (the model casts
    # its inputs to float32), not the next float64, which it reads as x1.g's number
    ens = random_ensemble(3, 20, 3, 4, 5)
    ens = replace(ens, features=(*ens.features, Feature("g", "real", 0, 10)))
    assert ens.cast == "float32"
    q = Query(vary=("f0", "g"), relations=(FeatureRelation("g", 1, "<", 2),), plan=Plan(60))
    pairs = _seeded_pairs(ens, q)
    assert pairs and all(np.float32(a[4]) < np.float32(b[4]) for a, b in pairs)
