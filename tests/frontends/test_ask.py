"""The runner of one question (questions/ask.py) and of a campaign (questions/campaign.py):
the clock a time limit runs from, failures as error results, the record of what was
asked, and a campaign's results log."""

from __future__ import annotations

import hashlib
import json
import time

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.errors import InputError
from treesens.compiler.query import Query
from treesens.questions.ask import answer
from treesens.questions.campaign import Campaign, sweep_campaign
from treesens.questions.query_build import make_query
from treesens.tests.oracle import random_ensemble


@pytest.fixture(scope="module")
def ens():
    return random_ensemble(5, n_trees=4, depth=2, n_features=4, n_thresholds=2)


def test_the_time_limit_runs_from_the_start_given(ens):
    r = answer(ens, make_query(["f0"], gap=0.1, timeout=5), start=time.time() - 10)
    assert r.status == "unknown" and "time limit reached before the search" in r.message
    assert r.time["total"] >= 10


def test_a_bad_query_raises_unless_caught(ens):
    with pytest.raises(InputError, match="unknown feature"):
        answer(ens, make_query(["nope"], gap=0.1))


def test_a_caught_bad_query_is_an_error_result_recording_what_was_asked(ens):
    r = answer(ens, make_query(["nope"], gap=0.1, timeout=7), catch=True)
    assert r.status == "error" and "unknown feature 'nope'" in r.error
    assert r.stats["asked"]["timeout"] == 7.0 and r.stats["asked"]["backend"] == "cpsat"


def test_a_data_file_is_recorded_by_its_content(ens, tmp_path):
    path = tmp_path / "rows.csv"
    rows = np.random.default_rng(0).uniform(-2, 2, size=(20, 4))
    pd.DataFrame(rows, columns=ens.feature_names).to_csv(path, index=False)
    q = make_query(["f0"], gap=0.1, timeout=30, options={"data": str(path)})
    r = answer(ens, q)
    assert r.stats["asked"]["data"] == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_campaign_appends_its_answers_to_its_log_and_resumes_from_it(ens, tmp_path):
    log = tmp_path / "sweep.jsonl"
    subsets = [("f0",), ("f1",)]

    def make(vary, name=""):
        return make_query(vary, gap=0.1, timeout=30, name=name)

    first = sweep_campaign(ens, subsets, make, Campaign(out=log))
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [d["query"] for d in lines] == ["f0", "f1"]

    asked = []

    def counting(vary, name=""):
        asked.append(name)
        return make(vary, name)

    again = sweep_campaign(ens, subsets, counting, Campaign(resume=log))
    assert [r.status for r in again] == [r.status for r in first]
    assert asked == [""]  # the question the resume file is matched against, nothing run
    assert len(log.read_text().splitlines()) == 2


def _cut_short_at(monkeypatch, label):
    """Ctrl-C in the query ``label`` of a campaign run in this process, carrying its
    result so far (marked as a cut-short search marks it) as the interruption does."""
    from treesens.questions import campaign

    real = campaign.answer_task

    def answering(ens, task, log=None):
        res = real(ens, task, log)
        if task.query.label == label:
            res.stats["stopped_by"] = "interrupted"
            e = KeyboardInterrupt()
            e.partial_result = res
            raise e
        return res

    monkeypatch.setattr(campaign, "answer_task", answering)


def _make(vary, name=""):
    return make_query(vary, gap=0.1, timeout=30, name=name)


def test_a_campaign_cut_short_writes_the_query_in_flights_result_so_far(ens, tmp_path, monkeypatch):
    log = tmp_path / "sweep.jsonl"
    _cut_short_at(monkeypatch, "f1")
    shown = []
    with pytest.raises(KeyboardInterrupt):
        sweep_campaign(
            ens, [("f0",), ("f1",), ("f2",)], _make, Campaign(out=log), on_result=shown.append
        )
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [d["query"] for d in lines] == ["f0", "f1"]
    assert lines[1]["stats"]["stopped_by"] == "interrupted"
    assert [r.query for r in shown] == ["f0", "f1"]


def test_a_resumed_campaign_asks_a_query_cut_short_again(ens, tmp_path, monkeypatch):
    log = tmp_path / "sweep.jsonl"
    _cut_short_at(monkeypatch, "f1")
    with pytest.raises(KeyboardInterrupt):
        sweep_campaign(ens, [("f0",), ("f1",)], _make, Campaign(out=log))
    monkeypatch.undo()
    asked = []

    def counting(vary, name=""):
        asked.append(name)
        return _make(vary, name)

    sweep_campaign(ens, [("f0",), ("f1",)], counting, Campaign(resume=log))
    assert asked == ["", "f1"]


def test_a_caught_unknown_kind_is_an_error_result(ens):
    r = answer(ens, Query(vary=("f0",), kind="nope"), catch=True)
    assert r.status == "error" and "unknown query kind 'nope'" in r.error
