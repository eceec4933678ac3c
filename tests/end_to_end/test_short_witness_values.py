"""Witness values read short: each is the decimal with the fewest significant digits of
its cell (the inputs that route the same way in every tree, within the bounds and the
feature's kind), 14.1 rather than 14.099999935267341, and it is that very number the
library replays. Checked on the JSON of the CLI and on the API's results, for XGBoost,
LightGBM and scikit-learn models, a pipeline with a StandardScaler (values in the
user's units), a max gap's pair and an audit's x2."""

from __future__ import annotations

import decimal
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.audit import NEAR_EDGE
from treesens.compiler.domain import cell_span
from treesens.compiler.encode import ensemble_structure
from treesens.tests.conftest import json_lines, treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
XGB_MODEL = EXAMPLES / "breast_cancer_xgb.json"
LGBM_MODEL = EXAMPLES / "diabetes_lgbm.txt"

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


def _digits(v: float) -> int:
    """Significant digits of the shortest repr of v (0 for zero)."""
    if v == 0:
        return 0
    return len(decimal.Decimal(repr(float(v))).normalize().as_tuple().digits)


def _fewest_digits(lo: float, hi: float, integral: bool) -> int | None:
    """The fewest significant digits of a decimal whose double lies in [lo, hi]."""
    if integral:
        lo = float(math.ceil(lo))
        if lo > hi:
            return None
    if lo <= 0 <= hi:
        return 0
    for p in range(1, 18):
        for way in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING):
            d = decimal.Context(prec=p, rounding=way).plus(decimal.Decimal(lo))
            if lo <= float(d) <= hi:
                return p
    return None


def _shown_span(lo: float, hi: float) -> tuple[float, float]:
    """A cell as a witness reads it: an unbounded side reaches as far from the other end
    as that end is from zero (at least 1)."""
    if math.isinf(lo) and math.isinf(hi):
        return -1.0, 1.0
    if math.isinf(lo):
        return hi - max(1.0, abs(hi)), hi
    if math.isinf(hi):
        return lo, lo + max(1.0, abs(lo))
    return lo, hi


def long_values(ens, x: dict) -> dict:
    """The witness values (by name) that are not the shortest decimal of their cell."""
    domains = ensemble_structure(ens).domains
    out = {}
    for f, name in enumerate(ens.feature_names):
        v, feat, dom = x[name], ens.features[f], domains[f]
        if dom.codes is not None or v is None:
            continue
        j = sum(1 for t in dom.thresholds if not ens.test_holds(float(v), t))
        span = cell_span(ens, feat, dom.thresholds, j)
        assert span is not None, (name, v)
        if _digits(v) != _fewest_digits(*_shown_span(*span), feat.integral):
            out[name] = v
    return out


def _inputs(ens, witness: dict) -> np.ndarray:
    """The two reported inputs, in the model's feature order."""
    names = ens.feature_names
    return np.array([[float(witness[c][n]) for n in names] for c in ("x1", "x2")])


def _cli_json(*args) -> dict:
    p = treesens_here(*args, "--json")
    assert p.returncode == 0, p.stderr
    (r,) = json_lines(p.stdout)
    assert r["status"] == "sensitive" and r["validated"], r
    return r


@pytest.fixture(scope="module")
def xgb_checked():
    return _cli_json("check", XGB_MODEL, "--vary", "mean_texture", "--gap", "0.2")


@pytest.fixture(scope="module")
def lgbm_checked():
    return _cli_json("check", LGBM_MODEL, "--vary", "bmi,ltg", "--gap", "0.1")


def test_an_xgboost_witness_in_json_is_the_shortest_decimal_of_each_cell(xgb_checked):
    ens = treesens.load_model(str(XGB_MODEL))
    for c in ("x1", "x2"):
        assert long_values(ens, xgb_checked["witness"][c]) == {}


def test_an_xgboost_witness_in_json_is_what_xgboost_replays(xgb_checked):
    ens = treesens.load_model(str(XGB_MODEL))
    booster = xgb.Booster()
    booster.load_model(str(XGB_MODEL))
    X = xgb.DMatrix(_inputs(ens, xgb_checked["witness"]), feature_names=ens.feature_names)
    p1 = booster.predict(X)
    reported = [xgb_checked["outputs"][c][1] for c in ("x1", "x2")]
    assert p1.tolist() == pytest.approx(reported, abs=1e-7)


def test_a_lightgbm_witness_in_json_is_the_shortest_decimal_of_each_cell(lgbm_checked):
    ens = treesens.load_model(str(LGBM_MODEL))
    for c in ("x1", "x2"):
        assert long_values(ens, lgbm_checked["witness"][c]) == {}


def test_a_lightgbm_witness_keeps_integer_features_integers(lgbm_checked):
    assert all(isinstance(lgbm_checked["witness"][c]["age"], int) for c in ("x1", "x2"))


def test_a_lightgbm_witness_in_json_is_what_lightgbm_replays(lgbm_checked):
    ens = treesens.load_model(str(LGBM_MODEL))
    booster = lgb.Booster(model_file=str(LGBM_MODEL))
    p1 = booster.predict(_inputs(ens, lgbm_checked["witness"]))
    reported = [lgbm_checked["outputs"][c][1] for c in ("x1", "x2")]
    assert p1.tolist() == pytest.approx(reported, abs=1e-12)


@pytest.fixture(scope="module")
def breast_cancer():
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer(as_frame=True)
    X = data.data.iloc[:, :6]
    X.columns = [c.replace(" ", "_") for c in X.columns]
    return X, data.target


@pytest.fixture(scope="module")
def forest(breast_cancer):
    from sklearn.ensemble import RandomForestClassifier

    X, y = breast_cancer
    return RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y)


def test_a_scikit_learn_witness_is_the_shortest_decimal_of_each_cell(forest, breast_cancer):
    X, _ = breast_cancer
    ens = treesens.load_model(forest, data=X)
    r = treesens.check(ens, vary=["mean_texture"], gap=0.1)
    assert (r.status, r.validated) == ("sensitive", True)
    for c in ("x1", "x2"):
        assert long_values(ens, r.witness[c]) == {}


def test_a_scikit_learn_witness_is_what_scikit_learn_replays(forest, breast_cancer):
    X, _ = breast_cancer
    ens = treesens.load_model(forest, data=X)
    r = treesens.check(ens, vary=["mean_texture"], gap=0.1)
    shown = pd.DataFrame(_inputs(ens, r.witness), columns=X.columns)
    p1 = forest.predict_proba(shown)[:, 1]
    assert p1.tolist() == [r.outputs[c][1] for c in ("x1", "x2")]


@pytest.fixture(scope="module")
def scaled_pipeline(breast_cancer):
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = breast_cancer
    gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    return make_pipeline(StandardScaler(), gb).fit(X, y)


def test_a_pipelines_witness_is_the_shortest_decimal_of_each_cell_in_the_users_units(
    scaled_pipeline, breast_cancer
):
    X, _ = breast_cancer
    ens = treesens.load_model(scaled_pipeline, data=X)
    r = treesens.check(ens, vary=["mean_texture"], gap=0.1)
    assert (r.status, r.validated) == ("sensitive", True)
    for c in ("x1", "x2"):
        assert long_values(ens, r.witness[c]) == {}


def test_a_pipelines_witness_is_what_the_pipeline_replays(scaled_pipeline, breast_cancer):
    X, _ = breast_cancer
    ens = treesens.load_model(scaled_pipeline, data=X)
    r = treesens.check(ens, vary=["mean_texture"], gap=0.1)
    shown = pd.DataFrame(_inputs(ens, r.witness), columns=X.columns)
    p1 = scaled_pipeline.predict_proba(shown)[:, 1]
    assert p1.tolist() == [r.outputs[c][1] for c in ("x1", "x2")]


def test_a_max_gap_pair_is_the_shortest_decimal_of_each_cell():
    ens = treesens.load_model(str(XGB_MODEL))
    r = treesens.max_gap(ens, vary=["mean_texture"], timeout=120)
    assert (r.status, r.validated) == ("sensitive", True)
    for c in ("x1", "x2"):
        assert long_values(ens, r.witness[c]) == {}


@pytest.fixture(scope="module")
def audited():
    data = EXAMPLES / "diabetes.csv"
    p = treesens_here(
        "audit", LGBM_MODEL, "--data", data, "--vary", "bmi,ltg", "--gap", "0.05", "--json"
    )
    assert p.returncode == 0, p.stderr
    flipped = [r for r in json_lines(p.stdout) if r["status"] == "sensitive"]
    assert flipped
    return flipped


def test_an_audits_x2_is_the_row_value_or_the_shortest_decimal_near_the_cell_end(audited):
    """x2 keeps the row's value where it may, else the fewest digits within NEAR_EDGE of
    the feature's scale from the end of x2's cell nearest the row (26.95, not
    26.950000000000003)."""
    ens = treesens.load_model(str(LGBM_MODEL))
    domains = ensemble_structure(ens).domains
    for r in audited:
        for name in ("bmi", "ltg"):
            f = ens.feature_names.index(name)
            feat, dom = ens.features[f], domains[f]
            own, v = r["witness"]["x1"][name], r["witness"]["x2"][name]
            if v == own:
                continue
            j = sum(1 for t in dom.thresholds if not ens.test_holds(v, t))
            lo, hi = cell_span(ens, feat, dom.thresholds, j)
            reach = NEAR_EDGE * (feat.ub - feat.lb)
            window = (lo, min(hi, lo + reach)) if own < lo else (max(lo, hi - reach), hi)
            assert window[0] <= v <= window[1]
            assert _digits(v) == _fewest_digits(*window, feat.integral), (name, v)


def test_an_audits_x2_is_what_lightgbm_replays(audited):
    ens = treesens.load_model(str(LGBM_MODEL))
    booster = lgb.Booster(model_file=str(LGBM_MODEL))
    X2 = np.array([[float(r["witness"]["x2"][n]) for n in ens.feature_names] for r in audited])
    p1 = booster.predict(X2)
    assert p1.tolist() == pytest.approx([r["outputs"]["x2"][1] for r in audited], abs=1e-12)
