"""Obj-bin / Obj-multi (the paper's section 5): maximise the difference of the two
decisions, so the solver is steered towards pairs far apart.

The objective is the summed gap rows over affected leaves (gap_sum.py): on every
feasible point it differs from the paper's sum over all leaves by a constant, since
the unaffected terms cancel. It only guides the search (``role="guide"``): any feasible
point answers the question, so the feasible set and the verdict do not change.
"""

from __future__ import annotations

from ..ir import Objective
from .base import Compiled, Pass
from .gap_sum import gap_sum


class GapObjective(Pass):
    """Sets ``max sum over affected leaves + constant`` unless an objective is set
    already (a data-aware utility objective takes precedence)."""

    name = "obj"
    # the summed rows of a question about both inputs; an anchored row has none
    query_kinds = frozenset({"pair", "change"})
    optional = True

    def accepts(self, compiled: Compiled) -> bool:
        return compiled.problem.objective is None and gap_sum(compiled.encoding) is not None

    def apply(self, compiled: Compiled) -> tuple[Compiled, None]:
        s = gap_sum(compiled.encoding)
        obj = Objective("max", s.vars, s.coefs, s.constant, role="guide")
        return compiled.with_problem(compiled.problem.with_objective(obj)), None
