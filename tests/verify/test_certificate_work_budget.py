"""A certificate's own box search (the answer another solver proved, or ``certify``
itself) under a work budget ends on the boxes it visits, the query's ``work``, its time
only a safety net (docs/testing.md): bounded by seconds alone, the same contract wrote a
certificate on an idle runner and none on a busy one."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query

MODEL = str(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")
VARY = ["worst_symmetry"]  # insensitive at gap 0.1: the search visits more than 3 boxes


@pytest.fixture(scope="module")
def ens():
    return treesens.load_model(MODEL)


def test_a_certificate_search_ends_at_its_work_budget_not_its_time(ens, tmp_path):
    q = make_query(VARY, gap=0.1, work=3)
    done = certify(ens, q, tmp_path / "c.json", MODEL, 600)
    assert not done.written and "work budget of 3 boxes: give a larger one" in done.reason, (
        done.reason
    )
    assert done.boxes == 3


def test_a_certificate_search_within_its_work_budget_writes_the_certificate(ens, tmp_path):
    done = certify(ens, make_query(VARY, gap=0.1, work=1_000_000), tmp_path / "c.json", MODEL, 600)
    assert done.written and done.verified, done.reason


def test_check_says_a_certificate_search_under_work_is_bounded_by_its_boxes(tmp_path, capsys):
    from treesens.interfaces.cli.main import main

    cert = str(tmp_path / "c.json")
    ask = ["--gap", "0.1", "--no-box-search", "--work", "1M", "--certificate", cert]
    assert main(["check", MODEL, "--vary", VARY[0], *ask]) == 0
    err = capsys.readouterr().err
    assert "searching for its proof (at most 1,000,000 boxes, the query's work;" in err, err
