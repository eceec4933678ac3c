"""Certificates of every claim beyond a binary probability gap (format version 2): a
binary margin gap, a multiclass gap between two classes or "any", a regressor's change,
and a max gap's upper bound on each. Each is accepted by the independent checker on tiny
models of every library, rejected when tampered with, and certified only when
enumeration with the library's own scores (tests/verify/claims_oracle.py) agrees that the
claim holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import treesens
from treesens.questions.certify import certified_bound, certify, certify_answer
from treesens.questions.query_build import make_query
from treesens.tests.verify.claims_oracle import supremum, tiny_model
from treesens.tests.verify.tampering import tampered
from treesens.verify import CertificateError, verify_file

VARY = ["b"]  # a feature every tiny model reads, with a clear effect
# the formats whose readers have a module of their own in the checker (verify/models_*.py)
OTHER_FORMATS = ["hgb", "catboost", "onnx", "onnxforest", "pipeline"]
# per claim: the models it is asked of, the query's keywords at value v, the oracle's
# measure and classes
CLAIMS = {
    "margin": (
        ["xgboost-binary", "lightgbm-binary", "sklearn-binary"],
        lambda v: {"margin_gap": v},
        ("margin", None),
    ),
    "pair": (
        ["xgboost-multiclass", "lightgbm-multiclass", "sklearn-multiclass", "forest-multiclass"]
        + [f"{f}-multiclass" for f in OTHER_FORMATS],
        lambda v: {"gap": v, "classes": (0, 1)},
        ("ratio", (0, 1)),
    ),
    "any": (
        ["xgboost-multiclass", "lightgbm-multiclass", "sklearn-multiclass", "forest-multiclass"]
        + [f"{f}-multiclass" for f in OTHER_FORMATS],
        lambda v: {"gap": v, "classes": ("any", "any")},
        ("ratio", ("any", "any")),
    ),
    "change": (
        ["xgboost-regressor", "lightgbm-regressor", "sklearn-regressor", "forest-regressor"]
        + [f"{f}-regressor" for f in OTHER_FORMATS],
        lambda v: {"delta": v, "direction": "either"},
        ("change", None),
    ),
}
CASES = [(claim, kind) for claim, (kinds, _, _) in CLAIMS.items() for kind in kinds]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Every tiny model, written once: kind -> (path, Ensemble)."""
    folder = tmp_path_factory.mktemp("claim_models")
    cache: dict = {}

    def get(kind: str):
        if kind not in cache:
            path = tiny_model(kind, folder)
            cache[kind] = (path, treesens.load_model(str(path)))
        return cache[kind]

    return get


def _sup(models, claim: str, kind: str) -> float:
    path, ens = models(kind)
    measure, classes = CLAIMS[claim][2]
    return supremum(ens, path, VARY, measure, classes)


def _above(claim: str, sup: float) -> float:
    """A value the claim holds at, comfortably above the supremum."""
    if claim in ("pair", "any"):
        return max(sup, 1.0) * 1.3
    return max(sup, 0.01) * 1.3


def _certify(models, claim: str, kind: str, value: float, out: Path):
    path, ens = models(kind)
    q = make_query(VARY, **CLAIMS[claim][1](value))
    return certify(ens, q, out, path, 60)


@pytest.fixture(scope="module")
def certificates(models, tmp_path_factory):
    """claim -> (kind, supremum, certificate) for the first model of each claim."""
    folder = tmp_path_factory.mktemp("claim_certs")
    out = {}
    for claim, (kinds, _, _) in CLAIMS.items():
        kind = kinds[0]
        sup = _sup(models, claim, kind)
        path = folder / f"{claim}.json"
        done = _certify(models, claim, kind, _above(claim, sup), path)
        assert done.written and done.verified, done.message
        out[claim] = (kind, sup, path)
    return out


# ---- accepted on every library, and only when the claim holds --------------------------


@pytest.mark.parametrize("claim,kind", CASES)
def test_a_claim_above_its_supremum_gets_a_certificate_the_checker_accepts(
    models, claim, kind, tmp_path
):
    sup = _sup(models, claim, kind)
    out = tmp_path / "c.json"
    done = _certify(models, claim, kind, _above(claim, sup), out)
    assert done.written and done.verified, done.message
    assert verify_file(out).valid


@pytest.mark.parametrize("claim,kind", CASES)
def test_a_claim_below_its_supremum_gets_no_certificate(models, claim, kind, tmp_path):
    sup = _sup(models, claim, kind)
    below = 1.0 + 0.9 * (sup - 1.0) if claim in ("pair", "any") else 0.9 * sup
    if claim in ("pair", "any") and below < 1.0 or claim != "change" and below <= 0:
        pytest.skip(f"no pair reaches the smallest claim (supremum {sup})")
    out = tmp_path / "c.json"
    done = _certify(models, claim, kind, below, out)
    assert not done.written and not out.exists()


@pytest.mark.parametrize("claim,kind", CASES)
def test_a_claim_is_certified_only_where_enumeration_says_it_holds(models, claim, kind, tmp_path):
    """Brute-force differential: across values around the supremum, a verified
    certificate only ever states a value strictly above it."""
    sup = _sup(models, claim, kind)
    base = 1.0 if claim in ("pair", "any") else 0.0
    span = max(sup - base, 1e-3)
    certified = []
    for k, frac in enumerate((0.5, 0.99, 1.001, 1.05, 1.5)):
        v = base + frac * span
        if claim == "margin" or claim == "change":
            v = max(v, 1e-4)
        out = tmp_path / f"c{k}.json"
        done = _certify(models, claim, kind, v, out)
        if done.written and verify_file(out).valid:
            certified.append(v)
    assert certified, "no value certified at all"
    assert all(v > sup for v in certified), (sup, certified)


# ---- tampering ---------------------------------------------------------------------------


def _first_prune(doc) -> list:
    return next(s for part in doc["parts"] for s in part["proof"] if s[0] == "prune")


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_a_certificate_with_a_box_removed_is_rejected(certificates, claim, tmp_path):
    def drop_last_box(doc):
        proof = doc["parts"][-1]["proof"]
        del proof[max(i for i, s in enumerate(proof) if s[0] == "prune")]

    _, _, path = certificates[claim]
    assert not verify_file(tampered(path, tmp_path, drop_last_box)).valid


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_a_certificate_with_a_bound_changed_is_rejected(certificates, claim, tmp_path):
    def lower_a_bound(doc):
        _first_prune(doc)[2] -= 0.5

    _, _, path = certificates[claim]
    verdict = verify_file(tampered(path, tmp_path, lower_a_bound))
    assert not verdict.valid and "states" in verdict.message


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_a_certificate_with_its_claim_lowered_below_the_supremum_is_rejected(
    certificates, claim, tmp_path
):
    kind, sup, path = certificates[claim]
    key = "delta" if claim == "change" else "gap"
    floor = 1.0 if claim in ("pair", "any") else 0.0
    lowered = floor + 0.95 * (sup - floor)
    assert lowered < sup

    def below(doc):
        doc["question"]["claim"][key] = lowered

    assert not verify_file(tampered(path, tmp_path, below)).valid


@pytest.mark.parametrize("claim", list(CLAIMS))
def test_a_certificate_checked_against_another_model_is_rejected(
    models, certificates, claim, tmp_path
):
    kind, _, path = certificates[claim]
    other, _ = models(CLAIMS[claim][0][1])  # another library's model of the same task
    verdict = verify_file(path, str(other))
    assert not verdict.valid and "not the model" in verdict.message


def test_a_multiclass_certificate_moved_to_a_class_pair_the_claim_fails_on_is_rejected(
    models, tmp_path
):
    """The proof for the class pair with the smallest supremum, at a ratio between the
    two, relabelled as the pair with the largest, where enumeration finds a pair."""
    path, ens = models("xgboost-multiclass")
    pairs = [(a, b) for a in range(3) for b in range(3) if a != b]
    sups = {p: supremum(ens, path, VARY, "ratio", p) for p in pairs}
    low, high = min(pairs, key=sups.get), max(pairs, key=sups.get)
    value = (sups[low] + sups[high]) / 2
    assert sups[low] < value < sups[high]
    out = tmp_path / "c.json"
    q = make_query(VARY, gap=value, classes=low)
    assert certify(ens, q, out, path, 60).verified

    def other_pair(doc):
        doc["question"]["claim"]["classes"] = list(high)
        doc["parts"][0]["classes"] = list(high)

    assert not verify_file(tampered(out, tmp_path, other_pair)).valid


def _pruned_by(doc) -> set[str]:
    """The rows the proof's prune steps name."""
    names: set[str] = set()

    def walk(x):
        if isinstance(x, list):
            if x and x[0] == "prune":
                names.add(x[1])
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(doc["parts"])
    return names


@pytest.fixture(scope="module")
def x2_bound(tmp_path_factory):
    """A three-class XGBoost model where class 0 is certain for b < 0.5 and class 2 a
    minority above it, and the certificate of (0, 2) above its supremum: x1 decided 0
    is always reachable, so only x2's rows (x2 decided 2) rule boxes out. (path,
    supremum, certificate)."""
    import numpy as np
    import pandas as pd
    import xgboost

    folder = tmp_path_factory.mktemp("x2_bound")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, (400, 3)), columns=["a", "b", "c"])
    y = np.where(X["b"] < 0.5, 0, np.where(rng.uniform(0, 1, 400) < 0.6, 1, 2))
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2, learning_rate=0.8).fit(X, y)
    path = folder / "x2_bound.json"
    est.get_booster().save_model(path)
    ens = treesens.load_model(str(path))
    sup = supremum(ens, path, VARY, "ratio", (0, 2))
    out = folder / "c.json"
    done = certify(ens, make_query(VARY, gap=1.3 * sup, classes=(0, 2)), out, path, 60)
    assert done.verified, done.message
    return path, sup, out


def test_a_proof_only_x2s_rows_rule_out_is_rejected_with_its_ratio_below_the_supremum(
    x2_bound, tmp_path
):
    """x2's rows must ask x2 decided c2 at the claim's ratio: a checker that asked a
    larger ratio of x2 would accept this proof for a false claim."""
    path, sup, certificate = x2_bound
    assert _pruned_by(json.loads(certificate.read_text())) <= {"x2/0", "x2/1"}
    lowered = 1.0 + 0.95 * (sup - 1.0)

    def below(doc):
        doc["question"]["claim"]["gap"] = lowered

    assert not verify_file(tampered(certificate, tmp_path, below)).valid


def test_an_any_certificate_missing_a_class_pair_is_rejected(certificates, tmp_path):
    def drop_a_pair(doc):
        del doc["parts"][-1]

    _, _, path = certificates["any"]
    verdict = verify_file(tampered(path, tmp_path, drop_a_pair))
    assert not verdict.valid and "parts" in verdict.message


def test_a_class_pair_certificate_does_not_prove_any(certificates, tmp_path):
    def widen(doc):
        doc["question"]["claim"]["classes"] = ["any", "any"]

    _, _, path = certificates["pair"]
    assert not verify_file(tampered(path, tmp_path, widen)).valid


def test_a_regressor_certificate_read_as_a_gap_is_rejected(certificates, tmp_path):
    def as_gap(doc):
        doc["question"]["claim"] = {"kind": "gap", "gap": 0.1, "gap_kind": "prob"}

    _, _, path = certificates["change"]
    assert not verify_file(tampered(path, tmp_path, as_gap)).valid


# ---- a max gap's upper bound ---------------------------------------------------------


@pytest.mark.parametrize(
    "kind,keywords,measure",
    [
        ("xgboost-binary", {}, ("prob", None)),
        ("lightgbm-multiclass", {"classes": (0, 1)}, ("ratio", (0, 1))),
        ("xgboost-multiclass", {"classes": ("any", "any")}, ("ratio", ("any", "any"))),
        ("sklearn-regressor", {}, ("change", None)),
        ("hgb-multiclass", {"classes": ("any", "any")}, ("ratio", ("any", "any"))),
        ("hgb-regressor", {}, ("change", None)),
        ("catboost-multiclass", {"classes": (0, 1)}, ("ratio", (0, 1))),
        ("catboost-regressor", {}, ("change", None)),
        ("onnx-multiclass", {"classes": ("any", "any")}, ("ratio", ("any", "any"))),
        ("onnx-regressor", {}, ("change", None)),
        ("onnxforest-multiclass", {"classes": (0, 1)}, ("ratio", (0, 1))),
        ("onnxforest-regressor", {}, ("change", None)),
        ("pipeline-multiclass", {"classes": ("any", "any")}, ("ratio", ("any", "any"))),
        ("pipeline-regressor", {}, ("change", None)),
    ],
)
def test_a_max_gap_upper_bound_is_certified_above_the_exact_max_gap(
    models, kind, keywords, measure, tmp_path
):
    path, ens = models(kind)
    res = treesens.max_gap(ens, vary=VARY, timeout=60, **keywords)
    out = tmp_path / "mg.json"
    q = make_query(VARY, **keywords)
    done = certify_answer(ens, q, res, out, str(path), 60)
    assert done.written and done.verified, done.message
    doc = json.loads(out.read_text())
    claim = doc["question"]["claim"]
    stated = claim["delta"] if measure[0] == "change" else claim["gap"]
    exact = supremum(ens, path, VARY, *measure)
    assert doc["question"]["max_gap_upper"] and stated == res.proof.bound > exact
    assert stated == certified_bound(res.max_gap["upper"], res.max_gap["kind"])


def test_a_regressor_max_gap_certificate_says_no_change_of_its_bound(models, tmp_path):
    path, ens = models("sklearn-regressor")
    res = treesens.max_gap(ens, vary=VARY, timeout=60)
    done = certify_answer(ens, make_query(VARY), res, tmp_path / "mg.json", str(path), 60)
    assert f"no change of {res.proof.bound:g} or more" in done.message
    assert verify_file(tmp_path / "mg.json").message.endswith(
        f"a max gap's upper bound: no change of {res.proof.bound:g} or more"
    )


def test_a_ratio_bound_has_no_cap_at_a_half():
    assert certified_bound(2.5, "ratio") == 2.51


# ---- versions ------------------------------------------------------------------------


def _version_1(doc: dict) -> None:
    """A version-2 certificate of a binary probability gap in version 1's shape: the gap
    in ``question.gap``, its one proof in ``proof``."""
    doc["version"] = 1
    doc["question"]["gap"] = doc["question"].pop("claim")["gap"]
    del doc["question"]["max_gap_upper"]
    doc["proof"] = doc.pop("parts")[0]["proof"]


@pytest.fixture(scope="module")
def binary_prob(models, tmp_path_factory):
    """(supremum, certificate) of a binary probability gap on the XGBoost model."""
    path, ens = models("xgboost-binary")
    sup = supremum(ens, path, VARY, "prob")
    out = tmp_path_factory.mktemp("v1") / "c.json"
    done = certify(ens, make_query(VARY, gap=min(0.49, sup + 0.05)), out, path, 60)
    assert done.verified, done.message
    return sup, out


def test_the_checker_still_reads_a_version_1_certificate(binary_prob, tmp_path):
    _, out = binary_prob
    assert verify_file(tampered(out, tmp_path, _version_1)).valid


def test_a_version_1_certificates_verdict_says_the_gap_it_proves(binary_prob, tmp_path):
    _, out = binary_prob
    gap = json.loads(out.read_text())["question"]["claim"]["gap"]
    verdict = verify_file(tampered(out, tmp_path, _version_1))
    said = verdict.message.rsplit("; no pair reaches a gap of ", 1)[1]
    assert float(said) == gap


def test_a_version_1_certificate_with_its_gap_below_the_supremum_is_rejected(binary_prob, tmp_path):
    sup, out = binary_prob

    def lowered(doc):
        _version_1(doc)
        doc["question"]["gap"] = sup / 2

    assert not verify_file(tampered(out, tmp_path, lowered)).valid


def test_a_certificate_of_an_unknown_version_is_a_certificate_error(binary_prob, tmp_path):
    def version_5(doc):
        doc["version"] = 5

    with pytest.raises(CertificateError, match="version 5"):
        verify_file(tampered(binary_prob[1], tmp_path, version_5))


@pytest.mark.parametrize("version", [2.5, "2", True])
def test_a_certificate_version_that_is_not_a_whole_number_is_a_certificate_error(
    binary_prob, tmp_path, version
):
    def odd(doc):
        doc["version"] = version

    said = f"certificate version {json.dumps(version)}: a version is an integer"
    with pytest.raises(CertificateError, match=re.escape(said)):
        verify_file(tampered(binary_prob[1], tmp_path, odd))


def test_a_certificate_of_an_unknown_version_without_a_model_is_a_certificate_error(
    binary_prob, tmp_path
):
    def bare(doc):
        doc["version"] = 9
        del doc["model"]

    with pytest.raises(CertificateError, match="version 9"):
        verify_file(tampered(binary_prob[1], tmp_path, bare))


def test_a_certificate_missing_a_field_is_invalid_naming_it(binary_prob, tmp_path):
    def no_columns(doc):
        del doc["columns"]

    verdict = verify_file(tampered(binary_prob[1], tmp_path, no_columns))
    assert (verdict.valid, verdict.message) == (
        False,
        "malformed certificate: it has no field 'columns'",
    )


def test_a_multiclass_claim_naming_one_class_twice_is_rejected(certificates, tmp_path):
    """Classes 0 -> 0 leave no class pair to prove: no empty proof may stand for them."""

    def same_class(doc):
        doc["question"]["claim"]["classes"] = [0, 0]
        doc["parts"] = []

    _, _, path = certificates["pair"]
    assert not verify_file(tampered(path, tmp_path, same_class)).valid


@pytest.mark.parametrize("classes", [[0.9, 1.2], ["0", "1"], [False, True]])
def test_a_multiclass_claim_naming_a_class_by_no_whole_number_is_rejected(
    certificates, classes, tmp_path
):
    """A class is a whole number (or "any"): classes 0.9 -> 1.2 are no classes of the
    model, and were checked as 0 -> 1, the claim the proof makes, not the one stated."""

    def renamed(doc):
        doc["question"]["claim"]["classes"] = classes
        doc["parts"][0]["classes"] = classes

    _, _, path = certificates["pair"]
    verdict = verify_file(tampered(path, tmp_path, renamed))
    assert not verdict.valid and "class" in verdict.message


def test_a_part_naming_its_classes_by_no_whole_numbers_is_rejected(certificates, tmp_path):
    def renamed(doc):
        doc["parts"][0]["classes"] = [float(c) for c in doc["parts"][0]["classes"]]

    _, _, path = certificates["pair"]
    assert not verify_file(tampered(path, tmp_path, renamed)).valid


def test_a_verdict_states_its_claim_as_it_reads_back_exactly():
    from treesens.verify.claims import Claim

    assert Claim("gap", 0.49999999).describe() == "no pair reaches a gap of 0.49999999"
    ratio = Claim("gap", 1.0000001, classes=(0, 1)).describe()
    assert ratio == "no pair reaches a probability ratio of 1.0000001 (class 0 -> class 1)"
