"""Passes rewrite a compiled query; each can be switched off on its own.

A pass has one interface: ``apply(compiled) -> (compiled, inverse_data)``; ``invert``
maps a solution of the rewritten problem back to one of the problem it was given.
"""

from .base import Chain, Compiled, Pass
from .feature_constraints import FeatureConstraints
from .ordering import PairwiseConsistency, PredicateOrdering
from .scaling import IntegerScaling
from .sensitivity import AffectedLeafGap, GapObjective, UnaffectedLeaves

__all__ = [
    "Chain",
    "Compiled",
    "Pass",
    "PredicateOrdering",
    "PairwiseConsistency",
    "UnaffectedLeaves",
    "AffectedLeafGap",
    "GapObjective",
    "IntegerScaling",
    "FeatureConstraints",
    "passes_for",
]


def passes_for(enabled) -> list[Pass]:
    """The solver-agnostic passes for a set of switch names (see query.PASS_NAMES)."""
    chain: list[Pass] = [PredicateOrdering() if "ordering" in enabled else PairwiseConsistency()]
    # the query's own bounds / relations on its inputs: part of the question, never
    # switched off (the pass skips itself when the query has none)
    chain.append(FeatureConstraints())
    if "unaff" in enabled:
        chain.append(UnaffectedLeaves())
    if "aff" in enabled:
        chain.append(AffectedLeafGap())
    if "obj" in enabled:
        chain.append(GapObjective())
    return chain
