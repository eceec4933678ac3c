"""Resuming a sweep: which results of an earlier run (a JSON Lines log) answer the same
question as this one, so that only the others run again."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..answers.result import INSENSITIVE, SENSITIVE, UNKNOWN, Result, result_from_dict
from ..answers.stats import asked_of
from ..compiler.ensemble import Ensemble
from ..compiler.kinds import kind_of
from ..compiler.query import ANY, Query
from ..compiler.question import result_gap
from .ask import Asked
from .max_gap import INTERRUPTED, MEMORY, ROUNDING, result_gap_kind
from .results_log import read_log


@dataclass(frozen=True)
class ResumeKey:
    """What every query of a sweep asks besides its features: a result recorded in a
    resume file is reused only when it answers the same (``reuses``).

    A result line records the model, gap, classes, passes and backend itself; the rest is
    its ``stats["asked"]`` (questions/ask.py, ``Asked``: the model's fingerprint, the data
    file's digest and the data-aware settings, the backend asked for and the time limit).
    A regressor's question is matched by what its line records of it (``delta``:
    the change and its direction; ``threshold``: A and B), not by its gap: lines written
    before the gap said the change asked (gap 0.2, gap_kind "prob") are reused too.
    The model is matched by its format and fingerprint (trees, features, bounds), not by
    its path: a model file given by another path, or moved, is the same model; one
    retrained in place, or given other bounds, is not.
    """

    model: str  # Ensemble.source: format, path and a details file found beside the model
    gap: float
    gap_kind: str
    classes: list | None
    passes: list[str]
    backend: str
    timeout: float
    asked: dict = field(default_factory=dict)  # stats["asked"] but backend and timeout
    max_gap: float | None = None  # a max-gap sweep's tolerance (questions/max_gap.py)
    # a regressor's question as its line records it: {"delta": ...} or {"threshold": ...}
    predictions: dict = field(default_factory=dict)

    @classmethod
    def of(cls, ens: Ensemble, q: Query) -> ResumeKey:
        asked = Asked.of(ens, q).to_dict()
        max_gap = asked.get("max_gap")
        del asked["backend"], asked["timeout"]  # fields of their own
        return cls(
            model=ens.source,
            gap=result_gap(q.gap, q.delta, q.threshold)[0],
            # a max gap's results say what their gap holds (a regressor's: the change)
            gap_kind=result_gap(q.gap, q.delta, q.threshold)[1]
            if max_gap is None
            else result_gap_kind(ens),
            classes=list(q.classes) if q.classes else None,
            passes=sorted(q.plan.passes),
            backend=q.plan.backend,
            timeout=q.plan.timeout,
            asked=asked,
            max_gap=max_gap,
            predictions=_predictions(kind_of(q).result_fields(q)),
        )

    def record(self) -> dict:
        """The ``stats["asked"]`` of a result that answers this question."""
        return {**self.asked, "backend": self.backend, "timeout": self.timeout}

    def same_classes(self, line: dict) -> bool:
        """Whether the line asked these classes: the same, or (asked with "any", which
        its ``asked`` records) a pair of classes that fits them (a max gap's line shows
        the classes its pair found)."""
        shown = line.get("classes")
        if shown == self.classes:
            return True
        if "classes" not in self.asked or not isinstance(shown, list) or self.classes is None:
            return False
        return len(shown) == len(self.classes) and all(
            k in (ANY, c) for k, c in zip(self.classes, shown, strict=True)
        )

    def reuses(self, line: dict) -> bool:
        """Is this recorded result (a parsed JSON line) the answer to this question?

        Sensitive and insensitive answers are reused; an unknown only when its time limit
        was at least this one; errors (and results without the record) never. A max-gap
        result (its gap is the one found) is reused as an answer when its bounds met or
        more time would not close them (``_settled``: a budget's first pass, whose shorter
        time limit its line records, does not ask it again either), else as an unknown. A result Ctrl-C or a signal cut short (the bounds or the best pair
        it had) did not have its time: only its proven bounds are reused.
        """
        asked = dict(asked_of(line.get("stats")) or {})
        timeout = asked.pop("timeout", None)
        backend = asked.pop("backend", None)
        same = (
            _format(line.get("model")) == _format(self.model)
            and _predictions(line) == self.predictions
            and (self.predictions or self.same_gap(line))
            and self.same_classes(line)
            and line.get("passes") == self.passes  # written sorted
            and backend == self.backend
            and asked == self.asked
        )
        if not same:
            return False
        found = line.get("max_gap")
        answered = self.max_gap is None or _settled(found)
        if _interrupted(line):
            return self.max_gap is not None and answered
        if line.get("status") in (SENSITIVE, INSENSITIVE) and answered:
            return True
        return (
            line.get("status") in (UNKNOWN, SENSITIVE)
            and isinstance(timeout, (int, float))
            and timeout >= self.timeout
        )

    def gap_fields(self) -> dict:
        """The gap a reused line says: a regressor's the change asked (a line written
        before said gap 0.2, gap_kind "prob"); others keep their line's."""
        return {"gap": self.gap, "gap_kind": self.gap_kind} if self.predictions else {}

    def same_gap(self, line: dict) -> bool:
        """A classifier's (or a max gap's) line asks this question's gap."""
        return (self.max_gap is not None or line.get("gap") == self.gap) and line.get(
            "gap_kind", "prob"
        ) == self.gap_kind


def _predictions(fields: dict) -> dict:
    """What a regressor's question asks of its predictions, as its JSON line says it
    (``delta`` and ``threshold`` when set; {}: a classifier's question)."""
    out = {k: fields.get(k) for k in ("delta", "threshold") if fields.get(k) is not None}
    return json.loads(json.dumps(out, default=str))


def _format(recorded) -> str | None:
    """The model format a result line's ``model`` names: the words of the model's origin
    it was written from (``xgboost:m.json`` -> ``xgboost``), the only record of it a
    results log holds; both sides of a match are read this one way."""
    return recorded.partition(":")[0] if isinstance(recorded, str) else None


def read_results(path: str | Path, warn: Callable[[str], None]) -> list[dict]:
    """The JSON result lines of a (possibly interrupted) sweep's log, in order
    (results_log.py); a complete line that is not a JSON result is reported to ``warn``
    with its line number and skipped."""

    def check(d, n: int) -> dict | None:
        if isinstance(d, dict) and isinstance(d.get("query"), str) and "status" in d:
            return d
        warn(f"{path} line {n}: not a JSON result, ignored")
        return None

    return read_log(path, check)


@dataclass
class ResumePlan:
    """Which queries of a sweep a resume file already answers."""

    reused: dict[tuple[str, ...], dict]  # feature set -> its recorded result line
    todo: list[tuple[str, ...]]  # in sweep order
    rerun: int = 0  # queries of ``todo`` with a recorded result that is not reused

    def summary(self) -> str:
        new = len(self.todo) - self.rerun
        return (
            f"{len(self.reused)} result{'' if len(self.reused) == 1 else 's'} reused, "
            f"{self.rerun} rerun "
            "(other settings, an error, or left open within a shorter time limit: an "
            f"unknown, a max gap not proven), {new} new"
        )


def plan_resume(
    subsets: list[tuple[str, ...]], lines: list[dict], question: ResumeKey
) -> ResumePlan:
    """Reuse, for each feature set, the last recorded answer to ``question`` (an unknown
    only when no sensitive/insensitive answer is recorded); the others are to run."""
    recorded: dict[frozenset[str], list[dict]] = {}
    commas = any("," in n for s in subsets for n in s)
    for d in lines:
        key = recorded_features(d, commas)
        if key is not None:
            recorded.setdefault(key, []).append(d)
    plan = ResumePlan({}, [])
    for s in subsets:
        seen = recorded.get(frozenset(s), [])
        usable = [d for d in seen if question.reuses(d)]
        if usable:
            best = next((d for d in reversed(usable) if d["status"] != UNKNOWN), usable[-1])
            plan.reused[s] = {**best, "query": ",".join(s), **question.gap_fields()}
        else:
            plan.todo.append(s)
            plan.rerun += bool(seen)
    return plan


def _settled(found) -> bool:
    """Whether a max gap's recorded bounds are its final answer: they met, or what left
    them apart is not the time limit (boxes shed for memory, the float32 rounding
    allowance: questions/sweep_budget.py ``still_open``)."""
    return isinstance(found, dict) and (
        bool(found.get("proven")) or found.get("stopped_by") in (MEMORY, ROUNDING)
    )


def _interrupted(line: dict) -> bool:
    """Whether Ctrl-C or a signal cut the recorded result short (its ``stopped_by``, or
    its max gap's, says so)."""
    stats, found = line.get("stats"), line.get("max_gap")
    return any(isinstance(d, dict) and d.get("stopped_by") == INTERRUPTED for d in (stats, found))


def recorded_features(line: dict, commas: bool) -> frozenset[str] | None:
    """The feature set a recorded result answers: its ``features`` (the names varied). A
    line without them is read from its query label, split at commas, only when no feature
    name of the sweep holds a comma (``commas``); otherwise it is ambiguous (None)."""
    feats = line.get("features")
    if isinstance(feats, list) and feats and all(isinstance(f, str) for f in feats):
        return frozenset(feats)
    return None if commas else frozenset(line["query"].split(","))


def result_from_line(d: dict) -> Result:
    """A recorded result line as a Result, its proof record with it (answers/result.py)."""
    return result_from_dict(d)
