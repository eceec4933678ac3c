"""The paper's optimisations of the sensitivity encoding (section 5).

Each adds constraints that are implied by the base encoding (Theorem
"optimisations-are-sound"), or an objective that only steers the search, so none of
them changes the set of feasible solutions.
"""

from __future__ import annotations

from ..ir import Linear, Objective
from .base import Compiled, Pass


class UnaffectedLeaves(Pass):
    """UnAff: a leaf with no varied feature on its path is reached by both inputs or none."""

    name = "unaff"

    def apply(self, compiled: Compiled):
        enc = compiled.encoding
        cons = []
        for ti, leaves in enumerate(enc.unaffected):
            l1, l2 = enc.leaves[0][ti], enc.leaves[1][ti]
            for n in sorted(leaves):
                if l1[n] != l2[n]:
                    cons.append(Linear((l1[n], l2[n]), (1.0, -1.0), "==", 0.0, ("unaff", ti, n)))
        return compiled.with_problem(compiled.problem.with_constraints(cons)), None


def reduced_pair(compiled: Compiled) -> tuple[tuple[int, ...], tuple[float, ...], float] | None:
    """The sum of the two gap rows with unaffected leaves cancelled (vars, coefs, const)."""
    enc = compiled.encoding
    if enc.pair is None:
        return None
    acc: dict[int, float] = {}
    for ti in range(len(enc.leaves[0])):
        unaff = enc.unaffected[ti]
        c1, c2 = enc.pair[0][ti], enc.pair[1][ti]
        l1, l2 = enc.leaves[0][ti], enc.leaves[1][ti]
        for n, c in c1.items():
            if n in unaff:
                acc[l1[n]] = acc.get(l1[n], 0.0) + c + c2.get(n, 0.0)
            else:
                acc[l1[n]] = acc.get(l1[n], 0.0) + c
        for n, c in c2.items():
            if n not in unaff:
                acc[l2[n]] = acc.get(l2[n], 0.0) + c
    items = [(v, c) for v, c in acc.items() if c != 0.0]
    return tuple(v for v, _ in items), tuple(c for _, c in items), enc.pair_const


class AffectedLeafGap(Pass):
    """Aff-bin / Aff-multi: the two gap rows summed, over affected leaves only."""

    name = "aff"

    def accepts(self, compiled: Compiled) -> bool:
        return compiled.encoding.pair is not None

    def apply(self, compiled: Compiled):
        vs, cs, const = reduced_pair(compiled)
        rhs = compiled.encoding.pair_rhs - const
        con = Linear(vs, cs, ">=", rhs, ("aff",))
        return compiled.with_problem(compiled.problem.with_constraints([con])), None


class GapObjective(Pass):
    """Obj-bin / Obj-multi: maximise the difference of the two decisions.

    Over affected leaves only: on every feasible point this differs from the paper's
    sum over all leaves by a constant, since unaffected terms cancel (UnAff is implied).
    """

    name = "obj"

    def accepts(self, compiled: Compiled) -> bool:
        return compiled.encoding.pair is not None and compiled.problem.objective is None

    def apply(self, compiled: Compiled):
        vs, cs, const = reduced_pair(compiled)
        obj = Objective("max", vs, cs, const, role="guide")
        return compiled.with_problem(compiled.problem.with_objective(obj)), None
