"""Under a work budget, a box search whose pair tables were skipped (their build reached
the time limit, or they would pass the memory limit) counted its boxes from the statistics
the skip had replaced by its reason: KeyError 'boxes', an internal error (adult
lgbm_t1000_l255, `--vary fnlwgt --backend boxes --no-heuristic --work 20k --timeout 8`,
whose tables take 28 CPU s). The skip now answers as it does without a budget."""

from __future__ import annotations

import time

import pytest

import treesens
from treesens.search import box_answers
from treesens.search.pair_boxes import PairTablesPastDeadline
from treesens.tests.driver.test_work_budget import MODEL


@pytest.fixture
def tables_past_deadline(monkeypatch):
    def building(*args, **kw):
        raise PairTablesPastDeadline(1_234, 5)

    monkeypatch.setattr(box_answers, "pair_tables", building)


def test_a_box_search_alone_whose_tables_reached_the_time_limit_records_the_skip_under_work(
    tables_past_deadline,
):
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, backend="boxes", work="20k")
    assert res.stats["box_search"]["status"] == "skipped"
    assert "building the pair tables reached the time limit" in res.stats["box_search"]["reason"]


def test_a_check_whose_box_tables_were_skipped_goes_on_to_the_solver_under_work(
    tables_past_deadline,
):
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, work="250k")
    assert res.status == "insensitive", res.message
    assert res.stats["work"]["stages"].get("box_search", 0) == 0


def test_a_box_search_alone_whose_tables_reached_the_time_limit_is_unknown_not_an_error(
    tables_past_deadline,
):
    """The time limit ended it, not the model: "unknown" as any query out of time, where
    it was an "error" (exit code 1) that a larger --timeout fixes."""
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, backend="boxes", heuristic=False)
    assert res.status == "unknown", res.error
    assert "building the pair tables reached the time limit" in res.message


def test_under_work_the_tables_past_the_time_limit_name_the_time_limit_not_the_budget(
    tables_past_deadline,
):
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, backend="boxes", work="20k")
    assert res.status == "unknown" and "the time limit, not the work budget" in res.message


def test_a_check_whose_tables_took_its_time_says_so_before_the_solver_stage(monkeypatch):
    """The pair tables' build, which no work budget counts, ran into the time limit: the
    message said only that the heuristic and the box search did not answer."""

    def building(*args, deadline=None, **kw):
        time.sleep(max(0.0, deadline - time.time()) + 0.05)
        raise PairTablesPastDeadline(1_234, 5)

    monkeypatch.setattr(box_answers, "pair_tables", building)
    res = treesens.check(MODEL, vary="radius_error", gap=0.1, timeout=3, work="250k")
    assert res.status == "unknown"
    assert "before the solver's stage: building the pair tables reached the time limit" in (
        res.message
    )
    assert "the time limit, not the work budget" in res.message
