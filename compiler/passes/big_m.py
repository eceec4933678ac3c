"""Implications as big-M rows, for solvers without indicator constraints.

An ``Implication`` ``z == value => a.x <sense> r`` becomes plain linear rows whose M
comes from the variables' bounds, computed with exact rationals and rounded up: the rows
are exact when the indicator has its value and never cut a point when it has not. The
variables are unchanged, so ``invert`` keeps the values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from ..ir import EQ, GE, LE, Implication, Linear, Problem
from .base import Compiled, Pass


def merge_terms(vars: Sequence[int], coefs: Sequence[float]) -> tuple[list[int], list[float]]:
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


def big_m_linears(problem: Problem, c: Implication) -> list[Linear]:
    """Rows equivalent to ``x[c.var] == c.value  =>  c.then``.

    For ``a.x >= r`` with z the indicator: ``a.x - M z >= r - M`` (value 1) or
    ``a.x + M z >= r`` (value 0), with M >= r - min(a.x), and symmetrically for ``<=``.
    A row that the bounds already imply is dropped.
    """
    then = c.then
    senses = [GE, LE] if then.sense == EQ else [then.sense]
    lo, hi = lhs_range(problem, then)
    rhs = Fraction(then.rhs)
    out: list[Linear] = []
    for sense in senses:
        if sense == GE:
            if lo is None:
                raise ValueError(f"implication {c.tag}: unbounded variable, no big-M exists")
            need = rhs - lo
            sign = -1.0  # a.x - M z >= r - M  (value 1)
        else:
            if hi is None:
                raise ValueError(f"implication {c.tag}: unbounded variable, no big-M exists")
            need = hi - rhs
            sign = 1.0  # a.x + M z <= r + M  (value 1)
        if need <= 0:
            continue
        m = _round_up(need)
        vs = list(then.vars) + [c.var]
        if c.value:
            ks = list(then.coefs) + [sign * m]
            # rounded so that the row, with z at its value, is never tighter than a.x <sense> r
            r = _to_float(rhs + Fraction(sign * m), up=sense == LE)
        else:
            ks = list(then.coefs) + [-sign * m]
            r = float(then.rhs)
        vs, ks = merge_terms(vs, ks)
        out.append(Linear(tuple(vs), tuple(ks), sense, r, c.tag))
    return out


class BigM(Pass):
    """Every Implication replaced by its big-M rows (in place, so the order is kept)."""

    name = "big-m"

    def accepts(self, compiled: Compiled) -> bool:
        return any(isinstance(c, Implication) for c in compiled.problem.constraints)

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        prob = compiled.problem
        out: list = []
        moved: dict[int, list[int]] = {}  # old position -> new positions
        for i, c in enumerate(prob.constraints):
            start = len(out)
            if isinstance(c, Implication):
                out.extend(big_m_linears(prob, c))
            else:
                out.append(c)
            moved[i] = list(range(start, len(out)))
        soft = tuple(j for i in prob.soft for j in moved[i])
        return compiled.with_problem(replace(prob, constraints=tuple(out), soft=soft)), None
