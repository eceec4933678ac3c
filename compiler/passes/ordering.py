"""Consistency between the predicates of one feature (Eq. predicate_consistency)."""

from __future__ import annotations

from ..ir import Linear
from .base import Compiled, Pass


def _feature_chains(compiled: Compiled):
    enc = compiled.encoding
    seen = set()
    for copy in (0, 1):
        for f, qs in enc.pred[copy].items():
            if len(qs) < 2 or (qs in seen):
                continue
            seen.add(qs)
            yield copy, f, qs


class PredicateOrdering(Pass):
    """Sort each feature's thresholds and chain adjacent predicates: q_r <= q_{r+1}.

    K-1 constraints per feature, the paper's Eq. (predicate_consistency).
    """

    name = "ordering"

    def apply(self, compiled: Compiled):
        cons = [
            Linear((qs[r], qs[r + 1]), (1.0, -1.0), "<=", 0.0, ("order", copy, f, r))
            for copy, f, qs in _feature_chains(compiled)
            for r in range(len(qs) - 1)
        ]
        return compiled.with_problem(compiled.problem.with_constraints(cons)), None


class PairwiseConsistency(Pass):
    """Without ordering: q_r <= q_s for every pair r < s (sound, K(K-1)/2 constraints).

    Used when the ordering pass is switched off, so the encoding stays correct.
    """

    name = "pairwise-consistency"

    def apply(self, compiled: Compiled):
        cons = [
            Linear((qs[r], qs[s]), (1.0, -1.0), "<=", 0.0, ("pairwise", copy, f, r, s))
            for copy, f, qs in _feature_chains(compiled)
            for r in range(len(qs))
            for s in range(r + 1, len(qs))
        ]
        return compiled.with_problem(compiled.problem.with_constraints(cons)), None
