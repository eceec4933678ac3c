"""A certificate's claim over a categorical feature of undeclared categories (XGBoost and
LightGBM models of an array, codes 0..7 in training): the domain's unlisted code r stands
for every whole number no split lists, as both libraries route every such code alike
(past their category bitsets, past 2^24 and 2^31 too), so the claim covers the codes the
answer speaks of; a max gap's certified bound lies above the largest gap the library's
predict gives over codes past the listed ones, and a copy stating r where it cannot stand
for them is rejected."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, Query
from treesens.questions.certify import certify_answer
from treesens.questions.max_gap import max_gap_query
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

KINDS = ["xgboost", "lightgbm"]
NAME = {"xgboost": "f0", "lightgbm": "Column_0"}
# codes no training row holds: past the bitsets, past float32's whole numbers and int32
PAST = [8, 9, 31, 32, 64, 255, 256, 1000, 2**24 - 1, 2**24 + 1, 2**31 - 1, 2**31, 3e9, 1e12]
X2 = np.linspace(-0.1, 1.1, 121)  # the numeric feature, across its thresholds


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    import lightgbm
    import xgboost

    folder = tmp_path_factory.mktemp("unlisted")
    rng = np.random.default_rng(0)
    c, x = rng.integers(0, 8, 1500).astype(float), rng.random(1500)
    y = (0.4 * np.isin(c, [1, 4]) + x + rng.normal(0, 0.1, 1500) > 0.8).astype(int)
    X = np.c_[c, x]
    params = {"objective": "binary", "verbose": -1, "num_leaves": 6, "learning_rate": 0.5}
    params |= {"min_data_per_group": 5, "cat_smooth": 1}
    data = lightgbm.Dataset(X, y, categorical_feature=[0])
    lightgbm.train(params, data, 8).save_model(folder / "l.txt")
    d = xgboost.DMatrix(X, y, feature_types=["c", "q"], enable_categorical=True)
    xgb_params = {"objective": "binary:logistic", "max_depth": 3, "max_cat_to_onehot": 1}
    xgboost.train(xgb_params | {"eta": 0.5}, d, 8).save_model(folder / "x.json")
    return {"xgboost": folder / "x.json", "lightgbm": folder / "l.txt"}


def _proba(path: Path, codes, x: float) -> np.ndarray:
    """The library's own P(class 1) of rows (code, x)."""
    rows = np.array([[float(c), x] for c in codes])
    if path.suffix == ".json":
        import xgboost

        d = xgboost.DMatrix(rows, feature_types=["c", "q"], enable_categorical=True)
        return xgboost.Booster(model_file=str(path)).predict(d)
    import lightgbm

    return lightgbm.Booster(model_file=str(path)).predict(rows)


@pytest.fixture(scope="module")
def certified(models, tmp_path_factory) -> dict[str, tuple[Path, float]]:
    """Per library, the max gap of f0 and its certificate (verified when written)."""
    folder, out = tmp_path_factory.mktemp("unlisted_mg"), {}
    for kind in KINDS:
        path = folder / f"{kind}.json"
        r = treesens.max_gap(str(models[kind]), vary=[NAME[kind]], certificate=path)
        assert r.proof.checked, r.proof
        out[kind] = (path, float(r.max_gap["upper"]))
    return out


def _f0(doc: dict) -> dict:
    return doc["question"]["domain"][0]


@pytest.mark.parametrize("kind", KINDS)
def test_the_library_routes_every_code_its_splits_do_not_list_as_the_unlisted_code(
    kind, models, certified
):
    f0 = _f0(json.loads(certified[kind][0].read_text()))
    r = f0["unlisted"]
    for x in X2:
        p = _proba(models[kind], [r, *PAST], x)
        np.testing.assert_array_equal(p, np.full(len(p), p[0]))


@pytest.mark.parametrize("kind", KINDS)
def test_the_verdict_claims_every_whole_code_no_split_lists(kind, certified):
    path, _ = certified[kind]
    f0 = _f0(json.loads(path.read_text()))
    verdict = verify_file(path)
    assert verdict.valid, verdict.message
    listed = ", ".join(str(c) for c in f0["codes"] if c != f0["unlisted"])
    said = f"takes the codes {listed}, and as {f0['unlisted']} every other whole number in [0, inf]"
    assert said in verdict.message
    assert verdict.domain[0]["unlisted"] == f0["unlisted"]


@pytest.mark.parametrize("kind", KINDS)
def test_the_certified_bound_lies_above_every_pair_of_codes_past_the_listed_ones(
    kind, models, certified
):
    """Brute force over the codes 0..7 and PAST, x shared: the largest
    min(P(x1) - 0.5, 0.5 - P(x2)) the library's predict gives."""
    codes = [*range(8), *PAST]
    best = max(
        min(p.max() - 0.5, 0.5 - p.min()) for p in (_proba(models[kind], codes, x) for x in X2)
    )
    assert best <= certified[kind][1]


def test_an_input_s_bound_keeps_the_unlisted_code_for_the_whole_numbers_within_it(
    models, certified, tmp_path
):
    """x1.f0 in [r, 20], r the unlisted code: x1's codes are those within, r among them,
    which stands for the whole numbers of [r, 20] no split lists."""
    shared = _f0(json.loads(certified["lightgbm"][0].read_text()))
    r = shared["unlisted"]
    ens = treesens.load_model(str(models["lightgbm"]))
    bound = FeatureBound("Column_0", r, 20, (1,))
    q = Query(vary=("Column_0",), bounds=(bound,), plan=Plan(timeout=30.0))
    out = tmp_path / "c.json"
    done = certify_answer(ens, q, max_gap_query(ens, q), out, models["lightgbm"], 60.0)
    assert done.verified, done.message
    x1 = _f0(json.loads(out.read_text()))["x1"]
    assert (x1["codes"], x1["unlisted"]) == ([c for c in shared["codes"] if c >= r], r)
    assert f"as {r} every other whole number in [{r}, 20]" in verify_file(out).message


def test_a_copy_stating_a_listed_code_as_unlisted_is_rejected(certified, tmp_path):
    def listed(doc):
        _f0(doc)["unlisted"] = next(c for c in _f0(doc)["codes"] if c != _f0(doc)["unlisted"])

    verdict = verify_file(tampered(certified["lightgbm"][0], tmp_path, listed))
    assert not verdict.valid and "lists its unlisted code" in verdict.message


def test_a_copy_stating_an_unlisted_code_outside_its_codes_is_rejected(certified, tmp_path):
    def outside(doc):
        _f0(doc)["unlisted"] = 99

    verdict = verify_file(tampered(certified["lightgbm"][0], tmp_path, outside))
    assert not verdict.valid and "one of its codes" in verdict.message


def test_a_copy_stating_an_unlisted_code_of_a_feature_split_at_thresholds_is_rejected(
    certified, tmp_path
):
    def numeric(doc):
        doc["question"]["domain"][1] |= {"integer": True, "codes": [0, 1], "unlisted": 1}

    verdict = verify_file(tampered(certified["xgboost"][0], tmp_path, numeric))
    assert not verdict.valid and "numeric" in verdict.message
