"""The heuristic searches a query whose bounds hold for both inputs alike over the model
those bounds narrow (compiler/bounds_as_domains.py), as the max gap's seed does: a pair
it reports lies within the bounds and meets the gap by the library's predict (replayed),
and a brute force over the bounded inputs has one too."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.bounds_as_domains import bounds_as_domains
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.query import FeatureBound, Gap, Query
from treesens.driver import solve_query
from treesens.tests.compiler.test_bounds_as_domains import (
    _alike_bounds,
    _ens,
    _library_bounds,
    binary_library_model,
)
from treesens.tests.compiler.test_feature_constraints import brute


def _heuristic_first(q: Query) -> Query:
    """The heuristic, then the box search alone (no solver)."""
    return q.planned(backend="boxes", timeout=20.0)


def _random_bounded_answers(kind: str, seed: int) -> list[tuple]:
    rng = np.random.default_rng([2026, 11, 28, 5, seed, len(kind)])
    ens = _ens(2000 + seed, kind)
    out = []
    for _ in range(6):
        vary = (str(rng.choice(ens.feature_names)),)
        q = Query(vary=vary, gap=Gap(float(rng.choice([0.0, 0.02, 0.05]))))
        q = q.with_(bounds=_alike_bounds(rng, ens, kind))
        if bounds_as_domains(ens, q) is None:
            continue
        try:
            out.append((ens, q, solve_query(ens, _heuristic_first(q))))
        except InputError:  # bounds that leave no pair apart: refused
            continue
    return out


@pytest.mark.parametrize("kind", ["real", "integer", "binary"])
@pytest.mark.parametrize("seed", range(4))
def test_a_pair_the_heuristic_finds_under_bounds_lies_within_them_and_exists(kind, seed):
    for ens, q, r in _random_bounded_answers(kind, seed):
        if r.stats.get("found_by") != "heuristic":
            continue
        w = r.witness_arrays
        assert r.validated and not constraint_violations(ens, q, w.x1, w.x2), q
        assert brute(ens, q), q


def test_the_heuristic_answers_checks_under_bounds():
    found = [
        r.stats.get("found_by")
        for seed in range(4)
        for _ens_, _q, r in _random_bounded_answers("real", seed)
    ]
    assert "heuristic" in found


@pytest.mark.parametrize("family", ["xgb-binary", "lgb-binary", "sk-hgb"])
def test_a_trained_model_s_bounded_pair_by_the_heuristic_is_within_the_bounds(family, tmp_path):
    ens = binary_library_model(family, 0, tmp_path)
    rng = np.random.default_rng([49, len(family)])
    for _ in range(6):
        vary = (str(rng.choice(ens.feature_names)),)
        q = Query(vary=vary, gap=Gap(0.0), bounds=_library_bounds(rng, ens))
        if not q.bounds or bounds_as_domains(ens, q) is None:
            continue
        try:
            r = solve_query(ens, _heuristic_first(q))
        except InputError:
            continue
        if r.stats.get("found_by") == "heuristic":
            w = r.witness_arrays
            assert not constraint_violations(ens, q, w.x1, w.x2), q
            assert r.outputs["x1"][1] >= 0.5 >= r.outputs["x2"][1], q


def test_a_bound_on_one_input_of_the_varied_feature_is_not_searched_by_the_heuristic():
    ens = _ens(2000)
    q = Query(vary=("f0",), gap=Gap(0.0), bounds=(FeatureBound("f0", -1.0, 1.0, (1,)),))
    r = solve_query(ens, _heuristic_first(q))
    assert r.stats.get("found_by") != "heuristic"
