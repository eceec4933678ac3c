"""The question: what a query asks of an ensemble's pair of inputs x1, x2 (equal outside
the varied features F), apart from how it is solved (compiler/plan.py), as cvxpy keeps a
Problem apart from ``solve()``. Its kind (compiler/kinds.py) says what the pair must
meet; the other fields are that kind's parameters: a gap, classes, a regressor's change
or threshold form, bounds and relations on the inputs, and the kind's own ``params``."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .enums import StrValue

ANY = "any"  # a class placeholder: c1 = any class, or c2 = any class other than c1

# the directions of a regressor's change by at least delta, from x1 to x2: up, the
# prediction goes up (f(x2) - f(x1) >= delta); down, it goes down; either, one of the two
UP, DOWN, EITHER = "up", "down", "either"
DIRECTIONS = (UP, DOWN, EITHER)


class GapKind(StrValue):
    """How a gap is measured: ``prob`` (a probability gap, or a multiclass ratio) or
    ``margin`` (raw-score space). Compares equal to its name."""

    PROB = "prob"
    MARGIN = "margin"


@dataclass(frozen=True)
class Gap:
    """How far apart the two decisions must be.

    ``kind`` "prob": binary g in [0, 0.5) (P(x1) >= 0.5+g, P(x2) <= 0.5-g), or the
    multiclass ratio g >= 1 (P_c1 >= g * P_c for every other class c).
    ``kind`` "margin": the gap directly in raw-score space (binary: m(x1) >= d,
    m(x2) <= -d; multiclass: raw_c1 - raw_c >= d).
    """

    value: float
    kind: GapKind = GapKind.PROB
    # False for the binary default (0.2) taken when no gap was given: a multiclass
    # model has no default, and says so
    given: bool = field(default=True, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", GapKind(self.kind))

    def __str__(self) -> str:
        return f"{self.value:.12g}" if self.kind == "prob" else f"margin {self.value:.12g}"


# a result's gap_kind when its gap is a regressor's change in prediction units: the
# delta asked (a check, an audit's row) or the largest change found (a max gap)
CHANGE = "change"
# a result's gap_kind for a regressor's threshold form f(x1) >= A, f(x2) <= B: its gap is
# A - B, the least change f(x1) - f(x2) of a pair that meets it
THRESHOLD = "threshold"


def result_gap(
    gap: Gap, delta: float | None, threshold: tuple[float, float] | None = None
) -> tuple[float, str]:
    """A result's ``gap`` and ``gap_kind``: what the question asked, not a probability gap
    it does not ask. A regressor's change by at least ``delta``: that change (kind
    "change"); its threshold form (A, B): A - B (kind "threshold"); else the gap."""
    if delta is not None:
        return float(delta), CHANGE
    if threshold is not None:
        above, below = threshold
        return float(above) - float(below), THRESHOLD
    return gap.value, str(gap.kind)


@dataclass(frozen=True)
class FeatureBound:
    """An extra constraint on one feature of one or both inputs: lo <= x.f <= hi."""

    feature: str
    lo: float = -math.inf
    hi: float = math.inf
    copies: tuple[int, ...] = (1, 2)


@dataclass(frozen=True)
class FeatureRelation:
    """``x<left>.f <op> x<right>.f`` with op in <=, <, >=, >, ==, != (categorical only)."""

    feature: str
    left: int
    op: str
    right: int


@dataclass(frozen=True)
class Question:
    """What is asked: the varied features, the kind and its parameters."""

    vary: tuple[str, ...]
    gap: Gap = Gap(0.2)
    # regressors: (a, b) asks f(x1) >= a and f(x2) <= b, in prediction space
    threshold: tuple[float, float] | None = None
    # regressors: the predictions differ by at least ``delta`` in ``direction``, read
    # from x1 to x2 (UP: the prediction goes up, f(x2) - f(x1) >= delta; DOWN: it goes
    # down, f(x1) - f(x2) >= delta; EITHER: one of the two)
    delta: float | None = None
    direction: str = "either"
    # what the question asks of its pair (compiler/kinds.py): "" is the question its
    # fields give ("pair", or "change" with a delta); ``params`` are the kind's own
    # settings, given as (name, value) pairs or a dict
    kind: str = ""
    params: tuple[tuple[str, Any], ...] = ()
    # the kind's reduction has been applied (its bounds are in ``bounds``)
    prepared: bool = field(default=False, compare=False)
    name: str = ""
    classes: tuple[int | str, int | str] | None = None  # multiclass (c1, c2)
    bounds: tuple[FeatureBound, ...] = ()
    relations: tuple[FeatureRelation, ...] = ()
    # the constraints among ``bounds`` and ``relations`` as the user wrote them (a
    # --where text, a .sens query's where clause or fix), for messages (``where_words``)
    where: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", kind_params(self.params))

    @property
    def label(self) -> str:
        return self.name or ",".join(self.vary)

    @property
    def kind_name(self) -> str:
        """The kind of question: as given, else "change" for a delta, else "pair"."""
        return self.kind or ("change" if self.delta is not None else "pair")

    def param(self, name: str, default: Any = None) -> Any:
        """A kind parameter by name."""
        return dict(self.params).get(name, default)

    def with_(self, **kw: Any) -> Question:
        return replace(self, **kw)

    @property
    def question(self) -> Question:
        """The question alone (a Query's without its plan)."""
        if type(self) is Question:
            return self
        return Question(**{f.name: getattr(self, f.name) for f in fields(Question)})


def where_words(q: Question) -> str:
    """The question's constraints as the user wrote them, for the domain an answer holds
    over (" where x1.age <= 30 and sex = 1"); "" without constraints."""
    return f" where {' and '.join(q.where)}" if q.where else ""


def kind_params(given) -> tuple[tuple[str, Any], ...]:
    """A kind's parameters as (name, value) pairs, from pairs or a dict; lists become
    tuples (a question is hashable)."""
    pairs = given.items() if isinstance(given, dict) else (given or ())
    return tuple((str(k), tuple(v) if isinstance(v, list) else v) for k, v in pairs)
