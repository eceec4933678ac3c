"""Relations between the two inputs (``where x1.age <= x2.age``) in the box search
(search/relation_boxes.py): a box no pair of whose ranks meets them is dropped, a
resolved box's pair is taken at ranks that do, its values in order. ``--backend boxes``
answers such checks as brute force over every pair does, on models built in the IR (every
operator; numeric, integer, binary, categorical and may-be-missing features; several
varied features; bounds on each input) and on the library's own predict of trained
models, and every pair it finds meets the relations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureRelation, Gap, Query
from treesens.driver import solve_query
from treesens.search import compiled_check
from treesens.search.pair_scope import applies, class_pair_encodings, pair_encoding
from treesens.tests.compiler.test_bounds_as_domains import _ens, binary_library_model
from treesens.tests.compiler.test_feature_constraints import _random_query, _values, brute
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.oracle import feature_thresholds
from treesens.tests.regressions import harness as H

OPERATORS = ("<=", "<", ">=", ">", "==")
COMPARE = {
    "<=": np.less_equal,
    "<": np.less,
    ">=": np.greater_equal,
    ">": np.greater,
    "==": np.equal,
    "!=": np.not_equal,
}


def _boxes_alone(q: Query) -> Query:
    return q.planned(backend="boxes", timeout=30.0)


def _agrees(ens, q: Query, expected: bool) -> bool:
    """``--backend boxes`` answers ``q`` as ``expected`` (sensitive or not), its pair
    within the relations; False where it does not take the query (bounds that leave an
    input no value: refused without relations too)."""
    try:
        r = solve_query(ens, _boxes_alone(q))
    except InputError:
        assert not expected, q
        return True
    if r.error and "does not describe" in r.error:
        without = solve_query(ens, _boxes_alone(q.with_(relations=())))
        assert without.error and "does not describe" in without.error, (q, r.error)
        return False
    assert r.status in ("sensitive", "insensitive"), (q, r.status, r.error, r.message)
    assert (r.status == "sensitive") == expected, q
    if expected:
        w = r.witness_arrays
        assert not constraint_violations(ens, q, w.x1, w.x2), (q, w.x1, w.x2)
    return True


def _ir_checks(kind: str, seed: int, n: int = 6) -> None:
    rng = np.random.default_rng([2026, 11, 28, 61, seed, len(kind)])
    ens = _ens(6100 + seed, kind)
    answered = 0
    for _ in range(n):
        q = _random_query(rng, ens, kind).with_(gap=Gap(float(rng.choice([0.0, 0.05, 0.1]))))
        answered += _agrees(ens, q, brute(ens, q))
    assert answered


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(5))
def test_the_box_search_answers_relations_as_brute_force_does(kind, seed):
    _ir_checks(kind, seed)


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_check_answers_relations_as_brute_force_does(kind, seed, monkeypatch):
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)  # the kernel from the first box
    _ir_checks(kind, 10 + seed)


def _pairs_brute(ens, q: Query, values: dict[int, list[float]], proba) -> bool:
    """Whether some pair over ``values`` (per feature) meets the query by ``proba``: x1
    and x2 equal outside the varied features, the relations on varied features met (NaN
    meets none)."""
    names = ens.feature_names
    varying = sorted(names.index(v) for v in q.vary)
    shared = [f for f in range(ens.n_features) if f not in varying]
    S = H._grid([values[f] for f in shared])
    V = H._grid([values[f] for f in varying])
    R = np.ones((len(V), len(V)), dtype=bool)
    for r in q.relations:
        f = names.index(r.feature)
        if f not in varying:
            continue
        k = varying.index(f)
        u, w = V[:, k][:, None], V[:, k][None, :]
        a, b = (u, w) if r.left == 1 else (w, u)
        R &= COMPARE[r.op](a, b) & ~np.isnan(u) & ~np.isnan(w)
    X = np.empty((len(S) * len(V), ens.n_features))
    X[:, shared] = np.repeat(S, len(V), axis=0)
    X[:, varying] = np.tile(V, (len(S), 1))
    p = proba(X).reshape(len(S), len(V))
    g = q.gap.value
    ok1, ok2 = p >= 0.5 + g, p <= 0.5 - g
    return bool((((ok1.astype(np.int64) @ R.astype(np.int64)) > 0) & ok2).any())


def _kinds_values(ens) -> dict[int, list[float]]:
    """f0's category codes and NaN; f1's and f2's first and last value of each class no
    split tells apart (two values of an interval, for ``<``), and NaN for f1."""
    ths = feature_thresholds(ens)
    return {
        0: [0.0, 1.0, 2.0, 3.0, math.nan],
        1: _values(ens, 1, ths[1], []) + [math.nan],
        2: _values(ens, 2, ths[2], []),
    }


def _kinds_relation(rng, vary) -> tuple[FeatureRelation, ...]:
    out = []
    for f in vary:
        ops = OPERATORS + ("!=",) if f == "f0" else OPERATORS
        if rng.random() < 0.8:
            left = int(rng.integers(1, 3))
            out.append(FeatureRelation(f, left, str(rng.choice(ops)), 3 - left))
    return tuple(out) or (FeatureRelation(vary[0], 1, "<=", 2),)


@pytest.mark.parametrize("seed", range(6))
def test_relations_on_categories_and_missing_values_are_answered_as_brute_force_does(seed):
    rng = np.random.default_rng([2026, 11, 28, 62, seed])
    ens = kinds_ensemble(620 + seed, 4, 3)
    values = _kinds_values(ens)
    for vary in (("f0",), ("f1",), ("f0", "f1"), ("f1", "f2"), ("f0", "f2")):
        q = Query(vary=vary, gap=Gap(float(rng.choice([0.0, 0.1]))))
        q = q.with_(relations=_kinds_relation(rng, vary))
        expected = _pairs_brute(ens, q, values, lambda X: ens.proba(X)[:, 1])
        assert _agrees(ens, q, expected)


def _library_values(ens, f: int, related: bool) -> list[float]:
    """H.feature_values, or for a feature under a relation the least and the largest
    candidate of each routing signature (two values of an interval, for ``<``)."""
    if not related:
        return H.feature_values(ens, f)
    cands = sorted({v for v in H.candidate_values(ens, f) if not math.isnan(v)})
    classes: dict[tuple[int, ...], list[float]] = {}
    for v, sig in zip(cands, H.signatures(ens, f, cands)):
        classes.setdefault(sig, []).append(v)
    out = sorted({v for vs in classes.values() for v in (vs[0], vs[-1])})
    return out + ([math.nan] if ens.features[f].may_be_missing else [])


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary", "sk-hgb", "sk-rf"])
@pytest.mark.parametrize("seed", range(3))
def test_relations_are_answered_as_the_library_s_predict_says(family, seed, tmp_path):
    ens = binary_library_model(family, 60 + seed, tmp_path)
    rng = np.random.default_rng([2026, 11, 28, 63, seed])
    names = ens.feature_names
    proba = lambda X: np.asarray(ens.replayer.predict_proba(X))[:, 1]  # noqa: E731
    for _ in range(3):
        k = min(ens.n_features, int(rng.integers(1, 3)))
        vary = tuple(sorted(rng.choice(names, size=k, replace=False).tolist()))
        f = names.index(vary[0])
        coded = ens.features[f].kind == "categorical"
        op = str(rng.choice(OPERATORS + ("!=",) if coded else OPERATORS))
        q = Query(vary=vary, gap=Gap(float(rng.choice([0.0, 0.05, 0.2]))))
        q = q.with_(relations=(FeatureRelation(vary[0], 1, op, 2),), plan=Plan(timeout=30.0))
        values = {g: _library_values(ens, g, g == f) for g in range(ens.n_features)}
        if math.prod(len(v) for v in values.values()) * len(values[f]) > 200_000:
            continue
        assert _agrees(ens, q, _pairs_brute(ens, q, values, proba)), q


def test_a_strict_relation_s_pair_takes_two_values_of_one_interval_in_order():
    # f0 varied alone with x1.f0 < x2.f0 on a stump whose one threshold t splits the
    # line: the pair needs x1 below t, x2 above it; with x1.f0 > x2.f0, none exists
    ens = _ens(1)
    (t, *_) = sorted(set(feature_thresholds(ens)[0]))
    up = Query(vary=("f0",), gap=Gap(0.0), relations=(FeatureRelation("f0", 1, "<", 2),))
    r = solve_query(ens, _boxes_alone(up))
    if r.status == "sensitive":
        assert r.witness_arrays.x1[0] < r.witness_arrays.x2[0]
    assert (r.status == "sensitive") == brute(ens, up)


def test_a_strict_relation_on_a_shared_feature_is_an_input_error_in_the_box_search():
    ens = _ens(1)
    q = Query(vary=("f0",), gap=Gap(0.0), relations=(FeatureRelation("f1", 1, "<", 2),))
    with pytest.raises(InputError):
        solve_query(ens, _boxes_alone(q))


def test_the_pair_tables_take_relations_only_where_the_search_reads_them():
    ens = _ens(1)
    q = Query(vary=("f0",), gap=Gap(0.0), relations=(FeatureRelation("f0", 1, "<=", 2),))
    enc = pair_encoding(ens, q)
    assert not applies(enc) and applies(enc, relations=True)
    assert class_pair_encodings(enc) is None
    assert class_pair_encodings(enc, relations=True) == [enc]


def test_relations_on_every_pair_of_values_of_two_features_need_each_other():
    # x1.f0 <= x2.f0 and x1.f1 >= x2.f1 together: brute force over every combination
    ens = _ens(3)
    for ops in itertools.product(("<=", "<", "=="), ("<=", ">", "==")):
        rels = (FeatureRelation("f0", 1, ops[0], 2), FeatureRelation("f1", 1, ops[1], 2))
        q = Query(vary=("f0", "f1"), gap=Gap(0.05), relations=rels)
        assert _agrees(ens, q, brute(ens, q))
