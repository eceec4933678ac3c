"""`treesens report` from the command line."""

from __future__ import annotations

import pytest

from treesens.tests.conftest import run_treesens as _treesens
from treesens.tests.conftest import treesens_here
from treesens.tests.report.conftest import MODEL, ROWS


def test_report_writes_one_html_file(tmp_path):
    out = tmp_path / "r.html"
    p = _treesens(
        "report",
        MODEL,
        "--data",
        ROWS,
        "--features",
        "mean_texture",
        "--protected",
        "mean_texture",
        "--budget",
        "10",
        "--out",
        out,
        "--no-progress",
    )
    assert p.returncode == 0, p.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_report_without_data_is_one_line_and_exit_2(tmp_path):
    p = _treesens("report", MODEL, "--out", tmp_path / "r.html")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1
    assert "--data" in p.stderr


def test_report_with_an_unknown_protected_feature_is_exit_2(tmp_path):
    p = _treesens(
        "report", MODEL, "--data", ROWS, "--protected", "nope", "--out", tmp_path / "r.html"
    )
    assert p.returncode == 2
    assert "--protected: unknown feature 'nope'" in p.stderr and "Traceback" not in p.stderr


def test_a_report_out_file_not_named_html_is_refused_before_any_ranking(tmp_path):
    out = tmp_path / "r.txt"
    p = treesens_here("report", MODEL, "--data", ROWS, "--out", out, "--no-progress")
    assert p.returncode == 2
    assert p.stderr.strip() == (
        f"treesens: error: --out {out}: the report is an HTML page; name it FILE.html (or .htm)"
    )
    assert not out.exists()


@pytest.fixture(scope="module")
def report_twice(tmp_path_factory) -> tuple[str, str]:
    """The stderr of a report's first run and of the same report run again: a ranking
    alone, within a budget it cannot outrun on a loaded machine (it ends once the max gap
    is proven; at 10 s load ~8 left it open, and a rerun asks an open one again)."""
    out = tmp_path_factory.mktemp("twice") / "r.html"
    args = ["report", MODEL, "--data", ROWS, "--features", "mean_texture"]
    args += ["--budget", "120", "--out", out]
    runs = [_treesens(*args) for _ in range(2)]
    assert all(p.returncode == 0 for p in runs), [p.stderr for p in runs]
    return runs[0].stderr, runs[1].stderr


def test_a_reports_first_run_says_nothing_of_resuming(report_twice):
    first, _ = report_twice
    assert "resume from" not in first


def test_a_report_run_again_says_the_answers_it_reused(report_twice):
    _, again = report_twice
    assert "resume from" in again and "r.rank.jsonl: 1 result reused" in again
    assert "no such file yet" not in again


def test_a_bad_line_in_a_reports_results_is_one_warning_line(tmp_path):
    """A line of NAME.rank.jsonl that is not a result was Python's UserWarning: the source
    file's path and line, then the line of code that warned."""
    out = tmp_path / "r.html"
    args = ["report", MODEL, "--data", ROWS, "--features", "mean_texture", "--no-progress"]
    args += ["--protected", "mean_texture", "--budget", "10", "--out", out]
    (tmp_path / "r.rank.jsonl").write_text('{"query": "x"}\nnot json\n')
    p = _treesens(*args)
    assert p.returncode == 0, p.stderr
    warned = [ln for ln in p.stderr.splitlines() if "not a JSON result" in ln]
    said = f"treesens: warning: {tmp_path / 'r.rank.jsonl'} line 2: not a JSON result, ignored"
    assert said in warned and all(ln.startswith("treesens: warning: ") for ln in warned)
    assert "UserWarning" not in p.stderr
