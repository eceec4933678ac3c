"""A binary max gap's first floor (search/gap_seed.py): the heuristic's pairs, replayed
with the model's own predict before the box search, are its first lower bound, so a
search that resolves no box still states a pair (the scale tier's 1,000-tree LightGBM
models: hundreds of boxes before a first dive resolves one)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import treesens
from treesens.answers.phrases import lower_text
from treesens.compiler.plan import Plan
from treesens.compiler.query import Query
from treesens.search import gap_search, gap_seed, gap_units
from treesens.search.gap_boxes import GapBoxOutcome
from treesens.search.gap_search import SEED_FOUND_BY, box_largest_gap
from treesens.search.gap_units import achieved_gap
from treesens.search.heuristic import Spent
from treesens.search.heuristic_stage import heuristic_work
from treesens.search.pair_scope import pair_encoding
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
    monkeypatch.setattr(gap_search.gap_kernel_compile, "available", lambda: False)


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
    monkeypatch.setattr(gap_search.gap_kernel_compile, "available", lambda: False)
    ens, q = _case(i)
    exact = exact_max_gap(ens, q.vary)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert out.proven and out.upper >= exact - 1e-9
    if out.lower is not None:
        assert out.lower <= exact + 1e-9 and out.upper - out.lower <= TOLERANCE


# a seeded pair within the tolerance of the leaf values' bound (questions/max_gap.py's
# score_bound): the answer, with no pair table built (the 255-leaf LightGBM adult model's
# age spent 25-31 CPU s on tables the seed had made needless)


def _saturated(i: int):
    """Six trees of large leaves over two features: F moves the margin far past 0.5."""
    rng = np.random.default_rng([4751, i])
    ens = random_ensemble(rng, 6, 2, 3, 3, leaf_scale=6.0)
    return ens, Query(vary=(ens.feature_names[0],), plan=Plan(timeout=60.0))


SEED_CLOSES = (0, 1, 3, 4, 6)  # _saturated cases whose seed is within 1e-3 of the bound


def _no_tables(monkeypatch):
    def refused(*a, **k):
        raise AssertionError("the pair tables were built")

    monkeypatch.setattr(gap_search, "_tables_within", refused)


@pytest.mark.parametrize("i", SEED_CLOSES)
def test_a_seed_within_the_tolerance_of_the_known_bound_builds_no_table(i, monkeypatch):
    _no_tables(monkeypatch)
    ens, q = _saturated(i)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR, known_upper=0.5)
    assert out.proven and out.boxes == 0 and res.stats["box_search"]["tables"] is False


@pytest.mark.parametrize("i", SEED_CLOSES)
def test_bounds_the_seed_alone_proves_hold_the_exact_gap(i):
    ens, q = _saturated(i)
    exact = exact_max_gap(ens, q.vary)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR, known_upper=0.5)
    assert out.lower <= exact + 1e-9 <= out.upper + 2e-9
    assert res.stats["proved_by"] == gap_search.SEED_PROVED_BY


def test_a_seed_farther_than_the_tolerance_from_the_known_bound_builds_the_tables():
    ens, q = _saturated(2)  # g* = 0.4239
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR, known_upper=0.5)
    assert out.proven and out.boxes > 0 and "tables" not in res.stats["box_search"]


def test_a_known_bound_below_the_seeded_pair_is_not_trusted():
    ens, q = _saturated(0)
    exact = exact_max_gap(ens, q.vary)
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR, known_upper=exact - 0.01)
    assert "tables" not in res.stats["box_search"] and out.upper >= exact - 1e-9


def test_max_gap_proves_a_saturated_feature_from_its_leaf_values_bound(monkeypatch):
    _no_tables(monkeypatch)
    ens, q = _saturated(0)
    res = treesens.max_gap(ens, q.vary, timeout=60)
    assert res.max_gap["proven"] and res.max_gap["upper"] == 0.5
    assert res.stats["box_search"]["tables"] is False


def test_the_saturation_slack_is_where_a_pairs_gap_comes_within_the_tolerance_of_half():
    to_gap = gap_units.gap_bound(random_ensemble(np.random.default_rng(1), 4, 3, 2, 3))
    u = gap_seed.saturation_slack(to_gap, TOLERANCE)
    assert to_gap(u) >= 0.5 - TOLERANCE > to_gap(np.nextafter(u, -np.inf))


def test_the_seeds_last_ask_is_the_saturation_slack_plus_twice_the_float32_relaxation():
    asks = gap_seed.seed_margins(6.9, relax=0.01)
    assert [m for m, _share, _work in asks] == [1.0, 4.0, 6.92]


def test_no_ask_goes_past_the_saturation_slack():
    assert [m for m, _share, _work in gap_seed.seed_margins(2.0)] == [1.0, 2.0]


def test_the_saturation_ask_gets_more_work_than_the_others():
    asks = gap_seed.seed_margins(6.9)
    assert asks[-1][2] == gap_seed.SATURATION_WORK > max(w for _m, _s, w in asks[:-1])


def _asks_recorded(monkeypatch, met: bool) -> list[dict]:
    """find_witness replaced by one that records its asks and returns a pair, met or not."""
    asks: list[dict] = []

    def witness(enc, budget, seed=0, margin=0.0, work=None, **kw):
        asks.append({"margin": margin, "work": work})
        n = enc.ensemble.n_features
        return np.zeros(n), np.ones(n), met

    monkeypatch.setattr(gap_seed, "find_witness", witness)
    return asks


def test_a_pair_that_misses_its_ask_is_offered_all_the_same_and_polished(monkeypatch):
    _asks_recorded(monkeypatch, met=False)
    ens, q = _case(0)
    offered: list = []
    enc = pair_encoding(ens, q)
    n = gap_seed.seed_floor(enc, lambda a, b: offered.append((a, b)), time.time() + FAR, 6.9)
    assert n == 2 and len(offered) == 2
    assert np.array_equal(offered[0][0], np.zeros(ens.n_features))


def test_a_missed_pair_is_polished_towards_the_saturation_ask(monkeypatch):
    _asks_recorded(monkeypatch, met=False)
    polished: list[float] = []

    def polish(enc, x1, x2, margin, work, deadline, seed=0, **k):
        polished.append(margin)
        return x1, x2, 0.0

    monkeypatch.setattr(gap_seed, "polish_pair", polish)
    ens, q = _case(0)
    enc = pair_encoding(ens, q)
    gap_seed.seed_floor(enc, lambda a, b: None, time.time() + FAR, 6.9)
    assert polished == [6.9 + 2.0 * enc.relax]


def test_a_seeds_asks_and_its_polish_count_their_evaluations_in_its_spent(monkeypatch):
    given: list = []
    ask, polish = gap_seed.find_witness, gap_seed.polish_pair

    def counted(kind, real):
        def call(*a, **k):
            given.append((kind, k.get("spent")))
            return real(*a, **k)

        return call

    monkeypatch.setattr(gap_seed, "find_witness", counted("ask", ask))
    monkeypatch.setattr(gap_seed, "polish_pair", counted("polish", polish))
    ens, q = _case(0)
    spent = Spent()
    gap_seed.seed_floor(
        pair_encoding(ens, q), lambda a, b: None, time.time() + FAR, 6.9, spent=spent
    )
    assert [kind for kind, _ in given][-2:] == ["ask", "polish"]
    assert all(s is spent for _, s in given) and spent.evaluations > 0


def test_the_seed_stops_at_the_first_ask_not_met(monkeypatch):
    asks = _asks_recorded(monkeypatch, met=False)
    ens, q = _case(0)
    gap_seed.seed_floor(pair_encoding(ens, q), lambda a, b: None, time.time() + FAR, 6.9)
    assert [a["margin"] for a in asks] == [1.0]


def test_the_seed_asks_at_the_saturation_slack_with_its_work_last(monkeypatch):
    asks = _asks_recorded(monkeypatch, met=True)
    ens, q = _case(0)
    enc = pair_encoding(ens, q)
    gap_seed.seed_floor(enc, lambda a, b: None, time.time() + FAR, 6.9)
    assert asks[-1]["margin"] == 6.9 + 2.0 * enc.relax
    assert asks[-1]["work"] == int(gap_seed.SATURATION_WORK * heuristic_work(ens))


def test_a_seed_pair_within_the_tolerance_of_half_proves_the_search_without_a_box(monkeypatch):
    ens, q = _saturating_case()
    res, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR)
    assert out.proven and out.boxes == 0 and out.lower >= 0.5 - TOLERANCE


def _saturating_case():
    """A random ensemble whose varied feature alone takes its probability within the
    tolerance of 0 and of 1 (large leaves), as the scale tier's XGBoost models do, but
    not to a margin of 8 (1 - 3.4e-4)."""
    for i in range(60):
        rng = np.random.default_rng([4751, i])
        ens = random_ensemble(rng, 8, 3, 3, 4, leaf_scale=3.0)
        q = Query(vary=(ens.feature_names[0],), plan=Plan(timeout=60.0))
        if 0.5 - TOLERANCE / 2 <= exact_max_gap(ens, q.vary) < 0.4996:
            return ens, q
    raise AssertionError("no saturating case")


def test_the_progress_lines_of_a_seeded_search_state_the_seeds_pair(monkeypatch):
    def no_pair_of_its_own(enc, tab, to_gap, offer, tolerance, deadline, progress, *a, **k):
        progress(None, 0.5, 1)
        return GapBoxOutcome(False, 0.5, None, 1)

    monkeypatch.setattr(gap_search, "largest_gap", no_pair_of_its_own)
    monkeypatch.setattr(gap_search.gap_kernel_compile, "available", lambda: False)
    ens, q = _case(_sensitive_case())
    lines: list[str] = []
    _, out = box_largest_gap(ens, q, TOLERANCE, time.time() + FAR, log=lines.append)
    assert f"so far in [{lower_text(out.lower)}, " in lines[-1]


def test_a_large_models_seed_loads_the_compiled_walk_before_its_first_ask(monkeypatch):
    from treesens.search import heuristic

    monkeypatch.setattr(heuristic, "_LOADED", {})  # as in a process that never loaded it
    monkeypatch.setattr(gap_seed, "PRELOAD_WORK", 0)  # the work bound of a large model
    loaded_at_ask: list[bool] = []

    def witness(enc, budget, seed=0, margin=0.0, work=None, **k):
        loaded_at_ask.append(heuristic._LOADED.get("walk") is not None)
        return None

    monkeypatch.setattr(gap_seed, "find_witness", witness)
    ens, q = _case(0)
    gap_seed.seed_floor(pair_encoding(ens, q), lambda a, b: None, time.time() + FAR, 6.9)
    assert loaded_at_ask == [True]


def test_a_small_models_seed_does_not_load_the_compiled_walk_first(monkeypatch):
    from treesens.search import heuristic

    monkeypatch.setattr(heuristic, "_LOADED", {})
    monkeypatch.setattr(gap_seed, "find_witness", lambda *a, **k: None)
    ens, q = _case(0)
    assert heuristic_work(ens) < gap_seed.PRELOAD_WORK
    gap_seed.seed_floor(pair_encoding(ens, q), lambda a, b: None, time.time() + FAR, 6.9)
    assert "walk" not in heuristic._LOADED
