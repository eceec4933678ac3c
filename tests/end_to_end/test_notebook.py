"""A notebook session, kept as a test: train XGBoost, LightGBM and a random forest on
scikit-learn's breast-cancer DataFrame, load each with bounds from the data, check one
feature, sweep a few with a progress display, and read the results as typed DataFrames
and HTML, with every warning an error."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import treesens

pytest.importorskip("sklearn")

TREES, DEPTH = 20, 3
SWEPT = 3  # features swept per model
QUERY = {"gap": 0.1, "timeout": 120}
QUERY_NO_GAP = {"timeout": 120}


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer

    d = load_breast_cancer(as_frame=True)
    return d.data, d.target


def _estimator(library: str):
    if library == "xgboost":
        xgboost = pytest.importorskip("xgboost")
        return xgboost.XGBClassifier(n_estimators=TREES, max_depth=DEPTH, random_state=0)
    if library == "lightgbm":
        lightgbm = pytest.importorskip("lightgbm")
        return lightgbm.LGBMClassifier(
            n_estimators=TREES, max_depth=DEPTH, random_state=0, verbose=-1
        )
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=TREES, max_depth=DEPTH, random_state=0)


@pytest.mark.parametrize("library", ["xgboost", "lightgbm", "sklearn"])
def test_a_notebook_session_runs_without_a_warning(library, capsys, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every warning, ours or a library's, fails the test
        X, y = _breast_cancer()
        est = _estimator(library).fit(X, y)

        # load with the data's ranges as feature bounds
        model = treesens.load_model(est, data=X, bounds="data")
        shown = repr(model)
        assert shown.startswith(f"Ensemble({library}, {TREES} trees") and "\n" not in shown
        assert "bounds from data" in model.source
        assert [f.lb for f in model.features] == pytest.approx(X.min().to_list())

        # check the most important feature
        top = model.feature_names[int(np.argmax(est.feature_importances_))]
        r = treesens.check(model, vary=[top], data=X, **QUERY)
        assert r.status == "sensitive" and r.validated, (r.status, r.error)
        assert top in repr(r) and "P(x1)=" in repr(r) and "\n" not in repr(r)
        for f, x in zip(model.features, r.witness["x1"].values(), strict=True):
            assert f.lb <= x <= f.ub  # inside the data's range
        assert "<- varied" in str(r)
        page = r._repr_html_()
        assert "<table>" in page and top in page

        # sweep a few features with progress, and read them as a typed DataFrame
        rows = treesens.sweep(
            model, features=model.feature_names[:SWEPT], data=X, progress=True, **QUERY
        )
        df = treesens.results_frame(rows).sort_values("time_s")
        assert len(df) == SWEPT and set(df["verdict"]) <= {"sensitive", "insensitive"}
        assert df["distance"].dtype == float and df["validated"].dtype == bool
        for _, row in df.iterrows():
            if row["verdict"] == "sensitive":
                assert all(isinstance(p, float) for p in row["p(x1)"])
            else:
                assert math.isnan(row["distance"]) and row["p(x1)"] is None

        # how far can the top feature move the decision? (coarse tolerance: a quick test)
        m = treesens.max_gap(model, [top], tolerance=0.01, **QUERY_NO_GAP)
        assert m.status == "sensitive" and m.validated, (m.status, m.error)
        assert m.max_gap["lower"] <= m.max_gap["upper"]
        assert m.max_gap["proven"] and m.max_gap["upper"] - m.max_gap["lower"] <= 0.01

        # both pictures, as PNG files
        witness_png, sweep_png = tmp_path / "witness.png", tmp_path / "sweep.png"
        fig = treesens.plot_witness(r, data=X, model=model, path=witness_png)
        assert "P(x1)" in fig.axes[0].get_title(loc="left")
        treesens.plot_sweep(rows, path=sweep_png)
        for png in (witness_png, sweep_png):
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"[{SWEPT}/{SWEPT}]" in capsys.readouterr().err  # no terminal: a line per query


def test_a_notebook_session_on_a_pipeline_runs_without_a_warning(tmp_path):
    """One-hot + scaler + gradient boosting: check, sweep, max gap, audit and the
    witness picture, all in the pipeline's own columns."""
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, y = _breast_cancer()
        X = X[["mean radius", "mean texture", "worst area"]].assign(
            size=np.where(X["mean area"] > X["mean area"].median(), "large", "small")
        )
        pre = ColumnTransformer(
            [("cat", OneHotEncoder(), ["size"]), ("num", StandardScaler(), list(X.columns[:3]))]
        )
        clf = HistGradientBoostingClassifier(max_iter=TREES, max_depth=DEPTH, random_state=0)
        pipe = Pipeline([("pre", pre), ("clf", clf)]).fit(X, y)

        model = treesens.load_model(pipe, data=X, bounds="data")
        assert model.feature_names == list(X.columns)
        r = treesens.check(model, vary="size", data=X, **QUERY)
        assert r.status in ("sensitive", "insensitive"), r.error
        if r.status == "sensitive":
            assert r.validated and r.witness["x1"]["size"] in ("large", "small")
        rows = treesens.sweep(model, data=X, progress=False, **QUERY)
        assert [res.features for res in rows] == [[c] for c in X.columns]
        m = treesens.max_gap(model, "size", tolerance=0.01, **QUERY_NO_GAP)
        assert m.max_gap["proven"]
        audit = treesens.audit(model, X.head(20).assign(label=y.head(20)), "size", gap=0.1)
        assert len(audit) == 20
        witness = rows[0] if rows[0].status == "sensitive" else r
        treesens.plot_witness(witness, data=X, model=model, path=tmp_path / "w.png")
