"""UnAff (the paper's section 5): a leaf no varied feature leads to is reached by both
inputs or by neither.

The two inputs agree on every test of a feature outside the varied set, so for an
unaffected leaf (compiler/affected.py) ``l1 = l2`` holds on every solution of the base
encoding: the pass adds it as an equality (implied, hence sound). AffectedLeafGap and
GapObjective use the same sets to cancel those leaves from the summed gap rows.
"""

from __future__ import annotations

from ..affected import unaffected_leaves
from ..ir import EQ, Linear
from .base import Compiled, Pass


class UnaffectedLeaves(Pass):
    """Adds ``l1 = l2`` for every unaffected leaf (tag ``("unaff", tree, leaf)``)."""

    name = "unaff"

    def apply(self, compiled: Compiled) -> tuple[Compiled, None]:
        enc = compiled.encoding
        cons = []
        for ti, leaves in enumerate(unaffected_leaves(enc.ensemble, enc.varying)):
            l1, l2 = enc.leaves[0][ti], enc.leaves[1][ti]
            for n in sorted(leaves):
                if l1[n] != l2[n]:
                    cons.append(Linear((l1[n], l2[n]), (1.0, -1.0), EQ, 0.0, ("unaff", ti, n)))
        return compiled.with_problem(compiled.problem.with_constraints(cons)), None
