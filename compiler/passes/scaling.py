"""Integer coefficients for solvers that want them (CP-SAT), relaxed soundly.

Each fractional linear constraint is multiplied by a power of two and its coefficients
rounded. The right-hand side is then relaxed by a bound on the rounding error, so every
point that satisfies the real-valued constraint still satisfies the integer one: an
"infeasible" answer for the scaled problem is a proof for the real one. A point of the
scaled problem may miss the real constraint by at most that bound; the replay check
catches such points and the driver excludes them and searches on.

The error bound uses exactly-one groups: of a group of leaves exactly one is 1, so the
group contributes its largest rounding error once, not the sum of all of them.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..ir import GE, LE, ExactlyOne, Implication, Linear, Objective
from .base import Compiled, Pass

TARGET_BITS = 26  # largest scaled coefficient about 2**26


EXACT_INT_LIMIT = 2.0**40  # integer data up to this size is kept as it is


def _is_int(x: float) -> bool:
    """An integer small enough to keep unscaled (a huge float is an integer too, but
    keeping it would overflow a solver's 64-bit arithmetic: such rows are scaled down)."""
    x = float(x)
    return x.is_integer() and abs(x) <= EXACT_INT_LIMIT


class IntegerScaling(Pass):
    name = "integer-scaling"

    def __init__(self, target_bits: int = TARGET_BITS):
        self.target_bits = target_bits

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        prob = compiled.problem
        group_of: dict[int, int] = {}
        for gi, c in enumerate(prob.constraints):
            if isinstance(c, ExactlyOne):
                for v in c.vars:
                    group_of[v] = gi
        bounds = [(v.lb, v.ub) for v in prob.vars]
        varmax = [max(abs(lb), abs(ub)) for lb, ub in bounds]
        worst = 0.0
        out = []
        for c in prob.constraints:
            if isinstance(c, Linear):
                c, err = self._scale(c, group_of, bounds, varmax)
                worst = max(worst, err)
            elif isinstance(c, Implication):
                inner, err = self._scale(c.then, group_of, bounds, varmax)
                worst = max(worst, err)
                c = c._replace(then=inner)
            out.append(c)
        obj = prob.objective
        notes = replace(prob.notes, scaling_error=worst)
        if obj is not None and not all(_is_int(k) for k in obj.coefs):
            s = self._factor(obj.coefs)
            notes = replace(notes, objective_scale=s)  # a solver's objective value / s: the IR's
            obj = Objective(
                obj.sense,
                obj.vars,
                tuple(float(round(k * s)) for k in obj.coefs),
                obj.constant * s,
                obj.role,
            )
        new = replace(prob, constraints=tuple(out), objective=obj, notes=notes)
        return compiled.with_problem(new), None

    def _factor(self, coefs) -> float:
        m = max((abs(k) for k in coefs), default=0.0)
        if m == 0.0:
            return 1.0
        return 2.0 ** (self.target_bits - math.frexp(m)[1])

    def _scale(self, c: Linear, group_of, bounds, varmax) -> tuple[Linear, float]:
        if all(_is_int(k) for k in c.coefs) and _is_int(c.rhs):
            return c, 0.0
        s = self._factor(c.coefs)
        new = [float(round(k * s)) for k in c.coefs]
        # error bound: per exactly-one group the largest term, otherwise every term
        per_group: dict[int, float] = {}
        loose = 0.0
        for v, k, nk in zip(c.vars, c.coefs, new):
            e = abs(k * s - nk) * varmax[v]
            g = group_of.get(v)
            if g is None:
                loose += e
            else:
                per_group[g] = max(per_group.get(g, 0.0), e)
        err = loose + sum(per_group.values()) + 1.0  # +1 covers float rounding of the sum
        srhs = c.rhs * s
        if c.sense == GE:
            rhs = math.ceil(srhs - err)
            return _clamped(c._replace(coefs=tuple(new), rhs=float(rhs)), bounds), err / s
        if c.sense == LE:
            rhs = math.floor(srhs + err)
            return _clamped(c._replace(coefs=tuple(new), rhs=float(rhs)), bounds), err / s
        # an equality with fractional data becomes a relaxed range: keep as two rows
        raise ValueError("IntegerScaling cannot relax a fractional equality; split it first")


def _clamped(c: Linear, bounds) -> Linear:
    """The same row with its right-hand side moved into the range the left side can
    reach: a row no point can violate (or none satisfy) stays so, and a huge
    right-hand side (from a huge leaf of a fixed tree) fits 64-bit arithmetic."""
    lo = hi = 0.0
    for v, k in zip(c.vars, c.coefs):
        a, b = k * bounds[v][0], k * bounds[v][1]
        lo += min(a, b)
        hi += max(a, b)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return c
    if c.sense == GE:
        rhs = min(max(c.rhs, lo), hi + 1.0)
    else:
        rhs = max(min(c.rhs, hi), lo - 1.0)
    return c if rhs == c.rhs else c._replace(rhs=float(rhs))
