"""The Constraint IR: typed variables, exact linear constraints, one objective.

No solver object is ever created here. Coefficients are Python floats holding the model's
values exactly (float32 leaf values are exact in float64); a backend that needs integers
gets them from the IntegerScaling pass, which relaxes soundly.

Every variable has a name that traces back to the ensemble (``p1[age<0.5]``,
``l2[t17.n9]``); every constraint has a tag tuple saying where it came from.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np

from .enums import StrValue


class VarKind(StrValue):
    BOOL = "bool"
    INT = "int"
    REAL = "real"


class Sense(StrValue):
    """The relation of a linear constraint's left-hand side to its right-hand side."""

    LE = "<="
    GE = ">="
    EQ = "=="


BOOL, INT, REAL = VarKind.BOOL, VarKind.INT, VarKind.REAL
LE, GE, EQ = Sense.LE, Sense.GE, Sense.EQ


class Var(NamedTuple):
    name: str
    kind: str = BOOL
    lb: float = 0.0
    ub: float = 1.0


class Linear(NamedTuple):
    """sum(coefs[i] * x[vars[i]]) <sense> rhs, sense in '<=', '>=', '=='."""

    vars: tuple[int, ...]
    coefs: tuple[float, ...]
    sense: Sense | str
    rhs: float
    tag: tuple = ()


class ExactlyOne(NamedTuple):
    """Exactly one of the boolean variables is 1."""

    vars: tuple[int, ...]
    tag: tuple = ()


class Implication(NamedTuple):
    """If boolean ``var`` equals ``value`` then ``then`` holds."""

    var: int
    value: bool
    then: Linear
    tag: tuple = ()


Constraint = Linear | ExactlyOne | Implication


@dataclass(frozen=True)
class Objective:
    sense: str  # "max" or "min"
    vars: tuple[int, ...]
    coefs: tuple[float, ...]
    constant: float = 0.0
    # "guide": any feasible point answers the question, the objective only steers the
    # search (stop at the first solution). "optimize": the best point is wanted.
    role: str = "guide"


@dataclass(frozen=True)
class Notes:
    """Facts about soundness that passes record, read by the driver."""

    relax: float | None = None  # how far encode relaxed the gap rows (score units)
    scaling_error: float | None = None  # IntegerScaling's bound on a row's rounding error
    objective_scale: float | None = None  # a solver's objective / this = the IR's
    feature_constraints: int | None = None  # rows the query's bounds / relations added
    # a bound on the objective known before solving (max: above every point's value), in
    # the IR's units: the data-aware utility's separable maximum
    objective_bound: float | None = None


@dataclass(frozen=True)
class Problem:
    vars: tuple[Var, ...]
    constraints: tuple[Constraint, ...]
    objective: Objective | None = None
    notes: Notes = field(default_factory=Notes)
    # the soft group: positions in ``constraints`` of rows that restrict the search by the
    # data and may be dropped (never the basis of "insensitive"); a pass that moves or
    # expands constraints maps these positions
    soft: tuple[int, ...] = ()

    @property
    def n_vars(self) -> int:
        return len(self.vars)

    def with_constraints(self, extra: Iterable[Constraint]) -> Problem:
        return replace(self, constraints=self.constraints + tuple(extra))

    def with_soft_constraints(self, extra: Iterable[Constraint]) -> Problem:
        """The problem with ``extra`` added to the soft group."""
        extra = tuple(extra)
        n = len(self.constraints)
        return replace(
            self,
            constraints=self.constraints + extra,
            soft=self.soft + tuple(range(n, n + len(extra))),
        )

    @property
    def soft_constraints(self) -> tuple[Constraint, ...]:
        return tuple(self.constraints[i] for i in self.soft)

    def without_soft(self) -> Problem:
        drop = set(self.soft)
        return replace(
            self,
            constraints=tuple(c for i, c in enumerate(self.constraints) if i not in drop),
            soft=(),
        )

    def with_objective(self, objective: Objective | None) -> Problem:
        return replace(self, objective=objective)

    def with_notes(self, **changes: Any) -> Problem:
        return replace(self, notes=replace(self.notes, **changes))

    def stats(self) -> dict:
        kinds: dict[str, int] = {}
        for c in self.constraints:
            kinds[type(c).__name__] = kinds.get(type(c).__name__, 0) + 1
        return {"vars": len(self.vars), "constraints": len(self.constraints), **kinds}


class ProblemBuilder:
    """Mutable helper used while encoding; ``build()`` returns the immutable Problem."""

    def __init__(self) -> None:
        self.vars: list[Var] = []
        self.constraints: list[Constraint] = []

    def var(self, name: str, kind: str = BOOL, lb: float = 0.0, ub: float = 1.0) -> int:
        self.vars.append(Var(name, kind, lb, ub))
        return len(self.vars) - 1

    def add(self, c: Constraint) -> None:
        self.constraints.append(c)

    def linear(
        self, vars: Iterable[int], coefs: Iterable[float], sense: str, rhs: float, tag: tuple = ()
    ) -> None:
        self.constraints.append(Linear(tuple(vars), tuple(coefs), sense, float(rhs), tag))

    def build(self, objective: Objective | None = None) -> Problem:
        return Problem(tuple(self.vars), tuple(self.constraints), objective)


def evaluate_linear(c: Linear, values: Sequence[float] | np.ndarray) -> float:
    return sum(k * float(values[v]) for v, k in zip(c.vars, c.coefs))


def check_constraint(
    c: Constraint, values: Sequence[float] | np.ndarray, tol: float = 1e-6
) -> bool:
    """Does an assignment satisfy a constraint (used by tests and sanity checks)?"""
    if isinstance(c, ExactlyOne):
        return abs(sum(round(float(values[v])) for v in c.vars) - 1) < 0.5
    if isinstance(c, Implication):
        if round(float(values[c.var])) != int(c.value):
            return True
        return check_constraint(c.then, values, tol)
    lhs = evaluate_linear(c, values)
    if c.sense == LE:
        return lhs <= c.rhs + tol
    if c.sense == GE:
        return lhs >= c.rhs - tol
    return abs(lhs - c.rhs) <= tol
