"""Plain linear rows from the Constraint IR, for backends and file formats without
indicator constraints (python-mip's CBC and HiGHS, the LP and MPS writers).

No solver is imported here. An ``Implication`` becomes big-M rows whose M comes from the
variables' bounds, computed with exact rationals and rounded up: the rows are exact
when the indicator has its value and never cut a point when it has not.
"""

from __future__ import annotations

import math
from fractions import Fraction

from ..compiler.ir import ExactlyOne, Implication, Linear, Problem


class Row:
    """sum(coefs[i] * x[vars[i]]) <sense> rhs, with sense in '<=', '>=', '=='."""

    __slots__ = ("vars", "coefs", "sense", "rhs", "name")

    def __init__(self, vars, coefs, sense: str, rhs: float, name: str = ""):
        self.vars = tuple(vars)
        self.coefs = tuple(float(k) for k in coefs)
        self.sense = sense
        self.rhs = float(rhs)
        self.name = name

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Row({self.vars}, {self.coefs}, {self.sense!r}, {self.rhs}, {self.name!r})"


def _merge(vars, coefs) -> tuple[list[int], list[float]]:
    """Sum the coefficients of repeated variables (keeps first-seen order)."""
    if len(set(vars)) == len(vars):
        return list(vars), [float(k) for k in coefs]
    acc: dict[int, float] = {}
    for v, k in zip(vars, coefs):
        acc[v] = acc.get(v, 0.0) + float(k)
    return list(acc), list(acc.values())


def _round_up(x: Fraction) -> float:
    """The smallest float >= x, plus a little room for the solver's own arithmetic."""
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f + abs(f) * 1e-9 + 1e-9


def _to_float(x: Fraction, up: bool) -> float:
    f = float(x)
    if up and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    elif not up and Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def lhs_range(problem: Problem, c: Linear) -> tuple[Fraction | None, Fraction | None]:
    """Exact bounds of the left-hand side over the variables' boxes (None: unbounded)."""
    lo, hi = Fraction(0), Fraction(0)
    lo_ok = hi_ok = True
    for v, k in zip(c.vars, c.coefs):
        var = problem.vars[v]
        if k == 0:
            continue
        kk = Fraction(k)
        a = var.lb if k > 0 else var.ub  # where k * x is smallest
        b = var.ub if k > 0 else var.lb
        if math.isfinite(a):
            lo += kk * Fraction(a)
        else:
            lo_ok = False
        if math.isfinite(b):
            hi += kk * Fraction(b)
        else:
            hi_ok = False
    return (lo if lo_ok else None), (hi if hi_ok else None)


def big_m_rows(problem: Problem, c: Implication, name: str = "") -> list[Row]:
    """Rows equivalent to ``x[c.var] == c.value  =>  c.then``.

    For ``a.x >= r`` with z the indicator: ``a.x - M z >= r - M`` (value 1) or
    ``a.x + M z >= r`` (value 0), with M >= r - min(a.x), and symmetrically for ``<=``.
    A row that the bounds already imply is dropped.
    """
    then = c.then
    senses = [">=", "<="] if then.sense == "==" else [then.sense]
    lo, hi = lhs_range(problem, then)
    rhs = Fraction(then.rhs)
    out: list[Row] = []
    for sense in senses:
        if sense == ">=":
            if lo is None:
                raise ValueError(f"implication {c.tag}: unbounded variable, no big-M exists")
            need = rhs - lo
            if need <= 0:
                continue
            m = _round_up(need)
            sign = -1.0  # a.x - M z >= r - M  (value 1)
        else:
            if hi is None:
                raise ValueError(f"implication {c.tag}: unbounded variable, no big-M exists")
            need = hi - rhs
            if need <= 0:
                continue
            m = _round_up(need)
            sign = 1.0  # a.x + M z <= r + M  (value 1)
        vs = list(then.vars) + [c.var]
        if c.value:
            ks = list(then.coefs) + [sign * m]
            # rounded so that the row, with z at its value, is never tighter than a.x <sense> r
            r = _to_float(rhs + Fraction(sign * m), up=sense == "<=")
        else:
            ks = list(then.coefs) + [-sign * m]
            r = float(then.rhs)
        vs, ks = _merge(vs, ks)
        out.append(Row(vs, ks, sense, r, name))
    return out


def rows(problem: Problem) -> list[Row]:
    """Every constraint of the problem as plain linear rows (big-M for implications)."""
    out: list[Row] = []
    for i, c in enumerate(problem.constraints):
        if isinstance(c, ExactlyOne):
            out.append(Row(c.vars, (1.0,) * len(c.vars), "==", 1.0, f"c{i}"))
        elif isinstance(c, Implication):
            out.extend(big_m_rows(problem, c, f"c{i}"))
        elif isinstance(c, Linear):
            vs, ks = _merge(c.vars, c.coefs)
            out.append(Row(vs, ks, c.sense, c.rhs, f"c{i}"))
        else:
            raise TypeError(f"unknown constraint type {type(c).__name__}")
    return out


def all_bounded(problem: Problem) -> bool:
    return all(math.isfinite(v.lb) and math.isfinite(v.ub) for v in problem.vars)
