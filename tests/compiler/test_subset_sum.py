"""The paper's subset-sum construction (depth-1 trees): known answers."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.plan import Plan
from treesens.compiler.query import DEFAULT_PASSES, KANT_PASSES, Gap, Query
from treesens.driver import solve_query
from treesens.tests.oracle import brute_force_sensitive, subset_sum_ensemble, subset_sum_exists

# (numbers, k, a subset sums to k)
CASES = [
    ([3, 5, 7], 12, True),  # 5 + 7
    ([3, 5, 7], 15, True),  # all
    ([3, 5, 7], 11, False),
    ([3, 5, 7], 13, False),
    ([3, 5, 7], 16, False),  # beyond the total
    ([2, 4, 6, 8], 9, False),  # even numbers, odd target
    ([2, 4, 6, 8], 14, True),  # 6 + 8
    ([3, 34, 4, 12, 5, 2], 9, True),  # 4 + 5
    ([3, 34, 4, 12, 5, 2], 30, False),
    ([6, 10, 15], 1, False),
    ([6, 10, 15], 31, True),  # all
    ([1, 1, 1], 0, True),  # the empty subset
]

GAP = Gap(0.25, "margin")


def _query(passes=DEFAULT_PASSES, heuristic=False) -> Query:
    opts = () if heuristic else (("heuristic", False),)
    return Query(vary=("f'",), gap=GAP, plan=Plan(passes=passes, timeout=60.0, options=opts))


@pytest.mark.parametrize("numbers,k,expected", CASES)
def test_known_answers_of_the_cases(numbers, k, expected):
    assert subset_sum_exists(numbers, k) is expected


@pytest.mark.parametrize("numbers,k,expected", CASES)
def test_brute_force_says_sensitive_iff_a_subset_sums_to_k(numbers, k, expected):
    assert brute_force_sensitive(subset_sum_ensemble(numbers, k), _query()) is expected


@pytest.mark.parametrize(
    "passes", [DEFAULT_PASSES, KANT_PASSES, frozenset()], ids=["all", "kant", "none"]
)
@pytest.mark.parametrize("numbers,k,expected", CASES)
def test_pipeline_says_sensitive_iff_a_subset_sums_to_k(numbers, k, expected, passes):
    r = solve_query(subset_sum_ensemble(numbers, k), _query(passes))
    assert r.status == ("sensitive" if expected else "insensitive"), (r.status, r.error, r.message)


@pytest.mark.parametrize("numbers,k", [(n, k) for n, k, e in CASES if e])
def test_subset_sum_witness_encodes_a_subset_summing_to_k(numbers, k):
    ens = subset_sum_ensemble(numbers, k)
    r = solve_query(ens, _query(heuristic=True))
    assert r.status == "sensitive" and r.validated
    x1, x2 = r.witness["x1"], r.witness["x2"]
    chosen = [u for i, u in enumerate(numbers) if x1[f"f{i}"] == 1]
    assert sum(chosen) == k
    assert all(x1[f"f{i}"] == x2[f"f{i}"] for i in range(len(numbers)))
    assert (x1["f'"], x2["f'"]) == (1, 0)
    raw = ens.raw(
        np.array([[x1[n] for n in ens.feature_names], [x2[n] for n in ens.feature_names]])
    )[:, 0]
    assert raw.tolist() == [0.5, -0.5]


def test_varying_the_number_features_is_sensitive_when_sums_straddle_k():
    # with f' fixed, x1 needs a subset sum >= k + 0.75 (or k - 0.25 with f' = 1) and x2 a
    # subset sum <= k - 0.75 (or k + 0.25): the empty set and the full set give both
    ens = subset_sum_ensemble([3, 5, 7], 11)
    q = Query(vary=tuple(f"f{i}" for i in range(3)), gap=GAP, plan=Plan(timeout=60.0))
    r = solve_query(ens, q)
    assert r.status == "sensitive" and brute_force_sensitive(ens, q)
