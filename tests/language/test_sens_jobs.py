"""``jobs N`` in .sens files: where it may stand, how it is printed, and that a sweep run
with several jobs answers as one run with a single job, in the file's order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from treesens.interfaces.sens_run import run_file
from treesens.language import Jobs, SensError, format_sens, load_queries, parse
from treesens.tests.conftest import treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEAD = 'model "m.json"\n'
SWEEP = (
    f'model "{EXAMPLES / "breast_cancer_xgb.json"}"\n'
    f'features from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
    "defaults {\n  gap 0.2\n  timeout 30s\n}\n"
    "query radius {\n  vary worst_radius\n}\n"
    "sweep worst {\n  vary each of worst_radius, worst_texture, worst_concave_points, "
    "mean_smoothness\n  JOBS\n}\n"
)


def _sweep_file(tmp_path: Path, jobs_line: str = "") -> Path:
    p = tmp_path / "sweep.sens"
    p.write_text(SWEEP.replace("JOBS", jobs_line))
    return p


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> list[tuple[str, str]]:
    """(query, status) of the sweep file run in this process, one query after the other."""
    p = _sweep_file(tmp_path_factory.mktemp("serial"), "jobs 1")
    return [(r.query, r.status) for r in run_file(p)]


def test_jobs_is_accepted_in_a_sweep():
    ast = parse(HEAD + "sweep s { vary each feature jobs 2 }")
    assert ast.items[1].body[1] == Jobs(2)


def test_jobs_is_accepted_in_defaults():
    ast = parse(HEAD + "defaults { jobs 3 } query q { vary a }")
    assert ast.items[1].body == (Jobs(3),)


def test_jobs_in_a_query_is_a_located_error():
    with pytest.raises(SensError) as e:
        parse(HEAD + "query q {\n  vary a\n  jobs 2\n}")
    assert "not in a query" in str(e.value)
    assert e.value.line == 4


def test_jobs_zero_is_an_error():
    with pytest.raises(SensError, match="jobs must be at least 1"):
        parse(HEAD + "sweep s { vary each feature jobs 0 }")


def test_jobs_twice_in_a_block_is_an_error():
    with pytest.raises(SensError, match="'jobs' is set twice"):
        parse(HEAD + "sweep s { vary each feature jobs 2 jobs 3 }")


def test_fmt_prints_jobs_and_round_trips():
    text = format_sens(parse(HEAD + "defaults{jobs 4}sweep s{vary each feature jobs 2}"))
    assert "  jobs 4\n" in text and "  jobs 2\n" in text
    assert format_sens(parse(text)) == text


def test_a_sweep_takes_the_jobs_of_defaults_unless_it_sets_its_own(tmp_path):
    p = tmp_path / "j.sens"
    p.write_text(SWEEP.replace("JOBS", "").replace("timeout 30s", "timeout 30s\n  jobs 3"))
    assert load_queries(p, load_model=False).sweep_jobs == {"worst": 3}
    p.write_text(SWEEP.replace("JOBS", "jobs 2").replace("timeout 30s", "timeout 30s\n  jobs 3"))
    assert load_queries(p, load_model=False).sweep_jobs == {"worst": 2}


def test_jobs_is_not_a_query_option(tmp_path):
    one = load_queries(_sweep_file(tmp_path, "jobs 1")).queries
    two = load_queries(_sweep_file(tmp_path, "jobs 2")).queries
    assert one == two


def test_run_file_with_two_jobs_answers_as_with_one_in_order(tmp_path, serial):
    seen = []
    parallel = run_file(_sweep_file(tmp_path, "jobs 1"), jobs=2, on_result=seen.append)
    assert [(r.query, r.status) for r in parallel] == serial
    assert sorted((r.query, r.status) for r in seen) == sorted(serial)


def test_the_file_jobs_setting_runs_the_sweep_on_workers(tmp_path, serial):
    parallel = run_file(_sweep_file(tmp_path, "jobs 2"))
    assert [(r.query, r.status) for r in parallel] == serial
    assert "asked" in parallel[-1].stats  # answered by run_sweep


def test_run_cli_takes_jobs(tmp_path, serial):
    p = _sweep_file(tmp_path)
    out = treesens_here("run", p, "--json", "--jobs", "2")
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert sorted((r["query"], r["status"]) for r in rows) == sorted(serial)


def test_run_cli_refuses_an_unknown_executor(tmp_path):
    p = _sweep_file(tmp_path)
    out = treesens_here("run", p, "--executor", "spark")
    assert out.returncode == 2
    assert "unknown executor" in out.stderr
