"""End to end on the benchmark models, through the ``treesens`` command: the JSON line,
the witness, and XGBoost's own predict on the witness."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.tests.conftest import REQUIRED_FIELDS, json_lines, run_treesens

xgb = pytest.importorskip("xgboost")

pytestmark = pytest.mark.shared

TIMEOUT = "300"


def _check(model, vary: str, *extra) -> dict:
    p = run_treesens("check", model, "--vary", vary, "--json", "--timeout", TIMEOUT, *extra)
    assert p.returncode == 0, p.stderr
    rows = json_lines(p.stdout)
    assert len(rows) == 1, p.stdout
    return rows[0]


def _xgb_proba_of_witness(model, r: dict) -> np.ndarray:
    booster = xgb.Booster(model_file=str(model))
    names = booster.feature_names
    X = np.array([[float(r["witness"][c][n]) for n in names] for c in ("x1", "x2")])
    return booster.predict(xgb.DMatrix(X, feature_names=names, feature_types=booster.feature_types))


def _assert_valid_witness(model, r: dict, vary: set[str], gap: float) -> None:
    assert r["validated"] is True and r["error"] is None
    x1, x2 = r["witness"]["x1"], r["witness"]["x2"]
    assert set(x1) == set(x2)
    for name in x1:
        if name not in vary:
            assert x1[name] == x2[name], f"witness differs outside the varied features: {name}"
    p = _xgb_proba_of_witness(model, r)
    assert p[0] >= 0.5 + gap and p[1] <= 0.5 - gap, p
    assert np.allclose(p, [r["outputs"]["x1"][1], r["outputs"]["x2"][1]], atol=1e-6)


@pytest.fixture(scope="module")
def adult_sex(shared_dir):
    model = shared_dir / "adult" / "adult_t200_d5.json"
    return model, _check(model, "sex", "--gap", "0.2")


def test_adult_sex_prints_one_json_line_with_the_spec_fields(adult_sex):
    _, r = adult_sex
    for key in REQUIRED_FIELDS:
        assert key in r, key
    assert r["features"] == ["sex"] and r["gap"] == 0.2 and r["backend"] == "cpsat"


def test_adult_is_sensitive_to_sex_at_gap_0_2(adult_sex):
    _, r = adult_sex
    assert r["status"] == "sensitive", r


def test_adult_sex_witness_replays_in_xgboost(adult_sex):
    model, r = adult_sex
    _assert_valid_witness(model, r, {"sex"}, 0.2)


# churn: one feature found quickly (sensitive), one proved insensitive
@pytest.mark.parametrize(
    "feature,expected", [("tenure", "sensitive"), ("PhoneService", "insensitive")]
)
def test_churn_single_feature_is_answered(shared_dir, feature, expected):
    model = shared_dir / "churn" / "churn_t200_d5.json"
    r = _check(model, feature, "--gap", "0.2")
    assert r["status"] == expected, r
    if expected == "sensitive":
        _assert_valid_witness(model, r, {feature}, 0.2)
    else:
        assert r["witness"] is None and r["outputs"] is None


@pytest.mark.slow
def test_churn_every_single_feature_is_answered(shared_dir):
    model = shared_dir / "churn" / "churn_t200_d5.json"
    names = xgb.Booster(model_file=str(model)).feature_names
    for name in names:
        r = _check(model, name, "--gap", "0.2")
        assert r["status"] in ("sensitive", "insensitive"), (
            name,
            r["status"],
            r["error"],
            r.get("message"),
        )
        if r["status"] == "sensitive":
            _assert_valid_witness(model, r, {name}, 0.2)


@pytest.mark.parametrize(
    "model,vary",
    [("adult/adult_t2_d2.json", "f9"), ("chen2019/breast_cancer_unrobust/0004.json", "f2")],
)
def test_kant_baseline_and_no_passes_give_the_default_status(shared_dir, model, vary):
    path = shared_dir / model
    default = _check(path, vary, "--gap", "0.1")["status"]
    assert default in ("sensitive", "insensitive")
    assert _check(path, vary, "--gap", "0.1", "--baseline", "kant")["status"] == default
    assert _check(path, vary, "--gap", "0.1", "--passes", "none")["status"] == default


def test_chen2019_dump_witness_replays_in_xgboost_on_the_resaved_model(shared_dir):
    dump = shared_dir / "chen2019" / "breast_cancer_unrobust" / "0004.json"
    r = _check(dump, "f2", "--gap", "0.1")
    assert r["status"] == "sensitive", r
    booster = xgb.Booster(model_file=str(dump.with_name("0004.resaved.json")))
    n = int(booster.num_features())
    X = np.zeros((2, n))
    for c, row in enumerate(("x1", "x2")):
        for name, v in r["witness"][row].items():
            X[c, int(name.removeprefix("f"))] = v
    p = booster.predict(xgb.DMatrix(X))
    assert p[0] >= 0.6 and p[1] <= 0.4, p
