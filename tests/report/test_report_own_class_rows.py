"""A multiclass report's audited rows of the class x2 is asked (``--classes C1,C2``: the
audit asks whether a row can become C2) cannot flip to their own class: they need no
certificate, so the report counts them apart and does not list them as not answered."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treesens.questions.audit_certificates import certified_text
from treesens.questions.report import report
from treesens.views.report_html import render

OWN = "the row is of class 2, the class x2 is asked: no flip to certify"


@pytest.fixture(scope="module")
def three_class(tmp_path_factory):
    """A small 3-class XGBoost model's report at classes 0,2 with row certificates."""
    xgb = pytest.importorskip("xgboost")
    folder = tmp_path_factory.mktemp("own_class")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] > 0).astype(int) + (X[:, 2] > 0.5)
    model = xgb.XGBClassifier(n_estimators=12, max_depth=3, learning_rate=0.5).fit(X, y)
    model.save_model(folder / "m.json")
    rows = pd.DataFrame(X[:20], columns=[f"f{i}" for i in range(4)]).assign(label=y[:20])
    rows.to_csv(folder / "rows.csv", index=False)
    rep = report(
        str(folder / "m.json"), str(folder / "rows.csv"), features=["f1"], protected=["f1"],
        gap=1.2, classes="0,2", budget=120, certificates=folder / "certs", progress=False,
    )  # fmt: skip
    (f,) = rep.protected
    assert f.audit_own_class  # some rows are of class 2 and do not flip to it
    return rep


def test_rows_of_the_class_x2_is_asked_are_kept_apart_with_their_reason(three_class):
    (f,) = three_class.protected
    assert set(f.audit_own_class.values()) == {OWN}
    assert not set(f.audit_own_class) & set(f.audit_certificates)


def test_rows_of_the_class_x2_is_asked_are_not_listed_as_not_answered(three_class):
    assert not [s for s in three_class.unanswered if "no flip to certify" in s]


def test_the_page_says_how_many_rows_need_no_certificate_and_why(three_class):
    (f,) = three_class.protected
    assert f"{len(f.audit_own_class)} need none: {OWN}." in render(three_class)


def test_the_certificates_line_counts_rows_of_the_class_x2_is_asked_apart():
    outcome = {0: "", 1: OWN, 2: "", 3: OWN}
    assert certified_text(outcome, "DIR") == (
        f"certificates: 2 of 2 rows that do not flip, in DIR; 2 need none ({OWN})"
    )
