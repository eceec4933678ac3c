"""Query kinds: what a query asks of its pair of inputs x1, x2 (equal outside F).

A kind supplies the four things that depend on the question:

* ``prepare``: its reduction of the query before it is encoded (e.g. bounds that pin x1
  to a given row), applied once;
* ``condition``: the linear rows on raw scores the encoding states (query.Condition);
* ``judge``: whether a candidate pair meets the question, on the library's scores (per
  input, and for the pair as a whole); the replay check and the near-miss cuts read it;
* ``result_fields``: what a Result records of the question.

Passes declare the kinds they accept (``Pass.query_kinds``); the chain refuses a query of
another kind loudly, unless the pass is declared optional (then it is skipped).

Four kinds are built in: ``pair`` (the paper's question: a binary or multiclass gap, a
regressor's threshold form), ``change`` (a regressor's predictions at least delta apart),
``anchored`` (x1 is a given row, as the audit asks of each row: does some x2, equal to it
outside F, get another decision with the gap?) and ``max_gap`` (how sensitive: the
largest gap at which the pair question holds, within its ``tolerance``; a search over
pair questions, questions/max_gap.py, not one solve). ``register_kind`` adds one
(docs/extending.md, "Adding a query kind"); a query asks for a kind by name
(``kind=``, ``--kind``, a ``.sens`` file's ``kind`` line) with its ``params``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .ensemble import EXP, SIGMOID, Ensemble
from .errors import InputError, closest, name_list
from .flip import Target, flip_confidence
from .max_gap_question import DEFAULT_TOLERANCE, check_tolerance, max_gap_probe
from .query import (
    ANY,
    DOWN,
    EITHER,
    UP,
    Condition,
    FeatureBound,
    Query,
    Question,
    change_condition,
    class_index,
    pair_condition,
    raw_of,
)
from .readings import read_for
from .replay import meets, meets_pair, predicted_class

# the box search's backend name (backends/registry.py, BOXES: a layer up)
BOXES = "boxes"


@dataclass(frozen=True)
class Judgement:
    """Whether a pair meets a question: x1's side, x2's side, the pair as a whole."""

    x1: bool
    x2: bool
    pair: bool = True

    @property
    def met(self) -> bool:
        return self.x1 and self.x2 and self.pair


class QueryKind:
    """One kind of question about a pair. Subclasses set ``name`` and ``condition``."""

    name = ""
    asks = "the question"  # what a pair must meet, in messages ("no pair meets ...")
    # the parameters it takes (``Question.params``; None: any)
    parameters: tuple[str, ...] | None = ()
    # answered by a search over other questions (questions/max_gap.py), not one solve
    searched = False

    def check(self, q: Question) -> None:
        """Refuse parameters the kind does not take (before any model is loaded)."""
        if self.parameters is None:
            return
        for name, _ in q.params:
            if name not in self.parameters:
                known = ", ".join(self.parameters) or "none"
                raise InputError(
                    f"the {self.name} kind takes no parameter {name!r}"
                    f"{closest(name, self.parameters)}; it takes: {known}"
                )

    def prepare(self, ens: Ensemble, q: Query) -> Query:
        return q

    def condition(self, ens: Ensemble, q: Query) -> Condition:
        raise NotImplementedError

    def judge(self, ens: Ensemble, q: Query, proba: np.ndarray, raw: np.ndarray) -> Judgement:
        """``proba`` / ``raw``: the two inputs' scores (rows x1, x2; a regressor's
        predictions as ``proba``)."""
        c_pred = predicted_class(proba[0])
        return Judgement(
            meets(ens, q, proba[0], raw[0], 0),
            meets(ens, q, proba[1], raw[1], 1, c_pred),
            meets_pair(q, float(proba[0][0]), float(proba[1][0])),
        )

    def result_fields(self, q: Query) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class PairQuestion(QueryKind):
    """The paper's question: x1 and x2 decided apart with the gap (a binary or
    multiclass gap; a regressor's threshold form f(x1) >= A, f(x2) <= B)."""

    name = "pair"
    asks = "the gap"

    def condition(self, ens: Ensemble, q: Query) -> Condition:
        return pair_condition(ens, q)

    def result_fields(self, q: Query) -> dict:
        return {"threshold": list(q.threshold) if q.threshold else None}


class ChangeQuestion(QueryKind):
    """A regressor's predictions at least ``q.delta`` apart in ``q.direction``."""

    name = "change"
    asks = "the change"

    def result_fields(self, q: Query) -> dict:
        return {"delta": {"at_least": q.delta, "direction": q.direction}}

    def condition(self, ens: Ensemble, q: Query) -> Condition:
        return change_condition(ens, q)


class AnchoredQuestion(QueryKind):
    """x1 is the row ``anchor`` (every feature pinned), decided ``decision`` by the
    library; x2, equal to it outside F, must get another decision with the gap (a
    classifier), or a prediction at least ``q.delta`` from the row's in ``q.direction``
    (a regressor: up means above the row's). A multiclass query names the row's class as
    ``classes[0]`` and x2's as ``classes[1]`` (``any``: any other class)."""

    name = "anchored"
    asks = "the flip"
    parameters = ("anchor", "decision")

    def prepare(self, ens: Ensemble, q: Query) -> Query:
        """x1 pinned to the row by bounds, which the solvers' encoding reads (the box
        search reads the row itself: search/anchored_boxes.py). A missing value cannot
        be pinned so: such a row is the box search's alone (``backend boxes``)."""
        anchor = q.param("anchor")
        if anchor is None or len(anchor) != ens.n_features:
            raise InputError(f"an anchored query needs its row: {ens.n_features} values")
        names = ens.feature_names
        missing = [names[f] for f, v in enumerate(anchor) if math.isnan(float(v))]
        if missing and q.plan.backend != BOXES:
            raise InputError(
                f"the row has no value of {name_list(missing)}: a solver cannot pin x1 "
                f"to a missing value (the box search can: backend {BOXES})"
            )
        pins = tuple(
            FeatureBound(names[f], float(v), float(v), (1,))
            for f, v in enumerate(anchor)
            if not math.isnan(float(v))
        )
        return q.with_(bounds=q.bounds + pins)

    def condition(self, ens: Ensemble, q: Query) -> Condition:
        if ens.is_regressor:
            return _moved_condition(ens, q)
        d = q.param("decision")
        if ens.n_classes == 2 and ens.n_outputs == 1:
            full = pair_condition(ens, q)
            # decided 1: x2 takes the pair question's low side (its second row); decided
            # 0: the high side (the first input's row), asked of x2
            row = full.rows[1] if int(d) == 1 else full.rows[0]
            return Condition(rows=((), row), description=f"x2 decided {1 - int(d)} with the gap")
        c2 = ANY if q.classes is None else q.classes[1]
        cond = pair_condition(ens, q.with_(classes=(int(d), c2)))
        return Condition(
            rows=((), cond.rows[1]),
            alternatives=((), cond.alternatives[1] if cond.alternatives else ()),
            description=f"x2 another class than {int(d)}",
        )

    def judge(self, ens: Ensemble, q: Query, proba: np.ndarray, raw: np.ndarray) -> Judgement:
        d = float(q.param("decision"))
        target = flip_target(q)
        multiclass = not ens.is_regressor and ens.n_outputs > 1
        named = multiclass and target.cls is not None
        target = replace(target, cls=int(class_index(ens, target.cls)) if named else None)
        conf = flip_confidence(ens, target, np.array([d]), proba[1:2], raw[1:2])
        return Judgement(True, bool(conf[0] >= 0))

    def result_fields(self, q: Query) -> dict:
        if q.delta is None:
            return {}
        return {"delta": {"at_least": q.delta, "direction": q.direction}}


def anchored_question(vary, target: Target, name: str = "") -> Question:
    """The anchored question of a flip ``target`` (the audit's question of every row),
    before its row: the row's values and decision are its ``anchor`` and ``decision``
    parameters, its class ``classes[0]`` (``any`` until the row gives it)."""
    classes = None if target.cls is None else (ANY, target.cls)
    return Question(
        vary=tuple(vary),
        kind="anchored",
        gap=target.gap,
        delta=target.delta,
        direction=target.direction,
        classes=classes,
        name=name,
    )


def flip_target(q: Question) -> Target:
    """What an anchored question's x2 must meet: the gap toward ``classes[1]`` (None:
    any other class), or a regressor's change by ``delta`` in ``direction``."""
    c2 = None if not q.classes or q.classes[1] == ANY else q.classes[1]
    return Target(q.gap, c2, q.delta, q.direction)


def _moved_condition(ens: Ensemble, q: Query) -> Condition:
    """A regressor's x2 at least delta above (up) or below (down) the row's prediction
    v: raw(x2) >= link^-1(v + delta), or raw(x2) <= link^-1(v - delta), through the
    increasing link (exact for every link). A side the link's range rules out (a
    positive prediction cannot fall below 0) is left out."""
    v, d = float(q.param("decision")), float(q.delta)
    sides = []
    if q.direction in (UP, EITHER) and _in_range(ens, v + d):
        sides.append((((1.0,), raw_of(ens, v + d, "up")),))
    if q.direction in (DOWN, EITHER) and _in_range(ens, v - d):
        sides.append((((-1.0,), -raw_of(ens, v - d, "down")),))
    if not sides:
        raise InputError(
            f"no prediction of this model lies {q.direction} by {d:g} from {v:g}: the row "
            "cannot move so far"
        )
    text = f"x2's prediction {q.direction} by at least {d:.6g} from {v:.6g}"
    if len(sides) == 1:
        return Condition(rows=((), sides[0]), description=text)
    return Condition(rows=((), ()), alternatives=((), tuple(sides)), description=text)


def can_move(ens: Ensemble, v: float, delta: float, direction: str) -> bool:
    """Whether the regressor's link reaches a prediction ``delta`` from ``v`` in
    ``direction`` at all (before asking whether some input does)."""
    up = direction in (UP, EITHER) and _in_range(ens, v + delta)
    return up or (direction in (DOWN, EITHER) and _in_range(ens, v - delta))


def _in_range(ens: Ensemble, v: float) -> bool:
    """Whether the link reaches the prediction v (exp: above 0; sigmoid: in (0, 1))."""
    if ens.link == EXP:
        return v > 0
    if ens.link == SIGMOID:
        return 0 < v < 1
    return True


class LargestGap(QueryKind):
    """How sensitive: the largest gap (a regressor's largest change f(x1) - f(x2)) at
    which the pair question holds, within the parameter ``tolerance`` (default 1e-3).
    The question asks no gap of its own; questions/max_gap.py answers it by a search
    over pair (change) questions, whose first, at no gap, is its condition here."""

    name = "max_gap"
    asks = "the largest gap"
    parameters = ("tolerance",)
    searched = True

    def check(self, q: Question) -> None:
        super().check(q)
        check_tolerance(self.tolerance(q))

    def condition(self, ens: Ensemble, q: Query) -> Condition:
        return resolve_condition(ens, max_gap_probe(ens, q))

    @staticmethod
    def tolerance(q: Question) -> float:
        return q.param("tolerance", DEFAULT_TOLERANCE)


_KINDS: dict[str, QueryKind] = {
    k.name: k for k in (PairQuestion(), ChangeQuestion(), AnchoredQuestion(), LargestGap())
}


def register_kind(kind: QueryKind) -> None:
    """Add a kind of question (its name must be new)."""
    if not isinstance(kind, QueryKind) or not kind.name:
        raise TypeError(f"{kind!r} is not a named QueryKind")
    if kind.name in _KINDS:
        raise ValueError(f"a query kind named {kind.name!r} is already registered")
    _KINDS[kind.name] = kind


def unregister_kind(name: str) -> None:
    _KINDS.pop(name, None)


def kind_names() -> tuple[str, ...]:
    return tuple(_KINDS)


def kind_of(q: Question) -> QueryKind:
    try:
        return _KINDS[q.kind_name]
    except KeyError:
        name = q.kind_name
        raise InputError(
            f"unknown query kind {name!r}{closest(name, _KINDS)} (known: {', '.join(_KINDS)})"
        ) from None


def with_question_fields(res, q: Question):
    """``res`` (a Result) with what every result of ``q`` records of its question (its
    kind's ``result_fields``: a regressor's delta, a threshold); nothing for a kind not
    registered here (the error itself may say so). Returns it."""
    try:
        fields = kind_of(q).result_fields(q)
    except InputError:
        fields = {}
    for name, value in fields.items():
        setattr(res, name, value)
    return res


def check_kind(q: Question) -> None:
    """The question's kind is registered and takes its parameters."""
    kind_of(q).check(q)


def resolve_condition(ens: Ensemble, q: Question) -> Condition:
    """The question's condition on raw scores, as its kind states it (after its
    reduction, of a probability model's reading that the question asks): what a caller
    resolves up front to check the gap and classes."""
    ens = read_for(ens, q)
    return kind_of(q).condition(ens, prepared(ens, q))


def prepared(ens: Ensemble, q: Query) -> Query:
    """The query after its kind's reduction (once: a prepared query is returned as it is)."""
    if q.prepared:
        return q
    return kind_of(q).prepare(read_for(ens, q), q).with_(prepared=True)
