"""A softmax model's margin gap g: the checker's rows ask raw_c - raw_o >= g as the claim
states it, not ln(exp(g)), which rounds an ulp off g for some g. On the pair that reaches
the largest margin gap exactly (replayed in the certificate: a near miss one ulp above),
that ulp decided the verdict: a true claim refused, a false one accepted."""

from __future__ import annotations

import math

import numpy as np
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.tests.regressions import harness as H
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

PAIRS = [((c1, c2), f) for f in ("f0", "f1") for c1 in range(3) for c2 in range(3) if c1 != c2]


@pytest.fixture(scope="module")
def largest_gaps(tmp_path_factory):
    """A small XGBoost softmax model of 3 classes, and the largest margin gap the library
    reaches per (classes, varied feature), enumerated over every cell."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(300, 3)).round(1)
    y = (X[:, 0] * 2 + X[:, 1] + rng.normal(0, 0.3, 300)).astype(int).clip(0, 2)
    model = tmp_path_factory.mktemp("softmax") / "model.json"
    clf = xgboost.XGBClassifier(n_estimators=4, max_depth=2, n_jobs=1)
    clf.fit(X, y).get_booster().save_model(model)
    ens = treesens.load_model(str(model))
    best = {}
    for classes, f in PAIRS:
        q = Query(vary=(f,), gap=Gap(0.0, "margin"), classes=classes)
        best[classes, f] = H.best_gap(ens, H.build_grid(ens, q.vary), q, "margin")
    return model, best


def _first(best: dict, rounds) -> tuple:
    """The first (classes, feature, largest gap) whose largest gap rounds as asked."""
    found = [(c, f, b) for (c, f), b in best.items() if b > 0 and rounds(b)]
    assert found, "no class pair's largest gap rounds so"
    return found[0]


def _certified_just_above(model, tmp_path, classes, f, best: float):
    out = tmp_path / "c.json"
    g = float(np.nextafter(best, math.inf))
    r = treesens.check(str(model), [f], margin_gap=g, classes=classes, certificate=out)
    assert r.status == "insensitive"
    return r, out


def test_a_margin_gap_an_ulp_above_the_largest_is_certified_where_ln_exp_rounds_below_it(
    largest_gaps, tmp_path
):
    model, best = largest_gaps
    up = lambda b: float(np.nextafter(b, math.inf))  # noqa: E731
    classes, f, b = _first(best, lambda b: math.log(math.exp(up(b))) <= b)
    r, out = _certified_just_above(model, tmp_path, classes, f, b)
    assert r.proof.checked and verify_file(out).valid


def test_a_margin_certificate_lowered_to_the_largest_gap_is_rejected_where_ln_exp_rounds_above(
    largest_gaps, tmp_path
):
    model, best = largest_gaps
    classes, f, b = _first(best, lambda b: math.log(math.exp(b)) > b)
    _, out = _certified_just_above(model, tmp_path, classes, f, b)

    def lower(doc):  # a pair reaches this gap: the claim is false
        doc["question"]["claim"]["gap"] = b

    verdict = verify_file(tampered(out, tmp_path, lower))
    assert not verdict.valid and "meet every row" in verdict.message
