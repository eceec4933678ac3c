"""CBC and HiGHS given a number they cannot take (backends/mip_backend.py): a model whose
leaf values reach 1e28 (scikit-learn's gradient boosting makes such leaves where a
class's hessian vanishes) is refused in one line saying so, not HiGHS' "Unknown error in
call to HiGHS" or CBC's "reported an error"."""

from __future__ import annotations

import pytest

from treesens.backends.linearize import Row
from treesens.backends.registry import available
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, Tree
from treesens.compiler.query import Gap, Query
from treesens.driver.solve import solve_query

mip_backend = pytest.importorskip("treesens.backends.mip_backend")  # python-mip


def _stump(f: int, lo: float, hi: float) -> Tree:
    return Tree(
        feature=[f, -1, -1],
        threshold=[0.5, 0, 0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, False, False],
        value=[0.0, lo, hi],
        outputs=(0,),
    )


def _huge_leaf() -> Ensemble:
    trees = (_stump(0, -1.0, 1.0), _stump(1, 0.0, 2.8e28))
    feats = (Feature("a", lb=0, ub=1), Feature("b", lb=0, ub=1))
    return Ensemble(trees=trees, features=feats, n_classes=2, intercept=(0.0,), link=LOGISTIC)


@pytest.mark.parametrize("backend", [b for b in ("cbc", "highs") if available(b)])
def test_a_leaf_value_beyond_what_the_solver_takes_is_an_error_saying_so(backend):
    q = Query(vary=("a",), gap=Gap(0.1)).planned(
        timeout=60, backend=backend, options=(("heuristic", False), ("box_search", False))
    )
    r = solve_query(_huge_leaf(), q)
    assert r.status == "error"
    assert f"{backend} cannot take this problem" in r.error and "2.8e+28" in r.error, r.error


def test_a_row_is_too_large_from_the_largest_number_on_and_not_below():
    top = mip_backend.LARGEST_NUMBER
    below = Row((0, 1), (top / 2, 1.0), ">=", -top / 2, "c0")
    at = Row((0, 1), (top, 1.0), ">=", 0.0, "c1")
    assert mip_backend.too_large([below], "highs") is None
    assert "row c1 has a number of 1e+15" in mip_backend.too_large([below, at], "highs")
