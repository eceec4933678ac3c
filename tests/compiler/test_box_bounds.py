"""A split's two children's bounds, added up in one pass (search/box_bounds_jit.py), are
bit for bit the bound() of each child, whatever the row count: a box has one bound, and
the search visits the same boxes."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from treesens.search.box_bounds_jit import bound, children_bounds, rows_above_sums  # noqa: E402


def _tables(rows: int, seed: int):
    rng = np.random.default_rng(seed)
    trees = 257
    top, ytop, ntop = (rng.normal(size=(trees, rows)) * 10.0 ** rng.integers(-3, 4) for _ in "abc")
    walked = np.sort(rng.choice(trees, 40, replace=False)).astype(np.int64)
    thresholds = rng.normal(size=rows)
    return top, ytop, ntop, walked, thresholds


def _python_bound(top, over, walked, nw, thresholds, first_sum):
    """bound() as plain Python: each row summed over the trees in tree order."""
    chosen = set(walked[:nw].tolist())
    terms = []
    for r in range(top.shape[1]):
        s = 0.0
        for t in range(top.shape[0]):
            s += float(over[t, r] if t in chosen else top[t, r])
        term = s - thresholds[r]
        terms.append(term / 2.0 if r >= first_sum else term)
    return min(terms)


@pytest.mark.parametrize("rows", [3, 4])
@pytest.mark.parametrize("seed", range(5))
def test_children_bounds_are_each_childs_bound_to_the_bit(rows, seed):
    top, ytop, ntop, walked, thresholds = _tables(rows, seed)
    first_sum, u = rows - 1, 1e300
    scratch = (ytop, None, ntop)
    for nw in (0, 1, 17, len(walked)):
        uy, un = children_bounds(top, walked, nw, scratch, thresholds, first_sum, u)
        assert uy == _python_bound(top, ytop, walked, nw, thresholds, first_sum)
        assert un == _python_bound(top, ntop, walked, nw, thresholds, first_sum)
        assert uy == bound(top, ytop, walked, nw, thresholds, first_sum)


def test_children_bounds_are_at_most_the_parents():
    top, ytop, ntop, walked, thresholds = _tables(3, 0)
    u = _python_bound(top, ytop, walked, 5, thresholds, 2) - 1.0
    assert children_bounds(top, walked, 5, (ytop, None, ntop), thresholds, 2, u)[0] == u


@pytest.mark.parametrize("seed", range(5))
def test_rows_above_sums_with_three_rows_compares_the_summed_terms(seed):
    top, _y, _n, _w, thresholds = _tables(3, seed)
    sums = [sum(float(v) for v in top[:, r]) - thresholds[r] for r in range(3)]
    for first_sum in (1, 2):
        least_row = min(sums[:first_sum])
        least_sum = min(s / 2.0 for s in sums[first_sum:])
        assert rows_above_sums(top, thresholds, first_sum) == (least_row > least_sum)
