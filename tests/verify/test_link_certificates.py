"""Certificates of regressors whose prediction is exp(raw score): XGBoost reg:gamma,
count:poisson and reg:tweedie, LightGBM poisson, gamma and tweedie, HistGradientBoosting
poisson and gamma, CatBoost Poisson and Tweedie. Their "no change of D or more" and a
max gap's largest-change bound are proved by ``link`` steps (docs/certificates.md,
"Regressors with a nonlinear link"): each box states R, the largest raw score of the
input whose prediction is the lower one, and S, the largest rise of the other's raw
score over it, and is closed when exp(R) (e^S - 1) < D, recomputed by the checker from
the model file, whose objective or loss names the link."""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.questions.certify import certify, certify_answer
from treesens.questions.query_build import make_query
from treesens.tests.oracle import cell_grid
from treesens.tests.verify.tampering import tampered
from treesens.verify.check import verify_file
from treesens.verify.models import read_model

MODELS = [
    ("xgboost", "reg:gamma"),
    ("xgboost", "count:poisson"),
    ("xgboost", "reg:tweedie"),
    ("lightgbm", "poisson"),
    ("lightgbm", "gamma"),
    ("lightgbm", "tweedie"),
    ("hgb", "poisson"),
    ("hgb", "gamma"),
    ("catboost", "Poisson"),
    ("catboost", "Tweedie:variance_power=1.5"),
]
ONE_PER_LIBRARY = [MODELS[0], MODELS[3], MODELS[7], MODELS[9]]
FEATURES = ["a", "b", "c"]
LIBRARY = {".json": "xgboost", ".txt": "lightgbm", ".skops": "sklearn", ".cbm": "catboost"}


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(0, 1, (300, 3)), columns=FEATURES)
    y = np.exp(0.3 + 1.2 * (X["b"] > 0.5) + 0.6 * (X["a"] > 0.3)) * rng.uniform(0.9, 1.1, 300)
    return X, y


def link_model(library: str, objective: str, folder: Path, seed: int = 0) -> Path:
    """A tiny regressor of the library with the objective (loss), which reads b."""
    X, y = _data(seed)
    name = f"{library}-{objective.split(':')[-1 if library == 'xgboost' else 0]}-{seed}"
    if library == "xgboost":
        import xgboost

        est = xgboost.XGBRegressor(n_estimators=3, max_depth=2, objective=objective)
        path = folder / f"{name}.json"
        est.fit(X, y).get_booster().save_model(path)
    elif library == "lightgbm":
        import lightgbm

        est = lightgbm.LGBMRegressor(
            n_estimators=3, num_leaves=4, objective=objective, min_child_samples=5, verbose=-1
        )
        path = folder / f"{name}.txt"
        est.fit(X, y).booster_.save_model(path)
    elif library == "hgb":
        import skops.io
        from sklearn.ensemble import HistGradientBoostingRegressor

        est = HistGradientBoostingRegressor(max_iter=3, max_depth=2, loss=objective)
        path = folder / f"{name}.skops"
        skops.io.dump(est.fit(X, y), path)
    else:
        import catboost

        est = catboost.CatBoostRegressor(
            iterations=3,
            depth=2,
            learning_rate=0.5,
            loss_function=objective,
            verbose=0,
            allow_writing_files=False,
        )
        path = folder / f"{name}.cbm"
        est.fit(X, y).save_model(str(path))
    return path


def library_predictions(path: Path, X: np.ndarray) -> np.ndarray:
    """The library's own predictions (exp of the raw score) of the rows X."""
    df = pd.DataFrame(X, columns=FEATURES)
    if path.suffix == ".json":
        import xgboost

        return xgboost.Booster(model_file=str(path)).predict(xgboost.DMatrix(df))
    if path.suffix == ".txt":
        import lightgbm

        return lightgbm.Booster(model_file=str(path)).predict(df)
    if path.suffix == ".cbm":
        import catboost

        return catboost.CatBoostRegressor().load_model(str(path)).predict(df)
    import skops.io

    est = skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    return est.predict(df)


def largest_change(ens, path: Path, vary: str = "b") -> float:
    """max |f(x2) - f(x1)| over pairs differing in ``vary``, by the library's predict at
    one point per threshold cell (a pair exists iff one exists on this grid)."""
    X, ns, nv = cell_grid(ens, [vary])
    pred = np.asarray(library_predictions(path, X), dtype=np.float64).reshape(ns, nv)
    return float((pred.max(axis=1) - pred.min(axis=1)).max())


class Case:
    """One model, its largest change by brute force, and its two certificates: of "no
    change of D" (D a little above the largest change) and of the max gap's bound."""

    def __init__(self, library: str, objective: str, folder: Path):
        self.library, self.objective = library, objective
        self.path = link_model(library, objective, folder)
        self.ens = treesens.load_model(str(self.path))
        self.largest = largest_change(self.ens, self.path)
        self.delta = 1.05 * self.largest
        self.change = folder / f"{self.path.stem}-change.json"
        q = make_query(["b"], delta=self.delta)
        self.change_done = certify(self.ens, q, self.change, self.path, 60)
        self.max_gap = folder / f"{self.path.stem}-max-gap.json"
        res = treesens.max_gap(self.ens, vary=["b"], timeout=60)
        self.max_gap_done = certify_answer(
            self.ens, make_query(["b"]), res, self.max_gap, str(self.path), 60
        )


_CASES: dict[tuple[str, str], Case] = {}


def _case(model: tuple[str, str], tmp_path_factory) -> Case:
    """The model's Case, built once for every test of the module."""
    if model not in _CASES:
        _CASES[model] = Case(*model, tmp_path_factory.mktemp("link"))
    return _CASES[model]


@pytest.fixture(scope="module", params=MODELS, ids=lambda m: f"{m[0]}-{m[1]}")
def case(request, tmp_path_factory) -> Case:
    return _case(request.param, tmp_path_factory)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("link-crafted")


def _claimed(certificate: Path) -> float:
    return float(json.loads(certificate.read_text())["question"]["claim"]["delta"])


def _link_steps(certificate: Path) -> list:
    doc = json.loads(certificate.read_text())
    return [s for p in doc["parts"] for s in p["proof"] if s[0] == "link"]


# ---- certified and verified ------------------------------------------------------------
def test_an_exp_link_regressors_model_file_is_read_with_its_link(case):
    model = read_model(str(case.path), LIBRARY[case.path.suffix])
    assert model.link == "exp" and model.task == "regressor"


def test_an_exp_link_regressors_raw_score_as_the_checker_reads_it_is_the_librarys(case):
    model = read_model(str(case.path), LIBRARY[case.path.suffix])
    X, _, _ = cell_grid(case.ens, ["b"])
    pred = np.asarray(library_predictions(case.path, X[:50]), dtype=np.float64)
    raw = np.array([_raw(model, x) for x in X[:50]])
    assert np.allclose(np.exp(raw), pred, rtol=1e-5)


def _raw(model, x: np.ndarray) -> float:
    total = model.offset
    for t in model.trees:
        n = 0
        while t.feature[n] >= 0:
            v = float(np.float32(x[t.feature[n]])) if model.float32 else float(x[t.feature[n]])
            th = t.threshold[n]
            n = t.left[n] if (v < th if model.test == "<" else v <= th) else t.right[n]
        total += t.value[n]
    return total


def test_an_exp_link_regressors_no_change_of_d_is_certified_and_verified(case):
    assert case.change_done.verified, case.change_done.message
    assert _link_steps(case.change)
    assert verify_file(case.change).valid


def test_an_exp_link_regressors_max_gap_bound_is_certified_and_verified(case):
    assert case.max_gap_done.verified, case.max_gap_done.message
    doc = json.loads(case.max_gap.read_text())
    assert doc["question"]["max_gap_upper"] and doc["parts"][0]["direction"] == "down"
    assert "a max gap's upper bound" in verify_file(case.max_gap).message


def test_an_exp_link_regressors_certified_claims_hold_by_brute_force(case):
    assert case.largest > 0.1  # the model reads b: the claims say something
    assert _claimed(case.change) > case.largest
    assert _claimed(case.max_gap) > case.largest


def test_the_max_gap_bound_certified_is_within_two_percent_of_the_largest_change(case):
    assert _claimed(case.max_gap) <= 1.02 * case.largest


def test_no_change_just_below_the_largest_gets_no_certificate(case, tmp_path):
    q = make_query(["b"], delta=0.999 * case.largest)
    done = certify(case.ens, q, tmp_path / "c.json", case.path, 60)
    assert not done.written and "could not rule out" in done.reason


# ---- tampered copies rejected -----------------------------------------------------------
TAMPERS = ["box removed", "R lowered", "S lowered", "smaller D"]


@pytest.fixture(scope="module", params=ONE_PER_LIBRARY, ids=lambda m: f"{m[0]}-{m[1]}")
def tamper_case(request, tmp_path_factory) -> Case:
    return _case(request.param, tmp_path_factory)


def _tamper(kind: str, largest: float):
    def change(doc: dict) -> None:
        proof = doc["parts"][0]["proof"]
        links = [i for i, s in enumerate(proof) if s[0] == "link"]
        top = max(links, key=lambda i: _value(proof[i][1]))  # the box nearest D
        if kind == "box removed":
            del proof[links[-1]]
        elif kind == "R lowered":
            proof[top][1] = _value(proof[top][1]) - 0.5
        elif kind == "S lowered":
            worst = max(links, key=lambda i: _value(proof[i][2]))
            proof[worst][2] = _value(proof[worst][2]) - 0.5
        else:  # a D the model reaches: the claim is false
            doc["question"]["claim"]["delta"] = 0.9 * largest

    return change


def _value(v) -> float:
    return float(v) if not isinstance(v, str) else float(v.replace("inf", "Infinity"))


@pytest.mark.parametrize("kind", TAMPERS)
def test_a_tampered_exp_link_certificate_is_rejected(tamper_case, kind, tmp_path):
    for cert in (tamper_case.change, tamper_case.max_gap):
        assert verify_file(cert).valid
        bad = tampered(cert, tmp_path, _tamper(kind, tamper_case.largest))
        shutil.copy(tamper_case.path, tmp_path / tamper_case.path.name)
        doc = json.loads(bad.read_text())
        doc["model"]["file"] = tamper_case.path.name
        bad.write_text(json.dumps(doc))
        assert not verify_file(bad).valid, kind


def test_an_exp_link_certificate_checked_against_another_model_is_rejected(tamper_case, tmp_path):
    other = link_model(tamper_case.library, tamper_case.objective, tmp_path, seed=1)
    verdict = verify_file(tamper_case.change, str(other))
    assert not verdict.valid and "not the model" in verdict.message


def test_an_exp_link_certificate_on_an_identity_model_file_is_rejected(tamper_case, tmp_path):
    """The link is the model file's: the same proof, restated for a model of the same
    library and features whose prediction is its raw score, is rejected."""
    library = tamper_case.library
    identity = {"xgboost": "reg:squarederror", "lightgbm": "regression"}
    identity.update({"hgb": "squared_error", "catboost": "RMSE"})
    other = link_model(library, identity[library], tmp_path)
    doc = json.loads(tamper_case.change.read_text())
    doc["model"]["file"] = str(other)
    doc["model"]["sha256"] = hashlib.sha256(other.read_bytes()).hexdigest()
    bad = tmp_path / "on-identity.json"
    bad.write_text(json.dumps(doc))
    verdict = verify_file(bad)
    assert not verdict.valid and "not exp(raw score)" in verdict.message


def test_an_identity_regressors_change_proof_on_an_exp_link_model_is_rejected(tmp_path):
    """A proof of rows (``prune`` steps on ``change``) says nothing of a prediction
    through exp: on a log-link model file it is rejected."""
    identity = link_model("xgboost", "reg:squarederror", tmp_path)
    ens = treesens.load_model(str(identity))
    cert = tmp_path / "identity.json"
    done = certify(ens, make_query(["b"], delta=100.0), cert, identity, 60)
    assert done.verified
    exp = link_model("xgboost", "reg:gamma", tmp_path)
    doc = json.loads(cert.read_text())
    doc["model"]["file"] = str(exp)
    doc["model"]["sha256"] = hashlib.sha256(exp.read_bytes()).hexdigest()
    cert.write_text(json.dumps(doc))
    verdict = verify_file(cert)
    assert not verdict.valid and "unknown step" in verdict.message


# ---- crafted false certificates: the rule and the direction ---------------------------
@pytest.fixture(scope="module")
def stump(folder) -> tuple[Path, dict]:
    """A one-split XGBoost reg:gamma model on b (raw o + v0 for b < t, o + v1 above,
    v1 > v0), and what the checker reads of it."""
    import xgboost

    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.uniform(0, 1, (200, 2)), columns=["a", "b"])
    y = np.where(X["b"] < 0.5, 1.0, 8.0)
    est = xgboost.XGBRegressor(
        n_estimators=1, max_depth=1, learning_rate=1.0, objective="reg:gamma", base_score=2.0
    )
    path = folder / "stump.json"
    est.fit(X, y).get_booster().save_model(path)
    model = read_model(str(path), "xgboost")
    (t,) = model.trees
    assert t.feature[0] == 1
    v = {"o": model.offset, "t": t.threshold[0], "low": t.value[t.left[0]]}
    v["high"] = t.value[t.right[0]]
    assert v["high"] - v["low"] > 0.5
    return path, v


def _stump_certificate(path: Path, v: dict, delta: float, direction: str, steps) -> dict:
    dom = {"lb": "-inf", "ub": "inf", "integer": False}
    return {
        "format": "treesens-certificate",
        "version": 2,
        "model": {
            "file": str(path),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "library": "xgboost",
        },
        "question": {
            "features": ["a", "b"],
            "vary": ["b"],
            "claim": {"kind": "change", "delta": delta, "direction": "either"},
            "domain": [dom, dom],
        },
        "columns": [[0, None], [1, 1], [1, 2]],
        "parts": [{"direction": direction, "proof": steps}],
    }


def _stump_steps(v: dict) -> list:
    """x1.b below t first (x1 the low leaf: R = o + low, S = high - low), then above
    (x1 the high leaf: R = o + high, S = 0): the boxes of direction up."""
    o, low, high = v["o"], v["low"], v["high"]
    pad = 1e-6
    return [
        ["split", 1, v["t"]],
        ["link", o + low + pad, high - low + pad],
        ["link", o + high + pad, pad],
    ]


def test_the_stump_certificate_verifies_just_above_its_largest_change(stump, folder):
    path, v = stump
    largest = math.exp(v["o"] + v["low"]) * math.expm1(v["high"] - v["low"])
    doc = _stump_certificate(path, v, largest * 1.001, "up", _stump_steps(v))
    (folder / "ok.json").write_text(json.dumps(doc))
    assert verify_file(folder / "ok.json").valid


def test_a_change_bound_of_exp_r_times_s_is_not_accepted(stump, folder):
    """exp(R) S is below the change exp(R) (e^S - 1) that the stump's pair (b below t,
    then above) reaches: a claim of a D between the two is false, and rejected."""
    path, v = stump
    r, s = v["o"] + v["low"], v["high"] - v["low"]
    delta = math.exp(r) * (s + (math.expm1(s) - s) / 2)
    assert math.exp(r) * s < delta < math.exp(r) * math.expm1(s)
    X = pd.DataFrame([[0.0, 0.0], [0.0, 1.0]], columns=["a", "b"])
    import xgboost

    pred = xgboost.Booster(model_file=str(path)).predict(xgboost.DMatrix(X))
    assert pred[1] - pred[0] >= delta  # the claim is false
    doc = _stump_certificate(path, v, delta, "up", _stump_steps(v))
    (folder / "rs.json").write_text(json.dumps(doc))
    verdict = verify_file(folder / "rs.json")
    assert not verdict.valid and "exp(R) (e^S - 1)" in verdict.message


def test_bounds_of_the_other_direction_are_not_accepted(stump, folder):
    """The boxes of direction up (x1 the lower prediction) stated for a part of direction
    down: with x1 above t and x2 below, x1's prediction exceeds x2's by exp(o + low)
    (e^(high - low) - 1), which the claim says no pair reaches; rejected."""
    path, v = stump
    largest = math.exp(v["o"] + v["low"]) * math.expm1(v["high"] - v["low"])
    doc = _stump_certificate(path, v, largest * 0.5, "down", _stump_steps(v))
    (folder / "down.json").write_text(json.dumps(doc))
    verdict = verify_file(folder / "down.json")
    assert not verdict.valid and "above the" in verdict.message


def test_an_exp_link_certificate_over_category_codes_is_version_3_and_verified(tmp_path):
    """A LightGBM poisson model with a categorical feature: varying it, the boxes hold
    runs of its codes (version 3) and close by the link rule."""
    import lightgbm

    X, y = _data()
    X["c"] = pd.Categorical(np.random.default_rng(1).integers(0, 4, len(X)))
    y = y * np.exp(2.0 * X["c"].cat.codes.isin([1, 3]))
    est = lightgbm.LGBMRegressor(
        n_estimators=3, num_leaves=6, objective="poisson", min_child_samples=5, verbose=-1
    )
    path = tmp_path / "coded.txt"
    est.fit(X, y).booster_.save_model(path)
    ens = treesens.load_model(str(path))
    res = treesens.max_gap(ens, vary=["c"], timeout=60)
    cert = tmp_path / "coded.json"
    done = certify(ens, make_query(["c"], delta=1.05 * res.max_gap["upper"]), cert, path, 60)
    assert done.verified, done.message
    doc = json.loads(cert.read_text())
    assert doc["version"] == 3 and doc["question"]["domain"][2]["codes"] == [0, 1, 2, 3]
    assert res.max_gap["upper"] > 1.0  # the model reads c
    assert any(isinstance(s[2], dict) for s in doc["parts"][0]["proof"] if s[0] == "split")
