"""Plain linear rows from the Constraint IR, for backends and file formats without
indicator constraints (python-mip's CBC and HiGHS, the LP and MPS writers).

No solver is imported here. The driver already replaces Implications by big-M rows for
backends that declare ``implications=False`` (compiler/passes/big_m.py); an Implication
left here (a problem written to an LP / MPS file) gets the same rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..compiler.ir import ExactlyOne, Implication, Linear, Problem
from ..compiler.passes.big_m import big_m_linears, merge_terms


class Row:
    """sum(coefs[i] * x[vars[i]]) <sense> rhs, with sense in '<=', '>=', '=='."""

    __slots__ = ("vars", "coefs", "sense", "rhs", "name")

    def __init__(
        self, vars: Iterable[int], coefs: Iterable[float], sense: str, rhs: float, name: str = ""
    ):
        self.vars = tuple(vars)
        self.coefs = tuple(float(k) for k in coefs)
        self.sense = sense
        self.rhs = float(rhs)
        self.name = name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Row({self.vars}, {self.coefs}, {self.sense!r}, {self.rhs}, {self.name!r})"


def big_m_rows(problem: Problem, c: Implication, name: str = "") -> list[Row]:
    """Rows equivalent to ``x[c.var] == c.value  =>  c.then`` (see passes/big_m.py)."""
    return [Row(r.vars, r.coefs, r.sense, r.rhs, name) for r in big_m_linears(problem, c)]


def rows(problem: Problem) -> list[Row]:
    """Every constraint of the problem as plain linear rows (big-M for implications)."""
    out: list[Row] = []
    for i, c in enumerate(problem.constraints):
        if isinstance(c, ExactlyOne):
            out.append(Row(c.vars, (1.0,) * len(c.vars), "==", 1.0, f"c{i}"))
        elif isinstance(c, Implication):
            out.extend(big_m_rows(problem, c, f"c{i}"))
        elif isinstance(c, Linear):
            vs, ks = merge_terms(c.vars, c.coefs)
            out.append(Row(vs, ks, c.sense, c.rhs, f"c{i}"))
        else:
            raise TypeError(f"unknown constraint type {type(c).__name__}")
    return out


def all_bounded(problem: Problem) -> bool:
    return all(math.isfinite(v.lb) and math.isfinite(v.ub) for v in problem.vars)
