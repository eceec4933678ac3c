"""A sweep within a budget that leaves queries open ends saying what budget gives them
more time, as a report's ranking does: treesens sweep --max-gap --budget 60 on churn's
1,000-tree XGBoost model left 20 of 20 max gaps open while the box search built its
tables and said nothing of a budget that would rank them. The API's sweep and a .sens
file's sweep with a budget carry the same advice: on the list returned, in the lines of
treesens run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import treesens
from treesens.answers.result import Result
from treesens.interfaces.cli.main import main
from treesens.questions.max_gap_bounds import TABLE_BUILD, MaxGap
from treesens.questions.sweep_budget import FIRST_SHARE, MORE, budget_advice
from treesens.search import gap_search
from treesens.search.pair_boxes import PairTablesPastDeadline

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
BUDGET = 10


@pytest.fixture
def stopped_build(monkeypatch):
    """Every table build reaches its time limit after 4 trees."""

    def past_deadline(*args, **kwargs):
        raise PairTablesPastDeadline(123, 4)

    monkeypatch.setattr(gap_search, "_tables_within", past_deadline)


def _last_line(argv: list[str], capsys) -> str:
    main(["sweep", str(MODEL), *argv, "--table", "none"])
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_an_open_sweep_ends_with_the_budget_that_gives_it_more_time(stopped_build, capsys):
    argv = ["--features", "worst_area,mean_radius", "--max-gap", "--budget", str(BUDGET)]
    line = _last_line(argv, capsys)
    assert line.startswith("Ranking the 2 features needs more than the 10s this budget")
    assert float(re.search(r"--budget (\d+) at least", line).group(1)) >= 2 * BUDGET


def test_the_advice_names_the_table_build_that_stopped_them(stopped_build, capsys):
    argv = ["--features", "worst_area", "--max-gap", "--budget", str(BUDGET)]
    assert "while the box search built its tables (60 trees)" in _last_line(argv, capsys)


def test_a_closed_sweep_advises_no_budget(capsys):
    argv = ["--features", "worst_area", "--max-gap", "--max-gap-tolerance", "0.2"]
    assert "--budget" not in _last_line([*argv, "--budget", "60"], capsys)


def _unknown(name: str) -> Result:
    """A check's unknown after a 2 s time limit."""
    r = Result(query=name, status="unknown", backend="cpsat", features=["f0"], gap=0.2)
    r.time = {"total": 2.0}
    return r


def test_a_check_sweep_s_unknowns_are_queries():
    left = [_unknown(f"q{i}") for i in range(3)]
    advice = budget_advice(left, 6.0)
    assert advice.startswith("Answering the 3 queries needs more than the 6s")
    assert "3 queries stayed open at their time limit" in advice


def test_the_api_s_open_sweep_carries_the_budget_to_give_it(stopped_build):
    features = ["worst_area", "mean_radius"]
    rows = treesens.sweep(MODEL, features=features, max_gap=True, budget=BUDGET, progress=False)
    assert rows.budget_advice.startswith("Ranking the 2 features needs more than the 10s")
    assert float(re.search(r"budget=(\d+) at least", rows.budget_advice).group(1)) >= 2 * BUDGET


def test_the_api_s_sweep_without_a_budget_carries_no_advice():
    rows = treesens.sweep(MODEL, features=["worst_area"], gap=0.2, progress=False)
    assert rows.budget_advice is None and len(rows) == 1


SENS = (
    f'model "{MODEL}"\n'
    f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
    "sweep ranked {\n  vary each of worst_area, mean_radius\n  gap max\n"
    f"  budget {BUDGET}s\n}}\n"
)


def test_a_sens_sweep_left_open_says_the_budget_under_treesens_run(stopped_build, tmp_path, capsys):
    path = tmp_path / "ranked.sens"
    path.write_text(SENS)
    main(["run", str(path)])
    said = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("sweep ranked: ")]
    assert said and said[0].startswith("sweep ranked: Ranking the 2 features needs more than")
    assert float(re.search(r"budget (\d+)s at least", said[0]).group(1)) >= 2 * BUDGET


def _stopped_in_build(name: str, build: float, trees: int, of: int) -> Result:
    """A max gap whose time limit came 2 s into its search, ``build`` s of them spent
    building the tables of ``trees`` of its ``of`` trees (the rest on its encodings and
    its seed)."""
    r = Result(query=name, status="unknown", backend="boxes", features=["f0"], gap=1e-3)
    r.max_gap = MaxGap(None, 0.5, 1e-3, False, 0, stopped_by=TABLE_BUILD).to_dict()
    r.stats["table_build"] = {"seconds": 2.0, "build": build, "trees": trees, "of": of}
    r.time = {"total": 2.0}
    return r


def test_a_build_stopped_part_way_is_advised_twice_its_search_with_every_table():
    # 1 s before the build, 100 of 1,000 trees in 1 s: about 1 + 10 s with every table
    advice = budget_advice([_stopped_in_build("age", 1.0, 100, 1000)], 4.0)
    advised = float(re.search(r"--budget (\d+) at least", advice).group(1))
    assert advised >= MORE * 11.0 / (1 - FIRST_SHARE)


def test_the_advice_says_how_far_the_slowest_table_build_got():
    left = [_stopped_in_build("age", 1.0, 100, 1000), _stopped_in_build("sex", 1.0, 400, 1000)]
    advice = budget_advice(left, 4.0)
    assert "the slowest built 100 of 1,000 trees' tables in 1.0s: about 11s with all" in advice


def test_a_build_of_a_few_trees_in_under_a_second_shows_its_seconds():
    advice = budget_advice([_stopped_in_build("age", 0.04, 4, 1000)], 4.0)
    assert "the slowest built 4 of 1,000 trees' tables in 0.04s: about 12s with all" in advice


def test_run_file_s_open_sweep_carries_the_line_treesens_run_says(stopped_build, tmp_path):
    path = tmp_path / "ranked.sens"
    path.write_text(SENS)
    results = treesens.run_file(path)
    line = results.budget_advice["ranked"]
    assert line.startswith("Ranking the 2 features needs more than the 10s")
    assert float(re.search(r"budget (\d+)s at least", line).group(1)) >= 2 * BUDGET


def test_run_file_s_budget_advice_is_in_its_own_words_where_it_set_the_budget(
    stopped_build, tmp_path
):
    path = tmp_path / "ranked.sens"
    path.write_text(SENS)
    line = treesens.run_file(path, budget=BUDGET).budget_advice["ranked"]
    assert float(re.search(r"budget=(\d+) at least", line).group(1)) >= 2 * BUDGET


def test_run_file_without_an_open_sweep_carries_no_advice(tmp_path):
    path = tmp_path / "closed.sens"
    path.write_text(SENS.replace("gap max", "gap 0.2"))
    results = treesens.run_file(path)
    assert results.budget_advice == {} and len(results) == 2
