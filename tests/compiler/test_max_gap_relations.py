"""The max gap under relations between the inputs (``where x1.age <= x2.age``) by the box
search (search/gap_search.py over relation_boxes.py): its bounds bracket brute force's
largest gap over every pair the relations allow, under each operator, on models built in
the IR (categorical, may-be-missing and numeric features) and on trained XGBoost and
LightGBM models by their own predict (category codes no split lists too), for a binary
model's gap and a regressor's change; its pair meets the relations, and the bound it
states is certified with the ``relation`` steps the checker re-derives."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, FeatureRelation, Query
from treesens.questions.certify import certify_answer
from treesens.questions.max_gap import max_gap_query
from treesens.search.proof_tree import recording_proofs
from treesens.tests.compiler.test_bounds_as_domains import binary_library_model
from treesens.tests.compiler.test_relations_in_boxes import (
    COMPARE,
    _kinds_values,
    _library_values,
)
from treesens.tests.compiler.test_relations_on_unlisted_categories import (
    CODES,
    _lightgbm_coded,
    _x_values,
)
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.verify.tampering import tampered
from treesens.tests.verify.test_per_input_certificates import rising_regressor
from treesens.verify import verify_file

TOLERANCE = 1e-3
ORDERS = ("<", "<=", ">", ">=", "==")  # every relation a number takes; a code takes != too


def _brute_max_gap(ens, q: Query, values: dict[int, list[float]], change) -> float | None:
    """The largest ``change(out1, out2)`` (per row pair: P(x1) - 0.5 against 0.5 - P(x2),
    a regressor's f(x1) - f(x2), or a multiclass pair's ratio) over the pairs of ``values`` (per feature) equal
    outside the varied features, within the query's bounds per input, meeting its
    relations (NaN meets none); None where they allow no pair."""
    names = ens.feature_names
    varying = sorted(names.index(v) for v in q.vary)
    shared = [f for f in range(ens.n_features) if f not in varying]
    S, V = _grid([values[f] for f in shared]), _grid([values[f] for f in varying])
    ok = np.ones((len(V), len(V)), dtype=bool)
    for b in q.bounds:
        k = varying.index(names.index(b.feature))
        inside = (V[:, k] >= b.lo) & (V[:, k] <= b.hi)
        ok &= (inside[:, None] if 1 in b.copies else True) & (
            inside[None, :] if 2 in b.copies else True
        )
    for r in q.relations:
        k = varying.index(names.index(r.feature))
        u, w = V[:, k][:, None], V[:, k][None, :]
        a, c = (u, w) if r.left == 1 else (w, u)
        ok &= COMPARE[r.op](a, c) & ~np.isnan(u) & ~np.isnan(w)
    if not ok.any():
        return None
    X = np.empty((len(S) * len(V), ens.n_features))
    X[:, shared] = np.repeat(S, len(V), axis=0)
    X[:, varying] = np.tile(V, (len(S), 1))
    y = np.asarray(change.outputs(X), dtype=np.float64)  # (rows,) or (2, rows): a ratio's
    y = y.reshape(y.shape[:-1] + (len(S), len(V)))
    i, j = np.nonzero(ok)
    return float(change(y[..., i], y[..., j]).max())


def _grid(columns: list[list[float]]) -> np.ndarray:
    """Every combination of the columns' values, a row each (one empty row: none)."""
    rows = list(itertools.product(*columns))
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(columns))


class _Gap:
    """A binary model's gap of a pair, min(P(x1) - 0.5, 0.5 - P(x2)), by ``proba``."""

    def __init__(self, proba):
        self.outputs = proba

    def __call__(self, p1, p2):
        return np.minimum(p1 - 0.5, 0.5 - p2)


class _Change:
    """A regressor's change f(x1) - f(x2), by ``predict``."""

    def __init__(self, predict):
        self.outputs = predict

    def __call__(self, y1, y2):
        return y1 - y2


def _brackets(ens, q: Query, exact: float | None) -> None:
    """The box search's max gap of ``q`` brackets ``exact`` within the tolerance (a
    regressor's: relative to the change), its pair meeting the relations."""
    try:
        r = max_gap_query(ens, q.with_(plan=Plan(timeout=60.0)), tolerance=TOLERANCE)
    except InputError:  # relations no pair meets (or none that differs): never answered
        assert exact is None or q.relations, q
        return
    m = r.max_gap
    assert exact is not None and m["method"] == "boxes", (q, m, r.notes)
    slack = 1e-9 * max(1.0, abs(exact))
    assert m["upper"] >= exact - slack, (q, m, exact)
    if r.status != "sensitive":
        assert r.status == "insensitive" and exact < m["upper"], (q, r.status, m, exact)
        return
    assert m["proven"] and m["lower"] <= exact + slack, (q, m, exact)
    allowed = TOLERANCE * (m["lower"] if m["kind"] == "change" else 1.0)
    assert exact - m["lower"] <= allowed + slack, (q, m, exact)
    w = r.witness_arrays
    assert not constraint_violations(ens, q, w.x1, w.x2), (q, w.x1, w.x2)


def _ir_case(seed: int, feature: str, op: str):
    """A random ensemble over a categorical f0, a may-be-missing f1 and a numeric f2,
    ``feature`` and f2 (or f0) varied, with ``x1.feature op x2.feature``."""
    ens = kinds_ensemble(720 + seed, 4, 3)
    other = "f2" if feature != "f2" else "f0"
    q = Query(vary=tuple(sorted((feature, other))))
    q = q.with_(relations=(FeatureRelation(feature, 1, op, 2),))
    proba = lambda X: ens.proba(X)[:, 1]  # noqa: E731
    return ens, q, _brute_max_gap(ens, q, _kinds_values(ens), _Gap(proba))


@pytest.mark.parametrize("op", ORDERS + ("!=",))
@pytest.mark.parametrize("seed", range(2))
def test_the_max_gap_under_a_relation_on_category_codes_brackets_brute_force_s(op, seed):
    _brackets(*_ir_case(seed, "f0", op))


@pytest.mark.parametrize("op", ORDERS)
@pytest.mark.parametrize("feature", ["f1", "f2"])
@pytest.mark.parametrize("seed", range(2))
def test_the_max_gap_under_a_relation_on_numbers_brackets_brute_force_s(op, feature, seed):
    _brackets(*_ir_case(seed, feature, op))


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary"])
@pytest.mark.parametrize("op", ORDERS + ("!=",))
@pytest.mark.parametrize("seed", range(2))
def test_the_max_gap_under_a_relation_is_the_library_s_within_the_tolerance(
    family, op, seed, tmp_path
):
    ens = binary_library_model(family, 70 + seed, tmp_path)
    names = ens.feature_names
    coded = [f for f in range(ens.n_features) if ens.features[f].kind == "categorical"]
    if op == "!=" and not coded:
        pytest.skip("'!=' compares category codes only")
    f = coded[0] if op == "!=" else seed % ens.n_features
    vary = tuple(sorted({names[f], names[(f + 1) % ens.n_features]}))
    q = Query(vary=vary, relations=(FeatureRelation(names[f], 1, op, 2),))
    values = {g: _library_values(ens, g, g == f) for g in range(ens.n_features)}
    if math.prod(len(v) for v in values.values()) * len(values[f]) > 400_000:
        pytest.skip("a grid too large for brute force")
    proba = lambda X: np.asarray(ens.replayer.predict_proba(X))[:, 1]  # noqa: E731
    _brackets(ens, q, _brute_max_gap(ens, q, values, _Gap(proba)))


@pytest.mark.parametrize("op", ORDERS + ("!=",))
def test_the_max_gap_under_a_relation_on_codes_no_split_lists_is_the_library_s(op, tmp_path):
    # LightGBM's splits list c's codes 0..5 (c declared 0..9): x2.c among the unlisted
    # codes 6..9, x1.c in 4..9, related to it (domain.with_order_codes)
    ens = _lightgbm_coded(tmp_path)
    q = Query(vary=("c", "x"), relations=(FeatureRelation("c", 1, op, 2),))
    q = q.with_(bounds=(FeatureBound("c", 4.0, 9.0, (1,)), FeatureBound("c", 6.0, 9.0, (2,))))
    proba = lambda X: np.asarray(ens.replayer.predict_proba(X))[:, 1]  # noqa: E731
    values = {0: CODES, 1: _x_values(ens)}
    _brackets(ens, q, _brute_max_gap(ens, q, values, _Gap(proba)))


@pytest.fixture(scope="module")
def rising(tmp_path_factory):
    """An XGBoost regressor rising with f0 (3 f0 + f0 f1) and its file."""
    model = rising_regressor(tmp_path_factory.mktemp("rising"))
    return treesens.load_model(str(model)), model


@pytest.mark.parametrize("op", ORDERS)
def test_a_regressor_s_largest_change_under_a_relation_is_the_library_s(op, rising):
    ens, _ = rising
    q = Query(vary=("f0", "f1"), relations=(FeatureRelation("f0", 1, op, 2),))
    values = {g: _library_values(ens, g, g == 0) for g in range(ens.n_features)}
    predict = lambda X: np.asarray(ens.replayer.predict(X))  # noqa: E731
    _brackets(ens, q, _brute_max_gap(ens, q, values, _Change(predict)))


# --- the certificate of its upper bound ------------------------------------------------------
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BC = EXAMPLES / "breast_cancer_xgb.json"
RELATED = Query(vary=("mean_texture",), relations=(FeatureRelation("mean_texture", 1, ">", 2),))


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    """The max gap of mean_texture where x1.mean_texture > x2.mean_texture on the shipped
    breast-cancer model (about 0.083; 0.433 without the relation), and the certificate
    of its upper bound, from the boxes its own search kept."""
    ens = treesens.load_model(str(BC))
    q = RELATED.with_(plan=Plan(timeout=60.0))
    with recording_proofs():
        r = max_gap_query(ens, q, tolerance=TOLERANCE)
    out = tmp_path_factory.mktemp("mg") / "mg.json"
    done = certify_answer(ens, q, r, out, BC, 60.0)
    return r, done, out


def test_a_max_gap_under_a_relation_is_certified_and_verified(certified):
    r, done, out = certified
    assert r.max_gap["method"] == "boxes" and r.max_gap["proven"]
    assert done.verified and "the max gap's own search" in done.message, done.message
    assert "where x1.mean_texture > x2.mean_texture" in verify_file(out).message


def test_its_boxes_no_pair_of_which_meets_the_relation_are_relation_steps(certified):
    _, _, out = certified
    doc = json.loads(out.read_text())
    assert doc["question"]["relations"] == [["mean_texture", ">"]]
    f = doc["question"]["features"].index("mean_texture")
    assert ["relation", f, ">"] in [s for p in doc["parts"] for s in p["proof"]]


def test_its_certificate_with_the_relation_removed_is_rejected(certified, tmp_path):
    def change(doc):
        del doc["question"]["relations"]

    verdict = verify_file(tampered(certified[2], tmp_path, change))
    assert not verdict.valid and "states no relation" in verdict.message


def test_its_certificate_with_a_relation_step_s_box_dropped_is_rejected(certified, tmp_path):
    def change(doc):
        for part in doc["parts"]:
            proof = part["proof"]
            k = next(i for i, s in enumerate(proof) if s[0] == "relation")
            del proof[k]
            return

    assert not verify_file(tampered(certified[2], tmp_path, change)).valid


# --- a multiclass model's largest ratio ------------------------------------------------------
def _ratio(p: np.ndarray, c: int) -> np.ndarray:
    """Per row, P(c) over the largest other class's probability."""
    others = np.delete(p, c, axis=1).max(axis=1)
    return p[:, c] / others


class _Ratio:
    """A multiclass pair's ratio for classes (c1, c2): the smaller of x1's lead of c1 and
    x2's lead of c2, by ``proba``."""

    def __init__(self, proba, classes):
        self.proba, self.classes = proba, classes

    def outputs(self, X):
        p = np.asarray(self.proba(X), dtype=np.float64)
        return np.stack([_ratio(p, self.classes[0]), _ratio(p, self.classes[1])])

    def __call__(self, r1, r2):
        return np.minimum(r1[0], r2[1])


def _trained_multiclass(kind: str):
    """A 3-class model of 3 numeric features: a random forest (averaged probabilities)
    or gradient boosting (softmax), trained on noisy labels."""
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    rng = np.random.default_rng(9)
    X = rng.uniform(0, 1, (400, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.3, 400), [0.5, 1.0])
    if kind == "forest":
        est = RandomForestClassifier(5, max_depth=3, min_samples_leaf=30, random_state=0)
    else:
        est = GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0)
    est.fit(X, y)
    return treesens.load_model(est), est


@pytest.mark.parametrize("kind", ["forest", "boosting"])
@pytest.mark.parametrize("op", ["<=", ">", ">=", "=="])
def test_a_multiclass_max_ratio_under_a_relation_brackets_the_library_s(kind, op):
    ens, est = _trained_multiclass(kind)
    q = Query(vary=("x0", "x1"), classes=(2, 0), relations=(FeatureRelation("x0", 1, op, 2),))
    values = {g: _library_values(ens, g, g == 0) for g in range(ens.n_features)}
    exact = _brute_max_gap(ens, q, values, _Ratio(est.predict_proba, (2, 0)))
    r = max_gap_query(ens, q.with_(plan=Plan(timeout=60.0)), tolerance=TOLERANCE)
    m = r.max_gap
    assert m["method"] == "boxes" and m["upper"] >= exact * (1 - 1e-9), (m, exact)
    if r.status == "insensitive":  # x1 of class 2 needs a larger x0 than x2 of class 0
        assert m["proven"] and exact < m["upper"], (m, exact)
        return
    assert m["proven"] and m["lower"] <= exact * (1 + 1e-9), (m, exact)
    w = r.witness_arrays
    assert not constraint_violations(ens, q, w.x1, w.x2), (w.x1, w.x2)
