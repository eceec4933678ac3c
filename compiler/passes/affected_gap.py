"""Aff-bin / Aff-multi (the paper's section 5): the two gap rows summed over affected
leaves, added as one more constraint.

It is implied by the gap rows and UnAff's equalities (see gap_sum.py), so it cuts no
solution; it gives the solver the joint requirement on both inputs in one row.
"""

from __future__ import annotations

from ..ir import GE, Linear
from .base import Compiled, Pass
from .gap_sum import gap_sum


class AffectedLeafGap(Pass):
    """Adds ``sum over affected leaves >= rhs - constant`` (tag ``("aff",)``)."""

    name = "aff"
    # the summed rows of a question about both inputs; an anchored row has none
    query_kinds = frozenset({"pair", "change"})
    optional = True

    def accepts(self, compiled: Compiled) -> bool:
        return gap_sum(compiled.encoding) is not None

    def apply(self, compiled: Compiled) -> tuple[Compiled, None]:
        s = gap_sum(compiled.encoding)
        con = Linear(s.vars, s.coefs, GE, s.rhs - s.constant, ("aff",))
        return compiled.with_problem(compiled.problem.with_constraints([con])), None
