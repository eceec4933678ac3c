"""Relations between the inputs on a categorical feature of undeclared categories, whose
splits list a few codes of 0..9 (compiler/domain.py ``with_order_codes``). One code
standing for every category no split lists would meet ``!=`` and ``<`` only where a
listed code takes part, and stand below and above the listed codes at once (x1 = 5
listed, x2 = 8 unlisted read as 5 <= 0); cpsat, highs and the box search answer such
queries as brute force over every code does, on models built in the IR and on a trained
LightGBM model's own predict, and a relation on such a feature no tree reads too."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.ensemble import Ensemble, Feature, Tree
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, FeatureRelation, Gap, Query
from treesens.driver import solve_query
from treesens.readers.load import load_model
from treesens.tests.compiler.test_relations_in_boxes import COMPARE
from treesens.tests.oracle import random_ensemble

OPS = COMPARE  # each relation's test on arrays
CODES = [float(c) for c in range(10)]
BACKENDS = ("cpsat", "highs", "boxes")


def _coded(ens: Ensemble, listed_per_node) -> Ensemble:
    """``ens`` with feature 0 categorical over codes 0..9 no name declares, each node on
    it a categorical split listing ``listed_per_node()``'s codes."""
    trees = []
    for t in ens.trees:
        cats = [None] * len(t.feature)
        for n in np.flatnonzero(t.feature == 0).tolist():
            cats[n] = frozenset(listed_per_node())
        trees.append(replace(t, categories=tuple(cats)))
    c = Feature("c", "categorical", 0.0, 9.0)
    return replace(ens, trees=tuple(trees), features=(c, replace(ens.features[1], name="x")))


def _random_coded(seed: int) -> Ensemble:
    rng = np.random.default_rng([2026, 11, 28, 71, seed])
    pool = rng.choice(10, size=3, replace=False)  # the codes any split lists
    base = random_ensemble(7100 + seed, 4, 2, 2, 2, leaf_scale=1.0)
    return _coded(base, lambda: rng.choice(pool, size=int(rng.integers(1, 3)), replace=False))


def _stump_on_x(coded_cut: frozenset[int]) -> Ensemble:
    """One tree: c in ``coded_cut`` -> 0; else x < 0.5 -> -2, else +2: a pair reaching a
    gap needs a code no split lists on both inputs."""
    tree = Tree(
        feature=[0, -1, 1, -1, -1],
        threshold=[0.0, 0.0, 0.5, 0.0, 0.0],
        left=[1, -1, 3, -1, -1],
        right=[2, -1, 4, -1, -1],
        default_left=[False] * 5,
        value=np.array([[0.0], [0.0], [0.0], [-2.0], [2.0]]),
        outputs=(0,),
        categories=(coded_cut, None, None, None, None),
    )
    features = (Feature("c", "categorical", 0.0, 9.0), Feature("x", "real", 0.0, 1.0))
    return Ensemble((tree,), features, 2, (0.0,), "logistic")


def _x_values(ens: Ensemble) -> list[float]:
    """x's values: one per interval of its thresholds within [lb, ub] (or [-3, 3])."""
    feat = ens.features[1]
    ths = sorted({float(t.threshold[n]) for t in ens.trees for n in np.flatnonzero(t.feature == 1)})
    lo = feat.lb if np.isfinite(feat.lb) else -3.0
    hi = feat.ub if np.isfinite(feat.ub) else 3.0
    edges = [lo] + [t for t in ths if lo < t < hi] + [hi]
    return [lo, hi] + [(a + b) / 2 for a, b in zip(edges, edges[1:])] + [float(t) for t in ths]


def _brute(ens: Ensemble, q: Query, proba) -> bool:
    """Whether some pair over every code of c and x's values meets ``q`` (its gap, its
    bounds per input on c, its relations on c) by ``proba``."""
    xs = _x_values(ens)
    X = np.array(list(itertools.product(CODES, xs)))
    p = proba(X)
    varied = set(q.vary)
    one, two = np.meshgrid(np.arange(len(X)), np.arange(len(X)), indexing="ij")
    ok = (p[one] >= 0.5 + q.gap.value) & (p[two] <= 0.5 - q.gap.value)
    for f, name in enumerate(ens.feature_names):
        if name not in varied:
            ok &= X[one, f] == X[two, f]
    for b in q.bounds:
        for copy, K in ((1, one), (2, two)):
            if copy in b.copies:
                ok &= (X[K, 0] >= b.lo) & (X[K, 0] <= b.hi)
    for r in q.relations:
        a, c = (one, two) if r.left == 1 else (two, one)
        ok &= OPS[r.op](X[a, 0], X[c, 0])
    return bool(ok.any())


def _answers_as(ens: Ensemble, q: Query, expected: bool, backend: str) -> None:
    r = solve_query(ens, q.with_(plan=Plan(backend=backend, timeout=30.0)))
    assert r.status == ("sensitive" if expected else "insensitive"), (backend, q, r.error)
    if expected:
        w = r.witness_arrays
        assert not constraint_violations(ens, q, w.x1, w.x2), (backend, q, w.x1, w.x2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["!=", "<", ">"])
def test_two_different_categories_no_split_lists_meet_a_relation(backend, op):
    # a pair needs c unlisted on both inputs (3..9), x supplying the gap: x1.c != x2.c,
    # x1.c < x2.c and x1.c > x2.c all hold of 3 and 4, which one code stood for
    ens = _stump_on_x(frozenset({0, 1, 2}))
    q = Query(vary=("c", "x"), gap=Gap(0.3), relations=(FeatureRelation("c", 1, op, 2),))
    assert _brute(ens, q, lambda X: ens.proba(X)[:, 1])
    _answers_as(ens, q, True, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op", ["<=", "<"])
def test_categories_no_split_lists_lie_above_a_listed_code_too(backend, op):
    # c in {5} goes one way, the rest the other: x1.c = 5 and x2.c = 8 meet x1 <= x2,
    # where the code 0 standing for every unlisted category did not
    tree = Tree(
        feature=[0, -1, -1],
        threshold=[0.0, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[False] * 3,
        value=np.array([[0.0], [2.0], [-2.0]]),
        outputs=(0,),
        categories=(frozenset({5}), None, None),
    )
    features = (Feature("c", "categorical", 0.0, 9.0), Feature("x", "real", 0.0, 1.0))
    ens = Ensemble((tree,), features, 2, (0.0,), "logistic")
    q = Query(vary=("c",), gap=Gap(0.3), relations=(FeatureRelation("c", 1, op, 2),))
    assert _brute(ens, q, lambda X: ens.proba(X)[:, 1])
    _answers_as(ens, q, True, backend)


def _random_query(rng, ens: Ensemble) -> Query:
    vary = ("c", "x") if rng.random() < 0.6 else ("c",)
    op = str(rng.choice([o for o in OPS if o != "==" or len(vary) > 1]))  # == alone: vacuous
    q = Query(vary=vary, gap=Gap(float(rng.choice([0.0, 0.1, 0.2]))))
    q = q.with_(relations=(FeatureRelation("c", 1, op, 2),))
    if rng.random() < 0.4:  # a bound on one input's codes
        lo = int(rng.integers(0, 7))
        q = q.with_(
            bounds=(FeatureBound("c", float(lo), float(lo + 3), (int(rng.integers(1, 3)),)),)
        )
    return q


@pytest.mark.parametrize("seed", range(6))
def test_relations_on_unlisted_categories_are_answered_as_brute_force_does(seed):
    rng = np.random.default_rng([2026, 11, 28, 72, seed])
    ens = _random_coded(seed)
    for _ in range(3):
        q = _random_query(rng, ens)
        expected = _brute(ens, q, lambda X: ens.proba(X)[:, 1])
        for backend in BACKENDS:
            _answers_as(ens, q, expected, backend)


@pytest.mark.parametrize("op", ["!=", "<", ">", "<=", "=="])
def test_a_relation_on_such_a_feature_no_tree_reads_is_answered(op):
    # only x is read: any two codes meet the relation (c in [3, 7] on x1, [3, 4] on x2)
    ens = _stump_on_x(frozenset({0, 1, 2}))
    t = ens.trees[0]
    ens = replace(
        ens,
        trees=(
            replace(
                t,
                feature=[1, -1, -1],
                categories=None,
                left=[1, -1, -1],
                right=[2, -1, -1],
                threshold=[0.5, 0, 0],
                default_left=[False] * 3,
                value=np.array([[0.0], [-2.0], [2.0]]),
            ),
        ),
    )
    q = Query(vary=("c", "x"), gap=Gap(0.0), relations=(FeatureRelation("c", 1, op, 2),))
    q = q.with_(bounds=(FeatureBound("c", 3.0, 7.0, (1,)), FeatureBound("c", 3.0, 4.0, (2,))))
    expected = _brute(ens, q, lambda X: ens.proba(X)[:, 1])
    for backend in BACKENDS:
        _answers_as(ens, q, expected, backend)


def _lightgbm_coded(tmp_path) -> Ensemble:
    """A LightGBM model whose splits list the codes 0..5 of c (seen in training), c
    declared over 0..9: 6..9 are categories no split lists."""
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(5)
    c, x = rng.integers(0, 6, 3000), rng.random(3000)
    y = np.where(c >= 3, x > 0.5, rng.random(3000) < 0.5).astype(int)
    data = lgb.Dataset(np.c_[c, x], y, categorical_feature=[0], feature_name=["c", "x"])
    params = dict(objective="binary", num_leaves=4, learning_rate=0.5, verbose=-1)
    params.update(min_data_per_group=5, cat_smooth=1, max_cat_to_onehot=1)
    lgb.train(params, data, 5).save_model(tmp_path / "m.txt")
    ens = load_model(str(tmp_path / "m.txt"))
    c = replace(ens.features[0], lb=0.0, ub=9.0)
    return ens.with_features((c, replace(ens.features[1], lb=0.0, ub=1.0)))


@pytest.mark.parametrize("op", ["!=", "<", "<=", ">"])
def test_relations_on_unlisted_categories_are_the_library_s_predict(op, tmp_path):
    ens = _lightgbm_coded(tmp_path)
    proba = lambda X: np.asarray(ens.replayer.predict_proba(X))[:, 1]  # noqa: E731
    q = Query(vary=("c", "x"), gap=Gap(0.2), relations=(FeatureRelation("c", 1, op, 2),))
    for bounds in (
        (),
        (FeatureBound("c", 6.0, 9.0),),  # both inputs: the unlisted categories alone
        (FeatureBound("c", 4.0, 9.0, (1,)), FeatureBound("c", 6.0, 9.0, (2,))),
    ):
        asked = q.with_(bounds=bounds)
        expected = _brute(ens, asked, proba)
        for backend in BACKENDS:
            _answers_as(ens, asked, expected, backend)
