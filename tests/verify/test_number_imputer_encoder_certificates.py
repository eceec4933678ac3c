"""A SimpleImputer of a number (missing_values=-1) before an encoder: the encoder reads its
input at the stated categories alone, each image confirmed by the pipeline's transform, so
the checker reads the branch, and a certificate about that input, or another, verifies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import binary_gap_reached
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

GAPS = (0.2, 0.3, 0.45)


def write_number_imputer_pipeline(folder: Path) -> Path:
    """colour (codes 1-3, -1 where unknown: imputed by the most frequent) through an
    OrdinalEncoder, size through a StandardScaler, then a GradientBoostingClassifier."""
    import skops.io
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import OrdinalEncoder, StandardScaler

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"colour": rng.choice([-1, 1, 2, 3], 400), "size": rng.normal(size=400)})
    y = ((df.colour == 2) ^ (df["size"] > 0)).astype(int)
    unknown = SimpleImputer(missing_values=-1, strategy="most_frequent")
    ct = ColumnTransformer(
        [
            ("colour", make_pipeline(unknown, OrdinalEncoder()), ["colour"]),
            ("size", StandardScaler(), ["size"]),
        ]
    )
    model = GradientBoostingClassifier(n_estimators=5, max_depth=2, learning_rate=0.5)
    pipe = Pipeline([("columns", ct), ("model", model)]).fit(df, y)
    path = folder / "number-imputer.skops"
    skops.io.dump(pipe, path)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return write_number_imputer_pipeline(tmp_path_factory.mktemp("number-imputer"))


def _certificate(model: Path, feature: str) -> Path:
    """The certificate of "insensitive" about ``feature`` at the smallest gap of GAPS."""
    for gap in GAPS:
        out = model.parent / f"{feature}-{gap}.json"
        r = treesens.check(str(model), vary=[feature], gap=gap, certificate=out)
        if r.status == "insensitive":
            assert r.proof.checked, r.proof.why_not
            return out
    raise AssertionError(f"no gap certified for {feature}")


@pytest.mark.parametrize("feature", ["colour", "size"])
def test_a_certificate_through_an_imputer_of_a_number_before_an_encoder_verifies(model, feature):
    p = treesens_here("verify", _certificate(model, feature))
    assert p.returncode == 0 and "VALID" in p.stdout, p.stdout + p.stderr


def test_the_certified_gap_is_one_the_brute_force_does_not_reach(model):
    gap = json.loads(_certificate(model, "colour").read_text())["question"]["claim"]["gap"]
    assert not binary_gap_reached(treesens.load_model(str(model)), "colour", gap)


def test_a_claimed_gap_the_brute_force_reaches_is_rejected(model, tmp_path):
    ens = treesens.load_model(str(model))
    reached = next(g for g in (0.2, 0.1, 0.05, 0.01) if binary_gap_reached(ens, "colour", g))

    def reached_gap(doc):
        doc["question"]["claim"]["gap"] = reached

    certificate = _certificate(model, "colour")
    assert not verify_file(tampered(certificate, tmp_path, reached_gap)).valid
