"""The largest gap by one best-first search over boxes (search/gap_boxes.py, run by
search/gap_search.py), against the exact largest gap by enumeration on tiny ensembles:
the anytime bounds always bracket it, and meet within the tolerance when proven."""

from __future__ import annotations

import time

import numpy as np
import pytest

from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureRelation, Gap, Query
from treesens.questions.max_gap import max_gap_query
from treesens.search.gap_boxes import BOX_OVERHEAD, heap_boxes, largest_gap
from treesens.search.gap_search import box_largest_gap
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.max_gap_oracle import exact_max_gap, exact_max_ratio, max_ratio_problems
from treesens.tests.oracle import random_ensemble

FAR = 1e9  # a deadline no test reaches
TOLERANCES = [1e-4, 1e-3, 1e-2]
COMPARISONS = [("<", "float32"), ("<=", "float32"), ("<=", "float64")]


def _case(i: int):
    rng = np.random.default_rng([34, i])
    op, cast = COMPARISONS[i % len(COMPARISONS)]
    n_features = int(rng.integers(2, 5))
    ens = random_ensemble(
        rng,
        int(rng.integers(2, 7)),
        int(rng.integers(1, 4)),
        n_features,
        int(rng.integers(1, 4)),
        leaf_scale=1.0,
        integer_features=bool(rng.random() < 0.3),
        op=op,
        cast=cast,
        bounded=bool(rng.random() < 0.5),
    )
    k = int(rng.integers(1, n_features + 1)) if rng.random() < 0.3 else 1
    vary = tuple(sorted(rng.choice(ens.feature_names, size=k, replace=False).tolist()))
    return ens, Query(vary=vary, plan=Plan(timeout=60.0)), TOLERANCES[i % len(TOLERANCES)]


def _deeper_case(i: int):
    """Twelve trees of depth 3 over three features: searches of 30-100 boxes, enough to
    fill a heap of 4 boxes (``_case``'s searches mostly stay under it)."""
    rng = np.random.default_rng([47, i])
    ens = random_ensemble(rng, 12, 3, 3, 4, leaf_scale=1.0)
    return ens, Query(vary=(ens.feature_names[0],)), 1e-4


def _bracket_problems(exact: float, lower, upper: float) -> list[str]:
    out = []
    if upper < exact:
        out.append(f"upper {upper!r} below the exact gap {exact!r}")
    if lower is not None and lower > exact + 1e-9:
        out.append(f"lower {lower!r} above the exact gap {exact!r}")
    return out


@pytest.mark.parametrize("i", range(60))
def test_proven_bounds_hold_the_exact_gap_within_the_tolerance(i):
    ens, q, tol = _case(i)
    exact = exact_max_gap(ens, q.vary)
    res, out = box_largest_gap(ens, q, tol, time.time() + FAR)
    assert out.proven
    assert not _bracket_problems(exact, out.lower, out.upper)
    if exact >= tol:
        assert out.lower is not None and out.upper - out.lower <= tol
        assert res.status == "sensitive" and res.validated
    else:
        assert out.upper <= tol + 1e-6


@pytest.mark.parametrize("i", range(0, 60, 6))
def test_bounds_of_a_stopped_search_still_hold_the_exact_gap(i):
    ens, q, tol = _case(i)
    exact = exact_max_gap(ens, q.vary)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    offered = []

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        offered.append(achieved_gap(p[0], p[1]))
        return offered[-1]

    out = largest_gap(enc, tab, gap_bound(ens), offer, tol, deadline=0.0)
    assert not _bracket_problems(exact, out.lower, out.upper)


def test_the_witness_achieves_the_lower_bound_by_the_model_s_own_probabilities():
    ens, q, tol = _case(1)
    res, out = box_largest_gap(ens, q, 1e-4, time.time() + FAR)
    p1, p2 = res.outputs["x1"][1], res.outputs["x2"][1]
    assert out.lower == achieved_gap(p1, p2)


def test_a_query_the_pair_tables_do_not_describe_is_left_to_the_bisection():
    ens, q, _ = _case(0)
    data_aware = q.with_(plan=Plan(timeout=60.0, data_aware="prob"))
    assert box_largest_gap(ens, data_aware, 1e-4, time.time() + FAR) is None


def test_a_relation_between_the_inputs_is_searched_by_the_box_search():
    ens, q, _ = _case(0)
    related = q.with_(relations=(FeatureRelation(q.vary[0], 1, "<=", 2),))
    assert box_largest_gap(ens, related, 1e-4, time.time() + FAR) is not None


def test_gap_bound_is_the_sigmoid_rounded_up_for_a_logistic_model():
    ens, _, _ = _case(0)
    assert gap_bound(ens)(0.0) > 0.0
    assert gap_bound(ens)(50.0) == 0.5


def _multiclass_case(i: int):
    rng = np.random.default_rng([35, i])
    n_classes = int(rng.integers(3, 5))
    ens = random_ensemble(
        rng,
        int(rng.integers(3, 9)),
        int(rng.integers(1, 3)),
        3,
        int(rng.integers(1, 4)),
        n_classes=n_classes,
        leaf_scale=1.5,
        op=COMPARISONS[i % 3][0],
        cast=COMPARISONS[i % 3][1],
    )
    classes = [(0, 1), (1, "any"), ("any", 2 % n_classes), ("any", "any")][i % 4]
    return ens, Query(vary=("f1",), classes=classes, plan=Plan(timeout=60.0)), TOLERANCES[i % 3]


@pytest.mark.parametrize("i", range(40))
def test_multiclass_max_gap_holds_the_exact_ratio_within_the_tolerance(i):
    ens, q, tol = _multiclass_case(i)
    exact = exact_max_ratio(ens, q.vary, q.classes)
    r = max_gap_query(ens, q, tolerance=tol)
    assert r.max_gap["proven"] and r.max_gap["method"] == "boxes"
    assert not max_ratio_problems(exact, r)


def test_a_multiclass_witness_is_of_the_two_classes_it_reports():
    ens, q, _ = _multiclass_case(5)  # ("any", 2): sensitive
    r = max_gap_query(ens, q, tolerance=1e-3)
    assert r.status == "sensitive"
    p1, p2 = np.array(r.outputs["x1"]), np.array(r.outputs["x2"])
    c1, c2 = r.classes
    assert np.argmax(p1) == c1 and np.argmax(p2) == c2 and c1 != c2


# ---- the Python search's heap budget: boxes of lowest bound shed, their bound kept -------

TINY_HEAP = 1  # bytes: the smallest heap the search keeps (heap_boxes: 4 boxes)


def _python_shed_search(i: int, heap_bytes: int = TINY_HEAP):
    ens, q, tol = _deeper_case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(
        enc,
        tab,
        gap_bound(ens),
        offer,
        tol,
        time.time() + FAR,
        compiled=False,
        heap_bytes=heap_bytes,
    )
    return ens, q, tol, out


@pytest.mark.parametrize("i", range(30))
def test_a_python_search_that_sheds_boxes_for_memory_still_brackets_the_exact_gap(i):
    # without the shed boxes' bound under the upper bound, some of these searches report
    # an upper bound below the exact largest gap (the shed boxes held the best pairs)
    ens, q, _, out = _python_shed_search(i)
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_the_python_search_sheds_boxes_past_its_heap_budget():
    _, _, _, out = _python_shed_search(5)
    assert out.shed_boxes > 0 and out.upper >= out.shed_upper


def test_a_python_search_that_shed_boxes_above_its_floor_is_not_proven():
    _, _, tol, out = _python_shed_search(5)
    assert out.shed_upper > out.lower + tol
    assert not out.proven


def test_the_python_search_within_its_budget_sheds_nothing():
    _, _, _, out = _python_shed_search(5, heap_bytes=1 << 30)
    assert out.shed_boxes == 0 and out.shed_upper is None and out.proven


def test_a_python_heap_budget_holds_a_bit_per_leaf_and_the_box_of_each_box():
    per_box = 1000 // 8 + 8 * 15 + BOX_OVERHEAD
    assert heap_boxes(10 * per_box, 1000, 15) == 10
    assert heap_boxes(1, 1000, 15) == 4
