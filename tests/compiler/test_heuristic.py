"""The pre-solver heuristic: a pair it reports meets the gap, it never reports one where
none exists, and under its work bound it gives the same pair every time."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.ensemble import Tree
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver import compile_query
from treesens.search.heuristic import Spent, find_witness
from treesens.tests.oracle import brute_force_sensitive, random_ensemble, subset_sum_ensemble

WORK = 20_000


def _encoding(ens, q):
    return compile_query(ens, q).encoding


def _margins(ens, x1, x2):
    raw = ens.raw(np.stack([x1, x2]))
    return float(raw[0, 0]), float(raw[1, 0])


def _small_cases(n=40, gap=0.15):
    for seed in range(n):
        ens = random_ensemble(seed, 6, 3, 3, 3, leaf_scale=1.2)
        yield ens, Query(vary=("f0",), gap=Gap(gap))


def test_a_reported_pair_meets_both_sides_and_differs_only_in_the_varied_feature():
    checked = 0
    for ens, q in _small_cases():
        enc = _encoding(ens, q)
        found = find_witness(enc, 10.0, margin=2 * enc.relax, work=WORK)
        if found is None or not found[2]:
            continue
        x1, x2, _ = found
        m1, m2 = _margins(ens, x1, x2)
        delta = enc.condition.rows[0][0][1]
        assert m1 >= delta and m2 <= -delta
        assert np.array_equal(x1[1:], x2[1:])
        checked += 1
    assert checked >= 5  # the sample must exercise the claim


def test_no_pair_is_reported_where_brute_force_finds_none():
    refuted = 0
    for ens, q in _small_cases(gap=0.3):
        if brute_force_sensitive(ens, q):
            continue
        enc = _encoding(ens, q)
        found = find_witness(enc, 10.0, margin=2 * enc.relax, work=WORK)
        assert found is None or not found[2]
        refuted += 1
    assert refuted >= 5


def test_the_same_seed_and_work_bound_give_the_same_pair():
    ens = random_ensemble(7, 30, 4, 5, 6, leaf_scale=0.5)
    enc = _encoding(ens, Query(vary=("f1",), gap=Gap(0.3)))
    a = find_witness(enc, 60.0, seed=3, work=50_000)
    b = find_witness(enc, 60.0, seed=3, work=50_000)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) and a[2] == b[2]


def test_a_search_adds_its_evaluations_to_spent():
    ens = random_ensemble(7, 30, 4, 5, 6, leaf_scale=0.5)
    enc = _encoding(ens, Query(vary=("f1",), gap=Gap(0.3)))
    spent = Spent()
    find_witness(enc, 60.0, seed=3, work=50_000, spent=spent)
    once = spent.evaluations
    find_witness(enc, 60.0, seed=3, work=50_000, spent=spent)
    assert once > 0 and spent.evaluations == 2 * once


def test_the_subset_sum_pair_is_found_when_the_subset_exists():
    # only 3 + 5 = 8: f' moves the score from -0.25 to +0.25 exactly when f0, f1 are set
    ens = subset_sum_ensemble([3, 5, 7], 8)
    enc = _encoding(ens, Query(vary=("f'",), gap=Gap(0.25, "margin")))
    x1, x2, ok = find_witness(enc, 10.0, work=WORK)
    assert ok
    assert [v > 0.5 for v in x1[:3]] == [True, True, False]


@pytest.mark.parametrize("balance", [0.0, 0.5, 3.0, 50.0])
def test_every_balance_reports_only_pairs_that_meet_the_gap(balance):
    for ens, q in _small_cases(15):
        enc = _encoding(ens, q)
        found = find_witness(enc, 10.0, margin=2 * enc.relax, work=WORK, balance=balance)
        if found is not None and found[2]:
            m1, m2 = _margins(ens, found[0], found[1])
            delta = enc.condition.rows[0][0][1]
            assert m1 >= delta and m2 <= -delta


# bench/heuristic.py is not part of the installed package: load it from this checkout
_BENCH = Path(__file__).resolve().parents[2] / "bench" / "heuristic.py"


@pytest.fixture(scope="module")
def bench_heuristic():
    if not _BENCH.exists():
        pytest.skip("bench/ is not beside this test (an installed copy of the tests)")
    spec = importlib.util.spec_from_file_location("bench_heuristic", _BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_benchmark_variant_names_tuning_arguments(bench_heuristic):
    assert bench_heuristic.parse_variant("default") == ("default", {})
    name, kw = bench_heuristic.parse_variant("balance=0.5,candidates=96,work=2")
    assert kw == {"balance": 0.5, "candidates": 96, "work": 2.0}


def test_a_benchmark_variant_names_how_the_trees_are_walked(bench_heuristic):
    assert bench_heuristic.parse_variant("walk=numpy") == ("walk=numpy", {"walk": "numpy"})
    with pytest.raises(SystemExit, match="walk=fast"):
        bench_heuristic.parse_variant("walk=fast")


def test_a_benchmark_variant_with_an_unknown_key_is_refused(bench_heuristic):
    with pytest.raises(SystemExit, match="speed=2"):
        bench_heuristic.parse_variant("speed=2")


def test_heuristic_effort_multiplies_the_work_bound_in_the_pipeline():
    from treesens.driver import solve_query
    from treesens.search.heuristic_stage import heuristic_work

    ens = subset_sum_ensemble([3, 5, 7], 11)  # no subset sums to 11: nothing to find
    q = Query(vary=("f'",), gap=Gap(0.25, "margin"), plan=Plan(timeout=60.0))
    plain = solve_query(ens, q)
    more = solve_query(ens, q.planned(options=(("heuristic_effort", 3.0),)))
    assert plain.stats["heuristic_work"] == heuristic_work(ens)
    assert more.stats["heuristic_work"] == 3 * heuristic_work(ens)


def test_the_joint_walk_reaches_the_leaf_each_tree_reaches():
    from treesens.search.heuristic import _TreeEval

    ens = random_ensemble(11, 25, 4, 5, 6, leaf_scale=0.5)
    ev = _TreeEval(_encoding(ens, Query(vary=("f1",), gap=Gap(0.2))))
    X = np.random.default_rng(0).uniform(-1.5, 1.5, (40, ens.n_features))
    X = X.astype(np.float32).astype(np.float64) if ens.cast == "float32" else X
    trees = np.arange(len(ens.trees))
    joint = ev.leaves(trees, X) - ev.forest.root[:, None]  # back to each tree's node ids
    assert np.array_equal(joint.T, ens.leaf_indices(X))


def test_the_walk_of_some_trees_gives_their_contributions_and_counts_their_work():
    from treesens.search.heuristic import _TreeEval

    ens = random_ensemble(12, 20, 3, 4, 5, leaf_scale=0.5)
    ev = _TreeEval(_encoding(ens, Query(vary=("f0",), gap=Gap(0.2))))
    X = np.random.default_rng(1).uniform(-1.5, 1.5, (7, ens.n_features))
    X = X.astype(np.float32).astype(np.float64) if ens.cast == "float32" else X
    some = np.array([3, 0, 17])
    values = ev.tree_values(some, X)
    leaves = ens.leaf_indices(X)
    for k, ti in enumerate(some):
        t = ens.trees[ti]
        assert np.allclose(values[k, :, 0], t.value[leaves[:, ti], 0] * ens.scale, rtol=0, atol=0)
    assert ev.work == 3 * (7 + 8)


def test_the_heuristics_tree_tables_are_built_once_per_model():
    from treesens.search.heuristic import _TreeEval

    ens = random_ensemble(13, 10, 3, 4, 5)
    a = _TreeEval(_encoding(ens, Query(vary=("f0",), gap=Gap(0.2))))
    b = _TreeEval(_encoding(ens, Query(vary=("f2",), gap=Gap(0.1))))
    assert a.forest is b.forest


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_forest_lists_for_each_feature_the_trees_that_test_it(n_classes):
    from treesens.search.heuristic import _Forest

    ens = random_ensemble(14, 30, 4, 6, 4, n_classes=n_classes)
    uses = _Forest.of(ens).uses
    for f in range(ens.n_features):
        testing = [i for i, t in enumerate(ens.trees) if (t.feature == f).any()]
        assert uses[f].tolist() == testing


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_forests_node_values_are_each_trees_scaled_in_its_output_column(n_classes):
    from treesens.search.heuristic import _Forest

    ens = random_ensemble(15, 30, 4, 6, 4, n_classes=n_classes)
    fo = _Forest.of(ens)
    for t, r in zip(ens.trees, fo.root, strict=True):
        block = fo.contrib[r : r + t.n_nodes]
        expected = np.zeros_like(block)
        for j, o in enumerate(t.outputs):
            expected[:, o] += t.value[:, j] * ens.scale
        assert np.array_equal(block, expected)


def test_a_pair_the_heuristic_finds_needs_no_list_of_each_trees_leaves():
    from treesens.compiler import encode
    from treesens.questions.ask import answer
    from treesens.readers.load import load_model

    ens = load_model(Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json")
    res = answer(ens, Query(vary=("worst_area",), gap=Gap(0.3)))
    assert res.stats["found_by"] == "heuristic"
    assert "leaves" not in encode.ensemble_structure(ens).__dict__  # computed when first read


def _compiled_and_numpy(ens, q):
    """The same model's evaluator twice: walking compiled, and with numpy."""
    from treesens.search import heuristic

    enc = _encoding(ens, q)
    numpy_walk = heuristic._TreeEval(enc)
    numpy_walk.jit, numpy_walk.jit_from = None, math.inf
    compiled = heuristic._TreeEval(enc)
    compiled.jit_from = 0
    return compiled, numpy_walk


@pytest.mark.parametrize(("op", "cast"), [("<", "float32"), ("<=", "float64")])
def test_the_compiled_walk_reaches_the_leaf_the_numpy_walk_reaches(op, cast):
    ens = random_ensemble(16, 40, 6, 5, 6, op=op, cast=cast, close_thresholds=True)
    compiled, numpy_walk = _compiled_and_numpy(ens, Query(vary=("f1",), gap=Gap(0.2)))
    rng = np.random.default_rng(2)
    X = rng.uniform(-1.5, 1.5, (60, ens.n_features))
    thresholds = compiled.forest.threshold[compiled.forest.feature >= 0]
    X[:20] = rng.choice(thresholds, (20, ens.n_features))  # inputs on a threshold: ties
    X[20:25, 2] = np.nan  # a missing value goes where the comparison's False sends it
    trees = np.arange(len(ens.trees))[::-1]
    assert np.array_equal(compiled.leaves(trees, X), numpy_walk.leaves(trees, X))


def test_trees_walked_in_turn_each_reach_their_own_leaf_whatever_the_others_depths():
    from treesens.search.tree_eval_jit import TREES_AT_ONCE

    ens = random_ensemble(23, TREES_AT_ONCE + 3, 3, 4, 5)  # a last group not full
    trees = list(ens.trees)
    trees[2] = _chain(40)  # a group with one tree far deeper than the others
    deep = dataclasses.replace(ens, trees=tuple(trees))
    compiled, _ = _compiled_and_numpy(deep, Query(vary=("f1",), gap=Gap(0.2)))
    X = np.random.default_rng(5).uniform(-1.5, 1.5, (9, deep.n_features))
    X[:, 0] = np.linspace(-0.5, 4.5, 9)  # the chain's leaves at depths 1 to 40
    X = X.astype(np.float32).astype(np.float64) if deep.cast == "float32" else X
    joint = compiled.leaves(np.arange(len(deep.trees)), X) - compiled.forest.root[:, None]
    assert np.array_equal(joint.T, deep.leaf_indices(X))


def test_the_compiled_sum_of_tree_changes_rounds_as_the_sum_tree_after_tree():
    compiled, numpy_walk = _compiled_and_numpy(
        random_ensemble(17, 5, 2, 3, 3), Query(vary=("f0",), gap=Gap(0.2))
    )
    compiled.leaves(np.arange(1), np.zeros((1, 3)))  # loads the compiled walk
    change = np.random.default_rng(3).normal(0, 1e8, (300, 7, 1)) * 10.0 ** -np.arange(7)[:, None]
    a, b = np.full((7, 1), 0.1), np.full((7, 1), 0.1)
    compiled.add_in_order(a, change)
    numpy_walk.add_in_order(b, change)
    assert np.array_equal(a, b)
    backwards = np.full((7, 1), 0.1)
    for d in change[::-1]:
        backwards += d
    assert not np.array_equal(a, backwards)  # the order shows in the rounding


@pytest.mark.parametrize(("op", "cast", "n_classes"), [("<", "float32", 2), ("<=", "float64", 3)])
def test_one_walk_over_a_features_values_adds_what_the_rows_walked_one_by_one_add(
    op, cast, n_classes
):
    ens = random_ensemble(21, 40, 6, 5, 6, n_classes, op=op, cast=cast, close_thresholds=True)
    classes = (0, 1) if n_classes > 2 else None
    q = Query(vary=("f1",), gap=Gap(2.0 if classes else 0.2), classes=classes)
    compiled, numpy_walk = _compiled_and_numpy(ens, q)
    compiled.leaves(np.arange(1), np.zeros((1, ens.n_features)))  # loads the compiled walk
    rng = np.random.default_rng(4)
    fo = compiled.forest
    for f in range(ens.n_features):
        x = rng.uniform(-1.5, 1.5, ens.n_features)
        on_f = fo.threshold[fo.feature == f]
        # ties on thresholds, repeats, a missing value, unsorted
        vals = np.concatenate([rng.uniform(-2, 2, 30), on_f, on_f[:3], [np.nan, -np.inf]])
        vals = rng.permutation(vals)
        trees = np.arange(len(ens.trees))[::-1]
        before = numpy_walk.tree_values(trees, x[None])[:, 0]  # x's own contributions
        numpy_walk.work = compiled.work
        start = rng.normal(0, 1, (len(vals), ens.n_outputs))
        X = np.repeat(x[None], len(vals), 0)
        X[:, f] = vals
        rows = start.copy()
        numpy_walk.add_in_order(rows, numpy_walk.tree_values(trees, X) - before[:, None, :])
        at_once = start.copy()
        assert compiled.add_changes(at_once, trees, x, f, vals, before)
        assert np.array_equal(at_once, rows)
        assert compiled.work == numpy_walk.work  # the same work counted


def test_a_walk_not_yet_compiled_leaves_the_values_to_the_rows_walk():
    ens = random_ensemble(22, 5, 3, 3, 4)
    _, numpy_walk = _compiled_and_numpy(ens, Query(vary=("f0",), gap=Gap(0.2)))
    total = np.zeros((4, 1))
    vals = np.linspace(-1, 1, 4)
    assert not numpy_walk.add_changes(total, np.arange(5), np.zeros(3), 0, vals, np.zeros((5, 1)))
    assert not total.any() and numpy_walk.work == 0


def test_the_compiled_walk_finds_the_pair_the_numpy_walk_finds(monkeypatch):
    from treesens.search import heuristic

    ens = random_ensemble(7, 30, 4, 5, 6, leaf_scale=0.5)
    enc = _encoding(ens, Query(vary=("f1",), gap=Gap(0.3)))
    monkeypatch.setattr(heuristic, "COMPILED_AFTER_WORK", 10_000)  # then compiled
    compiled = find_witness(enc, 60.0, seed=3, work=50_000)
    monkeypatch.setattr(heuristic, "COMPILED_AFTER_WORK", math.inf)
    monkeypatch.setattr(heuristic, "_LOADED", {})  # as in a process that never loaded it
    numpy_walk = find_witness(enc, 60.0, seed=3, work=50_000)
    assert all(np.array_equal(a, b) for a, b in zip(compiled, numpy_walk, strict=True))


def test_the_walk_turns_compiled_only_after_its_work_threshold(monkeypatch):
    from treesens.search import heuristic

    monkeypatch.setattr(heuristic, "COMPILED_AFTER_WORK", 100)
    monkeypatch.setattr(heuristic, "_LOADED", {})  # as in a process that never loaded it
    ens = random_ensemble(18, 10, 3, 4, 5)
    ev = heuristic._TreeEval(_encoding(ens, Query(vary=("f0",), gap=Gap(0.2))))
    X = np.zeros((1, ens.n_features))
    ev.tree_values(np.arange(10), X)  # 90 evaluations counted
    assert ev.jit is None
    ev.tree_values(np.arange(10), X)
    assert ev.jit is not None


def test_the_walk_stays_numpy_when_its_work_bound_leaves_too_little_to_pay_for_loading(
    monkeypatch,
):
    from treesens.search import heuristic

    monkeypatch.setattr(heuristic, "COMPILED_AFTER_WORK", 100)
    monkeypatch.setattr(heuristic, "_LOADED", {})
    ens = random_ensemble(18, 10, 3, 4, 5)
    ev = heuristic._TreeEval(_encoding(ens, Query(vary=("f0",), gap=Gap(0.2))), work=250)
    X = np.zeros((1, ens.n_features))
    for _ in range(3):  # 90, 180, 270 evaluations: never 100 done with 100 left
        ev.tree_values(np.arange(10), X)
    assert ev.jit is None


def test_an_evaluator_walks_compiled_from_the_start_once_the_process_has_loaded_it():
    from treesens.search import heuristic

    heuristic.compiled_eval()
    ens = random_ensemble(19, 10, 3, 4, 5)
    assert heuristic._TreeEval(_encoding(ens, Query(vary=("f0",), gap=Gap(0.2)))).jit is not None


def _chain(depth: int) -> Tree:
    """A tree whose node i tests f0 < i/10: the yes side a leaf, the no side node i + 1."""
    n = 2 * depth + 1
    feature, threshold = np.full(n, -1), np.zeros(n)
    left, right, value = np.full(n, -1), np.full(n, -1), np.zeros(n)
    for i in range(depth):
        inner, leaf = 2 * i, 2 * i + 1
        feature[inner], threshold[inner] = 0, i / 10
        left[inner], right[inner] = leaf, inner + 2
        value[leaf] = i
    value[n - 1] = depth
    return Tree(feature, threshold, left, right, np.zeros(n, bool), value, (0,))


def test_a_tree_deeper_than_the_numpy_walks_limit_is_walked_to_each_rows_leaf():
    from treesens.search import heuristic

    ens = random_ensemble(20, 3, 3, 4, 5)
    deep = dataclasses.replace(ens, trees=(*ens.trees, _chain(heuristic.DEEP_LEVELS + 16)))
    ev = heuristic._TreeEval(_encoding(deep, Query(vary=("f1",), gap=Gap(0.2))))
    X = np.zeros((3, deep.n_features))
    X[:, 0] = [0.05, 6.45, 100.0]  # leaves at depths 1, 65 and 81 of the chain
    joint = ev.leaves(np.arange(len(deep.trees)), X) - ev.forest.root[:, None]
    assert np.array_equal(joint.T, deep.leaf_indices(X))
