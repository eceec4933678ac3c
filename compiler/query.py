"""The query: a question (compiler/question.py) with its solve plan (compiler/plan.py),
what CLI flags, the API and `.sens` files all end as; and the linear conditions on raw
scores a pair question's gap, threshold form or change asks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
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
    bounds_data_file,
    logit,
)
from .errors import (
    FEATURES,
    InputError,
    binary_gap_range,
    category_range,
    closest,
    setting,
    spelled,
)
from .link_change import MIN_SIGMOID_DELTA, NONLINEAR_LINKS, LinkChange, link_change
from .plan import DEFAULT_PASSES, KANT_PASSES, PASS_NAMES, Plan  # noqa: F401 - re-exported
from .question import (  # noqa: F401 - re-exported: the question's types
    ANY,
    DIRECTIONS,
    DOWN,
    EITHER,
    UP,
    FeatureBound,
    FeatureRelation,
    Gap,
    GapKind,
    Question,
)

# sanity limits on gaps: far beyond any meaningful question, and where exact arithmetic
# in the solvers (int64 after scaling, floating tolerances) would stop being trustworthy
MAX_RATIO = 1e6
MAX_MARGIN_GAP = 1e3


@dataclass(frozen=True)
class Query(Question):
    """A question with the plan it is solved by: what the driver answers
    (``solve_query``), as ``problem.solve(**plan)`` in cvxpy. Built by ``make_query``
    (questions/query_build.py), or as ``Query(vary=..., gap=..., plan=Plan(...))``."""

    plan: Plan = field(default=Plan())

    @classmethod
    def of(cls, question: Question, plan: Plan | None = None) -> Query:
        fields_ = {f.name: getattr(question, f.name) for f in fields(Question)}
        return cls(**fields_, plan=plan if plan is not None else Plan())

    def planned(self, **kw: Any) -> Query:
        """The same question with its plan changed (``backend=``, ``timeout=``, ...)."""
        return replace(self, plan=self.plan.with_(**kw))

    def over_all_inputs(self) -> Query:
        """The same question without its data-aware mode: what an "insensitive" answer
        to it states, since the data's restrictions never decide insensitivity (the
        driver drops them when they leave no pair; docs/data-aware.md)."""
        if self.plan.data_aware == "none":
            return self
        return self.planned(data_aware="none")


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
    # the band of raw scores above the rows (raw units) where the library's rounding of
    # its link may decide a pair: its P may lie SIGMOID_ROUNDING below or above the exact
    # sigmoid's (a ratio's ln, SOFTMAX_ROUNDING), and the rows sit that much below the
    # exact condition; the replay judges a pair in that band, and one past it that the
    # library rejects is a disagreement (answers/verdict.py)
    rounding: float = 0.0


# a bound on how far a library's sigmoid (XGBoost's, in float32) may round P(class 1) up
# or down: near P = 1 a float32 ulp spans a wide band of raw scores (P = 1.0 from raw
# 16.7 on, where the exact sigmoid is 1 - 6e-8), so a binary probability gap's rows ask
# that much less of P, and the library's replay of each pair decides
SIGMOID_ROUNDING = 2.0**-20
# and of its softmax, in ln of a ratio of two classes' probabilities (XGBoost's float32
# softmax rounds raw_o - max, expf and the quotients: for a pair near a ratio r <= 1e6,
# its ln moves by less than this; verify/claims.py): a probability ratio's rows ask this
# much less of raw_c - raw_o, and the library's replay of each pair decides
SOFTMAX_ROUNDING = 2.0**-18


def pair_condition(ens: Ensemble, q: Query) -> Condition:
    """Turn the query's gap and classes (a regressor's threshold form) into linear
    conditions on raw scores."""
    if ens.is_regressor:
        return _regression_condition(ens, q)
    if q.threshold is not None:
        a, b = q.threshold
        raise InputError(
            f"{setting('above', a)} {setting('below', b)}: the threshold form is for "
            f"regressors; give a gap ({spelled('gap=G', '--gap G')})"
        )
    if q.delta is not None:
        raise delta_for_a_classifier()
    g = q.gap
    if ens.n_classes == 2 and ens.n_outputs == 1:
        if q.classes not in (None, (1, 0), ("1", "0")):
            raise InputError(
                f"{classes_given(q.classes)} given for a binary model; drop them: a binary gap "
                "asks for x1 in class 1 and x2 in class 0 (P(x1) >= 0.5+g, P(x2) <= 0.5-g), "
                "and the pair space is symmetric, so the other order is the same question"
            )
        if g.kind == "prob":
            if not (0.0 <= g.value < 0.5):
                raise InputError(binary_gap_range(g.value, "P(x1) >= 0.5+g and P(x2) <= 0.5-g"))
            rounding = 0.0
            if ens.link == LOGISTIC:
                hi = logit(0.5 + g.value - SIGMOID_ROUNDING)
                top = 0.5 + g.value + SIGMOID_ROUNDING  # P read below 0.5 + g up to here
                hi, lo, rounding = hi, -hi, (logit(top) if top < 1.0 else math.inf) - hi
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
            rounding = 0.0
            if ens.link == LOGISTIC:
                hi, lo = g.value, -g.value
            else:
                hi, lo = 0.5 + g.value, 0.5 - g.value
        rows = (((((1.0,), hi),)), (((-1.0,), -lo),))
        desc = f"raw(x1) >= {hi:.6g} and raw(x2) <= {lo:.6g}"
        pair = ((1.0,), (-1.0,), hi - lo)
        return Condition(rows=rows, pair_sum=pair, description=desc, rounding=rounding)
    return _multiclass_condition(ens, q)


def delta_for_a_classifier(words: tuple[str, str] = ("delta", "--delta")) -> InputError:
    """A change of the prediction (``delta``) asked of a classifier, named as the user's
    interface spells it, with the gap to give instead."""
    return InputError(
        f"{spelled(*words)} (a change of the prediction) is for regressors; give a gap "
        f"({spelled('gap=G', '--gap G')})"
    )


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
            f"the model is a regressor: give a change, {spelled('delta=D', '--delta D')} (the "
            "predictions differ by at least D), or the threshold form, "
            f"{spelled('above=A, below=B', '--above A --below B')} (f(x1) >= A and f(x2) <= B)"
        )
    if q.classes is not None:
        raise _classes_for_a_regressor(q.classes)
    a, b = q.threshold
    hi, lo = raw_of(ens, a, "above"), raw_of(ens, b, "below")
    rows = ((((1.0,), hi),), (((-1.0,), -lo),))
    desc = f"f(x1) >= {a:.6g} and f(x2) <= {b:.6g}"
    return Condition(rows=rows, pair_sum=((1.0,), (-1.0,), hi - lo), description=desc)


def change_condition(ens: Ensemble, q: Query) -> Condition:
    """The change by at least delta from x1 to x2, up (f(x2) - f(x1) >= delta), down
    (f(x1) - f(x2) >= delta) or either, as a row over both inputs: with the identity
    link, predictions are raw scores. A query the same for both inputs (no bounds on one
    input only, no relations) asks "either" as "up": a pair that goes down is a pair that
    goes up, renamed."""
    if not ens.is_regressor:
        raise delta_for_a_classifier()
    if q.threshold is not None:
        a, b = q.threshold
        raise InputError(
            f"{setting('above', a)} {setting('below', b)} and {setting('delta', q.delta)}: "
            "give either a change (delta) or the threshold form, not both"
        )
    if q.classes is not None:
        raise _classes_for_a_regressor(q.classes)
    d = q.delta
    direction = q.direction
    if direction == EITHER and symmetric(q):
        direction = UP
    if ens.link != IDENTITY:
        return _link_change_condition(ens, d, direction)
    up = ((-1.0,), (1.0,), d)
    down = ((1.0,), (-1.0,), d)
    rows = {UP: (up,), DOWN: (down,), EITHER: (up, down)}[direction]
    return Condition(
        rows=((), ()),
        pair_rows=rows,
        pair_sum=rows[0] if len(rows) == 1 else None,
        description=change_text(direction, d),
    )


def change_text(direction: str, d: float, fmt: str = ".6g") -> str:
    """A change by at least d from x1 to x2 in ``direction``, as a formula."""
    return {
        UP: f"f(x2) - f(x1) >= {d:{fmt}}",
        DOWN: f"f(x1) - f(x2) >= {d:{fmt}}",
    }.get(direction, f"|f(x2) - f(x1)| >= {d:{fmt}}")


def _link_change_condition(ens: Ensemble, d: float, direction: str) -> Condition:
    """The change through a nonlinear increasing link: f(x2) - f(x1) >= d (up) is
    raw(x2) >= h(raw(x1)) with h convex, stated by tangent rows and refined by cuts."""
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
    text = change_text(direction, d)
    # the difference of the raw scores (the first row) sums the two inputs' rows
    pair_sum = lc.rows[0][0] if len(directions) == 1 else None
    return Condition(rows=((), ()), pair_sum=pair_sum, link_change=lc, description=text)


def symmetric(q: Query) -> bool:
    """Whether the query treats its two inputs alike, so that swapping them maps its
    pairs onto its pairs."""
    return not q.relations and all(set(b.copies) == {1, 2} for b in q.bounds)


def classes_given(classes) -> str:
    """The classes a user gave, as their interface writes them: ``classes=(0, 1)``, or
    on the command line ``--classes 0,1``."""
    return spelled(f"classes={tuple(classes)}", f"--classes {','.join(map(str, classes))}")


def _classes_for_a_regressor(classes) -> InputError:
    """Classes asked of a regressor, named with the value given."""
    return InputError(
        f"{classes_given(classes)}: classes are for classifiers; a regressor has one prediction"
    )


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


def _named(name: str, v: float) -> str:
    """A prediction named in a message: a threshold's end as the user's setting."""
    return setting(name, v) if name in ("above", "below") else f"{name} {v:g}"


def raw_of(ens: Ensemble, v: float, name: str) -> float:
    """The raw score whose prediction is ``v`` (the link is increasing)."""
    if ens.link == EXP:
        if v <= 0:
            raise InputError(f"{_named(name, v)}: this model's predictions (exp link) are positive")
        return math.log(v)
    if ens.link == SIGMOID:
        if not 0 < v < 1:
            raise InputError(f"{_named(name, v)}: this model's predictions (sigmoid) lie in (0, 1)")
        return logit(v)
    return float(v)


def _class_number(c) -> int:
    """A whole number, or a text of one: not True or 1.5, which int() reads as 1."""
    if isinstance(c, bool) or str(getattr(c, "dtype", "")) == "bool":
        raise ValueError
    k = int(c)
    if not isinstance(c, str) and k != c:
        raise ValueError
    return k


def class_index(ens: Ensemble, c: int | str | None) -> int | str:
    if c == ANY or c is None:
        return ANY
    try:
        k = _class_number(c)
    except (TypeError, ValueError):
        raise InputError(f"class {c!r} is not a class number") from None
    if not 0 <= k < ens.n_classes:
        raise InputError(f"class {k} out of range: the model has classes 0..{ens.n_classes - 1}")
    return k


def softmax_margin(g: Gap, ratio: float) -> float:
    """What a softmax model's rows ask of raw_c - raw_o: a margin gap as stated (ln of
    exp(g) may round an ulp off it), a ratio's ln less the softmax's rounding."""
    return g.value if g.kind == GapKind.MARGIN else math.log(ratio) - SOFTMAX_ROUNDING


def _class_rows(ens: Ensemble, g: Gap, ratio: float, c: int) -> tuple:
    """The rows (coefs over classes, rhs) that make class c win by the gap over each other."""
    out = []
    for other in range(ens.n_classes):
        if other == c:
            continue
        coefs = [0.0] * ens.n_classes
        if ens.link == SOFTMAX:
            coefs[c], coefs[other] = 1.0, -1.0
            out.append((tuple(coefs), softmax_margin(g, ratio)))
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


def _class_pair(ens: Ensemble, q: Query) -> tuple[int, int]:
    """A multiclass query's two classes as indices (or ANY), a class the model lacks
    named by the setting that gave it."""
    if q.classes is None:
        raise InputError(
            f"the model has {ens.n_classes} classes: give the two classes to compare "
            f"({spelled('classes=(C1, C2)', '--classes C1,C2')}; either may be 'any')"
        )
    try:
        c1, c2 = (class_index(ens, c) for c in q.classes)
    except InputError as e:  # named as given: which setting holds the class
        raise InputError(f"{classes_given(q.classes)}: {e}") from None
    if c1 != ANY and c1 == c2:
        raise InputError(f"classes must differ (got {c1} twice)")
    return c1, c2


def _multiclass_condition(ens: Ensemble, q: Query) -> Condition:
    c1, c2 = _class_pair(ens, q)
    g = q.gap
    C = ens.n_classes
    if g.kind == "prob":
        if not g.given:
            raise InputError(
                f"the model has {C} classes and a multiclass gap has no default: give a "
                f"probability ratio g >= 1 ({spelled('gap=1.5', '--gap 1.5')}: P(c1) >= 1.5 * "
                "P(c) for every other class c) or a margin gap "
                f"({spelled('margin_gap=D', '--margin-gap D')})"
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

    # a ratio's rows ask SOFTMAX_ROUNDING less of a softmax model: the replay decides
    ratio_rows = ens.link == SOFTMAX and g.kind != GapKind.MARGIN
    rounding = 2 * SOFTMAX_ROUNDING if ratio_rows else 0.0
    if c1 != ANY and c2 != ANY:
        rows = (rows_for(c1), rows_for(c2))
        pair = None
        if ens.link == SOFTMAX:
            a = [0.0] * C
            b = [0.0] * C
            a[c1], a[c2] = 1.0, -1.0
            b[c2], b[c1] = 1.0, -1.0
            pair = (tuple(a), tuple(b), 2 * softmax_margin(g, ratio))
        return Condition(
            rows=rows,
            pair_sum=pair,
            description=f"class {c1} -> class {c2}, ratio {ratio:g}",
            rounding=rounding,
        )
    if c1 != ANY:
        alts2 = tuple(rows_for(c) for c in range(C) if c != c1)
        return Condition(
            rows=(rows_for(c1), ()),
            alternatives=((), alts2),
            description=f"class {c1} -> any other",
            rounding=rounding,
        )
    if c2 != ANY:
        alts1 = tuple(rows_for(c) for c in range(C) if c != c2)
        return Condition(
            rows=((), rows_for(c2)),
            alternatives=(alts1, ()),
            description=f"any other class -> class {c2}",
            rounding=rounding,
        )
    every = tuple(rows_for(c) for c in range(C))
    return Condition(
        rows=((), ()),
        alternatives=(every, every),
        distinct=True,
        description=f"any class -> any other class, ratio {ratio:g}",
        rounding=rounding,
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
    vacuous "insensitive"; so do relations and bounds that hold every varied feature to
    one value for both inputs (``fix sex = 1`` with ``vary sex``). ``rels`` / ``bnds``:
    ``relations_by_feature`` / ``bounds_by_copy`` of the query."""
    for f, items in sorted(rels.items()):
        if f not in varying:
            continue
        feat = ens.features[f]
        for a, b, kind in items:
            la, ha = _reachable(feat, *bnds.get((f, a), (feat.lb, feat.ub)))
            lb, hb = _reachable(feat, *bnds.get((f, b), (feat.lb, feat.ub)))
            ok = {
                LT: la < hb,
                LE: la <= hb,
                EQ: max(la, lb) <= min(ha, hb),
                NE: not (la == ha == lb == hb),
            }[kind]
            if not ok:
                name = ens.feature_names[f]
                sides = f"x{a + 1}.{name}", f"x{b + 1}.{name}"
                raise InputError(
                    f"{sides[0]} {kind} {sides[1]} cannot hold within the bounds "
                    f"({_within(feat, sides[0], la, ha)}, {_within(feat, sides[1], lb, hb)})"
                )
    if varying and all(held_equal(ens, f, rels, bnds) for f in varying):
        by_data = held_by_data(ens, varying)
        if by_data is not None:
            raise by_data
        names = ", ".join(repr(ens.feature_names[f]) for f in sorted(varying))
        raise InputError(
            f"x1 and x2 cannot differ: the bounds and relations hold every varied feature "
            f"({names}) to one value for both inputs, so any answer would be vacuous; vary "
            "another feature or drop them"
        )


def _reachable(feat: Feature, lo: float, hi: float) -> tuple[float, float]:
    """[lo, hi] within the codes 0..n-1 of a feature with named categories (the only
    values its search takes: compiler/domain.py), else as it is."""
    if not feat.categories:
        return lo, hi
    return max(lo, 0.0), min(hi, float(len(feat.categories) - 1))


def _within(feat: Feature, side: str, lo: float, hi: float) -> str:
    """``x1.age in [3, 7]``; a categorical feature's by name: ``x1.region is "Sud"``."""
    named = category_range(feat.categories, lo, hi)
    return f"{side} in [{lo:g}, {hi:g}]" if named is None else f"{side} is {named}"


def held_by_constraints(ens: Ensemble, q: Query, f: int) -> bool:
    """Whether the query's bounds and relations leave x1 and x2 no way to differ on
    feature f were it varied (``fix sex = 1``, ``x1.sex == x2.sex``): a sweep over every
    feature leaves such a feature out, as it does one its declared bounds hold."""
    return held_equal(ens, f, relations_by_feature(ens, q), bounds_by_copy(ens, q, {f}))


def held_equal(ens: Ensemble, f: int, rels, bnds) -> bool:
    """Whether the query's relations (x1.f == x2.f) or bounds (one value, the same for
    both inputs) leave the two inputs no way to differ on feature f, an order between
    them narrowing each input's range by the other's (x1.f in [-4, -3] of a feature
    declared [-3, 1], and x1.f >= x2.f: both -3). A bound or relation keeps its copy
    from NaN; a copy with neither, of a feature that may be missing, may still be NaN
    where the other is not."""
    items = rels.get(f, ())
    if any(kind == EQ for _, _, kind in items):
        return True
    feat = ens.features[f]
    span = {}
    for c in (0, 1):
        if (f, c) not in bnds and not items and feat.may_be_missing:
            return False
        span[c] = bnds.get((f, c), (feat.lb, feat.ub))
    # x_a <= x_b (or <): x_a at most x_b's largest value, x_b at least x_a's least
    for a, b, kind in items:
        if kind in (LE, LT):
            (la, ha), (lb, hb) = span[a], span[b]
            span[a], span[b] = (la, min(ha, hb)), (max(lb, la), hb)
    values = {one_value(feat, *span[c]) for c in (0, 1)}
    return len(values) == 1 and None not in values


def held_by_data(ens: Ensemble, varying) -> InputError | None:
    """The error for varied features that the data's range alone holds to one value each
    (bounds from data, each column one value in every row), naming the data and the
    columns; None when some varied feature may differ, or its bounds are not the data's."""
    data = bounds_data_file(ens.source)
    feats = [ens.features[f] for f in sorted(varying)]
    held = [None if f.may_be_missing else one_value(f, f.lb, f.ub) for f in feats]
    if data is None or not feats or None in held:
        return None
    cols = ", ".join(f"{f.name!r} = {v:g}" for f, v in zip(feats, held))
    them = "them" if len(feats) > 1 else "it"
    return InputError(
        f"column{'s' if len(feats) > 1 else ''} {cols} in every row: the bounds come from "
        f"the data's range, so x1 and x2 cannot differ in {them}; use data where "
        f"{'they vary' if them == 'them' else 'it varies'}, or declare the bounds in place "
        "of the data's range",
        data,
    )


def one_value(feat: Feature, lo: float, hi: float) -> float | None:
    """The one value of the feature in [lo, hi] when there is only one (a whole number's,
    for an integral feature), else None."""
    if feat.integral and math.isfinite(lo) and math.isfinite(hi):
        lo, hi = math.ceil(lo), math.floor(hi)
    return float(lo) if math.isfinite(lo) and lo == hi else None


def no_value_in(feat: Feature, lo: float, hi: float) -> str | None:
    """Why no value of the feature lies in [lo, hi]: "value", or "whole value" for an
    integral feature (None: some value does)."""
    if not lo <= hi:
        return "value"
    whole = feat.integral and math.isfinite(lo) and math.isfinite(hi)
    return "whole value" if whole and math.ceil(lo) > math.floor(hi) else None
