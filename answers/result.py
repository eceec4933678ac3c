"""The answer to one query, with the fields of the JSON result (README.md)."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING

from ..compiler.enums import StrValue
from ..compiler.max_gap_question import unreached_gap
from ..compiler.question import result_gap
from .phrases import max_gap_brief, prediction_condition, proof_brief
from .proof import Proof, prover_of
from .stats import Stats, Times

if TYPE_CHECKING:
    from ..compiler.invert import Witness

# the longest repr of a Result: one line
REPR_LIMIT = 200


class Status(StrValue):
    """The answer to a query; str-valued, so JSON carries the plain word."""

    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"
    UNKNOWN = "unknown"
    ERROR = "error"


SENSITIVE, INSENSITIVE, UNKNOWN, ERROR = Status  # the members, in their order


@dataclass
class Result:
    query: str
    status: Status
    backend: str
    features: list[str]
    gap: float
    witness: dict | None = None  # {"x1": {name: value}, "x2": {...}}
    outputs: dict | None = None  # {"x1": [per-class probabilities], "x2": [...]}
    validated: bool = False
    distance: float | None = None
    time: Times = field(default_factory=lambda: {"compile": 0.0, "solve": 0.0, "total": 0.0})
    error: str | None = None
    # beyond the required fields
    model: str = ""
    gap_kind: str = "prob"
    classes: list | None = None
    passes: list[str] = field(default_factory=list)
    message: str = ""
    stats: Stats = field(default_factory=dict)  # typed per stage: answers/stats.py
    # the files the answer was read from, by role: model, details, data, sens
    inputs: dict = field(default_factory=dict)
    # "how sensitive?" (--max-gap): {"lower", "upper", "tolerance", "proven", "steps",
    # "kind"} (questions/max_gap.py); None, and left out of the JSON, for a plain check
    max_gap: dict | None = None
    # a regressor's threshold form [a, b]: f(x1) >= a, f(x2) <= b (``outputs`` then hold
    # the predictions); None, and left out of the JSON, otherwise
    threshold: list | None = None
    # a regressor's change by at least delta: {"at_least": D, "direction": up, down or
    # either} (``outputs`` then hold the predictions); None, and left out of the JSON,
    # otherwise
    delta: dict | None = None
    # the query's constraints as the user wrote them (--where texts, a .sens query's where
    # clauses and fixes); None, and left out of the JSON, without any
    where: list[str] | None = None
    # what the reader should know about the witness beyond its verdict (a pair that sets
    # together 0/1 columns the data never sets together, ...): one sentence each
    notes: list[str] = field(default_factory=list)
    # an "insensitive" answer's proof: who proved it, and whether a checker independent of
    # treesens re-checked it (answers/proof.py); a max gap's, when its upper bound's
    # certificate was asked for; None, and left out of the JSON, otherwise
    proof: Proof | None = None
    # the validated witness as arrays (x1, x2, intervals, leaves): for callers in Python,
    # never serialised
    witness_arrays: Witness | None = field(default=None, repr=False, compare=False)
    # the box search's proof of "insensitive", recorded when a certificate is asked for
    # (search/proof_tree.py): the certificate is written from it; never serialised
    box_proof: object = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return _clean(
            {
                f.name: _plain(getattr(self, f.name))
                for f in fields(self)
                if f.name not in _PRIVATE
                and not (f.name in _OPTIONAL and getattr(self, f.name) is None)
            }
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    @property
    def exit_code(self) -> int:
        return 1 if self.status == ERROR else 0

    def __repr__(self) -> str:
        """One line: status, features, gap, the pair's probabilities (or the proof, in
        short), time."""
        feats = ",".join(self.features)
        if len(feats) > 60:
            feats = feats[:57] + "..."
        gap = f"gap={self.gap:g}" if self.gap_kind == "prob" else f"margin_gap={self.gap:g}"
        if self.max_gap:
            gap = max_gap_brief(self.max_gap)
        parts = [str(self.status), f"features={feats}", gap]
        asked = prediction_condition(self, "g")
        if asked and not self.max_gap:
            parts[-1] = asked
        if self.outputs:
            for x in ("x1", "x2"):
                parts.append(
                    f"{'f' if self.predicts else 'P'}({x})=[{', '.join(f'{p:.3f}' for p in self.outputs[x])}]"
                )
        if self.distance is not None:
            parts.append(f"distance={self.distance:.3g}")
        if self.proof is not None:
            parts.append(f"proof={proof_brief(self.proof)}")
        parts.append(f"{self.time.get('total', 0.0):.2f}s")
        text = f"Result({', '.join(parts)})"
        return text if len(text) <= REPR_LIMIT else text[: REPR_LIMIT - 4] + "...)"

    @property
    def predicts(self) -> bool:
        """Whether the question was about a regressor's predictions (``outputs`` then
        hold predictions, not probabilities)."""
        return bool(self.threshold or self.delta) or (self.max_gap or {}).get("kind") == "change"

    def __str__(self) -> str:
        """The CLI's verdict line and witness table, as plain text."""
        return _drawing.text(self)

    def _repr_html_(self) -> str:
        return _drawing.html(self)


@dataclass(frozen=True)
class Drawing:
    """How a Result reads as text (``str``) and as HTML (Jupyter)."""

    text: Callable[[Result], str]
    html: Callable[[Result], str]


# views/result_view.py draws a Result, from a layer above this one: the package root hands
# its drawing over (``drawn_by``) as it is imported, before any Result can be shown
_drawing = Drawing(repr, repr)


def drawn_by(drawing: Drawing) -> None:
    """``str(result)`` and Jupyter's display draw a Result with ``drawing`` from now on."""
    global _drawing
    _drawing = drawing


_PRIVATE = frozenset({"witness_arrays", "box_proof"})
_OPTIONAL = frozenset(
    {"max_gap", "threshold", "delta", "where", "proof"}
)  # in the JSON only when set


def _plain(x):
    """A field's value with dataclasses made dicts (as ``asdict`` does; a proof record
    by its own ``to_dict``)."""
    if isinstance(x, Proof):
        return x.to_dict()
    return asdict(x) if hasattr(x, "__dataclass_fields__") else x


def _clean(x):
    if isinstance(x, StrValue):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return None if math.isnan(x) else (str(x))
        return x
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item"):
        return _clean(x.item())
    if isinstance(x, os.PathLike):  # a data file given as a Path
        return os.fspath(x)
    return x


def input_files(inputs: tuple[tuple[str, str], ...], data=None) -> dict:
    """A result's ``inputs``: the files an ensemble was read from (``Ensemble.inputs``) and
    the query's data file (a path, or a data set loaded from one)."""
    out = {role: path for role, path in inputs}
    source = getattr(data, "source", data)
    if isinstance(source, (str, os.PathLike)) and not str(source).startswith("<"):
        out["data"] = str(source)
    return out


def fail(res: Result, message: str) -> Result:
    """The one way a result becomes an "error": its status and its message (what it
    holds besides is kept: the times, the statistics; a proof record goes, as an error
    proves nothing). Returns it."""
    res.status, res.error, res.proof = ERROR, message, None
    return res


def error_result(ens, q, message: str, *, backend: str | None = None) -> Result:
    """The one form of an "error" answer to query ``q`` of model ``ens``: every field a
    result of that query would carry, the message in ``error``. ``backend``: the one
    that failed (default the query's). A max gap's states the gap its search starts
    from (``unreached_gap``), not the check's default gap it never asked."""
    if q.kind_name == "max_gap":  # compiler/kinds.py's LargestGap
        gap, gap_kind = unreached_gap(ens, q)
    else:
        gap, gap_kind = result_gap(q.gap, q.delta, q.threshold)
    blank = Result(
        query=q.label,
        status=UNKNOWN,
        backend=backend or q.plan.backend,
        features=list(q.vary),
        gap=gap,
        gap_kind=gap_kind,
        model=getattr(ens, "source", ""),
        classes=list(q.classes) if q.classes else None,
        passes=sorted(q.plan.passes),
        inputs=input_files(getattr(ens, "inputs", ()), q.plan.options.data),
    )
    return fail(blank, message)


def record_prover(res: Result) -> Result:
    """An insensitive answer with the record of who proved it (answers/proof.py), unless it
    has one; an answer of another status has none, but for a max gap's record of its
    upper bound's certificate (``Proof.bound``)."""
    if res.status != INSENSITIVE and (res.proof is None or res.proof.bound is None):
        res.proof = None
    elif res.proof is None:
        res.proof = Proof(prover_of(res.stats, res.backend))
    return res


def result_from_dict(d: dict) -> Result:
    """A Result from its JSON (a results file's line): the proof record as a ``Proof``;
    an insensitive answer written before results carried one gets it from its stats."""
    res = Result(**{k: d[k] for k in Result.__dataclass_fields__ if k in d})
    if isinstance(res.proof, dict):
        res.proof = Proof.from_dict(res.proof)
    return record_prover(res)
