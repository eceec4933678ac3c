"""A regressor's change of features no tree splits on within their bounds: x1 and x2
reach the same leaf in every tree, so the library predicts both alike. Its certificate
is one box closed by the ``alike`` step (verify/alike.py), which the checker verifies
from the trees: every split on a varied feature it reaches lies outside the bounds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.tests.verify.tampering import MODEL, tampered, worst_symmetry_certificate
from treesens.verify import verify_file

xgb = pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A house-price regressor (float32 sums of about 2e5) whose trees split on f0 and
    on f1 within [-3, 3] only, saved with details bounding f1 to [5, 6]."""
    out = tmp_path_factory.mktemp("alike")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3)).clip(-3.0, 3.0)
    y = 2e5 + 5e4 * X[:, 0] + 2e4 * np.sin(3 * X[:, 1])
    X[:, 2] = 0.0  # f2 is left unused by the training
    est = xgb.XGBRegressor(n_estimators=20, max_depth=3, nthread=1).fit(X, y)
    est.save_model(out / "prices.json")
    (out / "details.csv").write_text("feature,name,lb,ub\n0,f0,,\n1,f1,5,6\n2,f2,,\n")
    return out


def _certified(folder: Path, vary: str, name: str, **kw) -> Path:
    out = folder / name
    r = treesens.check(
        str(folder / "prices.json"), vary=[vary], delta=0.01, certificate=out, timeout=10, **kw
    )
    assert r.status == "insensitive" and r.proof.checked, (r.status, r.proof)
    return out


@pytest.fixture(scope="module")
def unused(folder) -> Path:
    """The certificate that no change of f2 (no tree splits on it) moves the price."""
    return _certified(folder, "f2", "unused.json")


@pytest.fixture(scope="module")
def bounded(folder) -> Path:
    """The certificate that no change of f1 within [5, 6] moves the price."""
    return _certified(folder, "f1", "bounded.json", details=str(folder / "details.csv"))


def test_a_change_of_a_feature_no_tree_splits_on_is_certified(unused):
    assert verify_file(unused).valid


def test_its_proof_is_one_alike_step_naming_the_feature_and_its_bounds(unused):
    (part,) = json.loads(unused.read_text())["parts"]
    assert part["proof"] == [["alike", [2], [["-inf", "inf"]]]]


def test_treesens_verify_counts_it_one_box(unused):
    assert verify_file(unused).boxes == 1


def test_a_feature_split_only_outside_its_bounds_is_certified_alike(bounded):
    (part,) = json.loads(bounded.read_text())["parts"]
    assert part["proof"] == [["alike", [1], [[5.0, 6.0]]]]
    assert verify_file(bounded).valid


def _bounds_of_f1(lb: float, ub: float, step_too: bool = True):
    """f1's domain set to [lb, ub], and the alike step's bounds with it."""

    def change(doc: dict) -> None:
        doc["question"]["domain"][1].update(lb=lb, ub=ub)
        if step_too:
            doc["parts"][0]["proof"][0][2] = [[lb, ub]]

    return change


def test_a_domain_widened_over_a_split_is_refused(bounded, tmp_path):
    verdict = verify_file(tampered(bounded, tmp_path, _bounds_of_f1(-3.0, 6.0)))
    assert not verdict.valid
    assert "splits 'f1'" in verdict.message and "within its domain [-3, 6]" in verdict.message


def test_a_step_stating_bounds_other_than_the_domain_s_is_refused(bounded, tmp_path):
    def change(doc: dict) -> None:
        doc["parts"][0]["proof"][0][2] = [[5.0, 7.0]]

    verdict = verify_file(tampered(bounded, tmp_path, change))
    assert not verdict.valid
    assert "it states the bounds [5.0, 7.0] of 'f1', and the domain [5, 6]" in verdict.message


def test_a_domain_widened_without_its_step_is_refused(bounded, tmp_path):
    verdict = verify_file(tampered(bounded, tmp_path, _bounds_of_f1(-3.0, 6.0, step_too=False)))
    assert not verdict.valid and "it states the bounds" in verdict.message


def test_a_step_naming_other_features_than_the_varied_ones_is_refused(unused, tmp_path):
    def change(doc: dict) -> None:
        doc["parts"][0]["proof"][0][1] = [1]

    verdict = verify_file(tampered(unused, tmp_path, change))
    assert not verdict.valid and "are not the varied ones [2]" in verdict.message


def test_a_step_naming_a_feature_as_a_float_is_refused(unused, tmp_path):
    def change(doc: dict) -> None:
        doc["parts"][0]["proof"][0][1] = [2.0]

    verdict = verify_file(tampered(unused, tmp_path, change))
    assert not verdict.valid and "are not the varied ones" in verdict.message


def _alike_step_of_worst_symmetry(doc: dict) -> None:
    f = doc["question"]["features"].index("worst_symmetry")
    bounds = [[doc["question"]["domain"][f]["lb"], doc["question"]["domain"][f]["ub"]]]
    doc["parts"][0]["proof"] = [["alike", [f], bounds]]


def test_an_alike_step_of_a_classifier_s_gap_on_a_feature_a_tree_splits_is_refused(tmp_path):
    certificate = worst_symmetry_certificate(tmp_path)
    assert json.loads(certificate.read_text())["question"]["vary"] == ["worst_symmetry"]
    verdict = verify_file(tampered(certificate, tmp_path, _alike_step_of_worst_symmetry))
    assert not verdict.valid and "splits 'worst_symmetry'" in verdict.message


@pytest.fixture(scope="module")
def radius(tmp_path_factory) -> Path:
    """The shipped breast-cancer model's certificate of its max gap of mean_radius, which
    no tree splits on: 0, certified as no pair reaching a gap of 1e-06."""
    out = tmp_path_factory.mktemp("radius") / "radius.json"
    r = treesens.max_gap(str(MODEL), vary=["mean_radius"], certificate=out, timeout=60)
    assert r.max_gap["upper"] == 0.0 and r.proof.checked, (r.max_gap, r.proof)
    return out


def test_a_classifier_s_max_gap_of_0_is_certified_by_one_alike_step(radius):
    (part,) = json.loads(radius.read_text())["parts"]
    assert part["proof"][0][0] == "alike" and len(part["proof"]) == 1
    assert verify_file(radius).valid


def test_an_alike_step_proves_no_classifier_s_gap_of_0(radius, tmp_path):
    def change(doc: dict) -> None:
        doc["question"]["claim"]["gap"] = 0.0

    verdict = verify_file(tampered(radius, tmp_path, change))
    assert not verdict.valid and "an alike step rules out" in verdict.message


def test_a_change_through_the_exp_link_of_a_feature_no_tree_splits_on_is_certified(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 3))
    y = rng.poisson(np.exp(8 + 0.5 * X[:, 0] + 0.3 * np.sin(3 * X[:, 1]))).astype(float)
    X[:, 2] = 0.0
    est = xgb.XGBRegressor(n_estimators=20, max_depth=3, objective="count:poisson", nthread=1)
    est.fit(X, y).save_model(tmp_path / "counts.json")
    out = tmp_path / "c.json"
    r = treesens.check(
        str(tmp_path / "counts.json"), vary=["f2"], delta=0.1, certificate=out, timeout=10
    )
    assert r.status == "insensitive" and r.proof.checked, (r.status, r.proof)
    assert json.loads(out.read_text())["parts"][0]["proof"][0][0] == "alike"


def _below_every_split(missing: bool):
    """f1's domain set to [-10, -5], below every split on it (all of it goes left), NaN
    one of its values where ``missing`` (XGBoost sends it right, the trees' default)."""

    def change(doc: dict) -> None:
        _bounds_of_f1(-10.0, -5.0)(doc)
        if missing:
            doc["version"] = 3
            doc["question"]["domain"][1]["missing"] = True

    return change


def test_a_domain_below_every_split_reads_alike(bounded, tmp_path):
    assert verify_file(tampered(bounded, tmp_path, _below_every_split(False))).valid


def test_a_missing_value_sent_the_other_way_than_the_numbers_is_refused(bounded, tmp_path):
    verdict = verify_file(tampered(bounded, tmp_path, _below_every_split(True)))
    assert not verdict.valid and "splits 'f1'" in verdict.message
