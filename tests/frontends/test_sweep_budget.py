"""A sweep within a budget: a short first pass, then the time left to the queries it
left open (questions/sweep_budget.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.answers.result import Result
from treesens.compiler.errors import InputError
from treesens.compiler.query import Query
from treesens.questions.sweep_budget import (
    MIN_STEP_SECONDS,
    Budget,
    answer_within,
    check_budget,
    still_open,
)
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _max_gap(feature: str, proven: bool, status: str = "sensitive", **bounds) -> Result:
    r = Result(query=feature, status=status, backend="boxes", features=[feature], gap=0.0)
    r.max_gap = {"lower": 0.3, "upper": 0.3 if proven else 0.4, "proven": proven, **bounds}
    return r


def test_the_first_pass_shares_a_quarter_of_the_budget_between_the_queries():
    assert Budget(400.0).first_limit(10, timeout=600.0) == 10.0


def test_the_first_pass_gives_more_to_each_query_when_several_run_at_once():
    assert Budget(400.0, slots=2).first_limit(10, timeout=600.0) == 20.0


def test_the_first_pass_keeps_each_query_within_its_own_time_limit():
    assert Budget(4000.0).first_limit(1, timeout=60.0) == 60.0


def test_the_first_pass_gives_each_query_a_least_step():
    assert Budget(4.0).first_limit(100, timeout=600.0) == MIN_STEP_SECONDS


def test_the_time_left_goes_to_the_queries_still_open():
    done = [_max_gap("a", False), _max_gap("b", True), _max_gap("c", False)]
    assert Budget(400.0).second_pass(done, left=100.0, first=10.0, timeout=600.0) == ([0, 2], 50.0)


def test_a_second_pass_keeps_each_query_within_its_own_time_limit():
    done = [_max_gap("a", False)]
    assert Budget(400.0).second_pass(done, left=100.0, first=10.0, timeout=30.0) == ([0], 30.0)


def test_no_second_pass_when_every_query_closed():
    done = [_max_gap("a", True), _max_gap("b", True)]
    assert Budget(400.0).second_pass(done, left=100.0, first=10.0, timeout=600.0) is None


def test_no_second_pass_that_would_give_less_than_the_first():
    done = [_max_gap("a", False), _max_gap("b", False)]
    assert Budget(400.0).second_pass(done, left=15.0, first=10.0, timeout=600.0) is None


def test_an_error_is_not_asked_again():
    assert not still_open(_max_gap("a", False, status="error"))


def test_a_max_gap_left_apart_by_memory_is_not_asked_again():
    assert not still_open(_max_gap("a", False, stopped_by="memory"))


def test_a_max_gap_stopped_while_building_its_tables_is_asked_again():
    assert still_open(_max_gap("a", False, stopped_by="table build"))


def test_an_unknown_check_is_asked_again():
    unknown = Result(query="a", status="unknown", backend="cpsat", features=["a"], gap=0.2)
    assert still_open(unknown)


class _Asked:
    """An ``ask`` that answers each query with the result ``answer(query)`` gives and
    records the time limits it was asked with."""

    def __init__(self, answer):
        self.answer, self.limits = answer, []

    def __call__(self, queries, on_result):
        self.limits.append([q.plan.timeout for q in queries])
        out = [self.answer(q) for q in queries]
        for r in out:
            on_result(r)
        return out


def _queries(*names: str) -> list[Query]:
    return [Query(vary=(n,)).planned(timeout=600.0) for n in names]


def test_a_query_open_after_the_first_pass_is_asked_again_with_the_time_left():
    passes = _Asked(lambda q: _max_gap(q.vary[0], q.vary[0] != "b" or q.plan.timeout > 100))
    ended: list[Result] = []
    out = answer_within(Budget(400.0), _queries("a", "b"), passes, ended.append, lambda _: None)
    assert passes.limits[0] == [50.0, 50.0] and passes.limits[1][0] > 300.0
    assert [r.max_gap["proven"] for r in out] == [True, True]


def test_each_query_s_final_result_is_seen_once():
    passes = _Asked(lambda q: _max_gap(q.vary[0], q.vary[0] != "b" or q.plan.timeout > 100))
    ended: list[Result] = []
    answer_within(Budget(400.0), _queries("a", "b"), passes, ended.append, lambda _: None)
    assert [r.query for r in ended] == ["a", "b"] and ended[1].max_gap["proven"]


def test_a_query_left_open_with_no_second_pass_is_seen_after_the_first():
    passes = _Asked(lambda q: _max_gap(q.vary[0], False))
    ended: list[Result] = []
    answer_within(Budget(4.0), _queries("a", "b"), passes, ended.append, lambda _: None)
    assert len(passes.limits) == 1 and [r.query for r in ended] == ["a", "b"]


def test_the_open_queries_are_asked_again_narrowest_bracket_first():
    def answer(q):
        r = _max_gap(q.vary[0], q.plan.timeout > 100)
        r.max_gap["lower"] = {"a": 0.1, "b": 0.35, "c": 0.2}[q.vary[0]]
        return r

    passes = _Asked(answer)
    ended: list[Result] = []
    answer_within(Budget(400.0), _queries("a", "b", "c"), passes, ended.append, lambda _: None)
    assert [r.query for r in ended] == ["b", "c", "a"]


def test_one_at_a_time_what_a_query_leaves_over_goes_to_the_next():
    passes = _Asked(lambda q: _max_gap(q.vary[0], q.plan.timeout > 100))
    answer_within(Budget(400.0), _queries("a", "b"), passes, lambda _: None, lambda _: None)
    second = [limits[0] for limits in passes.limits[1:]]
    assert second[0] == pytest.approx(200.0, abs=1.0) and second[1] == pytest.approx(400.0, abs=1.0)


def test_run_at_once_the_open_queries_share_the_time_left_evenly():
    passes = _Asked(lambda q: _max_gap(q.vary[0], q.plan.timeout > 100))
    answer_within(
        Budget(400.0, slots=2), _queries("a", "b"), passes, lambda _: None, lambda _: None
    )
    assert passes.limits[1] == [pytest.approx(400.0, abs=1.0)] * 2


class _CutShort(_Asked):
    """An ``ask`` interrupted (Ctrl-C) in its call ``at``, after the results of the
    queries before ``after`` (a query's name) have ended; ``partial(query)`` is the
    interrupted query's partial result, carried by the interruption (None: none)."""

    def __init__(self, answer, at: int, after: str | None = None, partial=None):
        super().__init__(answer)
        self.at, self.after, self.partial = at, after, partial

    def __call__(self, queries, on_result):
        if len(self.limits) < self.at:
            return super().__call__(queries, on_result)
        self.limits.append([q.plan.timeout for q in queries])
        for q in queries:
            if q.vary[0] == self.after:
                e = KeyboardInterrupt()
                e.partial_result = self.partial(q) if self.partial else None
                raise e
            on_result(self.answer(q))
        raise KeyboardInterrupt


def _bracketed(lower: dict):
    """Max gaps left open by a first pass, their lower bounds ``lower`` by feature."""

    def answer(q):
        r = _max_gap(q.vary[0], False)
        r.max_gap["lower"] = lower[q.vary[0]]
        return r

    return answer


def _interrupted(ask) -> tuple[list[Result], list[Result], KeyboardInterrupt]:
    """What a sweep of a, b, c within a budget hands ``ended`` and ``cut_short``, and the
    interruption it raises on."""
    ended: list[Result] = []
    cut: list[Result] = []
    with pytest.raises(KeyboardInterrupt) as e:
        answer_within(
            Budget(400.0), _queries("a", "b", "c"), ask, ended.append, lambda _: None, cut.append
        )
    return ended, cut, e.value


def test_an_interrupt_in_the_second_pass_writes_the_first_pass_results_held():
    # the second pass asks b first (the narrowest), interrupted in it with no partial result
    ask = _CutShort(_bracketed({"a": 0.1, "b": 0.35, "c": 0.2}), at=1, after="b")
    ended, cut, _ = _interrupted(ask)
    assert ended == []
    assert [(r.query, r.max_gap["lower"]) for r in cut] == [("a", 0.1), ("b", 0.35), ("c", 0.2)]


def _cut_in_b(lower: float, upper: float):
    """A second pass interrupted in b (first pass [0.35, 0.5]) whose partial result is
    [lower, upper]: the results written, and the interruption."""

    def partial(q):
        r = _max_gap("b", False)
        r.max_gap.update(lower=lower, upper=upper)
        return r

    ask = _CutShort(_bracketed({"a": 0.1, "b": 0.35, "c": 0.2}), 1, "b", partial)
    _, cut, e = _interrupted(ask)
    return cut, e


def test_the_query_in_flight_keeps_its_partial_result_when_it_is_narrower():
    cut, e = _cut_in_b(0.38, 0.39)
    assert sorted(r.query for r in cut) == ["a", "c"]
    assert e.partial_result.max_gap["lower"] == 0.38


def test_the_query_in_flight_gets_its_first_pass_result_when_its_partial_is_wider():
    cut, e = _cut_in_b(0.0, 0.5)  # the second search started over
    assert sorted(r.query for r in cut) == ["a", "c"]
    assert e.partial_result.max_gap["lower"] == 0.35


def test_an_interrupt_in_the_first_pass_writes_the_open_results_it_had():
    def answer(q):
        return _max_gap(q.vary[0], q.vary[0] == "b")

    ended, cut, _ = _interrupted(_CutShort(answer, at=0, after="c"))
    assert [r.query for r in ended] == ["b"] and [r.query for r in cut] == ["a"]


def test_an_interrupted_sweep_within_a_budget_has_a_line_of_every_query_in_its_out_file(
    tmp_path, monkeypatch
):
    import json

    import treesens
    from treesens.questions import campaign

    ask = _CutShort(_bracketed({"a": 0.1, "b": 0.35, "c": 0.2}), at=1, after="b")
    monkeypatch.setattr(campaign, "ask_many", lambda _ens, qs, on_result, **_: ask(qs, on_result))
    ens = treesens.load_model(str(EXAMPLES / "breast_cancer_xgb.json"))
    out = tmp_path / "out.jsonl"

    def make(vary, label):
        return Query(vary=tuple(vary), name=label).planned(timeout=600.0)

    def signal_again(_res):  # as the CLI's: the signal it recorded raised after each line
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        campaign.sweep_campaign(
            ens,
            [("a",), ("b",), ("c",)],
            make,
            campaign.Campaign(out=out),
            budget=400.0,
            on_result=signal_again,
        )
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted((d["query"], d["max_gap"]["lower"]) for d in lines) == [
        ("a", 0.1),
        ("b", 0.35),
        ("c", 0.2),
    ]


def _wider_when_asked_again(q) -> Result:
    """A max gap not proven whose bounds come out wider with the longer time limit of
    the second pass (a search started over, its time spent elsewhere)."""
    return _max_gap(q.vary[0], False, upper=0.35 if q.plan.timeout < 250 else 0.4)


@pytest.mark.parametrize("slots", [1, 2])
def test_a_second_pass_ending_with_wider_bounds_keeps_the_first_pass_s_answer(slots):
    passes = _Asked(_wider_when_asked_again)
    ended: list[Result] = []
    out = answer_within(Budget(400.0, slots), _queries("a"), passes, ended.append, lambda _: None)
    assert len(passes.limits) == 2 and out[0].max_gap["upper"] == 0.35
    assert [r.max_gap["upper"] for r in ended] == [0.35]


def test_a_second_pass_ending_with_closer_bounds_replaces_the_first_pass_s_answer():
    passes = _Asked(
        lambda q: _max_gap(q.vary[0], False, upper=0.4 if q.plan.timeout <= 100 else 0.35)
    )
    out = answer_within(Budget(400.0), _queries("a"), passes, lambda _: None, lambda _: None)
    assert out[0].max_gap["upper"] == 0.35


def test_without_a_budget_each_query_is_asked_once_with_its_own_time_limit():
    passes = _Asked(lambda q: _max_gap(q.vary[0], False))
    answer_within(None, _queries("a"), passes, lambda _: None, lambda _: None)
    assert passes.limits == [[600.0]]


@pytest.mark.parametrize("bad", [0, -5.0, float("inf"), "60", True])
def test_a_budget_that_is_not_positive_seconds_is_an_input_error(bad):
    with pytest.raises(InputError, match="budget"):
        check_budget(bad, "budget=")


def test_the_cli_sweep_within_a_budget_says_it_in_its_first_line():
    out = treesens_here(
        "sweep",
        EXAMPLES / "breast_cancer_xgb.json",
        *("--details", EXAMPLES / "breast_cancer_details.csv", "--max-gap"),
        *("--features", "mean_texture,worst_radius", "--budget", "30", "--table", "none"),
    )
    assert out.returncode == 0, out.stderr
    assert "2 queries, budget 30s in all, at most 600s each" in out.stderr


def test_the_cli_refuses_a_budget_that_is_not_positive_in_one_line():
    out = treesens_here("sweep", EXAMPLES / "breast_cancer_xgb.json", "--budget", "0")
    assert out.returncode == 2 and "--budget" in out.stderr and "Traceback" not in out.stderr
