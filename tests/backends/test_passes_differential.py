"""Every installed backend under every pass set against the brute-force oracle, on tiny
ensembles with a categorical feature (one-hot groups), a feature that may be missing
(a NaN indicator) and a plain numeric one (tests/feature_kinds.py).

The pass sets are all four default passes, each one dropped in turn, and none: a pass
whose rewrite meets a backend's encoding of a feature kind wrongly shows as a verdict
the oracle contradicts. The box search and the heuristic are off, so the solver
answers. The unmarked subset holds the model of seed 502, on which CP-SAT with all four
passes once answered a wrong "insensitive" (test_cpsat_guide_row.py), and of seed 32, on
which HiGHS with presolve did without UnAff (test_highs_presolve.py); the slow run
covers many seeds (``python -m pytest -m slow tests/backends/test_passes_differential.py``)."""

from __future__ import annotations

import pytest

from treesens.backends.registry import BACKENDS, available
from treesens.compiler.plan import PASS_NAMES
from treesens.compiler.query import Gap, Query
from treesens.driver.solve import solve_query
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.oracle import brute_force_sensitive

INSTALLED = [b for b in BACKENDS if available(b) and b in ("cpsat", "cbc", "highs", "z3", "gurobi")]
PASS_SETS = {
    "all": frozenset(PASS_NAMES),
    **{f"no-{p}": frozenset(PASS_NAMES) - {p} for p in PASS_NAMES},
    "none": frozenset(),
}
# (varied features, probability gap): the may-be-missing f1, the categorical f0, both
QUERIES = [(("f1",), 0.1), (("f0",), 0.1), (("f0", "f1"), 0.3)]
FAST_SEEDS = [502, 32]
SLOW_SEEDS = range(40)


def _verdict(ens, vary, gap: float, backend: str, passes: frozenset[str]) -> str:
    q = Query(vary=vary, gap=Gap(gap)).planned(
        timeout=60,
        threads=1,
        backend=backend,
        passes=passes,
        options=(("heuristic", False), ("box_search", False)),
    )
    r = solve_query(ens, q)
    assert r.status in ("sensitive", "insensitive"), (r.status, r.error, r.message)
    return r.status


def _check(seed: int, lightgbm_like: bool, backend: str, passes: frozenset[str]) -> None:
    ens = kinds_ensemble(seed, 5, 3, lightgbm_like=lightgbm_like)
    for vary, gap in QUERIES:
        want = (
            "sensitive"
            if brute_force_sensitive(ens, Query(vary=vary, gap=Gap(gap)))
            else "insensitive"
        )
        got = _verdict(ens, vary, gap, backend, passes)
        assert got == want, (seed, lightgbm_like, vary, gap, backend, sorted(passes))


@pytest.mark.parametrize("passes", list(PASS_SETS), ids=list(PASS_SETS))
@pytest.mark.parametrize("backend", INSTALLED)
@pytest.mark.parametrize("seed", FAST_SEEDS)
def test_every_backend_and_pass_set_agrees_with_the_oracle_on_missing_and_categorical_features(
    seed, backend, passes
):
    _check(seed, True, backend, PASS_SETS[passes])


@pytest.mark.slow
@pytest.mark.parametrize("passes", list(PASS_SETS), ids=list(PASS_SETS))
@pytest.mark.parametrize("backend", INSTALLED)
@pytest.mark.parametrize("lightgbm_like", [True, False], ids=["lightgbm-like", "nan-default"])
def test_every_backend_and_pass_set_agrees_with_the_oracle_over_many_seeds(
    lightgbm_like, backend, passes
):
    for seed in SLOW_SEEDS:
        _check(seed, lightgbm_like, backend, PASS_SETS[passes])
