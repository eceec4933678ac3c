"""Query bounds and relations (compiler/passes/feature_constraints.py) against brute force.

The oracle here enumerates, per feature, the minimum and maximum admissible value of every
class of values that no constraint or split can tell apart (same routing at every
threshold, same side of every bound end). Any pair's feasibility depends only on the
classes of its values and on their order inside a class, so the min/max per class makes
the enumeration complete for bounds and for <=, <, == relations.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, ModelOrigin, Tree
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import (
    FeatureBound,
    FeatureRelation,
    Gap,
    Query,
    check_relations_within_bounds,
)
from treesens.driver import solve_query
from treesens.questions.max_gap import max_gap_query
from treesens.tests.oracle import _raw_candidates, feature_thresholds, random_ensemble

OPS = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater, "==": np.equal}


def _values(ens, f, ths, ends):
    feat = ens.features[f]
    raw = set(_raw_candidates(ens, feat, ths))
    for e in ends:
        if math.isfinite(e):
            raw |= {
                e,
                math.nextafter(e, math.inf),
                math.nextafter(e, -math.inf),
                math.floor(e),
                math.ceil(e),
            }
    pts = sorted(
        v
        for v in raw
        if math.isfinite(v)
        and feat.lb <= v <= feat.ub
        and (not feat.integral or v == math.floor(v))
    )
    raw |= {(a + b) / 2 for a, b in zip(pts, pts[1:])} | {-10.0, 10.0}
    classes: dict[tuple, list[float]] = {}
    for v in sorted(raw):
        if (
            not math.isfinite(v)
            or v < feat.lb
            or v > feat.ub
            or (feat.integral and v != math.floor(v))
        ):
            continue
        sig = tuple(ens.test_holds(v, t) for t in ths) + tuple((v < e, v > e) for e in ends)
        classes.setdefault(sig, []).append(v)
    out = set()
    for vs in classes.values():
        out |= {vs[0], vs[-1]}
    return sorted(out)


def candidate_values(ens, q: Query):
    """The varied and the shared columns, each column's values (one per class of values
    no split or bound end tells apart: ``_values``), and whether a value of a column meets
    the query's bounds for a copy (1 or 2)."""
    names = ens.feature_names
    varying = sorted(names.index(v) for v in q.vary)
    shared = [f for f in range(ens.n_features) if f not in varying]
    ths = feature_thresholds(ens)
    ends = {f: set() for f in range(ens.n_features)}
    for b in q.bounds:
        ends[names.index(b.feature)] |= {b.lo, b.hi}
    vals = {f: _values(ens, f, ths[f], sorted(ends[f])) for f in range(ens.n_features)}

    def within(f, v, copy):
        return all(
            b.lo <= v <= b.hi for b in q.bounds if names.index(b.feature) == f and copy in b.copies
        )

    return varying, shared, vals, within


def brute(ens, q: Query) -> bool:
    names = ens.feature_names
    varying, shared, vals, ok_bounds = candidate_values(ens, q)
    S = [[v for v in vals[f] if ok_bounds(f, v, 1) and ok_bounds(f, v, 2)] for f in shared]
    V = [[[v for v in vals[f] if ok_bounds(f, v, c)] for f in varying] for c in (1, 2)]
    S = np.array(list(itertools.product(*S)), dtype=float).reshape(-1, len(shared))
    V1 = np.array(list(itertools.product(*V[0])), dtype=float).reshape(-1, len(varying))
    V2 = np.array(list(itertools.product(*V[1])), dtype=float).reshape(-1, len(varying))
    if not len(S) or not len(V1) or not len(V2):
        return False
    R = np.ones((len(V1), len(V2)), dtype=bool)
    for r in q.relations:
        f = names.index(r.feature)
        if f in varying:
            k = varying.index(f)
            u, w = V1[:, k][:, None], V2[:, k][None, :]  # x1 values down, x2 values across
            R &= OPS[r.op](u, w) if r.left == 1 else OPS[r.op](w, u)
        elif r.op in ("<", ">"):
            return False
    g = q.gap.value

    def side(Vc, copy):
        X = np.empty((len(S) * len(Vc), ens.n_features))
        X[:, shared] = np.repeat(S, len(Vc), axis=0)
        X[:, varying] = np.tile(Vc, (len(S), 1))
        p = ens.proba(X)[:, 1]
        ok = p >= 0.5 + g if copy == 1 else p <= 0.5 - g
        return ok.reshape(len(S), len(Vc))

    ok1, ok2 = side(V1, 1), side(V2, 2)
    reach = (ok1.astype(np.int64) @ R.astype(np.int64)) > 0
    return bool((reach & ok2).any())


def _random_query(rng, ens, kind: str) -> Query:
    names = ens.feature_names
    ths = feature_thresholds(ens)
    vary = tuple(sorted(rng.choice(names, size=2, replace=False).tolist()))
    bounds, rels = [], []
    for _ in range(int(rng.integers(0, 3))):
        f = int(rng.integers(ens.n_features))
        pts = sorted(set(ths[f]) | {-3.0, 3.0}) or [0.0]
        lo = float(rng.choice(pts)) + float(rng.choice([-0.5, 0.0, 0.25]))
        hi = lo + float(rng.choice([0.0, 0.5, 1.0, 2.0]))
        if kind == "integer":
            lo, hi = float(math.floor(lo)), float(math.floor(hi))
        copies = [(1, 2), (1,), (2,)][int(rng.integers(3))]
        bounds.append(FeatureBound(names[f], lo, hi, copies))
    for _ in range(int(rng.integers(1, 3))):
        f = str(rng.choice(vary)) if rng.random() < 0.85 else str(rng.choice(names))
        op = str(rng.choice(["<=", "<", ">=", ">", "=="]))
        left = int(rng.integers(1, 3))
        rels.append(FeatureRelation(f, left, op, 3 - left))
    return Query(
        vary=vary,
        gap=Gap(0.05),
        bounds=tuple(bounds),
        relations=tuple(rels),
        name="rand",
        plan=Plan(timeout=20.0),
    )


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("TS_FC_SEEDS", 8))))
def test_bounds_and_relations_agree_with_brute_force(kind, seed):
    rng = np.random.default_rng(1000 * seed + len(kind))
    ens = random_ensemble(
        rng, n_trees=4, depth=2, n_features=3, n_thresholds=3, integer_features=(kind != "real")
    )
    if kind == "binary":
        # thresholds at k+0.5: as binary features only the split at 0.5 matters
        ens = ens.with_features(tuple(Feature(f.name, "binary") for f in ens.features))

    for _ in range(4):
        q = _random_query(rng, ens, kind)
        try:
            expected = brute(ens, q)
        except Exception as e:  # pragma: no cover - the oracle itself failing is a test bug
            raise AssertionError(f"oracle failed on {q}") from e
        try:
            res = solve_query(ens, q)
        except InputError as e:
            # only when the constraints leave nothing: then brute force finds nothing either
            assert not expected, f"{q}: InputError {e} but brute force finds a pair"
            continue
        assert res.status in ("sensitive", "insensitive"), (q, res.status, res.error, res.message)
        assert (res.status == "sensitive") == expected, (q, res.status, expected)
        if res.status == "sensitive":
            w = res.witness_arrays
            assert not constraint_violations(ens, q, w.x1, w.x2)


def test_non_varied_strict_relation_is_an_input_error():
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.05), relations=(FeatureRelation("f1", 1, "<", 2),))
    with pytest.raises(InputError, match="not varied"):
        solve_query(ens, q)


def test_bound_outside_declared_range_is_an_input_error():
    ens = random_ensemble(
        4, n_trees=3, depth=2, n_features=3, n_thresholds=2, integer_features=True
    )
    ens = ens.with_features(tuple(Feature(f.name, "integer", 0, 5) for f in ens.features))
    q = Query(vary=("f0",), gap=Gap(0.05), bounds=(FeatureBound("f0", 7, 9, (1,)),))
    with pytest.raises(InputError, match="leave no value"):
        solve_query(ens, q)


def test_unknown_feature_in_bound_suggests():
    ens = random_ensemble(5, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.05), bounds=(FeatureBound("f11", 0, 1),))
    with pytest.raises(InputError, match="did you mean"):
        solve_query(ens, q)


def test_strict_relation_on_binary_feature_forces_0_then_1():
    # one stump on a binary feature: x1.b < x2.b leaves only x1.b = 0, x2.b = 1
    from treesens.tests.oracle import subset_sum_ensemble

    ens = subset_sum_ensemble([1], 1)  # raw = x0 - 1 -+ 0.5 with f' ; f0 binary
    q = Query(
        vary=("f'",),
        gap=Gap(0.2, "margin"),
        relations=(FeatureRelation("f'", 1, "<", 2),),
        name="lt",
    )
    res = solve_query(ens, q)
    # x1 must have the higher score: f'=1 gives -k+0.5, so x1.f' < x2.f' (x1.f'=0) cannot win
    assert res.status == "insensitive"
    q2 = q.with_(relations=(FeatureRelation("f'", 1, ">", 2),))
    res2 = solve_query(ens, q2)
    assert res2.status == "sensitive"
    w = res2.witness_arrays
    assert w.x1[1] == 1.0 and w.x2[1] == 0.0


def test_a_relation_the_bounds_rule_out_is_an_input_error_not_insensitive():
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(
        vary=("f0",),
        gap=Gap(0.05),
        bounds=(FeatureBound("f0", lo=0.8, copies=(1,)), FeatureBound("f0", hi=0.2, copies=(2,))),
        relations=(FeatureRelation("f0", 1, "<=", 2),),
    )
    with pytest.raises(InputError, match="cannot hold within the bounds"):
        solve_query(ens, q)


def test_a_relation_past_the_last_named_category_is_ruled_out_though_the_bound_is_open():
    # a .sens file without data bounds leaves region in [0, inf): code 3 ("Sud") is its
    # last category, so x1.region == "Sud" < x2.region leaves no pair (was found solving)
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    region = Feature("region", "categorical", 0.0, math.inf, ("Est", "Nord", "Ouest", "Sud"))
    ens = replace(ens, features=(region, *ens.features[1:]))
    bounds = {(0, 0): (3.0, 3.0)}
    with pytest.raises(InputError, match='x1.region is "Sud", x2.region is one of'):
        check_relations_within_bounds(ens, {0}, {0: [(0, 1, "<")]}, bounds)


def test_bounds_holding_the_varied_feature_to_one_value_are_an_input_error_not_insensitive():
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.05), bounds=(FeatureBound("f0", 0.5, 0.5),))
    with pytest.raises(InputError, match="x1 and x2 cannot differ"):
        solve_query(ens, q)


def test_a_relation_holding_the_varied_features_equal_is_an_input_error():
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.05), relations=(FeatureRelation("f0", 1, "==", 2),))
    with pytest.raises(InputError, match="x1 and x2 cannot differ"):
        solve_query(ens, q)


def test_a_bound_at_the_domain_s_end_and_an_order_holding_both_inputs_there_is_an_input_error():
    # f0 whole numbers in [-3, 1]: x1.f0 in [-4, -3] is -3, and x1.f0 >= x2.f0 holds x2.f0
    # at -3 too, so x1 and x2 cannot differ; it was "insensitive", as a check and as a
    # max gap (upper 0)
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    ens = ens.with_features((Feature("f0", "integer", -3, 1), *ens.features[1:]))
    q = Query(
        vary=("f0",),
        gap=Gap(0.0),
        bounds=(FeatureBound("f0", -4.0, -3.0, (1,)),),
        relations=(FeatureRelation("f0", 1, ">=", 2),),
    )
    with pytest.raises(InputError, match="x1 and x2 cannot differ"):
        solve_query(ens, q)
    with pytest.raises(InputError, match="x1 and x2 cannot differ"):
        max_gap_query(ens, q)


def test_an_order_on_a_feature_of_one_value_that_may_be_missing_is_an_input_error():
    # the relation keeps both inputs from NaN: each is 0.5
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    one = Feature("f0", lb=0.5, ub=0.5, may_be_missing=True)
    ens = ens.with_features((one, *ens.features[1:]))
    q = Query(vary=("f0",), gap=Gap(0.05), relations=(FeatureRelation("f0", 1, "<=", 2),))
    with pytest.raises(InputError, match="x1 and x2 cannot differ"):
        solve_query(ens, q)


def test_declared_bounds_of_one_value_are_said_without_the_datas_advice():
    # said "bounds taken from the data's range mean every row holds that value ... or use
    # all the data" of a details file's lb == ub, no data given
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    ens = ens.with_features((Feature("f0", lb=0.5, ub=0.5), *ens.features[1:]))
    with pytest.raises(InputError, match=r"\(f0 = 0\.5\).*: declare wider bounds") as e:
        solve_query(ens, Query(vary=("f0",), gap=Gap(0.05)))
    assert "data" not in str(e.value)


def test_an_order_leaving_each_input_a_range_still_leaves_a_question():
    # x1.f0 >= x2.f0 with x1.f0 in [-4, -2]: x1.f0 -3 or -2, x2.f0 at most x1.f0
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    ens = ens.with_features((Feature("f0", "integer", -3, 1), *ens.features[1:]))
    q = Query(
        vary=("f0",),
        gap=Gap(0.0),
        bounds=(FeatureBound("f0", -4.0, -2.0, (1,)),),
        relations=(FeatureRelation("f0", 1, ">=", 2),),
    )
    assert solve_query(ens, q).status in ("sensitive", "insensitive")


def test_one_of_two_varied_features_held_equal_still_leaves_a_question():
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0", "f1"), gap=Gap(0.05), relations=(FeatureRelation("f0", 1, "==", 2),))
    assert solve_query(ens, q).status in ("sensitive", "insensitive")


def test_a_varied_feature_of_one_value_that_may_be_missing_still_leaves_a_question():
    # x1.f0 = 0.5 and x2.f0 missing (NaN) differ: no input error, the solver answers
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    one = Feature("f0", lb=0.5, ub=0.5, may_be_missing=True)
    ens = ens.with_features((one, *ens.features[1:]))
    q = Query(vary=("f0",), gap=Gap(0.05), bounds=(FeatureBound("f1", -5.0, 5.0),))
    assert solve_query(ens, q).status in ("sensitive", "insensitive")


def _pair_only_where_f1_is_missing():
    """Binary, f0 and f1: raw +-5 by f0 only on the path a missing f1 takes (f1 < 0 to the
    left, then f1 < 0 to the right: no number reaches it); -5 everywhere else."""
    tree = Tree(
        feature=[1, 1, -1, -1, 0, -1, -1],
        threshold=[0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0],
        left=[1, 3, -1, -1, 5, -1, -1],
        right=[2, 4, -1, -1, 6, -1, -1],
        default_left=[True, False, False, False, True, False, False],
        value=np.array([[0.0], [0.0], [-5.0], [-5.0], [0.0], [-5.0], [5.0]]),
        outputs=(0,),
    )
    return Ensemble(
        trees=(tree,),
        features=(Feature("f0"), Feature("f1", may_be_missing=True)),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        op="<",
        cast="float32",
        origin=ModelOrigin("test", "missing-only pair"),
        replayer=None,
    )


@pytest.mark.parametrize("op", ["<=", ">=", "=="])
def test_a_relation_on_a_shared_feature_holds_when_both_inputs_miss_it(op):
    # docs/language.md: outside vary both inputs share the value, so <=, >=, == always
    # hold; the pair exists only with f1 missing, which the witness check once refused
    ens = _pair_only_where_f1_is_missing()
    q = Query(vary=("f0",), gap=Gap(0.2), relations=(FeatureRelation("f1", 1, op, 2),))
    for options in ({}, {"heuristic": False, "box_search": False}):
        r = solve_query(ens, q.planned(options=options))
        assert r.status == "sensitive", (options, r.status, r.error)
        assert math.isnan(r.witness_arrays.x1[1]) and math.isnan(r.witness_arrays.x2[1])


def _pair_only_where_x1_f0_is_missing():
    """Binary, f0 only: raw +5 on the path a missing f0 takes (f0 < 0 to the left, then
    f0 < 0 to the right: no number reaches it); -5 everywhere else."""
    tree = Tree(
        feature=[0, 0, -1, -1, -1],
        threshold=[0.0, 0.0, 0.0, 0.0, 0.0],
        left=[1, 3, -1, -1, -1],
        right=[2, 4, -1, -1, -1],
        default_left=[True, False, False, False, False],
        value=np.array([[0.0], [0.0], [-5.0], [-5.0], [5.0]]),
        outputs=(0,),
    )
    return Ensemble(
        trees=(tree,),
        features=(Feature("f0", may_be_missing=True),),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        op="<",
        cast="float32",
        origin=ModelOrigin("test", "x1 missing only"),
        replayer=None,
    )


def test_a_bound_on_x2_is_met_when_x1_is_missing():
    # x1.f0 must be missing (no bound on it), x2.f0 is held to 0.25: the witness's x2
    # once kept its cell's representative, outside the bound (an internal error)
    ens = _pair_only_where_x1_f0_is_missing()
    q = Query(vary=("f0",), gap=Gap(0.2), bounds=(FeatureBound("f0", 0.25, 0.25, (2,)),))
    r = solve_query(ens, q)
    assert r.status == "sensitive", (r.status, r.error)
    assert math.isnan(r.witness_arrays.x1[0]) and r.witness_arrays.x2[0] == 0.25


@pytest.mark.parametrize("end", [math.inf, -math.inf])
def test_a_bound_holding_a_feature_to_an_infinity_is_an_input_error(end):
    # no input is infinite: [inf, inf] once gave an internal error (the witness outside
    # it) and [-inf, -inf] a vacuous "insensitive"
    ens = random_ensemble(3, n_trees=3, depth=2, n_features=3, n_thresholds=2)
    q = Query(vary=("f0",), gap=Gap(0.0), bounds=(FeatureBound("f1", end, end),))
    with pytest.raises(InputError, match="no admissible value"):
        solve_query(ens, q)
