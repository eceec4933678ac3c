"""CP-SAT's "infeasible" at probing level 0 is not taken as a proof (backends/cpsat.py,
CONFIRM_PROBING_LEVEL): CP-SAT 9.15's presolve at that level called a feasible model
infeasible, with every pass off too, on a 3-class XGBoost model of 6 rounds asked whether
x1 of class 0 and x2 of any other class reach a probability ratio of 5.48 varying f0
(tests/regressions/cases/h4-multiclass-any-cpsat-*: the library predicts the pair
f0 = 1.3 / -1.3 at ratios 5.59 and 8.43). The infeasible answer is solved again at
CP-SAT's own level 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.backends.registry import available
from treesens.driver.solve import solve_query
from treesens.tests.regressions import harness as H

pytestmark = pytest.mark.skipif(not available("cpsat"), reason="ortools not installed")

CASES = Path(__file__).resolve().parents[1] / "regressions" / "cases"


def _case() -> H.Case:
    (case,) = [c for c in H.load_cases(CASES) if c.name.startswith("h4-multiclass-any-cpsat")]
    return case


@pytest.mark.parametrize("passes", [None, "none"])
def test_cpsat_finds_the_pair_of_a_class_any_query_its_probing_level_0_called_infeasible(passes):
    case = _case()
    q = case.query()
    if passes is not None:
        q = q.planned(passes=passes)
    r = solve_query(case.ensemble(), q)
    assert r.status == "sensitive" and r.validated, (r.status, r.message)
