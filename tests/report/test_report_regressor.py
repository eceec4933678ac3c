"""`treesens report` on a regressor: its protected features are asked for a change of the
prediction (``--delta D``), not a probability gap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xgboost as xgb

from treesens.compiler.errors import InputError
from treesens.questions.report import report
from treesens.tests.conftest import run_treesens as _treesens
from treesens.tests.report.conftest import MODEL, ROWS
from treesens.views.report_html import render

DELTA = 0.5


@pytest.fixture(scope="module")
def regressor(tmp_path_factory):
    """An XGBoost regressor of y = 2 f0 + f1 (f2 is noise), saved with its rows."""
    folder = tmp_path_factory.mktemp("regressor")
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    y = 2 * X[:, 0] + X[:, 1]
    est = xgb.XGBRegressor(n_estimators=5, max_depth=2, nthread=1).fit(X, y)
    model = folder / "reg.json"
    est.save_model(model)
    rows = folder / "rows.csv"
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(rows, index=False)
    return model, rows, est


@pytest.fixture(scope="module")
def regressor_report(regressor, tmp_path_factory):
    model, rows, _ = regressor
    results = tmp_path_factory.mktemp("regressor-report") / "r.jsonl"
    return report(str(model), str(rows), protected=["f0"], delta=DELTA, budget=60, results=results)


def test_report_on_a_regressor_checks_a_protected_feature_for_a_change_of_delta(
    regressor, regressor_report
):
    check = regressor_report.protected[0].check
    assert check.status == "sensitive"
    x1, x2 = (
        np.array([[check.witness[x][f] for f in ("f0", "f1", "f2")]], dtype=float)
        for x in ("x1", "x2")
    )
    est = regressor[2]
    assert abs(est.predict(x1)[0] - est.predict(x2)[0]) >= DELTA


def test_report_on_a_regressor_audits_each_row_for_a_change_of_delta(regressor_report):
    finding = regressor_report.protected[0]
    assert finding.audit_error is None
    assert finding.audit_rows == 200


def test_report_page_on_a_regressor_states_the_change_asked(regressor_report):
    page = render(regressor_report)
    assert f"the predictions differ by at least {DELTA:g}" in page
    assert f"Change of the prediction asked of the protected features: {DELTA:g}" in page


def test_report_on_a_regressor_without_delta_is_refused_before_any_solving(regressor):
    model, rows, _ = regressor
    said = []
    with pytest.raises(InputError, match="regressor: give --delta D"):
        report(str(model), str(rows), protected=["f0"], budget=10, note=said.append)
    assert said == []


def test_report_on_a_classifier_refuses_delta():
    with pytest.raises(InputError, match="--delta is a regressor's change"):
        report(str(MODEL), str(ROWS), protected=["mean_texture"], delta=0.1, budget=10)


def test_report_cli_on_a_regressor_with_delta_writes_the_page(regressor, tmp_path):
    model, rows, _ = regressor
    out = tmp_path / "r.html"
    p = _treesens(
        "report",
        model,
        "--data",
        rows,
        "--protected",
        "f2",
        "--delta",
        str(DELTA),
        "--budget",
        "20",
        "--out",
        out,
        "--no-progress",
    )
    assert p.returncode == 0, p.stderr
    assert f"Change of the prediction asked of the protected features: {DELTA:g}" in out.read_text()


def test_a_regressors_report_says_its_max_gap_is_a_change_of_the_prediction(regressor_report):
    page = render(regressor_report)
    assert "largest change of the prediction" in page
    assert "P(class 1) &ge; 0.5 + g" not in page
    assert "a regressor." in page and "0 classes" not in page
