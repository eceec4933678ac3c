"""The pass interface and the chain that applies passes and inverts in reverse."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..encode import Encoding
from ..errors import InputError
from ..ir import Problem


@dataclass(frozen=True, eq=False)
class Compiled:
    """A problem together with what is known about where it came from."""

    problem: Problem
    encoding: Encoding

    def with_problem(self, problem: Problem) -> Compiled:
        return replace(self, problem=problem)


class Pass:
    """One rewrite. Subclasses set ``name`` and implement ``apply``.

    ``accepts`` says whether the pass applies to a compiled query at all (a pass that
    does not apply is skipped by the chain). ``invert`` maps solver values of the
    rewritten problem to values of the input problem; the default keeps them, which is
    right for passes that only add constraints or change the objective. The first
    reduction of a chain, the encoding (``chain.KantchelianEncoding``), applies to the
    question itself and inverts values to a Witness.
    """

    name = "pass"
    # the query kinds (compiler/kinds.py) the pass is written for: None, every kind. A
    # query of another kind is refused, or, when the pass is ``optional`` (it only helps
    # the search), the pass is skipped
    query_kinds: frozenset[str] | None = None
    optional = False

    def accepts(self, compiled: Compiled) -> bool:
        return True

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        raise NotImplementedError

    def invert(self, values: np.ndarray, inverse_data: Any) -> np.ndarray:
        return values

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Chain(Pass):
    """Applies passes in order; inverts in reverse order."""

    name = "chain"

    def __init__(self, passes: Sequence[Pass]):
        self.passes = list(passes)

    def apply(self, compiled: Any) -> tuple[Compiled, Any]:
        inverse = []
        kind = _kind_of(compiled)
        for p in self.passes:
            if p.query_kinds is not None and kind is not None and kind not in p.query_kinds:
                if p.optional:
                    continue
                raise InputError(f"the {p.name} pass does not take {kind} queries")
            if not p.accepts(compiled):
                continue
            compiled, data = p.apply(compiled)
            inverse.append((p, data))
        return compiled, inverse

    def invert(self, values: np.ndarray, inverse_data: Any) -> Any:
        for p, data in reversed(inverse_data):
            values = p.invert(values, data)
        return values

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.passes]


def _kind_of(compiled: Any) -> str | None:
    """The query kind of what a chain is given: a question, or a compiled query (None for
    a problem built by hand, which no kind restricts)."""
    query = getattr(compiled, "query", None)
    if query is None:
        query = getattr(getattr(compiled, "encoding", None), "query", None)
    return None if query is None else query.kind_name
