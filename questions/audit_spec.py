"""What an audit asks, from the user's words: the anchored question of every row (the
features F, the flip condition) and how a change of F is measured, checked against the
model and its data; and how its rows are run (``AuditRun``). questions/audit.py answers
it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..compiler.audit import Target, feature_scale
from ..compiler.encode import resolve_features
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, closest, name_list, setting
from ..compiler.feature_names import feature_list, refuse_repeats
from ..compiler.kinds import anchored_question, flip_target
from ..compiler.query import (
    EITHER,
    Gap,
    Question,
    check_delta,
    class_index,
    delta_for_a_classifier,
)
from ..compiler.readings import read_as
from ..readers.data import Dataset, label_like
from .query_build import gap_of

TIMEOUT_PER_ROW = 60.0  # seconds of solver time for a row the enumeration cannot answer


@dataclass(frozen=True)
class AuditSpec:
    """One audit: its question, the anchored kind's (compiler/kinds.py) asked of every
    row (the features F, what x2 must meet), and how changes are measured."""

    question: Question
    scales: dict[int, float]
    data_source: str = ""  # the rows' file (recorded in each row's ``inputs``)
    # the rows as the model reads them, by content: {"rows": n, "sha256": ...}
    data_rows: dict | None = None

    @property
    def vary(self) -> tuple[str, ...]:
        return self.question.vary

    @property
    def target(self) -> Target:
        """What x2 must meet (the enumeration's form of the question)."""
        return flip_target(self.question)

    @property
    def label(self) -> str:
        return ",".join(self.vary)


def make_target(
    ens: Ensemble, gap=None, margin_gap=None, classes=None, *, delta=None, direction=None
) -> Target:
    """The flip condition from the user's gap: binary default 0.2, multiclass ratio 1; a
    regressor's from ``delta`` (and ``direction``, default either). A probability model
    takes delta as a regressor, a gap as a binary classifier (``audit_reading``)."""
    ens = read_as(ens, delta is not None or direction is not None)
    if ens.is_regressor:
        return _regressor_target(gap, margin_gap, classes, delta, direction)
    if delta is not None or direction is not None:
        raise delta_for_a_classifier(
            ("delta", "--delta") if delta is not None else ("direction", "--direction")
        )
    binary = ens.n_classes == 2 and ens.n_outputs == 1
    g = gap_of(gap, margin_gap, Gap(0.2 if binary else 1.0, "prob"))
    cls = None
    if classes is not None and str(classes).strip().lower() != "any":
        if binary:
            raise InputError("classes: the model is binary; classes are for multiclass models")
        name = str(classes).strip()
        pair = list(classes) if isinstance(classes, list | tuple) else name.split(",")
        if len(pair) > 1:  # check's C1,C2, where an audit's x1 is the row
            raise InputError(
                f"{setting('classes', name)}: an audit takes one class, x2's "
                f"({str(pair[-1]).strip()}, or any): x1 is the row, whatever its class"
            )
        try:
            cls = class_index(ens, int(name) if name.isdigit() else name)
        except InputError as e:  # named as given: which setting holds the class
            raise InputError(f"{setting('classes', name)}: {e}") from None
    return Target(g, cls)


def _regressor_target(gap, margin_gap, classes, delta, direction) -> Target:
    if gap is not None or margin_gap is not None or classes is not None:
        raise InputError(
            "the model is a regressor: give delta D (x2's prediction at least D from the "
            "row's), not a gap or classes"
        )
    if delta is None:
        raise InputError(
            "the model is a regressor: give delta D (x2's prediction at least D from the row's)"
        )
    d, way = check_delta(delta, EITHER if direction is None else direction)
    return Target(Gap(0.0, "prob"), delta=d, direction=way)


def audit_reading(ens: Ensemble, target: Target) -> Ensemble:
    """The reading of a probability model that answers an audit (compiler/readings.py):
    a regressor's for a change by delta, a binary classifier's for a gap; any other
    model as it is."""
    return read_as(ens, target.delta is not None)


def make_spec(ens: Ensemble, data: Dataset, vary, target: Target) -> AuditSpec:
    names = feature_list(ens, vary)
    refuse_repeats(names, "vary")
    F = resolve_features(ens, names)
    _, rng = data.ranges()
    scales = {f: feature_scale(ens, f, float(rng[f])) for f in F}
    question = anchored_question(names, target, ",".join(names))
    return AuditSpec(question, scales, data.source, rows_digest(data))


def rows_digest(data: Dataset) -> dict:
    """The data's rows by content, as the model reads them (its features' columns, in
    its order, row after row): what a row's index and its verdict mean (every row counts:
    a change on F is measured against the data's ranges). Not the labels or other
    columns, which no verdict reads, nor the file's path."""
    X = np.ascontiguousarray(data.X, dtype=np.float64)
    h = hashlib.sha256(repr(X.shape).encode())
    h.update(X.tobytes())
    return {"rows": int(X.shape[0]), "sha256": h.hexdigest()}


def delta_field(spec: AuditSpec) -> dict | None:
    """A regressor's row line's ``delta``: the change asked and its direction (None: a
    classifier's line has none)."""
    t = spec.target
    return None if t.delta is None else {"at_least": t.delta, "direction": t.direction}


def audit_record(ens: Ensemble, spec: AuditSpec) -> dict:
    """What an audited row's line answers beyond its own fields (features, gap, delta),
    written as its ``stats["asked"]`` and matched by ``--resume``: the model's fingerprint
    (its trees and bounds, wherever its file is), the data's rows (``rows_digest``) and
    the class a flip must reach when one is asked."""
    out = {"ensemble": ens.fingerprint(), "data": spec.data_rows}
    if spec.question.classes is not None:
        out["classes"] = list(spec.question.classes)
    return out


@dataclass(frozen=True)
class AuditRun:
    """Where an audit's rows come from and where its answers go."""

    n_rows: int  # the first n rows of the data are audited
    out: str | None = None  # append one JSON line per row
    resume: str | None = None  # skip the rows this file holds (and append to it)
    timeout_per_row: float = TIMEOUT_PER_ROW
    jobs: int | None = None
    # each row's work budget (answers/work.py: ``work`` in an audit block, per row): its
    # query, and its smallest change's search, end on counted work; None: on the clock
    work_per_row: int | None = None
    executor: object = None  # an executor spec or questions.executors.Executor
    max_candidates: int | None = None
    memory_mb: int | None = None  # the memory limit (None: the default), as a query's


def check_by(ds: Dataset, ens: Ensemble, by: str | None, label: str | None) -> None:
    """``by`` names a column the summary can break down by: a feature, the label, or any
    other column of the data."""
    if by is None or (by == label and ds.y is not None) or by in ds.names or by in ds.extras:
        return
    others = [*([label] if label and ds.y is not None else []), *ds.extras]
    where = "" if ds.source == "<data>" else f" {ds.source}"  # the file: --data's, say
    like = label_like(ds) if by == ds.label else {}
    if like:  # 'label' on data whose label is called otherwise (adult's income)
        which = " or ".join(map(repr, like))
        raise InputError(
            f"by {by!r}: not a column of the data{where} (no column is named {by!r}, the "
            f"label column's default name: {which} looks like the label)"
        )
    hint = closest(by, [*ens.feature_names, *others]) or (
        f" (its columns other than the model's features: {name_list(others)})" if others else ""
    )
    raise InputError(f"by {by!r}: not a column of the data{where}{hint}")
