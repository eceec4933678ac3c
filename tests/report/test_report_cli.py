"""`treesens report` from the command line."""

from __future__ import annotations

from treesens.tests.conftest import run_treesens as _treesens
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
