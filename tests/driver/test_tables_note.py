"""A check whose box-search pair tables take seconds to build says so once on its
progress line (the CLI's stderr): adult lgbm_t1000_l255's fnlwgt builds them for about a
minute, which printed nothing between 'solving with cpsat...' and the answer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import treesens
from treesens.questions.ask import answer
from treesens.questions.query_build import make_query
from treesens.search import box_answers

MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
NOTE = "box search: building the pair tables..."


@pytest.fixture(scope="module")
def ens():
    return treesens.load_model(MODEL)


def _said(ens, **plan) -> list[str]:
    said: list[str] = []
    q = make_query(["worst_symmetry"], gap=0.1, **plan)  # proved by the box search
    res = answer(ens, q, log=said.append)
    assert res.status == "insensitive", res.message
    return said


@pytest.fixture
def slow_tables(monkeypatch):
    build = box_answers.pair_tables

    def slow(*args, **kw):
        time.sleep(1.0)
        return build(*args, **kw)

    monkeypatch.setattr(box_answers, "pair_tables", slow)
    monkeypatch.setattr(box_answers, "TABLES_NOTE_AFTER", 0.05)


def test_tables_that_take_seconds_to_build_are_said_once(ens, slow_tables):
    assert _said(ens).count(NOTE) == 1


def test_a_race_says_its_tables_taking_seconds_once(ens, slow_tables):
    # the box search races CP-SAT and, as CP-SAT's first stage, builds tables beside it
    assert _said(ens, backend="race:boxes,cpsat").count(NOTE) == 1


def test_tables_built_within_the_seconds_are_not_said(ens):
    assert NOTE not in _said(ens)
