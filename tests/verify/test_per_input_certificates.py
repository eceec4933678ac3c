"""Certificates under a bound on one input of a varied feature (version 4: the claim
states that feature's domain per input, x1's and x2's): a max gap's upper bound under
such a bound on a categorical, a may-be-missing or a numeric feature of XGBoost,
LightGBM and scikit-learn (.skops) models is certified, lies above the largest gap brute
force finds within each input's bounds, and the checker covers x1's domain times x2's;
a copy whose domains are widened, swapped, stated of both inputs, or whose version is
lowered is rejected."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, Query
from treesens.questions.certify import certified_bound, certify_answer
from treesens.questions.max_gap import max_gap_query
from treesens.search.proof_tree import RecordedTiling, recording_proofs
from treesens.tests.regressions import harness as H
from treesens.tests.verify.tampering import tampered
from treesens.tests.verify.test_coded_certificates import _model, _train
from treesens.verify import verify_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KINDS = ["xgboost", "lightgbm-nan", "hgb-nan", "forest-nan"]
# per varied feature of the coded models (f0 codes 0..3, f1 may be missing, f2 in [0, 1])
BOUNDS = {
    "f0": (FeatureBound("f0", 1, 2, (1,)),),
    "f0-apart": (FeatureBound("f0", 0, 1, (1,)), FeatureBound("f0", 2, 3, (2,))),
    "f1": (FeatureBound("f1", -0.5, 0.5, (2,)),),
    "f2": (FeatureBound("f2", 0.2, 0.5, (1,)),),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("per_input")
    return {kind: _train(kind, folder) for kind in KINDS}


def _query(case: str) -> Query:
    return Query(vary=(case.split("-")[0],), bounds=BOUNDS[case], plan=Plan(timeout=30.0))


def _admits(b: FeatureBound | None, v: float) -> bool:
    return b is None or (not math.isnan(v) and b.lo <= v <= b.hi)


def _values(ens, f: int) -> list[float]:
    """The oracle's values of feature f (NaN where it may be missing): of a feature of
    declared categories, its categories' codes."""
    codes = ens.features[f].category_values
    return [v for v in H.feature_values(ens, f) if not codes or v in codes]


def _brute_max_gap(ens, q: Query) -> float:
    """The largest min(P(x1) - 0.5, 0.5 - P(x2)) over the oracle's values of every
    feature, x1's and x2's varied value each within its own bounds."""
    (name,) = q.vary
    f = ens.feature_names.index(name)
    per = {c: next((b for b in q.bounds if b.copies == (c,)), None) for c in (1, 2)}
    values = [_values(ens, g) for g in range(ens.n_features)]
    ends = [float(v) for b in per.values() if b is not None for v in (b.lo, b.hi)]
    own = [[v for v in values[f] + ends if _admits(per[c], v)] for c in (1, 2)]
    shared = [values[g] for g in range(ens.n_features) if g != f]
    best = -np.inf
    for s in itertools.product(*shared):
        rows = [[np.insert(np.array(s, dtype=float), f, v) for v in vs] for vs in own]
        p1, p2 = (ens.proba(np.array(r))[:, 1] for r in rows)
        best = max(best, min(p1.max() - 0.5, 0.5 - p2.min()))
    return float(best)


def _certified(ens, q: Query, model: Path, out: Path):
    """The max gap of ``q`` and its upper bound's certificate written to ``out``."""
    r = max_gap_query(ens, q, tolerance=1e-3)
    done = certify_answer(ens, q, r, out, model, 60.0)
    return r, done


@pytest.mark.parametrize("case", sorted(BOUNDS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_max_gap_bound_under_a_bound_on_one_input_is_certified_above_brute_force(
    kind, case, models, tmp_path
):
    ens, q = _model(models[kind]), _query(case)
    r, done = _certified(ens, q, models[kind], tmp_path / "mg.json")
    assert done.verified, done.message
    bound = certified_bound(r.max_gap["upper"])
    assert _brute_max_gap(ens, q) < bound
    assert json.loads((tmp_path / "mg.json").read_text())["version"] == 4


def _domain_of(verdict, name: str) -> dict:
    return next(d for d in verdict.domain if d["feature"] == name)


def test_a_categorical_input_s_domain_lists_the_codes_within_its_bound(models, tmp_path):
    ens = _model(models["xgboost"])
    _certified(ens, _query("f0-apart"), models["xgboost"], tmp_path / "c.json")
    f0 = _domain_of(verify_file(tmp_path / "c.json"), "f0")
    assert (f0["x1"]["codes"], f0["x2"]["codes"]) == ([0, 1], [2, 3])


def test_a_bounded_input_of_a_may_be_missing_feature_is_never_missing(models, tmp_path):
    ens = _model(models["lightgbm-nan"])
    _certified(ens, _query("f1"), models["lightgbm-nan"], tmp_path / "c.json")
    f1 = _domain_of(verify_file(tmp_path / "c.json"), "f1")
    assert (f1["x1"]["missing"], f1["x2"]["missing"]) == (True, False)


def test_an_integer_input_s_bound_is_its_domain(tmp_path):
    model = EXAMPLES / "diabetes_lgbm.txt"
    ens = treesens.load_model(str(model), details=str(EXAMPLES / "diabetes_details.csv"))
    q = Query(vary=("age",), bounds=(FeatureBound("age", 30, 40, (1,)),), plan=Plan(timeout=30))
    r, done = _certified(ens, q, model, tmp_path / "c.json")
    assert done.verified, done.message
    age = _domain_of(verify_file(tmp_path / "c.json"), "age")
    assert (age["x1"]["lb"], age["x1"]["ub"], age["x1"]["integer"]) == (30, 40, True)


def test_a_max_gap_bound_under_a_bound_on_x1_is_certified_from_its_own_search(tmp_path):
    model = EXAMPLES / "breast_cancer_xgb.json"
    ens = treesens.load_model(str(model))
    q = Query(vary=("mean_texture",), bounds=(FeatureBound("mean_texture", 15, 22, (1,)),))
    with recording_proofs():
        r = max_gap_query(ens, q)
    assert isinstance(r.box_proof, RecordedTiling)
    done = certify_answer(ens, q, r, tmp_path / "mg.json", model, 60.0)
    assert done.verified and "max gap's own search" in done.message, done.message


@pytest.fixture(scope="module")
def apart(models, tmp_path_factory) -> Path:
    """A certificate of f0 bounded per input (x1 in [0, 1], x2 in [2, 3]), XGBoost."""
    out = tmp_path_factory.mktemp("apart") / "c.json"
    _, done = _certified(_model(models["xgboost"]), _query("f0-apart"), models["xgboost"], out)
    assert done.verified, done.message
    return out


def _f0(doc: dict) -> dict:
    return doc["question"]["domain"][doc["question"]["features"].index("f0")]


def test_a_copy_with_x1_s_domain_widened_is_rejected(apart, tmp_path):
    def widened(doc):
        _f0(doc)["x1"]["codes"] = [0, 1, 2]

    assert not verify_file(tampered(apart, tmp_path, widened)).valid


def test_a_copy_with_the_inputs_domains_swapped_is_rejected(apart, tmp_path):
    def swapped(doc):
        d = _f0(doc)
        d["x1"], d["x2"] = d["x2"], d["x1"]

    assert not verify_file(tampered(apart, tmp_path, swapped)).valid


def test_a_copy_stating_one_domain_for_both_inputs_is_rejected(apart, tmp_path):
    def shared(doc):
        d = _f0(doc)
        doc["question"]["domain"][doc["question"]["features"].index("f0")] = {
            **d["x1"],
            "codes": [0, 1, 2, 3],
        }

    assert not verify_file(tampered(apart, tmp_path, shared)).valid


def test_a_copy_whose_version_is_lowered_is_rejected(apart, tmp_path):
    def lowered(doc):
        doc["version"] = 3

    verdict = verify_file(tampered(apart, tmp_path, lowered))
    assert not verdict.valid and "version 4" in verdict.message


def test_a_split_on_x2_s_column_at_codes_outside_its_domain_is_rejected(apart, tmp_path):
    def outside(doc):
        column = doc["columns"].index([doc["question"]["features"].index("f0"), 2])
        for step in doc["parts"][0]["proof"]:
            if step[0] == "split" and step[1] == column:
                step[2] = {"codes": [0, 1, *step[2]["codes"]]}
                return
        raise AssertionError("no split on x2's column")

    verdict = verify_file(tampered(apart, tmp_path, outside))
    assert not verdict.valid and "cannot take" in verdict.message


def test_the_unbounded_query_s_certificate_is_not_accepted_with_the_bounded_domain(
    models, apart, tmp_path
):
    """The same question without the bound, at the same gap: its proof under the bounded
    claim's domain (and the bounded proof under the unbounded domain) is rejected."""
    bounded = json.loads(apart.read_text())
    gap = bounded["question"]["claim"]["gap"]
    from treesens.compiler.query import Gap
    from treesens.questions.certify import certify

    ens = _model(models["xgboost"])
    wide = tmp_path / "wide.json"
    done = certify(ens, Query(vary=("f0",), gap=Gap(gap)), wide, models["xgboost"], 60.0)
    assert done.verified, done.message
    unbounded = json.loads(wide.read_text())

    def bounded_domain(doc):
        doc["version"] = 4
        doc["question"]["domain"] = bounded["question"]["domain"]

    def unbounded_domain(doc):
        doc["question"]["domain"] = unbounded["question"]["domain"]

    assert not verify_file(tampered(wide, tmp_path, bounded_domain)).valid
    assert not verify_file(tampered(apart, tmp_path, unbounded_domain)).valid


def rising_regressor(folder: Path) -> Path:
    """An XGBoost regressor rising with f0 (3 f0 + f0 f1, trained with noise), saved in
    ``folder``: its file."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3))
    y = 3 * X[:, 0] + X[:, 0] * X[:, 1] + rng.normal(0, 0.1, 300)
    model = folder / "reg.json"
    est = xgboost.XGBRegressor(n_estimators=6, max_depth=3, learning_rate=0.5)
    est.fit(X, y).get_booster().save_model(model)
    return model


@pytest.fixture(scope="module")
def regressor_change(tmp_path_factory) -> Path:
    """The certificate of a regressor's largest change f(x1) - f(x2) (x1 the higher)
    under x1.f0 in [0, 0.3]: an XGBoost regressor trained on f0 mostly."""
    folder = tmp_path_factory.mktemp("change")
    model = rising_regressor(folder)
    q = Query(vary=("f0",), bounds=(FeatureBound("f0", 0.0, 0.3, (1,)),), plan=Plan(timeout=30))
    _, done = _certified(treesens.load_model(str(model)), q, model, folder / "c.json")
    assert done.verified, done.message
    return folder / "c.json"


def test_a_change_under_a_domain_per_input_is_claimed_in_its_direction(regressor_change):
    verdict = verify_file(regressor_change)
    assert verdict.valid and verdict.message.endswith("or more down from x1 to x2")


@pytest.mark.parametrize("direction", ["either", "up"])
def test_a_change_s_part_proves_no_other_direction_under_a_domain_per_input(
    regressor_change, direction, tmp_path
):
    """Swapping x1 and x2 no longer maps the pairs onto themselves: a proof that no pair
    goes down by D says nothing of the pairs going up."""

    def claimed(doc):
        doc["question"]["claim"]["direction"] = direction

    verdict = verify_file(tampered(regressor_change, tmp_path, claimed))
    assert not verdict.valid and "the proof's parts are not the ones" in verdict.message
