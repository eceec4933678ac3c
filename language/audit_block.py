"""The ``audit`` blocks of a ``.sens`` file: built against the model and their data when
the file is loaded (every problem reported where it is written); interfaces/sens_run.py
runs them with the same code as ``treesens audit`` and ``treesens.audit``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..compiler.audit import check_target
from ..compiler.ensemble import Ensemble
from ..compiler.errors import FEATURES, InputError, closest
from ..compiler.query import ANY
from ..questions.audit_spec import (
    TIMEOUT_PER_ROW,
    AuditRun,
    AuditSpec,
    audit_reading,
    check_by,
    make_spec,
    make_target,
)
from ..readers.data import Dataset, load_data, no_label
from .ast import (
    AuditBlock,
    By,
    Classes,
    Defaults,
    GapSetting,
    Jobs,
    Limit,
    Out,
    Rows,
    SensAST,
    Timeout,
    Vary,
    Work,
)
from .build import class_out_of_range, csv_header, not_found, resolve_path


@dataclass(frozen=True)
class AuditPlan:
    """One audit block, ready to run: what it asks (``spec``) of which rows, and how."""

    name: str
    spec: AuditSpec
    data: Dataset
    label: str | None
    by: str | None
    run: AuditRun  # n_rows, out (resumed when it exists), timeout per row, jobs

    def listing(self) -> str:
        """One line for ``treesens run --list``."""
        parts = [self.name, "audit", f"vary {self.spec.label}", self.spec.target.words()]
        parts += [f"{self.run.n_rows} rows", f"timeout per row {self.run.timeout_per_row:g}s"]
        if self.run.work_per_row is not None:
            parts.append(f"work per row {self.run.work_per_row:,}")
        return "\t".join(parts)


def _first(body: tuple, kind):
    return next((st for st in body if isinstance(st, kind)), None)


def _rows(
    ast: SensAST,
    blk: AuditBlock,
    base: Path,
    file_data: tuple[Path | None, str | None],
    features=(),
):
    """The data file an audit reads and its label column (None: no label column); a
    label column it lacks is guessed among the columns not the model's ``features``."""
    st = _first(blk.body, Rows)
    if st is None:
        if file_data[0] is None:
            raise ast.error(
                f'audit {blk.name.text!r} needs rows: add  data "rows.csv"  to it (or a data '
                "line to the file)",
                blk.name,
            )
        return file_data[0], file_data[1], None
    path = resolve_path(base, st.path.value)
    if not path.is_file():
        raise ast.error(not_found("data file", path, st.path.value), st.path)
    header = csv_header(path)
    label = st.label if st.label is not None else "label"
    if header is not None and label not in header:
        if st.label is not None:
            raise ast.error(no_label(label, header, set(features)), st)
        label = None
    return path, label, st


def _target(ast: SensAST, ens: Ensemble, blk: AuditBlock, gap_st, cls_st):
    binary = ens.n_classes == 2 and ens.n_outputs == 1
    if binary and cls_st is not None:
        raise ast.error(
            "classes given, but the model is binary (classes 0 and 1); drop them", cls_st
        )
    if gap_st is not None and gap_st.kind == "max":
        raise ast.error(
            "an audit asks each row at one gap: 'gap max' is for queries and sweeps", gap_st
        )
    if cls_st is not None and ens.n_outputs > 1:
        out_of_range = class_out_of_range(cls_st, ens.n_classes)
        if out_of_range is not None:
            raise ast.error(out_of_range, cls_st)
    c2 = None if cls_st is None or cls_st.c2 == ANY else str(cls_st.c2)
    kind = None if gap_st is None else gap_st.kind
    if kind == "threshold":
        raise ast.error(
            "an audit asks how far a row's prediction moves: give 'gap delta D', not the "
            "threshold form",
            gap_st,
        )
    value = None if gap_st is None else gap_st.value
    try:
        target = make_target(
            ens,
            value if kind == "prob" else None,
            value if kind == "margin" else None,
            c2,
            delta=value if kind == "delta" else None,
            direction=gap_st.direction if kind == "delta" else None,
        )
    except InputError as e:
        raise ast.error(e.message, cls_st or gap_st or blk.name) from None
    try:
        check_target(audit_reading(ens, target), target)
    except InputError as e:
        raise ast.error(e.message, gap_st or blk.name) from None
    return target


def build_audit(
    ast: SensAST,
    ens: Ensemble,
    defaults: Defaults,
    blk: AuditBlock,
    base: Path,
    file_data: tuple[Path | None, str | None],
) -> AuditPlan:
    """The plan of an audit block; a problem raises a SensError at its statement. The
    block takes ``gap`` and ``jobs`` from defaults when it does not set them."""

    def setting(kind):
        return _first(blk.body, kind) or _first(defaults.body, kind)

    path, label, rows_st = _rows(ast, blk, base, file_data, ens.feature_names)
    at = rows_st.path if rows_st is not None else blk.name
    try:
        data = load_data(str(path), ens, label)
    except InputError as e:
        raise ast.error(f"cannot use the data: {e}", at) from None
    vary = _first(blk.body, Vary)
    names = ens.feature_names
    for n in vary.names:
        if n.text not in names:
            raise ast.error(
                f"unknown feature {n.text!r}{closest(n.text, names, listing=FEATURES)}", n
            )
    target = _target(ast, ens, blk, setting(GapSetting), _first(blk.body, Classes))
    spec = make_spec(ens, data, [n.text for n in vary.names], target)
    by_st = _first(blk.body, By)
    by = by_st.name.text if by_st is not None else None
    try:
        check_by(data, ens, by, label)
    except InputError as e:
        raise ast.error(e.message, by_st.name) from None
    limit, out, timeout, jobs = (
        _first(blk.body, Limit),
        _first(blk.body, Out),
        _first(blk.body, Timeout),
        setting(Jobs),
    )
    run = AuditRun(
        n_rows=min(limit.n, data.n_rows) if limit is not None else data.n_rows,
        resume=str(resolve_path(base, out.path.value)) if out is not None else None,
        timeout_per_row=timeout.seconds if timeout is not None else TIMEOUT_PER_ROW,
        jobs=jobs.n if jobs is not None else None,
        work_per_row=int(work.units) if (work := _first(blk.body, Work)) is not None else None,
    )
    return AuditPlan(blk.name.text, spec, data, label, by, run)
