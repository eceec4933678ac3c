"""A max gap's box search looks at the query's clock in its setup too: while it works out
the leaf values' bound (tree by tree), after it encodes the query, while it builds its
pair tables (tree by tree, and every few thousand pair leaves), before it makes the
compiled search ready and before each class pair's search. A time limit reached in the
build ends "unknown" saying so; a kernel loaded from numba's cache counts in the limit."""

from __future__ import annotations

import time
import types
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.questions import max_gap
from treesens.questions.max_gap import max_gap_query, score_bound
from treesens.search import gap_kernel_compile, gap_search, pair_boxes
from treesens.search.gap_search import kernel_deadline
from treesens.search.pair_boxes import PairTablesPastDeadline, pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.max_gap_oracle import exact_max_gap, exact_max_ratio
from treesens.tests.oracle import random_ensemble

MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
FEATURE = "worst_area"


@pytest.fixture(scope="module")
def ens():
    return treesens.load_model(MODEL)


def _query():
    return Query(vary=(FEATURE,), gap=Gap(0.0))


def test_pair_tables_past_their_deadline_raise_past_deadline(ens):
    enc = pair_encoding(ens, _query())
    with pytest.raises(PairTablesPastDeadline):
        pair_tables(enc, deadline=time.time() - 1.0)


def test_a_max_gap_stopped_in_the_table_build_says_so(ens):
    res = max_gap_query(ens, _query(), deadline=time.time() - 1.0)
    assert res.status == "unknown" and res.max_gap["stopped_by"] == "table build"
    assert "time limit during table build" in res.message


def test_a_max_gap_stopped_in_the_table_build_keeps_the_leaf_value_bound(ens):
    past = time.time() - 1.0  # the bound as worked out by then (every leaf affected)
    res = max_gap_query(ens, _query(), deadline=past)
    assert res.max_gap["upper"] == score_bound(ens, (FEATURE,), deadline=past)
    assert res.max_gap["lower"] is None and not res.max_gap["proven"]


def test_the_build_looks_at_the_clock_between_trees(ens, monkeypatch):
    # a deadline that passes once the first tree is built: the build stops at the next
    monkeypatch.setattr(pair_boxes, "CLOCK_EVERY", 1 << 30)  # no look at the leaves
    built = []
    ranked = pair_boxes._ranked_tree

    def rank(*a):
        built.append(1)
        return ranked(*a)

    monkeypatch.setattr(pair_boxes, "_ranked_tree", rank)
    enc = pair_encoding(ens, _query())
    clock = iter([0.0, 10.0])  # the first look at the clock, then every other
    monkeypatch.setattr(pair_boxes, "time", types.SimpleNamespace(time=lambda: next(clock, 10.0)))
    with pytest.raises(PairTablesPastDeadline):
        pair_tables(enc, deadline=5.0)
    assert len(built) == 1


def test_the_build_works_out_a_tree_s_row_weights_once_it_reaches_the_tree(ens, monkeypatch):
    # all of them before the first look at the clock took 0.3 CPU s (2.4 s on a loaded
    # machine) on a 1,000-tree model: a 2 s time limit was passed before it looked
    monkeypatch.setattr(pair_boxes, "CLOCK_EVERY", 1 << 30)
    weighed = set()
    terms = pair_boxes.tree_row_terms

    def weigh(ens, ti, *a):
        weighed.add(ti)
        return terms(ens, ti, *a)

    monkeypatch.setattr(pair_boxes, "tree_row_terms", weigh, raising=False)
    enc = pair_encoding(ens, _query())
    clock = iter([0.0, 10.0])  # the deadline passes once the first tree is built
    monkeypatch.setattr(pair_boxes, "time", types.SimpleNamespace(time=lambda: next(clock, 10.0)))
    with pytest.raises(PairTablesPastDeadline):
        pair_tables(enc, deadline=5.0)
    assert weighed == {0}


def test_a_time_limit_reached_after_the_build_runs_no_search(ens, monkeypatch):
    built = gap_search._tables_within

    def slow_build(*a, **k):
        out = built(*a[:4])  # built without its deadline, which then passes
        time.sleep(0.3)
        return out

    monkeypatch.setattr(gap_search, "_tables_within", slow_build)
    monkeypatch.setattr(gap_search, "largest_gap", lambda *a, **k: pytest.fail("searched"))
    res = max_gap_query(ens, _query(), deadline=time.time() + 0.2)
    # the seed runs before the build: its pair, if any, is stated, unproven
    assert res.status in ("unknown", "sensitive") and not res.max_gap["proven"]


def test_a_kernel_loaded_from_the_cache_does_not_move_the_deadline():
    assert kernel_deadline(100.0, gap_kernel_compile.Readiness(1.2, False)) == 100.0


def test_a_kernel_compiled_on_a_first_run_moves_the_deadline_by_its_time():
    assert kernel_deadline(100.0, gap_kernel_compile.Readiness(15.0, True)) == 115.0


def test_a_multiclass_max_gap_stopped_in_the_table_build_bounds_the_ratio_above_its_pair():
    # its bound was the binary one, at most 0.5: a ratio below any pair's (always >= 1)
    iris = treesens.load_model(MODEL.parent / "iris_lgbm.txt")
    q = Query(vary=("petal_length_cm",), classes=(0, "any"))
    res = max_gap_query(iris, q, deadline=time.time() - 1.0)
    assert res.max_gap["stopped_by"] == "table build"
    assert res.max_gap["upper"] >= exact_max_ratio(iris, q.vary, q.classes) > 1.0


def _clock(*times: float) -> types.SimpleNamespace:
    """A module's ``time`` whose clock reads ``times``, then the last of them for ever."""
    it = iter(times)
    return types.SimpleNamespace(time=lambda: next(it, times[-1]), sleep=time.sleep)


def test_the_leaf_value_bound_looks_at_the_clock_between_trees(ens, monkeypatch):
    # its walks for the affected leaves took 4 s on a loaded machine (adult_lgbm_t1000_l255
    # age) before the table build, past a 0.5-4 s limit: it walks no tree past the deadline
    walked = []
    affected = max_gap.affected_leaves
    monkeypatch.setattr(max_gap, "affected_leaves", lambda t, v: walked.append(1) or affected(t, v))
    monkeypatch.setattr(max_gap, "time", _clock(0.0, 10.0))
    score_bound(ens, (FEATURE,), deadline=5.0)
    assert len(walked) == 1


@pytest.mark.parametrize("seed", range(6))
def test_the_leaf_value_bound_cut_short_by_its_deadline_is_still_above_the_largest_gap(seed):
    m = random_ensemble(np.random.default_rng(seed), 4, 3, 3, 2, leaf_scale=1.0)
    short = score_bound(m, ("f0",), deadline=time.time() - 1.0)
    assert short >= score_bound(m, ("f0",)) >= exact_max_gap(m, ("f0",))


def test_a_max_gap_whose_encoding_reaches_the_deadline_builds_nothing(ens, monkeypatch):
    monkeypatch.setattr(max_gap, "time", _clock(0.0))  # the leaf values' bound in time
    monkeypatch.setattr(gap_search, "time", _clock(10.0))  # then the deadline has passed
    monkeypatch.setattr(gap_search, "_seeded", lambda *a: pytest.fail("seeded"))
    res = max_gap_query(ens, _query(), deadline=5.0)
    assert res.status == "unknown" and res.max_gap["stopped_by"] == "table build"
