"""The backend chain: the reductions a backend's declared capabilities call for.

Each capability is read here: ``integer_coefficients`` adds IntegerScaling,
``implications=False`` adds BigM (implications as big-M rows), and ``variable_kinds``
adds a check that rejects a problem with a variable kind the solver does not take.
"""

from __future__ import annotations

from typing import Any

from ..compiler.errors import InputError
from ..compiler.passes import IntegerScaling
from ..compiler.passes.base import Compiled, Pass
from ..compiler.passes.big_m import BigM
from ..compiler.solver import Capabilities


class VariableKindCheck(Pass):
    """Rejects a problem holding a variable kind the backend does not take."""

    name = "variable-kinds"

    def __init__(self, kinds: tuple[str, ...], backend: str = "the backend"):
        self.kinds = tuple(kinds)
        self.backend = backend

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        bad = sorted({v.kind for v in compiled.problem.vars} - set(self.kinds))
        if bad:
            raise InputError(
                f"backend {self.backend} does not take {' or '.join(bad)} variables "
                f"(it takes {', '.join(self.kinds)}): choose another backend"
            )
        return compiled, None


def backend_chain(caps: Capabilities, backend: str = "the backend") -> list[Pass]:
    """The reductions, in order, that make a solver-agnostic problem fit ``caps``."""
    chain: list[Pass] = [VariableKindCheck(caps.variable_kinds, backend)]
    if not caps.implications:
        chain.append(BigM())
    if caps.integer_coefficients:
        chain.append(IntegerScaling())
    return chain
