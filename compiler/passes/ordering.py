"""Consistency between the predicates of one feature (the paper's Eq.
predicate_consistency): x below a lower threshold implies x below every higher one.

The analysis: each feature's predicate chain q_1..q_K, ordered by threshold, once per
distinct chain (a feature outside the varied set has one chain shared by both inputs).
The encoding leaves consistency out; the chain always runs one of these two passes.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..encode import Encoding
from ..ir import LE, Linear
from .base import Compiled, Pass


def predicate_chains(enc: Encoding) -> Iterator[tuple[int, int, tuple[int, ...]]]:
    """(copy, feature, its predicate variables q_1..q_K in threshold order) for every
    chain of two or more predicates, each distinct chain once."""
    seen = set()
    for copy in (0, 1):
        for f, qs in enc.pred[copy].items():
            if len(qs) < 2 or (qs in seen):
                continue
            seen.add(qs)
            yield copy, f, qs


class PredicateOrdering(Pass):
    """Chains adjacent predicates, ``q_r <= q_{r+1}``: K-1 constraints per chain
    (tag ``("order", copy, feature, r)``)."""

    name = "ordering"

    def apply(self, compiled: Compiled) -> tuple[Compiled, None]:
        cons = [
            Linear((qs[r], qs[r + 1]), (1.0, -1.0), LE, 0.0, ("order", copy, f, r))
            for copy, f, qs in predicate_chains(compiled.encoding)
            for r in range(len(qs) - 1)
        ]
        return compiled.with_problem(compiled.problem.with_constraints(cons)), None


class PairwiseConsistency(Pass):
    """Without ordering: ``q_r <= q_s`` for every pair r < s, K(K-1)/2 constraints per
    chain (tag ``("pairwise", copy, feature, r, s)``). Used when the ordering pass is
    switched off, so the encoding stays correct."""

    name = "pairwise-consistency"

    def apply(self, compiled: Compiled) -> tuple[Compiled, None]:
        cons = [
            Linear((qs[r], qs[s]), (1.0, -1.0), LE, 0.0, ("pairwise", copy, f, r, s))
            for copy, f, qs in predicate_chains(compiled.encoding)
            for r in range(len(qs))
            for s in range(r + 1, len(qs))
        ]
        return compiled.with_problem(compiled.problem.with_constraints(cons)), None
