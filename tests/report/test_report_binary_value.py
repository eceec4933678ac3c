"""A report's audit pair names the flipped value as the data holds it: a binary (0/1)
feature's x2 read "SeniorCitizen = 1.0" on a production model's page, since the audit's
column of x2 values is float where rows that do not flip have none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.answers.result import UNKNOWN
from treesens.questions import report as report_module
from treesens.views.report_html import render

xgboost = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def binary_report(tmp_path_factory):
    """A model whose decision follows a 0/1 column, reported with it protected, its check
    made unknown as a time limit leaves it."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"senior": rng.integers(0, 2, 400), "age": rng.uniform(18, 90, 400)})
    # the 0/1 column decides past 50 only: the younger rows do not flip
    df["label"] = ((df["senior"] == 1) & (df["age"] > 50)).astype(int)
    model = xgboost.XGBClassifier(n_estimators=10, max_depth=2).fit(
        df[["senior", "age"]], df["label"]
    )
    folder = tmp_path_factory.mktemp("binary")
    df.to_csv(folder / "rows.csv", index=False)
    model.save_model(folder / "model.json")
    checks = report_module._checks

    def unknown_checks(*args, **kwargs):  # the page then names the audit's pair
        found = checks(*args, **kwargs)
        for _, res in found:
            res.status, res.witness = UNKNOWN, None
        return found

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report_module, "_checks", unknown_checks)
        return report_module.report(
            str(folder / "model.json"), str(folder / "rows.csv"), protected=["senior"],
            features=["senior"], gap=0.2, budget=10, progress=False,
        )  # fmt: skip


def test_the_audit_pair_of_a_binary_feature_holds_a_whole_number(binary_report):
    x2 = binary_report.protected[0].audit_pair["x2"]
    assert type(x2) is int and x2 in (0, 1)


def test_the_page_names_the_binary_value_as_the_data_writes_it(binary_report):
    x2 = binary_report.protected[0].audit_pair["x2"]
    page = render(binary_report)
    assert f"the same row with senior = {int(x2)} (P(class 1)" in page
