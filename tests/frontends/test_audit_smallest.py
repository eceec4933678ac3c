"""A row past the enumeration (the anchored path: the box search, then a solver) reports
the smallest change on F that flips it, as an enumerated row does: once its query finds
an x2 that flips, every x2 of F's cells with no larger change is scored
(questions/audit_solve.smallest_flip), and where they are too many to score, proven by
the box search capped at the best flip's change (questions/audit_nearest.py;
test_audit_smallest_boxes.py). Held against a brute force of its own
(tests/audit_oracle.brute_force_smallest_change: every threshold's neighbours, scored by
the library) on small trained XGBoost and LightGBM models with a real feature that may
be missing, a real one and a categorical one, F of one feature and of two; where the
smallest cannot be proven the row says so."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.audit import FLIPPABLE, NEAR_EDGE, Target
from treesens.compiler.query import Gap
from treesens.questions import audit_nearest, audit_solve
from treesens.questions.audit import (
    frame_from_results,
    report_text,
    row_result,
    summary,
    unproven_rows,
)
from treesens.readers.details import declare
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_smallest_change
from treesens.tests.conftest import treesens_here
from treesens.tests.frontends.test_audit import BC_DETAILS, BC_MODEL, _breast_cancer_frame
from treesens.tests.frontends.test_audit_boxes import _by_boxes
from treesens.views.audit_plot import draw

GAP = 0.1
N_ROWS = 10


def _data(n=1200, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=n)
    a[rng.random(n) < 0.2] = np.nan
    b = rng.normal(size=n)
    c = rng.integers(0, 6, n)
    y = (np.isin(c, [1, 4]) ^ (np.nan_to_num(a, nan=3.0) > 0.5) ^ (b > 0.8)).astype(int)
    return np.column_stack([a, b, c.astype(float)]), y


def _xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": pd.Categorical(X[:, 2].astype(int))})
    model = xgb.XGBClassifier(
        n_estimators=6,
        max_depth=3,
        enable_categorical=True,
        tree_method="hist",
        max_cat_to_onehot=1,
        random_state=0,
    )
    return load_model(model.fit(df, y)), X


def _lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    params = dict(
        objective="binary",
        verbose=-1,
        num_leaves=6,
        max_depth=3,
        min_data_per_group=5,
        cat_smooth=1,
        max_cat_to_onehot=1,
    )
    ds = lgb.Dataset(X, y, categorical_feature=[2], feature_name=["a", "b", "c"])
    return load_model(lgb.train(params, ds, 6)), X


def _model(lib):
    """The model and its first N_ROWS rows the model may read (a missing value only
    where the model says the feature may be missing)."""
    ens, X = {"xgboost": _xgboost, "lightgbm": _lightgbm}[lib]()
    ens = declare(ens, missing=["a"], categories={"c": [str(k) for k in range(6)]})
    fixed = [f for f in range(ens.n_features) if not ens.features[f].may_be_missing]
    return ens, X[~np.isnan(X[:, fixed]).any(axis=1)][:N_ROWS]


MODELS = ("lightgbm", "xgboost")
VARY = [["b"], ["c"], ["a", "c"], ["a", "b"]]


@pytest.mark.parametrize("vary", VARY, ids=",".join)
@pytest.mark.parametrize("lib", MODELS)
def test_a_row_past_the_enumeration_reports_the_smallest_change_that_flips(lib, vary):
    ens, X = _model(lib)
    ans, spec = _by_boxes(ens, X, vary, gap=GAP)
    assert_the_smallest_flips(ens, X, vary, ans, spec)


def assert_the_smallest_flips(ens, X, vary, ans, spec) -> None:
    """Each row flips exactly where the brute force finds a flip, every change proven,
    each the brute force's smallest."""
    least = brute_force_smallest_change(ens, X, vary, Target(Gap(GAP)), spec.scales)
    assert [s == FLIPPABLE for s in ans.status] == [math.isfinite(v) for v in least]
    assert not ans.unproven
    for i in np.flatnonzero(np.isfinite(least)):
        # the row's x2 is at its cells' values (within NEAR_EDGE of a cell's end)
        assert least[i] - 1e-9 <= ans.change[i] <= least[i] + len(vary) * NEAR_EDGE + 1e-9


@pytest.mark.parametrize("lib", MODELS)
def test_a_row_past_the_enumeration_reports_an_x2_that_flips_by_the_library(lib):
    ens, X = _model(lib)
    ans, _ = _by_boxes(ens, X, ["a", "c"], gap=GAP)
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit
    p2 = ens.replayer.predict_proba(ans.x2[hit])[:, 1]
    decided = np.asarray(ans.decision)[hit]
    assert np.all(np.where(decided == 1, p2 <= 0.5 - GAP, p2 >= 0.5 + GAP))
    assert np.array_equal(ans.x2[hit][:, 1], X[hit, 1], equal_nan=True)  # b is the row's


@pytest.mark.parametrize("lib", MODELS)
def test_without_the_capped_search_the_smallest_is_found_below_a_bound_or_said_not_proven(
    lib, monkeypatch
):
    # 3 x2 scored of the 100s of no larger change than the search's: some rows' smallest
    # lies among the 3 of least change, others' not (the capped box search off)
    monkeypatch.setattr(audit_solve, "SMALLEST_CANDIDATES", 3)
    monkeypatch.setattr(audit_nearest, "ENABLED", False)
    ens, X = _model(lib)
    ans, spec = _by_boxes(ens, X, ["a", "b"], gap=GAP)
    least = brute_force_smallest_change(ens, X, ["a", "b"], Target(Gap(GAP)), spec.scales)
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit == [i for i, v in enumerate(least) if math.isfinite(v)]
    assert ans.unproven and set(ans.unproven) != set(hit)  # some proven, some not
    for i in hit:
        if i in ans.unproven:  # none flips below its bound; the change shown flips
            assert ans.unproven[i] <= least[i] + 1e-9 <= ans.change[i] + 2e-9
        else:
            assert least[i] - 1e-9 <= ans.change[i] <= least[i] + 2 * NEAR_EDGE + 1e-9


def test_a_change_not_proven_the_smallest_is_said_so_in_the_line_and_the_frame(monkeypatch):
    monkeypatch.setattr(audit_solve, "SMALLEST_CANDIDATES", 0)  # none may be scored
    monkeypatch.setattr(audit_nearest, "ENABLED", False)  # nor searched
    ens, X = _model("xgboost")
    ans, spec = _by_boxes(ens, X, ["a", "b"], gap=GAP)
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit and set(ans.unproven) == set(hit)
    lines = [row_result(ens, spec, ans, i, i, X[i]) for i in range(N_ROWS)]
    assert all("smallest change not proven" in lines[i]["message"] for i in hit)
    assert all(lines[i]["stats"]["smallest"] is False for i in hit)
    df = frame_from_results(lines, spec.vary)
    assert df["change_smallest"].isna().tolist() == [i not in hit for i in range(N_ROWS)]
    assert not df["change_smallest"].fillna(False).any()


def test_a_change_proven_the_smallest_is_said_so_in_the_frame():
    ens, X = _model("xgboost")
    ans, spec = _by_boxes(ens, X, ["a", "b"], gap=GAP)
    lines = [row_result(ens, spec, ans, i, i, X[i]) for i in range(N_ROWS)]
    df = frame_from_results(lines, spec.vary)
    assert df.loc[df["status"] == FLIPPABLE, "change_smallest"].all()


def _unproven_frame(monkeypatch):
    """The frame of an audit whose flipped rows' changes are not proven the smallest."""
    monkeypatch.setattr(audit_solve, "SMALLEST_CANDIDATES", 0)
    monkeypatch.setattr(audit_nearest, "ENABLED", False)
    ens, X = _model("xgboost")
    ans, spec = _by_boxes(ens, X, ["a", "b"], gap=GAP)
    lines = [row_result(ens, spec, ans, i, i, X[i]) for i in range(len(X))]
    return ens, spec, frame_from_results(lines, spec.vary), len(ans.unproven)


def test_the_summary_says_how_many_changes_are_not_proven_the_smallest(monkeypatch):
    ens, spec, df, k = _unproven_frame(monkeypatch)
    text = report_text(ens, spec, len(df), 1.0, summary(df), unproven_rows(df))
    assert f"{k} flippable rows: the change shown is of an x2 that flips, not proven" in text


def test_the_plot_leaves_out_the_changes_not_proven_the_smallest(monkeypatch, tmp_path):
    pytest.importorskip("matplotlib")
    titles = []
    monkeypatch.setattr("matplotlib.axes.Axes.set_title", lambda ax, t, *a, **k: titles.append(t))
    _, spec, df, k = _unproven_frame(monkeypatch)
    draw(df, summary(df), None, spec, str(tmp_path / "audit.png"))
    assert f"smallest change needed ({k} not proven, left out)" in titles


def _bc_audit(tmp_path):
    """treesens audit of the breast cancer rows varying worst_texture (9 rows flip, each
    by the enumeration) resumed into a.jsonl: its arguments and the file."""
    data = tmp_path / "bc.csv"
    _breast_cancer_frame(load_model(BC_MODEL, details=BC_DETAILS)).to_csv(data, index=False)
    out = tmp_path / "a.jsonl"
    args = ["audit", BC_MODEL, "--data", data, "--vary", "worst_texture", "--gap", "0.1"]
    return [*args, "--resume", out], out


def test_a_flipped_rows_line_says_its_change_is_proven_the_smallest(tmp_path):
    args, out = _bc_audit(tmp_path)
    assert treesens_here(*args).returncode == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    flipped = [d for d in lines if d["status"] == "sensitive"]
    assert len(flipped) == 9
    assert all(d["stats"]["smallest"] is True for d in flipped)


def test_a_resumed_line_without_smallest_reads_as_not_proven(tmp_path):
    """A line an earlier treesens wrote does not say whether its change is the smallest
    (rows past the enumeration kept their query's x2): it is not read as proven."""
    args, out = _bc_audit(tmp_path)
    assert treesens_here(*args).returncode == 0
    old = [json.loads(x) for x in out.read_text().splitlines()]
    for d in old:
        (d.get("stats") or {}).pop("smallest", None)
    out.write_text("".join(json.dumps(d) + "\n" for d in old))
    p = treesens_here(*args)
    assert p.returncode == 0, p.stderr
    assert "9 flippable rows' lines do not say whether their change is the smallest" in p.stderr
    assert "9 flippable rows: the change shown is of an x2 that flips, not proven" in p.stdout


def test_a_line_without_smallest_is_not_proven_in_the_frame():
    line = {"row": 0, "decision": 0, "status": "sensitive", "outputs": {"x1": [0.9, 0.1]}}
    df = frame_from_results([{**line, "stats": {"change": 0.2}}], [])
    assert df["change_smallest"].tolist() == [False]
