"""Certificates of scikit-learn pipelines with an imputer (SimpleImputer + scaler on the
numbers, one-hot on a category, then a GB or RF model): an imputed input may be missing
(``missing: true`` in the domain), the certificate states each of its columns' image of
NaN, the checker confirms it with the pipeline's own transform and routes NaN where the
model sends that image; tampered copies are rejected and the brute force agrees."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import binary_gap_reached, cell_grid
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file
from treesens.verify.models_pipeline import read_pipeline
from treesens.verify.pair_space import goes_left

GAPS = (0.3, 0.4)


def _rows(n: int = 400) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue", "green"], n),
            "age": rng.uniform(20, 70, n),
            "income": rng.normal(50, 10, n),
        }
    )
    score = (df.age - 45) / 10 + 1.2 * (df.colour == "red") + (df.income - 50) / 10
    y = (score + rng.normal(size=n) * 0.5 > 0.5).astype(int).to_numpy()
    df.loc[rng.uniform(size=n) < 0.15, "age"] = np.nan
    return df, y


def write_imputed_pipeline(folder: Path, kind: str, fill: float | None = None) -> Path:
    """SimpleImputer (median) + StandardScaler on age and income, OneHotEncoder on
    colour, then a GradientBoostingClassifier (``kind`` "gb") or a RandomForestClassifier
    ("rf"); ``fill``: the imputer's fitted value for age, changed after the fit."""
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    df, y = _rows()
    model = (
        GradientBoostingClassifier(n_estimators=5, max_depth=2, learning_rate=0.5)
        if kind == "gb"
        else RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    )
    numbers = make_pipeline(SimpleImputer(strategy="median"), StandardScaler())
    ct = ColumnTransformer(
        [("num", numbers, ["age", "income"]), ("cat", OneHotEncoder(), ["colour"])]
    )
    pipe = Pipeline([("columns", ct), ("model", model)]).fit(df, y)
    if fill is not None:
        pipe.named_steps["columns"].named_transformers_["num"][0].statistics_[0] = fill
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{kind}-{fill}.skops"
    skops.io.dump(pipe, path)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("imputed")
    return {kind: write_imputed_pipeline(folder, kind) for kind in ("gb", "rf")}


@pytest.fixture(scope="module")
def forest(models):
    """The forest pipeline as treesens reads it (age and income may be missing)."""
    return treesens.load_model(str(models["rf"]))


@pytest.fixture(scope="module")
def certificate(models) -> Path:
    """The forest's certificate of "insensitive" about age at the smallest gap certified
    (its proof splits age's boxes into numbers and NaN)."""
    path = models["rf"]
    for gap in GAPS:
        out = path.parent / f"age-{gap}.json"
        r = treesens.check(str(path), vary=["age"], gap=gap, certificate=out)
        if r.status == "insensitive":
            assert r.proof.checked, r.proof.why_not
            return out
    raise AssertionError("no gap certified")


def _age_column(doc: dict) -> dict:
    return next(c for c in doc["maps"] if c["input"] == 1)


def test_an_imputed_pipelines_insensitive_answer_is_certified_and_verifies(certificate):
    p = treesens_here("verify", certificate)
    assert p.returncode == 0 and "VALID" in p.stdout, p.stdout + p.stderr
    assert "age may be missing" in p.stdout


def test_the_certificate_states_nans_image_and_that_the_input_may_be_missing(certificate):
    doc = json.loads(certificate.read_text())
    df, _ = _rows()
    median = df["age"].median()
    shift, scale = _age_column(doc)["map"]
    assert _age_column(doc)["nan"] == pytest.approx((median - shift) / scale)
    assert doc["question"]["domain"][1]["missing"] is True
    assert ["split", 1, "nan"] in doc["parts"][0]["proof"]


def test_the_checkers_pipeline_routes_nan_as_the_pipelines_predict(models, certificate):
    """A forest's P(class 1) from the checker's model (each tree walked with the rule it
    routes boxes with) equals the pipeline's predict_proba, NaN ages included."""
    import skops.io

    path = models["rf"]
    model = read_pipeline(str(path), json.loads(certificate.read_text())["maps"])
    df, _ = _rows()
    rows = df.head(60)
    pipe = skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    codes = {c: k for k, c in enumerate(["blue", "green", "red"])}
    got = []
    for colour, age, income in rows.itertuples(index=False):
        x = [float(codes[colour]), age, income]
        total = 0.0
        for t in model.trees:
            n = 0
            while t.feature[n] >= 0:
                n = t.left[n] if goes_left(model, t, n, x[t.feature[n]]) else t.right[n]
            total += t.value[n]
        got.append(total)
    assert rows["age"].isna().any()
    np.testing.assert_allclose(got, pipe.predict_proba(rows)[:, 1], atol=1e-9)


def test_the_certified_gap_is_one_the_brute_force_does_not_reach(forest, certificate):
    gap = json.loads(certificate.read_text())["question"]["claim"]["gap"]
    assert not binary_gap_reached(forest, "age", gap)


def test_a_gap_the_brute_force_reaches_is_not_certified(forest, certificate, tmp_path):
    reached = next(g for g in (0.3, 0.2, 0.1, 0.05) if binary_gap_reached(forest, "age", g))

    def reached_gap(doc):
        doc["question"]["claim"]["gap"] = reached

    assert not verify_file(tampered(certificate, tmp_path, reached_gap)).valid


def test_an_imputed_inputs_max_gap_bound_is_certified_above_the_brute_force(models, tmp_path):
    ens = treesens.load_model(str(models["gb"]))
    out = tmp_path / "mg.json"
    r = treesens.max_gap(ens, vary=["age"], certificate=out)
    assert r.proof.checked, r.proof.why_not
    X, ns, nv = cell_grid(ens, ["age"])
    assert np.isnan(X[:, 1]).any()
    p = ens.replayer.predict_proba(X)[:, 1].reshape(ns, nv)
    best = float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))
    assert best <= r.max_gap["upper"] + 1e-9 < r.proof.bound
    assert verify_file(out).valid


def test_a_certificate_with_nans_image_changed_is_rejected(certificate, tmp_path):
    def other_image(doc):
        _age_column(doc)["nan"] += 0.5

    verdict = verify_file(tampered(certificate, tmp_path, other_image))
    assert not verdict.valid and "image of a missing input" in verdict.message


def test_a_certificate_without_nans_image_is_rejected(certificate, tmp_path):
    """The domain still says age may be missing: the checker reads no NaN side for it."""

    def no_image(doc):
        del _age_column(doc)["nan"]

    verdict = verify_file(tampered(certificate, tmp_path, no_image))
    assert not verdict.valid and "missing values" in verdict.message


def test_an_imputed_pipeline_certificate_with_a_box_removed_is_rejected(certificate, tmp_path):
    assert not verify_file(tampered(certificate, tmp_path, drop_last_box)).valid


def test_a_pipeline_whose_imputed_value_changed_is_rejected(certificate, tmp_path):
    """The same pipeline with the imputer's fitted age moved (the hash updated): the
    transform no longer gives the stated image of NaN."""
    other = write_imputed_pipeline(tmp_path, "rf", fill=20.0)

    def name_other(doc):
        doc["model"]["file"] = str(other)
        doc["model"]["sha256"] = hashlib.sha256(other.read_bytes()).hexdigest()

    verdict = verify_file(tampered(certificate, tmp_path, name_other))
    assert not verdict.valid and "image of a missing input" in verdict.message
