"""A bound on one input of a varied feature (``where x1.age in [30, 40]``, ``fix x2.sex =
1``) restricts that input's column of the pair tables (search/pair_boxes.py,
``input_rank_ranges``): the box search (``--backend boxes``) and the max gap's box
search take such queries. Checked against brute force on models built in the IR and on
the library's own predict of trained models; every pair found lies within each input's
bounds."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.dataset import Dataset
from treesens.compiler.encode import varied_features
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, Gap, Query, bounds_by_copy
from treesens.driver import solve_query
from treesens.interfaces.cli.main import main
from treesens.language.resolve import load_queries
from treesens.questions.max_gap import max_gap_query
from treesens.search import compiled_check
from treesens.search.gap_kernel import reads_varied
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import class_pair_encodings, pair_encoding
from treesens.tests.compiler.test_bounds_as_domains import (
    _ens,
    binary_library_model,
    holds_the_gap,
)
from treesens.tests.compiler.test_feature_constraints import brute, candidate_values
from treesens.tests.oracle import feature_thresholds
from treesens.tests.regressions import harness as H
from treesens.verify import verify_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOLERANCE = 1e-3


def _boxes_alone(q: Query) -> Query:
    return q.planned(backend="boxes", timeout=20.0)


def _ends(rng, ens, f: int, kind: str) -> tuple[float, float]:
    """A range over feature f: a pin or an interval around its thresholds, whose ends
    fall inside the thresholds' intervals as often as on them."""
    pts = sorted(set(feature_thresholds(ens)[f]) | {-3.0, 3.0})
    lo = float(rng.choice(pts)) + float(rng.choice([-0.5, 0.0, 0.25]))
    hi = lo + float(rng.choice([0.0, 0.0, 0.5, 1.0, 2.0]))
    if kind == "integer":
        lo, hi = float(math.floor(lo)), float(math.floor(hi))
    if kind == "binary":
        lo, hi = sorted((float(rng.integers(2)), float(rng.integers(2))))
    return lo, hi


def _per_input_bounds(rng, ens, f: int, kind: str) -> tuple[FeatureBound, ...]:
    """Bounds on varied feature f for x1, for x2, or for each otherwise; at times a bound
    on another feature for both inputs too (read as its domain)."""
    name = ens.feature_names[f]
    copies = [(1,), (2,), (1,), (2,)][int(rng.integers(4))] if rng.random() < 0.7 else (1, 2)
    out = [FeatureBound(name, *_ends(rng, ens, f, kind), (c,)) for c in copies]
    if rng.random() < 0.4:
        g = int(rng.integers(ens.n_features))
        if g != f:
            out.append(FeatureBound(ens.feature_names[g], *_ends(rng, ens, g, kind)))
    return tuple(out)


def _per_input_queries(rng, ens, kind: str, gap: bool = True):
    """Queries with a bound on one input of their varied feature (none whose bounds turn
    out alike)."""
    while True:
        f = int(rng.integers(ens.n_features))
        q = Query(vary=(ens.feature_names[f],), bounds=_per_input_bounds(rng, ens, f, kind))
        if gap:
            q = q.with_(gap=Gap(float(rng.choice([0.0, 0.02, 0.05, 0.1]))))
        by_copy = bounds_by_copy(ens, q, varied_features(ens, q.vary))
        if by_copy.get((f, 0)) != by_copy.get((f, 1)):
            yield q


def _boxes_agree_with_brute_force(ens, queries, n: int = 5) -> None:
    """``--backend boxes`` answers ``n`` of the queries as brute force does (bounds that
    leave an input no value are refused, never answered)."""
    for _ in range(n):
        q = next(queries)
        try:
            r = solve_query(ens, _boxes_alone(q))
        except InputError:
            assert not brute(ens, q), q
            continue
        assert r.backend == "boxes" and r.status in ("sensitive", "insensitive"), (q, r.error)
        assert (r.status == "sensitive") == brute(ens, q), q


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(6))
def test_the_box_search_answers_checks_under_per_input_bounds_as_brute_force_does(kind, seed):
    rng = np.random.default_rng([2026, 11, 28, 5, seed, len(kind)])
    ens = _ens(2000 + seed, kind)
    _boxes_agree_with_brute_force(ens, _per_input_queries(rng, ens, kind))


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_check_answers_per_input_bounds_as_brute_force_does(kind, seed, monkeypatch):
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)  # the kernel from the first box
    rng = np.random.default_rng([2026, 11, 28, 8, seed, len(kind)])
    ens = _ens(5000 + seed, kind)
    _boxes_agree_with_brute_force(ens, _per_input_queries(rng, ens, kind))


@pytest.mark.parametrize("kind", ["real", "integer"])
@pytest.mark.parametrize("seed", range(4))
def test_a_pair_the_box_search_finds_lies_within_each_input_s_bounds(kind, seed):
    rng = np.random.default_rng([2026, 11, 28, 6, seed, len(kind)])
    ens = _ens(3000 + seed, kind)
    queries = _per_input_queries(rng, ens, kind)
    found = 0
    for _ in range(12):
        q = next(queries).with_(gap=Gap(0.0))
        try:
            r = solve_query(ens, _boxes_alone(q))
        except InputError:
            continue
        if r.status == "sensitive":
            found += 1
            w = r.witness_arrays
            assert not constraint_violations(ens, q, w.x1, w.x2), (q, w.x1, w.x2)
    assert found


def test_a_bound_cutting_an_interval_takes_a_value_of_it_within_the_bound():
    # x1.f0 in [t + 0.1, t + 0.2], t f0's largest threshold: the interval above t shows
    # 1.0 as its representative, outside the bound; the witness's value lies inside
    ens = _ens(1)
    t = max(feature_thresholds(ens)[0])
    q = Query(vary=("f0",), gap=Gap(0.0), bounds=(FeatureBound("f0", t + 0.1, t + 0.2, (1,)),))
    r = solve_query(ens, _boxes_alone(q))
    assert r.status == "sensitive"
    assert t + 0.1 <= r.witness_arrays.x1[0] <= t + 0.2


def test_the_max_gap_s_pair_given_data_keeps_each_input_within_its_bounds():
    # the data's values of f0 lie in the interval the bound cuts, outside the bound: the
    # pair keeps its own value there
    ens = _ens(1)
    t = max(feature_thresholds(ens)[0])
    bound = FeatureBound("f0", t + 0.1, t + 0.2, (1,))
    q = Query(vary=("f0",), bounds=(bound,), plan=Plan(timeout=30.0))
    rows = np.array([[t + 5.0, 0.0, 0.0], [t + 6.0, 1.0, 1.0]])
    r = max_gap_query(ens, q, tolerance=TOLERANCE, data=Dataset(rows, None, ens.feature_names))
    assert r.status == "sensitive"
    assert not constraint_violations(ens, q, r.witness_arrays.x1, r.witness_arrays.x2)


def _brute_max_gap(ens, q: Query, proba, values) -> float:
    """The largest min(P(x1) - 0.5, 0.5 - P(x2)) over pairs within the bounds, by
    ``proba`` over every combination of ``values`` (per feature): x1 and x2 equal outside
    the varied features, each within its own bounds; -inf where no pair is."""
    names = ens.feature_names
    varying = sorted(names.index(v) for v in q.vary)
    shared = [f for f in range(ens.n_features) if f not in varying]

    def within(f, v, copy):
        return all(
            b.lo <= v <= b.hi for b in q.bounds if names.index(b.feature) == f and copy in b.copies
        )

    S = H._grid([[v for v in values[f] if within(f, v, 1) and within(f, v, 2)] for f in shared])
    sides = []
    for copy in (1, 2):
        V = H._grid([[v for v in values[f] if within(f, v, copy)] for f in varying])
        if not len(S) or not len(V):
            return -math.inf
        X = np.empty((len(S) * len(V), ens.n_features))
        X[:, shared] = np.repeat(S, len(V), axis=0)
        X[:, varying] = np.tile(V, (len(S), 1))
        p = proba(X).reshape(len(S), len(V))
        sides.append((p - 0.5 if copy == 1 else 0.5 - p).max(axis=1))
    return float(np.max(np.minimum(*sides)))


def _ir_values(ens, q: Query) -> dict[int, list[float]]:
    return candidate_values(ens, q)[2]


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(4))
def test_max_gap_under_per_input_bounds_is_the_brute_force_gap(kind, seed):
    rng = np.random.default_rng([2026, 11, 28, 7, seed, len(kind)])
    ens = _ens(4000 + seed, kind)
    queries = _per_input_queries(rng, ens, kind, gap=False)
    for _ in range(3):
        q = next(queries).with_(plan=Plan(timeout=30.0))
        exact = _brute_max_gap(ens, q, lambda X: ens.proba(X)[:, 1], _ir_values(ens, q))
        if exact == -math.inf:  # the bounds leave an input no value
            with pytest.raises(InputError):
                max_gap_query(ens, q, tolerance=TOLERANCE)
            continue
        holds_the_gap(ens, q, exact)


def _pinned_apart(ens, v1: float, v2: float) -> Query:
    return Query(
        vary=("f0",),
        bounds=(FeatureBound("f0", v1, v1, (1,)), FeatureBound("f0", v2, v2, (2,))),
        plan=Plan(timeout=30.0),
    )


def test_a_tree_that_reads_the_varied_feature_is_marked_so_with_its_columns_held():
    # f0 pinned below its one threshold on x1, above it on x2: no node of the tables
    # splits f0's columns, yet the trees on f0 give the two inputs other leaves
    ens = _ens(11)
    (t,) = set(feature_thresholds(ens)[0])
    q = _pinned_apart(ens, t - 1.0, t + 1.0)
    (enc,) = class_pair_encodings(pair_encoding(ens, q.with_(gap=Gap(0.0))))
    on_f0 = [bool((tree.feature == 0).any()) for tree in ens.trees]
    assert any(on_f0)
    assert reads_varied(pair_tables(enc)).tolist() == on_f0


def test_each_input_pinned_to_its_own_interval_is_not_read_alike():
    # each copy's column of the varied feature has one rank, but not the same one: the
    # two inputs read the trees otherwise, and the root's bound is no answer
    ens = _ens(11)
    ths = sorted(set(feature_thresholds(ens)[0]))
    below, above = ths[0] - 1.0, ths[-1] + 1.0
    for v1, v2 in ((below, above), (above, below)):
        q = _pinned_apart(ens, v1, v2)
        exact = _brute_max_gap(ens, q, lambda X: ens.proba(X)[:, 1], _ir_values(ens, q))
        holds_the_gap(ens, q, exact)


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary", "sk-hgb", "sk-rf"])
@pytest.mark.parametrize("seed", range(3))
def test_max_gap_under_per_input_bounds_is_the_library_s(family, seed, tmp_path):
    ens = binary_library_model(family, seed, tmp_path)
    rng = np.random.default_rng([49, seed])
    f = int(rng.integers(ens.n_features))
    values = {g: H.feature_values(ens, g) for g in range(ens.n_features)}
    vals = sorted(v for v in values[f] if not math.isnan(v))
    if len(vals) < 2:
        pytest.skip("a feature with one value")
    a, b = sorted(rng.choice(len(vals), size=2, replace=False).tolist())
    copy = int(rng.integers(1, 3))
    bound = FeatureBound(ens.feature_names[f], float(vals[a]), float(vals[b]), (copy,))
    q = Query(vary=(ens.feature_names[f],), bounds=(bound,), plan=Plan(timeout=30.0))
    assert class_pair_encodings(pair_encoding(ens, q.with_(gap=Gap(0.0)))) is not None
    proba = lambda X: np.asarray(ens.replayer.predict_proba(X))[:, 1]  # noqa: E731
    holds_the_gap(ens, q, _brute_max_gap(ens, q, proba, values))


def test_the_diabetes_example_s_fixed_profile_is_answered_by_the_box_search():
    sf = load_queries(EXAMPLES / "diabetes.sens")
    (q,) = sf.select("sex_middle_aged")
    boxes = solve_query(sf.ensemble, q.planned(backend="boxes"))
    solvers = solve_query(sf.ensemble, q)
    assert boxes.backend == "boxes" and boxes.status == solvers.status != "unknown"


CONTRACT = """model "{model}"
features from "{details}"
query woman_to_man {{
  vary sex
  gap 0.3
  fix x1.sex = 0
  fix x2.sex = 1
  where age in [40, 60] and bmi <= 25
  expect insensitive
}}
"""


def test_an_insensitive_answer_under_a_bound_on_one_input_gets_a_certificate(tmp_path, capsys):
    sens = tmp_path / "woman_to_man.sens"
    model, details = EXAMPLES / "diabetes_lgbm.txt", EXAMPLES / "diabetes_details.csv"
    sens.write_text(CONTRACT.format(model=model, details=details))
    assert main(["test", str(sens), "--certificates", str(tmp_path / "certs")]) == 0
    assert "proved by box search" in capsys.readouterr().out
    verdict = verify_file(tmp_path / "certs" / "woman_to_man.json")
    assert verdict.valid and "varying sex (x1 in [0, 0], x2 in [1, 1])" in verdict.message
