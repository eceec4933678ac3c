"""A max gap under a work budget (``work=``, ``--work``, ``.sens`` ``work``; answers/work.py):
its own search ends on counted work, the box search's boxes (its late polish due at a
share of them) or the bisection's checks' work, so the bracket, the pair and
``stats.work`` are the same however fast the process's clock runs; the time limit stays
a net, and the result says which ended the search."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import treesens

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# 100 trees of depth 6: radius_error and mean_concavity's bracket stays open for some
# 800,000 boxes (tolerance 1e-5), the heuristic's seed and late polish both run
DEEP = str(EXAMPLES / "breast_cancer_deep_xgb.json")
PAIR = "radius_error,mean_concavity"
SHALLOW = str(EXAMPLES / "breast_cancer_xgb.json")
# a 3-class XGBoost model: between any two classes, four features varied at tolerance
# 1e-6, its six class pairs' searches take 271 boxes together
WINE = str(EXAMPLES / "wine_xgb.json")
WINE_VARY = "flavanoids,nonflavanoid_phenols,proanthocyanins,color_intensity"
FAST = 10.0  # the clock of a process that gets a tenth of the CPU it asks for
NO_LIMIT = 1e6  # seconds: the time limit far away, at either speed


class _FastTime:
    """The time module, but for ``time()``: ``pace`` times the real clock's pace."""

    def __init__(self, t0: float, pace: float):
        self.t0, self.pace = t0, pace

    def time(self) -> float:
        return self.t0 + self.pace * (time.time() - self.t0)

    def __getattr__(self, name: str):
        return getattr(time, name)


@pytest.fixture
def fast_clock(monkeypatch):
    """The max gap's clock (its search, seed, polish and heuristic, and the checks of its
    bisection) running ``pace`` times the real one, as a loaded process sees it."""
    from treesens.questions import max_gap
    from treesens.search import (
        box_search,
        boxes,
        compiled_check,
        forest_ratio,
        gap_boxes,
        gap_polish,
        gap_search,
        gap_seed,
        heuristic,
    )

    modules = (max_gap, gap_search, gap_boxes, gap_seed, gap_polish, heuristic, forest_ratio)

    def turn(pace: float = FAST) -> None:
        fast = _FastTime(time.time(), pace)
        for module in (*modules, box_search, boxes, compiled_check):
            monkeypatch.setattr(module, "time", fast)

    return turn


def _deep(**kw):
    return treesens.max_gap(DEEP, vary=PAIR, tolerance=1e-5, progress=False, **kw)


def _same_answer(a, b) -> None:
    assert a.max_gap == b.max_gap
    assert a.to_dict()["witness"] == b.to_dict()["witness"]
    assert a.stats["work"] == b.stats["work"]


def test_under_a_time_limit_alone_a_fast_clock_ends_the_search_after_other_work(fast_clock):
    # boxes, not the bracket: the late best-first share settles the bracket's shown bounds
    # (0.263987, 0.263999) within a second, at either pace
    _deep(timeout=NO_LIMIT, work=1000)  # the kernels and the heuristic loaded
    idle = _deep(timeout=6)
    fast_clock()
    slow = _deep(timeout=6)
    assert _boxes(slow) < _boxes(idle) / 2


def _boxes(res) -> int:
    # a loaded machine's fast clock can end the search in its table build, before any box
    return res.stats.get("box_search", {}).get("boxes", 0)


def test_under_a_work_budget_a_fast_clock_keeps_the_bracket_pair_and_work(fast_clock):
    idle = _deep(timeout=NO_LIMIT, work="20k")
    fast_clock()
    slow = _deep(timeout=NO_LIMIT, work="20k")
    assert idle.status == "sensitive"
    assert idle.stats["box_search"]["seed"]["late_seconds"] is not None  # at box 5,000
    _same_answer(idle, slow)


def test_a_budget_too_small_leaves_an_open_bracket_that_says_the_budget_was_spent():
    res = _deep(timeout=NO_LIMIT, work=500)
    _assert_spent(res, 500)


def test_the_time_limit_under_a_work_budget_says_it_ended_the_search(fast_clock):
    _deep(timeout=NO_LIMIT, work=1000)  # the kernels and the heuristic loaded
    fast_clock(1000.0)
    res = _deep(timeout=30, work="1M")
    assert res.max_gap["proven"] is False
    assert res.stats["work"]["ended_by"] == "time"
    assert "work budget" not in res.message


def _bisected(**kw):
    return treesens.max_gap(
        SHALLOW, vary="worst_smoothness,texture_error", box_search=False, progress=False, **kw
    )


def test_a_bisection_short_of_its_budget_stops_between_steps_and_says_so():
    res = _bisected(timeout=NO_LIMIT, work=300)
    assert res.max_gap["proven"] is False
    assert res.max_gap["stopped_by"] == "work"
    assert res.stats["work"]["ended_by"] == "work"
    assert res.stats["work"]["used"] >= 300


def test_a_data_aware_max_gap_spends_one_budget_on_its_search_and_its_check():
    res = treesens.max_gap(
        SHALLOW, vary="worst_smoothness,texture_error", data=str(EXAMPLES / "breast_cancer_rows.csv"),
        data_aware="prob", work=300, timeout=NO_LIMIT, progress=False,
    )  # fmt: skip
    work = res.stats["work"]
    assert work["budget"] == 300
    assert work["used"] == sum(work["stages"].values()) >= 300
    assert set(work["stages"]) == {"box_search", "solver"}  # the search's boxes, the check's


def _wine(**kw):
    return treesens.max_gap(
        WINE, vary=WINE_VARY, classes=("any", "any"), tolerance=1e-6, progress=False, **kw
    )


def test_a_multiclass_model_s_class_pairs_spend_one_budget_and_say_it_was_spent():
    res = _wine(timeout=NO_LIMIT, work=100)
    _assert_spent(res, 100)


def test_under_a_work_budget_a_multiclass_model_s_bracket_is_the_same_on_a_fast_clock(
    fast_clock,
):
    idle = _wine(timeout=NO_LIMIT, work=100)
    fast_clock()
    slow = _wine(timeout=NO_LIMIT, work=100)
    assert idle.status == "sensitive"
    _same_answer(idle, slow)


def _forest():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.datasets import load_wine
    from sklearn.ensemble import RandomForestClassifier

    assert sklearn
    X, y = load_wine(return_X_y=True)
    est = RandomForestClassifier(n_estimators=10, max_depth=4, random_state=0).fit(X, y)
    return treesens.load_model(est)


def _forest_ratio(forest, **kw):
    # a forest's largest ratio: box searches at fixed ratios (search/forest_ratio.py),
    # [1.044, 32.67] at 1,000 boxes, proven at 8.263 in 27,292
    vary = [forest.feature_names[0], forest.feature_names[6]]
    return treesens.max_gap(
        forest, vary=vary, classes=(0, "any"), tolerance=1e-4, progress=False, **kw
    )


def test_a_forest_s_fixed_ratio_searches_spend_one_budget_and_say_it_was_spent():
    res = _forest_ratio(_forest(), timeout=NO_LIMIT, work=1000)
    _assert_spent(res, 1000)


def test_under_a_work_budget_a_forest_s_bracket_is_the_same_on_a_fast_clock(fast_clock):
    forest = _forest()
    idle = _forest_ratio(forest, timeout=NO_LIMIT, work=1000)
    fast_clock()
    slow = _forest_ratio(forest, timeout=NO_LIMIT, work=1000)
    assert idle.max_gap["lower"] is not None
    _same_answer(idle, slow)


def _assert_spent(res, budget: int) -> None:
    """``res`` is an open bracket its work ``budget`` ended, every unit a box, and says so."""
    assert res.max_gap["proven"] is False
    assert res.max_gap["stopped_by"] == "work"
    assert res.stats["work"] == {
        "budget": budget,
        "used": budget,
        "stages": {"box_search": budget},
        "ended_by": "work",
    }
    assert "not proven (work budget spent" in res.message
