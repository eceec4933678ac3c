"""A check of a change through a nonlinear link (search/link_boxes.py) under a work budget:
its box search ends on the boxes it visits, one work unit each, as every other box search
does (answers/work.py), so its answer and ``stats.work`` are the same however fast the
process's clock runs."""

from __future__ import annotations

import time

import numpy as np
import pytest

import treesens
from treesens.tests.driver.test_work_budget import NO_LIMIT, _FastTime

xgb = pytest.importorskip("xgboost")

# four features of a Poisson regressor (40 trees of depth 4), a change down just above the
# largest (8.3489): the box search proves it unreachable after 275 boxes
VARY = ["f1", "f2", "f4", "f5"]
DELTA = 8.42


@pytest.fixture(scope="module")
def poisson():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 6))
    z = 1.5 * X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] * X[:, 0] + np.sin(2 * X[:, 4]) * X[:, 5]
    est = xgb.XGBRegressor(n_estimators=40, max_depth=4, objective="count:poisson", nthread=1)
    return treesens.load_model(est.fit(X, np.exp(z / 3)))


@pytest.fixture
def fast_clock(monkeypatch):
    """The link's box search's clock (boxes.py's turn, gap_boxes.py's search) running
    FAST times the real one, as a process that gets a thousandth of the CPU sees it."""
    from treesens.search import boxes, gap_boxes

    def turn() -> None:
        fast = _FastTime(time.time())
        for module in (boxes, gap_boxes):
            monkeypatch.setattr(module, "time", fast)

    return turn


def _check(ens, **kw):
    return treesens.check(ens, vary=VARY, delta=DELTA, direction="down", **kw)


def test_a_link_change_s_box_search_spends_its_boxes_of_the_budget(poisson):
    r = _check(poisson, backend="boxes", timeout=NO_LIMIT, work="10k")
    assert r.status == "insensitive" and r.stats["proved_by"] == "box search"
    assert r.stats["work"]["stages"] == {"box_search": r.stats["box_search"]["boxes"]}


def test_a_link_change_s_box_search_is_not_named_timed_under_a_budget(poisson):
    r = _check(poisson, backend="boxes", timeout=NO_LIMIT, work="10k")
    assert "timed" not in r.stats["work"]


def test_a_link_change_s_box_search_short_of_its_budget_says_it_was_spent(poisson):
    r = _check(poisson, backend="boxes", timeout=NO_LIMIT, work=100)
    assert r.status == "unknown" and "work budget spent" in r.message
    assert r.stats["work"]["ended_by"] == "work"
    assert r.stats["box_search"]["boxes"] >= 100


def test_a_link_change_s_first_turn_ends_on_the_same_box_on_a_fast_clock(poisson, fast_clock):
    """Before the solver: under a time limit the turn is seconds (a slow process visits
    fewer boxes in them); under a work budget it is half the budget's boxes."""
    idle = _check(poisson, backend="cpsat", timeout=NO_LIMIT, work=200)
    fast_clock()
    slow = _check(poisson, backend="cpsat", timeout=NO_LIMIT, work=200)
    assert idle.stats["box_search"]["boxes"] >= 100
    assert slow.stats["box_search"]["boxes"] == idle.stats["box_search"]["boxes"]
    assert (slow.status, slow.stats["work"]) == (idle.status, idle.stats["work"])
