"""HiGHS' presolve and a feasible model it called infeasible (backends/mip_backend.py).

On the tiny models of seed 32 (tests/feature_kinds.py), without the UnAff equalities,
HiGHS with presolve answered "infeasible" for a model the brute-force oracle's pair
satisfies (the same model without presolve, CBC, Gurobi, z3 and CP-SAT find a pair): a
wrong "insensitive", once varying the may-be-missing f1, once the categorical f0. The
backend answers "infeasible" only from HiGHS without presolve."""

from __future__ import annotations

import pytest

from treesens.backends.registry import available
from treesens.compiler.plan import PASS_NAMES
from treesens.compiler.query import Gap, Query
from treesens.driver.solve import solve_query
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.oracle import brute_force_sensitive

pytestmark = pytest.mark.skipif(not available("highs"), reason="highspy not installed")

NO_UNAFF = frozenset(PASS_NAMES) - {"unaff"}


def _status(ens, vary, gap: float, passes: frozenset[str]) -> str:
    q = Query(vary=vary, gap=Gap(gap)).planned(
        timeout=60,
        threads=1,
        backend="highs",
        passes=passes,
        options=(("heuristic", False), ("box_search", False)),
    )
    r = solve_query(ens, q)
    return r.status


@pytest.mark.parametrize("passes", [NO_UNAFF, frozenset()], ids=["no-unaff", "none"])
def test_highs_finds_the_pair_varying_the_missing_feature_of_seed_32(passes):
    ens = kinds_ensemble(32, 5, 3, lightgbm_like=False)
    assert brute_force_sensitive(ens, Query(vary=("f1",), gap=Gap(0.1)))
    assert _status(ens, ("f1",), 0.1, passes) == "sensitive"


@pytest.mark.parametrize("passes", [NO_UNAFF, frozenset()], ids=["no-unaff", "none"])
def test_highs_finds_the_pair_varying_the_categorical_feature_of_seed_32(passes):
    ens = kinds_ensemble(32, 5, 3, lightgbm_like=True)
    assert brute_force_sensitive(ens, Query(vary=("f0",), gap=Gap(0.1)))
    assert _status(ens, ("f0",), 0.1, passes) == "sensitive"


def test_highs_still_proves_a_larger_gap_of_seed_32_insensitive():
    ens = kinds_ensemble(32, 5, 3, lightgbm_like=False)
    assert not brute_force_sensitive(ens, Query(vary=("f1",), gap=Gap(0.2)))
    assert _status(ens, ("f1",), 0.2, NO_UNAFF) == "insensitive"
