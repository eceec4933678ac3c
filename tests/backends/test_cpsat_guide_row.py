"""CP-SAT and a row parallel to its guiding objective (backends/cpsat.py).

With every default pass, AffectedLeafGap's row ``sum over affected leaves >= rhs`` is the
very sum GapObjective maximises. CP-SAT's presolve makes such a row a domain of the
objective, and CP-SAT 9.15 at probing level 0 then proved a feasible model infeasible:
a wrong "insensitive" on the tiny model of seed 502 (f1 may be missing, gap 0.1), whose
pair f1 = NaN vs f1 = -0.136 the library predicts 0.610 and 0.227. The backend leaves
that row out of CP-SAT's model."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.backends.registry import available
from treesens.compiler.invert import values_for_pair
from treesens.compiler.ir import GE, LE, Linear, Objective, check_constraint
from treesens.compiler.query import Gap, Query
from treesens.driver.compile import compile_query, for_backend
from treesens.driver.solve import solve_query
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.oracle import brute_force_witness

pytestmark = pytest.mark.skipif(not available("cpsat"), reason="ortools not installed")


def _seed_502() -> tuple:
    ens = kinds_ensemble(502, 5, 3, lightgbm_like=True)
    q = Query(vary=("f1",), gap=Gap(0.1)).planned(
        timeout=30,
        threads=1,
        backend="cpsat",
        options=(("heuristic", False), ("box_search", False)),
    )
    return ens, q


def _cpsat_problem(ens, q):
    return for_backend(compile_query(ens, q), "cpsat")[0]


def test_cpsat_finds_the_pair_of_seed_502_with_every_default_pass():
    ens, q = _seed_502()
    r = solve_query(ens, q)
    assert r.status == "sensitive", (r.status, r.message)
    w = r.witness_arrays
    p = ens.proba(np.stack([w.x1, w.x2]))[:, 1]
    assert abs(p[0] - p[1]) >= 0.1


def test_the_oracle_pair_of_seed_502_satisfies_every_row_cpsat_is_given():
    from treesens.backends import cpsat

    ens, q = _seed_502()
    x1, x2 = brute_force_witness(ens, q)[:2]
    compiled = _cpsat_problem(ens, q)
    problem = compiled.problem
    vals = values_for_pair(compiled.encoding, x1, x2, problem.n_vars)
    assert all(check_constraint(c, vals) for c in problem.constraints)
    model, xs = cpsat.build(problem)
    for x, v in zip(xs, vals):
        model.add(x == int(round(v)))
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    assert solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def test_cpsat_solves_a_model_whose_row_bounds_its_guide_at_its_own_probing_level():
    from treesens.backends import cpsat

    ens, q = _seed_502()
    problem = _cpsat_problem(ens, q).problem
    aff = [c for c in problem.constraints if isinstance(c, Linear) and c.tag == ("aff",)]
    assert len(aff) == 1 and cpsat.parallel_to_guide(aff[0], problem.objective)
    gap_rows = [c for c in problem.constraints if isinstance(c, Linear) and c.tag[0] == "gap"]
    assert gap_rows and not any(cpsat.parallel_to_guide(c, problem.objective) for c in gap_rows)


def test_a_row_parallel_to_an_objective_that_is_not_a_guide_is_kept():
    from treesens.backends import cpsat

    row = Linear((0, 1), (2.0, 4.0), GE, 1.0, ("aff",))
    assert cpsat.parallel_to_guide(row, Objective("max", (0, 1), (1.0, 2.0), 0.0, role="guide"))
    assert not cpsat.parallel_to_guide(
        row, Objective("max", (0, 1), (1.0, 2.0), 0.0, role="utility")
    )


def test_a_row_bounding_a_guide_against_its_direction_is_kept():
    from treesens.backends import cpsat

    guide = Objective("max", (0, 1), (1.0, 2.0), 0.0, role="guide")
    assert not cpsat.parallel_to_guide(Linear((0, 1), (1.0, 2.0), LE, 1.0, ("cap",)), guide)
    assert not cpsat.parallel_to_guide(Linear((0, 1), (-1.0, -2.0), GE, 1.0, ("neg",)), guide)
    assert not cpsat.parallel_to_guide(Linear((0, 1), (1.0, 3.0), GE, 1.0, ("skew",)), guide)
