"""A work budget (``work=``, ``--work``, ``.sens`` ``work``; answers/work.py): the stages
that would end on the clock end on counted work, so the same query gives the same
verdict and the same pair however fast the process runs; the time limit stays a net."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.interfaces.cli.main import main

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")
# five features at gap 0.499: the box search alone visits 4,531 boxes to its pair, CP-SAT
# alone (the heuristic off) about 4 work units of deterministic time
FIVE = "worst_concave_points,worst_area,worst_texture,mean_texture,area_error"
FAST = 1000.0  # the clock of a process that gets a thousandth of the CPU it asks for
NO_LIMIT = 1e6  # seconds: the time limit far away, at either speed


class _FastTime:
    """The time module, but for ``time()``: FAST times the real clock's pace."""

    def __init__(self, t0: float):
        self.t0 = t0

    def time(self) -> float:
        return self.t0 + FAST * (time.time() - self.t0)

    def __getattr__(self, name: str):
        return getattr(time, name)


@pytest.fixture
def fast_clock(monkeypatch):
    """The box search's clock (search/box_search.py, compiled_check.py, boxes.py) running
    FAST times the real one, as a process that gets a thousandth of the CPU sees it: the
    search ends on the clock after a thousandth of the search it did before."""
    from treesens.search import box_search, boxes, compiled_check

    def turn() -> None:
        fast = _FastTime(time.time())
        for module in (box_search, boxes, compiled_check):
            monkeypatch.setattr(module, "time", fast)

    return turn


def _boxes_alone(**kw):
    return treesens.check(MODEL, vary=FIVE, gap=0.499, backend="boxes", heuristic=False, **kw)


def _same_answer(a, b) -> None:
    assert (a.status, a.to_dict()["witness"]) == (b.status, b.to_dict()["witness"])
    assert a.stats["work"]["stages"] == b.stats["work"]["stages"]


def test_under_a_time_limit_alone_a_slow_process_gets_another_verdict(fast_clock):
    idle = _boxes_alone(timeout=60)
    fast_clock()
    slow = _boxes_alone(timeout=60)
    assert (idle.status, slow.status) == ("sensitive", "unknown")


def test_under_a_work_budget_a_slow_process_gets_the_same_verdict_and_pair(fast_clock):
    idle = _boxes_alone(timeout=NO_LIMIT, work="1M")
    fast_clock()
    slow = _boxes_alone(timeout=NO_LIMIT, work="1M")
    assert idle.status == "sensitive"
    _same_answer(idle, slow)


def test_a_box_search_short_of_its_budget_is_unknown_at_the_same_box(fast_clock):
    idle = _boxes_alone(timeout=NO_LIMIT, work=1000)
    fast_clock()
    slow = _boxes_alone(timeout=NO_LIMIT, work=1000)
    assert idle.status == slow.status == "unknown"
    assert idle.stats["box_search"]["boxes"] == slow.stats["box_search"]["boxes"] == 1000
    assert idle.message.startswith("work budget spent")


def test_cpsat_under_a_work_budget_gives_the_same_pair_and_work_twice():
    a, b = (
        treesens.check(MODEL, vary=FIVE, gap=0.499, heuristic=False, work="1M", threads=4)
        for _ in range(2)
    )
    assert a.status == "sensitive"
    _same_answer(a, b)
    assert a.stats["work"]["stages"]["solver"] > 0


def test_cpsat_short_of_its_budget_says_the_budget_was_spent_not_the_time():
    res = treesens.check(MODEL, vary=FIVE, gap=0.499, heuristic=False, work=5)
    assert res.status == "unknown"
    assert res.stats["work"]["ended_by"] == "work"
    assert res.message.startswith("work budget spent")


def test_a_query_the_time_limit_ends_under_a_work_budget_says_it_was_time(fast_clock):
    fast_clock()
    res = _boxes_alone(timeout=60, work="1M")
    assert res.status == "unknown"
    assert res.stats["work"]["ended_by"] == "time"
    assert "the time limit, not the work budget" in res.message


@pytest.mark.parametrize("backend", ["race", "highs"])
def test_a_work_budget_on_a_backend_that_ends_on_the_clock_is_refused(backend):
    with pytest.raises(InputError, match="work budget"):
        treesens.check(MODEL, vary="radius_error", gap=0.1, backend=backend, work="1M")


def test_the_command_line_takes_a_work_budget_with_a_suffix(capsys):
    code = main(["check", MODEL, "--vary", "radius_error", "--gap", "0.1", "--work", "250k"])
    assert code == 0
    assert "INSENSITIVE" in capsys.readouterr().out


def test_a_bad_work_budget_on_the_command_line_is_one_line_and_exit_2(capsys):
    assert main(["check", MODEL, "--vary", "radius_error", "--work", "4x"]) == 2
    assert "'4x': takes a whole number of work units" in capsys.readouterr().err


def test_a_contract_s_unknown_under_a_work_budget_names_the_budget(tmp_path, capsys):
    contract = tmp_path / "c.sens"
    contract.write_text(
        f'model "{MODEL}"\ndefaults {{ work 5 }}\n'
        f"query five {{ vary {FIVE.replace(',', ', ')} gap 0.499 option heuristic = false "
        "expect sensitive }\n"
    )
    assert main(["test", str(contract)]) == 1
    assert "unknown: the work budget of 5 units was spent" in capsys.readouterr().out


def test_the_compiled_search_past_its_handover_counts_the_same_boxes(fast_clock, monkeypatch):
    from treesens.search import compiled_check

    monkeypatch.setattr(compiled_check, "hand_over_boxes", lambda tables: 256)
    idle = _boxes_alone(timeout=NO_LIMIT, work="1M")
    fast_clock()
    slow = _boxes_alone(timeout=NO_LIMIT, work="1M")
    assert idle.stats["box_search"]["search"] == "compiled"
    assert idle.status == "sensitive"
    _same_answer(idle, slow)


def test_the_compiled_search_stops_at_the_budget_s_box(monkeypatch):
    from treesens.search import compiled_check

    monkeypatch.setattr(compiled_check, "hand_over_boxes", lambda tables: 256)
    res = _boxes_alone(timeout=NO_LIMIT, work=400)  # its pair is at box 510 (254 compiled)
    assert res.stats["box_search"]["search"] == "compiled"
    assert (res.status, res.stats["box_search"]["boxes"]) == ("unknown", 400)


def test_z3_under_a_work_budget_gives_the_same_pair_and_work_twice():
    pytest.importorskip("z3")
    kw = dict(vary="mean_texture,worst_area", gap=0.45, heuristic=False, backend="z3")
    a, b = (treesens.check(MODEL, work="1M", threads=2, **kw) for _ in range(2))
    assert a.status == "sensitive"
    _same_answer(a, b)


def test_z3_short_of_its_budget_says_the_budget_was_spent():
    pytest.importorskip("z3")
    kw = dict(vary="mean_texture,worst_area", gap=0.45, heuristic=False, backend="z3")
    res = treesens.check(MODEL, work=50, **kw)
    assert (res.status, res.stats["work"]["ended_by"]) == ("unknown", "work")
    assert res.message.startswith("work budget spent")
