"""``budget T`` in .sens files: where it may stand, how it is printed, and that a sweep
with a budget asks its queries in the two passes of questions/sweep_budget.py (a first
pass of a quarter of the budget, shared out), as ``treesens sweep --budget`` does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.compiler.errors import InputError
from treesens.compiler.query import Query
from treesens.interfaces.cli.run import _starting
from treesens.interfaces.sens_run import run_file
from treesens.language import Budget, SensError, format_sens, load_queries, parse
from treesens.readers.load import load_model
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAD = 'model "m.json"\n'
# two queries a first pass answers at once (sensitive, no time limit reached); the budget
# of 40 s gives each a first pass of a quarter of it shared out: 40 / 4 / 2 = 5 s
SWEEP = (
    f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
    f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
    "defaults {\n  gap 0.2\n  timeout 30s\n}\n"
    "query radius {\n  vary worst_radius\n}\n"
    "sweep worst {\n  vary each of worst_radius, mean_texture\n  BUDGET\n}\n"
)


def _sweep_file(tmp_path: Path, budget_line: str = "") -> Path:
    p = tmp_path / "sweep.sens"
    p.write_text(SWEEP.replace("BUDGET", budget_line))
    return p


def _asked_timeouts(results) -> dict[str, float]:
    return {r.query: r.stats["asked"]["timeout"] for r in results}


def test_budget_is_accepted_in_a_sweep():
    ast = parse(HEAD + "sweep s { vary each feature budget 10m }")
    assert ast.items[1].body[1] == Budget(600.0)


def test_budget_is_accepted_in_defaults():
    ast = parse(HEAD + "defaults { budget 600s } sweep s { vary each feature }")
    assert ast.items[1].body == (Budget(600.0),)


def test_fmt_prints_budget_and_round_trips():
    text = format_sens(parse(HEAD + "defaults{budget 90s}sweep s{vary each feature budget 2m}"))
    assert "  budget 90s\n" in text and "  budget 2m\n" in text
    assert format_sens(parse(text)) == text


def test_budget_in_a_query_is_a_located_error():
    with pytest.raises(SensError) as e:
        parse(HEAD + "query q {\n  vary a\n  budget 10m\n}")
    assert "not in a query" in str(e.value)
    assert (e.value.line, e.value.column) == (4, 3)


def test_budget_in_an_audit_is_a_located_error():
    with pytest.raises(SensError) as e:
        parse(HEAD + "audit a {\n  vary a\n  budget 10m\n}")
    assert "not in an audit" in str(e.value)
    assert (e.value.line, e.value.column) == (4, 3)


@pytest.mark.parametrize("zero", ["0", "0s", "0ms", "0.0m"])
def test_a_budget_of_no_time_is_a_located_error(zero):
    with pytest.raises(SensError, match="a duration above 0") as e:
        parse(HEAD + f"sweep s {{\n  vary each feature\n  budget {zero}\n}}")
    assert (e.value.line, e.value.column) == (4, 3)


def test_a_budget_too_large_to_be_a_number_is_a_located_error():
    with pytest.raises(SensError, match="too large") as e:
        parse(HEAD + f"sweep s {{\n  vary each feature\n  budget {'9' * 400}\n}}")
    assert e.value.line == 4


def test_budget_twice_in_a_block_is_an_error():
    with pytest.raises(SensError, match="'budget' is set twice"):
        parse(HEAD + "sweep s { vary each feature budget 1m budget 2m }")


def test_run_refuses_a_file_with_a_budget_in_a_query_in_one_located_line(tmp_path):
    p = tmp_path / "q.sens"
    p.write_text(
        SWEEP.replace("BUDGET", "").replace("vary worst_radius", "vary worst_radius\n  budget 1m")
    )
    out = treesens_here("run", p)
    assert out.returncode == 2
    assert f"{p}:9:3: 'budget' is the time a sweep's queries take in all" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_sweep_takes_the_budget_of_defaults_unless_it_sets_its_own(tmp_path):
    p = tmp_path / "b.sens"
    p.write_text(SWEEP.replace("BUDGET", "").replace("timeout 30s", "timeout 30s\n  budget 5m"))
    assert load_queries(p, load_model=False).sweep_budget == {"worst": 300.0}
    p.write_text(
        SWEEP.replace("BUDGET", "budget 1m").replace("timeout 30s", "timeout 30s\n  budget 5m")
    )
    assert load_queries(p, load_model=False).sweep_budget == {"worst": 60.0}


def test_a_sweep_without_a_budget_has_none(tmp_path):
    assert load_queries(_sweep_file(tmp_path), load_model=False).sweep_budget == {"worst": None}


def test_budget_is_not_a_query_option(tmp_path):
    without = load_queries(_sweep_file(tmp_path)).queries
    with_budget = load_queries(_sweep_file(tmp_path, "budget 40s")).queries
    assert without == with_budget


def test_a_sweep_with_a_budget_asks_its_queries_with_the_first_pass_s_time_limit(tmp_path):
    results = run_file(_sweep_file(tmp_path, "budget 40s"))
    assert _asked_timeouts(results) == {
        "radius": 30.0,  # not in the sweep: its own time limit
        "worst/worst_radius": 5.0,
        "worst/mean_texture": 5.0,
    }


def test_a_sweep_without_a_budget_asks_each_query_with_its_own_time_limit(tmp_path):
    results = run_file(_sweep_file(tmp_path))
    assert set(_asked_timeouts(results).values()) == {30.0}


def test_run_file_s_budget_overrides_the_sweep_s(tmp_path):
    results = run_file(_sweep_file(tmp_path, "budget 40s"), budget=80.0)
    assert _asked_timeouts(results)["worst/mean_texture"] == 10.0


def test_run_file_refuses_a_budget_that_is_not_positive(tmp_path):
    with pytest.raises(InputError, match="budget"):
        run_file(_sweep_file(tmp_path), budget=0)


def test_run_cli_s_budget_overrides_the_sweep_s(tmp_path):
    out = treesens_here("run", _sweep_file(tmp_path, "budget 40s"), "--json", "--budget", "16")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert {r["query"]: r["stats"]["asked"]["timeout"] for r in rows} == {
        "radius": 30.0,
        "worst/worst_radius": 2.0,
        "worst/mean_texture": 2.0,
    }
    assert "budget 16s: a first pass of at most 2s a query" in out.stderr


def test_run_cli_refuses_a_budget_that_is_not_positive_in_one_line(tmp_path):
    out = treesens_here("run", _sweep_file(tmp_path), "--budget", "0")
    assert out.returncode == 2 and "--budget" in out.stderr and "Traceback" not in out.stderr


def test_a_query_a_budget_asks_again_keeps_its_number_in_the_progress_lines(capsys):
    q = Query(vary=("worst_radius",), name="worst/worst_radius").planned(timeout=5.0)
    ens = load_model(str(EXAMPLES / "breast_cancer_xgb.json"))
    on_start = _starting(ens, 3, quiet=False)
    on_start(q)
    on_start(q.planned(timeout=20.0))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "[1/3] worst/worst_radius: solving with cpsat (time limit 5s)...",
        "[1/3] worst/worst_radius: again, solving with cpsat (time limit 20s)...",
    ]
