"""The query: what is asked of an ensemble. CLI flags, the API and `.sens` files all end here."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

from .ensemble import (
    EXP,
    IDENTITY,
    LOGISTIC,
    PROBA,
    SIGMOID,
    SOFTMAX,
    Ensemble,
    Feature,
    logit,
)
from .enums import StrValue
from .errors import FEATURES, InputError, closest
from .link_change import MIN_SIGMOID_DELTA, NONLINEAR_LINKS, LinkChange, link_change
from .options import (
    DEFAULT_BACKEND,
    DEFAULT_SEED,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT,
    DataAwareMode,
    QueryOptions,
)

# sanity limits on gaps: far beyond any meaningful question, and where exact arithmetic
# in the solvers (int64 after scaling, floating tolerances) would stop being trustworthy
MAX_RATIO = 1e6
MAX_MARGIN_GAP = 1e3

ANY = "any"  # a class placeholder: c1 = any class, or c2 = any class other than c1

# the directions of a regressor's change by at least delta
UP, DOWN, EITHER = "up", "down", "either"
DIRECTIONS = (UP, DOWN, EITHER)

# the switchable passes of the paper, by their CLI names
PASS_NAMES = ("ordering", "unaff", "aff", "obj")
DEFAULT_PASSES = frozenset(PASS_NAMES)
# Kantchelian et al.'s encoding already orders each feature's predicates (their
# consistency constraints); the paper's baseline "Kant" is that encoding, nothing more.
KANT_PASSES = frozenset({"ordering"})


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
class Query:
    vary: tuple[str, ...]
    gap: Gap = Gap(0.2)
    # regressors: (a, b) asks f(x1) >= a and f(x2) <= b, in prediction space
    threshold: tuple[float, float] | None = None
    # regressors: the predictions differ by at least ``delta`` in ``direction`` (UP:
    # f(x1) - f(x2) >= delta, DOWN: f(x2) - f(x1) >= delta, EITHER: one of the two)
    delta: float | None = None
    direction: str = "either"
    # what the query asks of its pair (compiler/kinds.py): "" is the question its fields
    # give ("pair", or "change" with a delta); ``params`` are the kind's own settings
    kind: str = ""
    params: tuple[tuple[str, Any], ...] = ()
    # the kind's reduction has been applied (its bounds are in ``bounds``)
    prepared: bool = field(default=False, compare=False)
    name: str = ""
    classes: tuple[int | str, int | str] | None = None  # multiclass (c1, c2)
    bounds: tuple[FeatureBound, ...] = ()
    relations: tuple[FeatureRelation, ...] = ()
    passes: frozenset[str] = DEFAULT_PASSES
    backend: str = DEFAULT_BACKEND
    timeout: float = DEFAULT_TIMEOUT
    threads: int = DEFAULT_THREADS
    seed: int = DEFAULT_SEED
    data_aware: DataAwareMode = DataAwareMode.NONE
    # given as a QueryOptions, a dict or (name, value) pairs; always held as QueryOptions
    options: QueryOptions = field(default=QueryOptions())

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_aware", DataAwareMode.parse(self.data_aware))
        object.__setattr__(self, "options", QueryOptions.of(self.options))

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

    def deadline(self, start: float | None = None) -> float:
        """When the answer is due: ``start`` (a ``time.time()``; default now) plus the
        time limit. The one place a time limit becomes a deadline."""
        return (time.time() if start is None else start) + self.timeout

    def with_(self, **kw: Any) -> Query:
        return replace(self, **kw)


@dataclass(frozen=True)
class Condition:
    """The decision condition in raw-score space, resolved against one ensemble.

    For copy c (1 or 2) every row (coefs over outputs, rhs) must hold:
    sum_k coefs[k] * raw_k(x_c) >= rhs. ``alternatives`` lists, per copy, groups of
    rows of which at least one group must hold (used for "any class").
    """

    rows: tuple[
        tuple[tuple[tuple[float, ...], float], ...], ...
    ]  # per copy: (coefs, rhs); may be empty
    alternatives: tuple[tuple[tuple[tuple[tuple[float, ...], float], ...], ...], ...] = ((), ())
    pair_sum: tuple[tuple[float, ...], tuple[float, ...], float] | None = None
    # rows over both inputs, (coefs of x1, coefs of x2, rhs): at least one must hold (a
    # single one: it must). A regressor's change by at least delta; unlike ``pair_sum``,
    # not implied by the per-copy rows, so the encoding states them.
    pair_rows: tuple[tuple[tuple[float, ...], tuple[float, ...], float], ...] = ()
    description: str = ""
    distinct: bool = False  # alternatives of copy 1 and 2 name the same classes, which must differ
    # a regressor's change through a nonlinear link (compiler/link_change.py): per
    # direction, rows over both inputs that must all hold (two directions: a choice),
    # an outer approximation that the near-miss cuts refine
    link_change: LinkChange | None = None


def pair_condition(ens: Ensemble, q: Query) -> Condition:
    """Turn the query's gap and classes (a regressor's threshold form) into linear
    conditions on raw scores."""
    if ens.is_regressor:
        return _regression_condition(ens, q)
    if q.threshold is not None:
        raise InputError("above / below (the threshold form) are for regressors; give a gap")
    if q.delta is not None:
        raise InputError("delta (a change of the prediction) is for regressors; give a gap")
    g = q.gap
    if ens.n_classes == 2 and ens.n_outputs == 1:
        if q.classes not in (None, (1, 0), ("1", "0")):
            raise InputError(f"classes {q.classes} given for a binary model; drop them")
        if g.kind == "prob":
            if not (0.0 <= g.value < 0.5):
                raise InputError(
                    f"gap {g.value:g} out of range: a binary gap g needs 0 <= g < 0.5 "
                    "(P(x1) >= 0.5+g and P(x2) <= 0.5-g)"
                )
            if ens.link == LOGISTIC:
                hi, lo = logit(0.5 + g.value), -logit(0.5 + g.value)
            else:
                hi, lo = 0.5 + g.value, 0.5 - g.value
        else:
            if g.value < 0:
                raise InputError(f"margin gap {g.value:g} must be >= 0")
            if g.value > MAX_MARGIN_GAP:
                raise InputError(
                    f"margin gap {g.value:g} too large (at most {MAX_MARGIN_GAP:g}; "
                    "no tree ensemble's scores are that far apart)"
                )
            if ens.link == LOGISTIC:
                hi, lo = g.value, -g.value
            else:
                hi, lo = 0.5 + g.value, 0.5 - g.value
        rows = (((((1.0,), hi),)), (((-1.0,), -lo),))
        desc = f"raw(x1) >= {hi:.6g} and raw(x2) <= {lo:.6g}"
        return Condition(rows=rows, pair_sum=((1.0,), (-1.0,), hi - lo), description=desc)
    return _multiclass_condition(ens, q)


def refuse_regressor(ens: Ensemble, question: str = "this question") -> None:
    """The questions not yet defined for regressors refuse them in one line."""
    if ens.is_regressor:
        raise InputError(
            f"the model is a regressor (link {ens.link}): {question} is not supported for "
            "regressors yet (check and sweep with above A / below B are)"
        )


def _regression_condition(ens: Ensemble, q: Query) -> Condition:
    """The threshold form f(x1) >= a, f(x2) <= b, moved to raw scores through the
    inverse of the (increasing) link."""
    if q.threshold is None:
        raise InputError(
            "the model is a regressor: give a change, delta D (--delta D: the predictions "
            "differ by at least D), or the threshold form, above A and below B "
            "(--above A --below B: f(x1) >= A and f(x2) <= B)"
        )
    if q.classes is not None:
        raise InputError("classes are for classifiers; a regressor has one prediction")
    a, b = q.threshold
    hi, lo = raw_of(ens, a, "above"), raw_of(ens, b, "below")
    rows = ((((1.0,), hi),), (((-1.0,), -lo),))
    desc = f"f(x1) >= {a:.6g} and f(x2) <= {b:.6g}"
    return Condition(rows=rows, pair_sum=((1.0,), (-1.0,), hi - lo), description=desc)


def change_condition(ens: Ensemble, q: Query) -> Condition:
    """The change by at least delta, f(x1) - f(x2) >= delta (or the other way, or
    either), as a row over both inputs: with the identity link, predictions are raw
    scores. A query the same for both inputs (no bounds on one input only, no relations)
    asks "either" as "up": a pair that goes down is a pair that goes up, renamed."""
    if not ens.is_regressor:
        raise InputError("delta (a change of the prediction) is for regressors; give a gap")
    if q.threshold is not None:
        raise InputError("give either delta or the threshold form (above, below), not both")
    if q.classes is not None:
        raise InputError("classes are for classifiers; a regressor has one prediction")
    d = q.delta
    direction = q.direction
    if direction == EITHER and symmetric(q):
        direction = UP
    if ens.link != IDENTITY:
        return _link_change_condition(ens, d, direction)
    up = ((1.0,), (-1.0,), d)
    down = ((-1.0,), (1.0,), d)
    rows = {UP: (up,), DOWN: (down,), EITHER: (up, down)}[direction]
    text = {
        UP: f"f(x1) - f(x2) >= {d:.6g}",
        DOWN: f"f(x2) - f(x1) >= {d:.6g}",
        EITHER: f"|f(x1) - f(x2)| >= {d:.6g}",
    }[direction]
    return Condition(
        rows=((), ()),
        pair_rows=rows,
        pair_sum=rows[0] if len(rows) == 1 else None,
        description=text,
    )


def _link_change_condition(ens: Ensemble, d: float, direction: str) -> Condition:
    """The change through a nonlinear increasing link: f(x1) - f(x2) >= d is
    raw(x1) >= h(raw(x2)) with h convex, stated by tangent rows and refined by cuts."""
    if ens.link not in NONLINEAR_LINKS:
        raise InputError(f"delta on a regressor whose prediction is {ens.link}(raw score)")
    if ens.link == SIGMOID and d >= 1.0:
        raise InputError(
            f"delta {d:g}: this model's predictions (sigmoid) lie in (0, 1), no two differ "
            "by 1 or more"
        )
    if ens.link == SIGMOID and 0.0 < d < MIN_SIGMOID_DELTA:
        raise InputError(
            f"delta {d:g} is below the float32 rounding of this model's predictions "
            f"(sigmoid): ask at least {MIN_SIGMOID_DELTA:g}"
        )
    directions = (UP, DOWN) if direction == EITHER else (direction,)
    lc = link_change(ens, d, directions)
    text = {
        UP: f"f(x1) - f(x2) >= {d:.6g}",
        DOWN: f"f(x2) - f(x1) >= {d:.6g}",
        EITHER: f"|f(x1) - f(x2)| >= {d:.6g}",
    }[direction]
    # the difference of the raw scores (the first row) sums the two inputs' rows
    pair_sum = lc.rows[0][0] if len(directions) == 1 else None
    return Condition(rows=((), ()), pair_sum=pair_sum, link_change=lc, description=text)


def symmetric(q: Query) -> bool:
    """Whether the query treats its two inputs alike, so that swapping them maps its
    pairs onto its pairs."""
    return not q.relations and all(set(b.copies) == {1, 2} for b in q.bounds)


def check_delta(delta, direction: str) -> tuple[float, str]:
    """A change's size and direction, checked (delta > 0 and finite)."""
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise InputError(f"delta must be a number, got {delta!r}") from None
    if not (math.isfinite(d) and d > 0):
        raise InputError(f"delta {delta!r} must be a finite number above 0")
    if direction not in DIRECTIONS:
        raise InputError(f"direction {direction!r}: use one of {', '.join(DIRECTIONS)}")
    return d, direction


def raw_of(ens: Ensemble, v: float, name: str) -> float:
    """The raw score whose prediction is ``v`` (the link is increasing)."""
    if ens.link == EXP:
        if v <= 0:
            raise InputError(f"{name} {v:g}: this model's predictions (exp link) are positive")
        return math.log(v)
    if ens.link == SIGMOID:
        if not 0 < v < 1:
            raise InputError(f"{name} {v:g}: this model's predictions (sigmoid) lie in (0, 1)")
        return logit(v)
    return float(v)


def class_index(ens: Ensemble, c: int | str | None) -> int | str:
    if c == ANY or c is None:
        return ANY
    try:
        k = int(c)
    except (TypeError, ValueError):
        raise InputError(f"class {c!r} is not a class number") from None
    if not 0 <= k < ens.n_classes:
        raise InputError(f"class {k} out of range: the model has classes 0..{ens.n_classes - 1}")
    return k


def _class_rows(ens: Ensemble, g: Gap, ratio: float, c: int) -> tuple:
    """The rows (coefs over classes, rhs) that make class c win by the gap over each other."""
    out = []
    for other in range(ens.n_classes):
        if other == c:
            continue
        coefs = [0.0] * ens.n_classes
        if ens.link == SOFTMAX:
            coefs[c], coefs[other] = 1.0, -1.0
            out.append((tuple(coefs), math.log(ratio)))
        elif ens.link == PROBA and g.kind == GapKind.MARGIN:
            # raw scores are probabilities: the margin is their difference
            coefs[c], coefs[other] = 1.0, -1.0
            out.append((tuple(coefs), g.value))
        elif ens.link == PROBA:
            coefs[c], coefs[other] = 1.0, -ratio
            out.append((tuple(coefs), 0.0))
        else:
            raise InputError(
                f"multiclass queries need a softmax or probability model, not {ens.link}"
            )
    return tuple(out)


def _multiclass_condition(ens: Ensemble, q: Query) -> Condition:
    if q.classes is None:
        raise InputError(
            f"the model has {ens.n_classes} classes: give the two classes to compare "
            "(--classes C1,C2; C2 may be 'any')"
        )
    c1, c2 = (class_index(ens, c) for c in q.classes)
    if c1 != ANY and c1 == c2:
        raise InputError(f"classes must differ (got {c1} twice)")
    g = q.gap
    C = ens.n_classes
    if g.kind == "prob":
        if not g.given:
            raise InputError(
                f"the model has {C} classes and a multiclass gap has no default: give a "
                "probability ratio g >= 1 (--gap 1.5: P(c1) >= 1.5 * P(c) for every other "
                "class c) or a margin gap (--margin-gap D)"
            )
        if g.value < 1.0:
            raise InputError(
                f"gap {g.value:g} out of range: a multiclass gap is a probability ratio g >= 1 "
                "(P(c1) >= g * P(c) for every other class c)"
            )
        ratio = g.value
    else:
        if g.value < 0:
            raise InputError(f"margin gap {g.value:g} must be >= 0")
        if g.value > math.log(MAX_RATIO):
            raise InputError(
                f"margin gap {g.value:g} too large: a multiclass margin gap is ln of a "
                f"probability ratio, at most ln({MAX_RATIO:g}) = {math.log(MAX_RATIO):.4g}"
            )
        if ens.link == PROBA and g.value >= 1.0:
            raise InputError(
                f"margin gap {g.value:g} out of range: this model's scores are probabilities, "
                "so a margin gap P(c1) - P(c) needs 0 <= d < 1"
            )
        ratio = math.exp(g.value)
    if ratio > MAX_RATIO:
        raise InputError(
            f"gap {ratio:g} too large: a multiclass ratio gap is at most {MAX_RATIO:g} "
            "(beyond that the solvers' arithmetic cannot be trusted)"
        )

    def rows_for(c: int) -> tuple:
        return _class_rows(ens, g, ratio, c)

    if c1 != ANY and c2 != ANY:
        rows = (rows_for(c1), rows_for(c2))
        pair = None
        if ens.link == SOFTMAX:
            a = [0.0] * C
            b = [0.0] * C
            a[c1], a[c2] = 1.0, -1.0
            b[c2], b[c1] = 1.0, -1.0
            pair = (tuple(a), tuple(b), 2 * math.log(ratio))
        return Condition(
            rows=rows, pair_sum=pair, description=f"class {c1} -> class {c2}, ratio {ratio:g}"
        )
    if c1 != ANY:
        alts2 = tuple(rows_for(c) for c in range(C) if c != c1)
        return Condition(
            rows=(rows_for(c1), ()),
            alternatives=((), alts2),
            description=f"class {c1} -> any other",
        )
    if c2 != ANY:
        alts1 = tuple(rows_for(c) for c in range(C) if c != c2)
        return Condition(
            rows=((), rows_for(c2)),
            alternatives=(alts1, ()),
            description=f"any other class -> class {c2}",
        )
    every = tuple(rows_for(c) for c in range(C))
    return Condition(
        rows=((), ()),
        alternatives=(every, every),
        distinct=True,
        description=f"any class -> any other class, ratio {ratio:g}",
    )


# ---- consistency of a query's bounds and relations (used by the .sens checker and the
# feature-constraints pass) -------------------------------------------------------------

LE, LT, EQ, NE = "<=", "<", "==", "!="
FLIP = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "==": "==", "!=": "!="}
_ALLOWS = {
    "<=": {"lt", "eq"},
    "<": {"lt"},
    "==": {"eq"},
    ">=": {"eq", "gt"},
    ">": {"gt"},
    "!=": {"lt", "gt"},
}
# the relation the allowed orders of x1.f and x2.f make: (L, R, kind) for x_L.f kind x_R.f
_NORMAL = {
    frozenset({"lt"}): (0, 1, LT),
    frozenset({"lt", "eq"}): (0, 1, LE),
    frozenset({"eq"}): (0, 1, EQ),
    frozenset({"gt"}): (1, 0, LT),
    frozenset({"eq", "gt"}): (1, 0, LE),
    frozenset({"lt", "gt"}): (0, 1, NE),
}


def feature_index(ens: Ensemble, name: str | int) -> int:
    """The index of a feature given by name (or index, or an index written as digits)."""
    if isinstance(name, int):
        return name
    try:
        return ens.feature_index(name)
    except KeyError:
        if isinstance(name, str) and name.isdigit() and 0 <= int(name) < ens.n_features:
            return int(name)
        raise InputError(
            f"unknown feature {name!r}{closest(str(name), ens.feature_names, listing=FEATURES)}"
        ) from None


def bounds_by_copy(
    ens: Ensemble, q: Query, varying: set[int] | frozenset[int]
) -> dict[tuple[int, int], tuple[float, float]]:
    """(feature, copy 0/1) -> (lo, hi): the intersection of the query's bounds and the
    feature's declared bounds. A feature outside ``varying`` (feature indices) has one
    value for both inputs, so its bounds on either copy apply to both."""
    out: dict[tuple[int, int], tuple[float, float]] = {}
    for b in q.bounds:
        f = feature_index(ens, b.feature)
        copies = {c - 1 for c in b.copies}
        if any(c not in (0, 1) for c in copies):
            raise InputError(f"bound on {b.feature!r}: copies are 1 and 2, got {b.copies}")
        if f not in varying:
            copies = {0, 1}
        for c in copies:
            lo, hi = out.get((f, c), (-math.inf, math.inf))
            out[(f, c)] = (max(lo, float(b.lo)), min(hi, float(b.hi)))
    for (f, c), (lo, hi) in list(out.items()):
        feat = ens.features[f]
        out[(f, c)] = (max(lo, feat.lb), min(hi, feat.ub))
    return out


def relations_by_feature(ens: Ensemble, q: Query) -> dict[int, list[tuple[int, int, str]]]:
    """feature -> [(L, R, kind)]: x_L.f kind x_R.f with kind in <=, <, == (copies 0/1).

    All relations on one feature are combined first (``x1.f <= x2.f and x1.f >= x2.f``
    is ``==``; ``<`` together with ``>`` is a contradiction, an InputError), so each
    feature has one."""
    allowed: dict[int, set[str]] = {}
    for r in q.relations:
        f = feature_index(ens, r.feature)
        if {r.left, r.right} != {1, 2}:
            raise InputError(
                f"relation on {r.feature!r} must compare x1 with x2 (got x{r.left} and x{r.right})"
            )
        if r.op not in _ALLOWS:
            raise InputError(f"unknown comparison {r.op!r} (use <=, <, >=, >, ==, !=)")
        op = r.op if r.left == 1 else FLIP[r.op]  # as "x1.f op x2.f"
        allowed[f] = allowed.get(f, {"lt", "eq", "gt"}) & _ALLOWS[op]
    out: dict[int, list[tuple[int, int, str]]] = {}
    for f, a in allowed.items():
        if not a:
            raise InputError(f"the relations on {ens.feature_names[f]!r} contradict each other")
        out[f] = [_NORMAL[frozenset(a)]]
    return out


def check_relations_within_bounds(
    ens: Ensemble,
    varying: set[int] | frozenset[int],
    rels: dict[int, list[tuple[int, int, str]]],
    bnds: dict[tuple[int, int], tuple[float, float]],
) -> None:
    """A relation between x1.f and x2.f that the two inputs' bounds on f rule out (say
    x1.f >= 10, x2.f <= 5 and x1.f <= x2.f) leaves no pair at all: an input error, not a
    vacuous "insensitive". ``rels`` / ``bnds``: ``relations_by_feature`` /
    ``bounds_by_copy`` of the query."""
    for f, items in sorted(rels.items()):
        if f not in varying:
            continue
        feat = ens.features[f]
        for a, b, kind in items:
            la, ha = bnds.get((f, a), (feat.lb, feat.ub))
            lb, hb = bnds.get((f, b), (feat.lb, feat.ub))
            ok = {
                LT: la < hb,
                LE: la <= hb,
                EQ: max(la, lb) <= min(ha, hb),
                NE: not (la == ha == lb == hb),
            }[kind]
            if not ok:
                name = ens.feature_names[f]
                raise InputError(
                    f"x{a + 1}.{name} {kind} x{b + 1}.{name} cannot hold within the bounds "
                    f"(x{a + 1}.{name} in [{la:g}, {ha:g}], x{b + 1}.{name} in [{lb:g}, {hb:g}])"
                )


def no_value_in(feat: Feature, lo: float, hi: float) -> str | None:
    """Why no value of the feature lies in [lo, hi]: "value", or "whole value" for an
    integral feature (None: some value does)."""
    if not lo <= hi:
        return "value"
    whole = feat.integral and math.isfinite(lo) and math.isfinite(hi)
    return "whole value" if whole and math.ceil(lo) > math.floor(hi) else None
