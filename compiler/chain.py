"""The solver-agnostic chain of a sensitivity query: the encoding as its first
reduction, then the passes (the paper's optimisations and the query's own constraints).

    chain = sensitivity_chain(q.plan.passes, data_passes)
    compiled, inverse = chain.apply(SensitivityQuestion(ens, q))   # -> Compiled
    witness = chain.invert(values, inverse)                        # solver values -> Witness

Backend reductions (integer scaling, ...) follow on ``compiled``; their own chain is
inverted first, then this one.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .encode import Encoding, encode
from .ensemble import Ensemble
from .invert import Witness, invert
from .passes import Chain, Compiled, Pass, passes_for
from .query import Query


@dataclass(frozen=True, eq=False)
class SensitivityQuestion:
    """What the chain starts from: is ``ensemble`` sensitive as ``query`` asks?"""

    ensemble: Ensemble
    query: Query


class KantchelianEncoding(Pass):
    """Encode: Kantchelian's MILP encoding of the ensemble, twice (encode.py).

    ``apply`` turns the question into the Compiled problem; its inverse data is the
    Encoding, and ``invert`` decodes solver values into the Witness (invert.py).
    ``prefer``: per-feature values to pick inside the chosen intervals when they fit
    (e.g. values seen in the query's data).
    """

    name = "encode"

    def __init__(self, prefer: Mapping[int, Sequence[float]] | None = None):
        self.prefer = prefer

    def apply(self, question: SensitivityQuestion) -> tuple[Compiled, Encoding]:
        problem, enc = encode(question.ensemble, question.query)
        return Compiled(problem, enc), enc

    def invert(self, values: np.ndarray, inverse_data: Encoding) -> Witness:
        return invert(inverse_data, values, self.prefer)


def sensitivity_chain(
    enabled: Collection[str],
    data_passes: Sequence[Pass] = (),
    prefer: Mapping[int, Sequence[float]] | None = None,
) -> Chain:
    """Encode, then the passes for the switch names ``enabled`` (query.PASS_NAMES) and
    the query's data-aware passes (see ``passes.passes_for``)."""
    return Chain([KantchelianEncoding(prefer), *passes_for(enabled, data_passes)])
