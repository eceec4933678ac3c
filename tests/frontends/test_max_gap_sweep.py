"""Sweeps that rank features by their largest gap (questions/sweep.py's max-gap hook)."""

from __future__ import annotations

import json

from treesens.answers.result import Result
from treesens.questions.resume import ResumeKey
from treesens.questions.sweep import by_max_gap, max_gap_cell, table_rows

QUESTION = ResumeKey(
    model="xgboost:m.json",
    gap=0.2,
    gap_kind="prob",
    classes=None,
    passes=["aff", "obj", "ordering", "unaff"],
    backend="cpsat",
    timeout=60.0,
    asked={"ensemble": "abc", "data_aware": "none", "max_gap": 1e-4},
    max_gap=1e-4,
)


def _line(status="sensitive", timeout=60.0, proven=True, **kw) -> dict:
    line = {
        "query": "a",
        "status": status,
        "model": QUESTION.model,
        "gap": 0.3125,  # the gap found, not the question's
        "gap_kind": "prob",
        "classes": None,
        "passes": QUESTION.passes,
        "backend": "cpsat",
        "max_gap": {"lower": 0.3125, "upper": 0.3126, "tolerance": 1e-4, "proven": proven},
        "stats": {"asked": {**QUESTION.record(), "timeout": timeout}},
    }
    return json.loads(json.dumps({**line, **kw}))


def _result(query: str, lower, upper=0.5, proven=True, status="sensitive") -> Result:
    r = Result(query=query, status=status, backend="cpsat", features=[query], gap=0.0)
    r.max_gap = {"lower": lower, "upper": upper, "tolerance": 1e-4, "proven": proven}
    return r


def test_max_gap_answer_is_reused_whatever_gap_it_found():
    assert QUESTION.reuses(_line())


def test_max_gap_answer_with_bounds_apart_is_reused_only_with_at_least_the_time_limit():
    assert not QUESTION.reuses(_line(proven=False, timeout=30.0))
    assert QUESTION.reuses(_line(proven=False, timeout=60.0))


def _apart_by(stopped_by: str, timeout: float) -> dict:
    line = _line(proven=False, timeout=timeout)
    line["max_gap"]["stopped_by"] = stopped_by
    return line


def test_max_gap_answer_left_apart_by_rounding_is_reused_after_a_shorter_time_limit():
    # a budget's first pass (2 s) ended it, and did not ask it again: more time changes nothing
    assert QUESTION.reuses(_apart_by("rounding", timeout=2.0))


def test_max_gap_answer_left_apart_by_memory_is_reused_after_a_shorter_time_limit():
    assert QUESTION.reuses(_apart_by("memory", timeout=2.0))


def test_max_gap_answer_its_tables_build_left_open_is_asked_again_with_more_time():
    assert not QUESTION.reuses(_apart_by("table build", timeout=2.0))


def test_max_gap_answer_of_another_tolerance_is_not_reused():
    line = _line()
    line["stats"]["asked"]["max_gap"] = 1e-2
    assert not QUESTION.reuses(line)


def test_plain_answer_is_not_reused_by_a_max_gap_sweep():
    line = _line()
    del line["stats"]["asked"]["max_gap"], line["max_gap"]
    assert not QUESTION.reuses(line)


def test_max_gap_answer_is_not_reused_by_a_plain_sweep():
    plain = ResumeKey(
        **{**QUESTION.__dict__, "max_gap": None, "asked": {"ensemble": "abc", "data_aware": "none"}}
    )
    assert not plain.reuses(_line(gap=0.2))


def test_question_of_records_the_tolerance():
    assert QUESTION.record()["max_gap"] == 1e-4


def test_max_gap_cell_shows_the_gap_when_proven():
    assert max_gap_cell(_result("a", 0.25)) == "0.2500"


def test_max_gap_cell_shows_both_bounds_when_not_proven():
    assert max_gap_cell(_result("a", 0.25, 0.4, proven=False)) == "[0.2500, 0.4000]"


def test_max_gap_cell_says_none_when_insensitive():
    assert max_gap_cell(_result("a", None, 1e-4, status="insensitive")) == "none"


def test_table_has_a_max_gap_column_only_in_a_max_gap_sweep():
    plain = Result(query="a", status="insensitive", backend="cpsat", features=["a"], gap=0.2)
    assert "max_gap" not in table_rows([plain])[0]
    assert table_rows([_result("a", 0.25)])[0]["max_gap"] == "0.2500"


def test_a_regressors_table_heads_its_outputs_as_predictions():
    r = Result(query="a", status="sensitive", backend="cpsat", features=["a"], gap=0.0)
    r.delta, r.outputs = {"at_least": 5.0, "direction": "up"}, {"x1": [12.0], "x2": [3.0]}
    row = table_rows([r])[0]
    assert row["f(x1)"] == "[12.000]" and "p(x1)" not in row


def test_a_classifiers_table_heads_its_outputs_as_probabilities():
    r = Result(query="a", status="sensitive", backend="cpsat", features=["a"], gap=0.2)
    r.outputs = {"x1": [0.2, 0.8], "x2": [0.9, 0.1]}
    assert table_rows([r])[0]["p(x1)"] == "[0.200, 0.800]"


def test_by_max_gap_ranks_largest_first_and_no_gap_last():
    rs = [_result("a", 0.1), _result("b", None, status="insensitive"), _result("c", 0.3)]
    assert [r.query for r in by_max_gap(rs)] == ["c", "a", "b"]


class _Shown:
    """A progress display that keeps what it is told."""

    def __init__(self) -> None:
        self.done: list[str] = []
        self.statuses: list[str] = []

    def advance(self, res: Result) -> None:
        self.done.append(res.query)

    def note(self, text: str) -> None:
        pass

    def status(self, text: str) -> None:
        self.statuses.append(text)

    def close(self) -> None:
        pass


def _swept_mean_texture() -> _Shown:
    """What a max-gap sweep of the shipped example on mean_texture shows while it runs."""
    from contextlib import contextmanager
    from pathlib import Path

    import treesens
    from treesens.questions.sweep import sweep

    shown = _Shown()

    @contextmanager
    def display(total: int):
        yield shown

    model = Path(treesens.__file__).parent / "examples" / "breast_cancer_xgb.json"
    sweep(str(model), features=["mean_texture"], max_gap=True, progress=display)
    return shown


def test_a_sweeps_first_bracket_comes_after_a_note_on_making_the_kernel_ready(monkeypatch):
    from treesens.search import gap_kernel, gap_kernel_compile

    made_ready = gap_kernel.prepare

    def as_on_a_cold_cache(log=None, rebuild=None):  # its note first, as on an empty cache
        if log is not None:
            log(gap_kernel_compile.compiling_line())
        return made_ready(log, rebuild)

    monkeypatch.setattr(gap_kernel, "prepare", as_on_a_cold_cache)
    shown = _swept_mean_texture()
    note = f"mean_texture: {gap_kernel_compile.compiling_line()}"
    assert note in shown.statuses  # the search made the kernel ready, in the sweep's query
    after = shown.statuses[shown.statuses.index(note) + 1 :]
    assert any(s.startswith("mean_texture: max gap so far ") for s in after)


def test_max_gap_sweep_shows_each_query_bounds_while_it_runs():
    shown = _swept_mean_texture()
    assert shown.done == ["mean_texture"]
    assert any(s.startswith("mean_texture: max gap so far ") for s in shown.statuses)
