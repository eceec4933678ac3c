"""Passes rewrite a compiled query; each can be switched off on its own.

A pass has one interface: ``apply(compiled) -> (compiled, inverse_data)``; ``invert``
maps a solution of the rewritten problem back to one of the problem it was given.
The chain a sensitivity query runs, encoding first, is built by
``compiler.chain.sensitivity_chain``; ``passes_for`` gives the passes after the encoding.
"""

from collections.abc import Collection, Sequence

from ..options import DataAwareMode
from .affected_gap import AffectedLeafGap
from .base import Chain, Compiled, Pass
from .data_aware import CavityClauses, UtilityObjective
from .feature_constraints import FeatureConstraints
from .gap_objective import GapObjective
from .ordering import PairwiseConsistency, PredicateOrdering
from .scaling import IntegerScaling
from .unaffected_leaves import UnaffectedLeaves

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
    "UtilityObjective",
    "CavityClauses",
    "DATA_AWARE_MODES",
    "passes_for",
]

# the data-aware modes the compiler implements (Plan.data_aware; see data_aware.py)
DATA_AWARE_MODES = tuple(DataAwareMode)


def passes_for(enabled: Collection[str], data_passes: Sequence[Pass] = ()) -> list[Pass]:
    """The solver-agnostic passes for a set of switch names (see query.PASS_NAMES).

    ``data_passes``: the data-aware passes of the query (``data_aware.data_passes``);
    they go before the gap objective, which a utility objective replaces."""
    chain: list[Pass] = [PredicateOrdering() if "ordering" in enabled else PairwiseConsistency()]
    # the query's own bounds / relations on its inputs: part of the question, never
    # switched off (the pass skips itself when the query has none)
    chain.append(FeatureConstraints())
    if "unaff" in enabled:
        chain.append(UnaffectedLeaves())
    if "aff" in enabled:
        chain.append(AffectedLeafGap())
    chain.extend(data_passes)
    if "obj" in enabled:
        chain.append(GapObjective())
    return chain
