"""A domain bound at a split's edge is part of the claim down to the last value the
library reads: a certificate whose claim holds only because the varied feature stops
at the last value a split sends one way (its upper bound at the last value of the
"yes" side, or its lower bound at the first of the "no" side), edited to let in the
nearest value the split sends the other way (one float32 or double step, as the
library's cast and test read it), is rejected wherever brute force with the library's
own scores finds the edited claim false. Each library's reading of a bound (XGBoost's and scikit-learn's float32 cast,
LightGBM's and HistGradientBoosting's doubles, CatBoost's float32 borders, ONNX's
float input) is checked so."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.oracle import feature_thresholds
from treesens.tests.verify.claims_oracle import supremum, tiny_model
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

VARY = ["b"]
KINDS = ["xgboost", "lightgbm", "sklearn", "hgb", "catboost", "onnx"]


def _edges(ens, t: float) -> tuple[float, float]:
    """The last value the split at ``t`` sends to its "yes" side and the first it sends
    to its "no" side, as the library casts and compares a value."""
    t32 = np.float32(t)
    near = {
        t,
        float(np.nextafter(t, -math.inf)),
        float(np.nextafter(t, math.inf)),
        float(t32),
        float(np.nextafter(t32, np.float32(-np.inf))),
        float(np.nextafter(t32, np.float32(np.inf))),
    }
    last = max(v for v in near if ens.test_holds(v, t))
    first = min(v for v in near if not ens.test_holds(v, t))
    return last, first


def _bounded(ens, end: str, value: float):
    """The model with the varied feature's domain's ``end`` ("lb" or "ub") at ``value``."""
    f = [x.name for x in ens.features].index(VARY[0])
    features = list(ens.features)
    features[f] = replace(features[f], **{end: value})
    return ens.with_features(tuple(features))


def _edge_case(path: Path, end: str):
    """(model read, the bound, the bound widened, value): a threshold of b where the gap
    brute force finds with b's ``end`` at the split's nearest value past it exceeds the
    one with b's ``end`` at its edge, and a gap between the two."""
    ens = treesens.load_model(str(path))
    for t in feature_thresholds(ens)[1]:
        last, first = _edges(ens, t)
        bound, widened = (last, first) if end == "ub" else (first, last)
        inside = supremum(_bounded(ens, end, bound), path, VARY, "prob")
        past = supremum(_bounded(ens, end, widened), path, VARY, "prob")
        if past > max(inside, 0.0) + 1e-6:
            return ens, bound, widened, (max(inside, 0.0) + past) / 2
    pytest.skip(f"no threshold of b whose edge changes the largest gap ({end})")


CASES = [(kind, end) for kind in KINDS for end in ("ub", "lb")]


@pytest.fixture(scope="module")
def edge_certificates(tmp_path_factory):
    """(kind, end) -> (certificate, the bound widened, value, the model read, its file):
    a true certificate of b's domain ending at a split's edge."""
    folder = tmp_path_factory.mktemp("edges")
    models = {kind: tiny_model(f"{kind}-binary", folder) for kind in KINDS}  # written once:
    out = {}  # a .skops or .cbm file written again has other bytes
    for kind, end in CASES:
        path = models[kind]
        ens, bound, widened, value = _edge_case(path, end)
        certificate = folder / f"{kind}-{end}.json"
        q = make_query(VARY, gap=value)
        done = certify(_bounded(ens, end, bound), q, certificate, path, 60)
        assert done.written and done.verified, done.message
        out[kind, end] = (certificate, widened, value, ens, path)
    return out


@pytest.mark.parametrize("kind,end", CASES)
def test_a_bound_at_a_splits_edge_is_certified(edge_certificates, kind, end):
    certificate, _, _, _, _ = edge_certificates[kind, end]
    assert verify_file(certificate).valid


@pytest.mark.parametrize("kind,end", CASES)
def test_a_bound_moved_to_the_nearest_value_past_the_split_is_rejected(
    edge_certificates, kind, end, tmp_path
):
    certificate, widened, value, ens, path = edge_certificates[kind, end]
    # the edited claim is false: brute force finds a pair at the gap
    assert supremum(_bounded(ens, end, widened), path, VARY, "prob") > value

    def widen(doc: dict) -> None:
        q = doc["question"]
        q["domain"][q["features"].index(VARY[0])][end] = widened

    assert not verify_file(tampered(certificate, tmp_path, widen)).valid
