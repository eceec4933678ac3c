"""A protected feature whose check over all inputs ran out of time is still answered when
its row-level audit flipped a row that is confident itself: the row and its flip are a
replay-checked pair at the report's gap (a production model of 1,500 trees left the check
unknown while its audit flipped 7 such rows, and the page said 'not settled')."""

from __future__ import annotations

import pandas as pd
import pytest

from treesens.answers.result import UNKNOWN
from treesens.questions import report as report_module
from treesens.tests.report.conftest import MODEL, ROWS
from treesens.views.report_html import render

xgboost = pytest.importorskip("xgboost")
GAP = 0.2


@pytest.fixture(scope="module")
def timed_out_report():
    """The report of worst_texture at gap 0.2, its check made unknown as a time limit
    leaves it (its audit flips 5 confident rows)."""
    checks = report_module._checks

    def unknown_checks(*args, **kwargs):
        found = checks(*args, **kwargs)
        for _, res in found:
            res.status, res.witness = UNKNOWN, None
        return found

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report_module, "_checks", unknown_checks)
        return report_module.report(
            str(MODEL), str(ROWS), features=["worst_texture"], protected=["worst_texture"],
            gap=GAP, budget=200, progress=False,  # a cap 10x above what it takes
        )  # fmt: skip


def test_the_audit_pair_is_a_row_and_its_flip_meeting_the_gap_by_the_library(timed_out_report):
    pair = timed_out_report.protected[0].audit_pair
    rows = pd.read_csv(ROWS).drop(columns="label")
    row = rows.iloc[[pair["row"]]]
    x2 = row.assign(worst_texture=float(pair["x2"]))
    booster = xgboost.Booster(model_file=str(MODEL))
    p1, p2 = (float(booster.inplace_predict(r)[0]) for r in (row, x2))
    assert (p1, p2) == pytest.approx((pair["p_row"], pair["p_x2"]))
    assert min(p1, p2) <= 0.5 - GAP and max(p1, p2) >= 0.5 + GAP


def test_a_timed_out_check_with_an_audit_pair_is_not_listed_as_unanswered(timed_out_report):
    assert not [s for s in timed_out_report.unanswered if s.startswith("Whether worst_texture")]


def test_the_page_says_sensitive_and_names_the_row_of_the_pair(timed_out_report):
    pair = timed_out_report.protected[0].audit_pair
    page = render(timed_out_report)
    assert f"the data's row at index {pair['row']}" in page
    assert "not settled (the time limit was reached)" not in page
