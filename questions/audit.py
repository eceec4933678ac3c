"""``treesens.audit``: which real rows flip when only the features F change, as a typed
DataFrame, one result line per row, and a summary with 95% Wilson intervals."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..answers.accept import shown_value
from ..answers.result import INSENSITIVE, SENSITIVE, Result, input_files
from ..answers.result import UNKNOWN as UNKNOWN_STATUS
from ..compiler.audit import (
    FLIPPABLE,
    MAX_CANDIDATES,
    NOT_FLIPPABLE,
    UNKNOWN,
    RowAnswers,
    audit_rows,
    candidate_count,
    feature_cells,
    unanswered,
)
from ..compiler.encode import resolve_features
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, closest, suggests_keywords
from ..compiler.feature_names import feature_list
from ..compiler.options import work_amount, work_problem
from ..compiler.question import result_gap
from ..readers.data import Dataset, load_data, say_data_notes
from ..readers.load import load_model
from .ask import recorded
from .audit_groups import binned, group_names
from .audit_solve import adopt_proofs, keeping, keeping_row_proofs, solve_rows, taken_proofs
from .audit_spec import (  # noqa: F401 - re-exported: what an audit asks
    TIMEOUT_PER_ROW,
    AuditSpec,
    audit_reading,
    audit_record,
    check_by,
    delta_field,
    make_spec,
    make_target,
)
from .campaign import Campaign, opened
from .certificate_document import check_certify_budget
from .certificate_model import model_file_of, refuse_without_model_file
from .executors import Executor, Failure
from .memory import refuse_over_limit

STATUSES = (FLIPPABLE, NOT_FLIPPABLE, UNKNOWN)
JSON_STATUS = {FLIPPABLE: SENSITIVE, NOT_FLIPPABLE: INSENSITIVE, UNKNOWN: UNKNOWN_STATUS}
BACKEND = "enumerate"  # the answers come from enumerating F's threshold cells
BLOCK = 2_000  # rows answered per block (a result line is written per block)
UNKNOWN_WHY = "too many cells of F to enumerate; solver timed out"
# a flipped row's message where its change is not proven the smallest (RowAnswers.unproven)
UNPROVEN_WHY = (
    "smallest change not proven (the x2 of smaller change were not all ruled out in the row's time)"
)
# a resumed flipped row's message where its line does not say whether its change is the
# smallest (unrecorded_smallest)
UNRECORDED_WHY = "smallest change not recorded (a line written before treesens said it)"
BUDGET_WHY = "too many cells of F to enumerate; the audit's time limit (timeout) ran out"
LATE_WHY = "the audit's time limit (timeout) ran out before this row's block began"
# audit()'s work= beside timeout=: the whole audit's time limit ends on the clock, so
# the rows it leaves unasked would depend on the load (each row's work does not)
WORK_WITH_TIMEOUT = (
    "work= and timeout= together: timeout is the whole audit's time limit, which leaves "
    "the rows it did not reach unknown as the load decides; give work= alone (each row's "
    "budget) with timeout_per_row= as each row's safety net"
)
# tree visits (candidates x trees) a block of enumerated rows holds at most, about 3 s of
# CPU: a large model's rows are slow to enumerate (churn's 1,000-tree LightGBM, tenure and
# MonthlyCharges: 18,288 x2 a row, 0.6 CPU s), so 250 rows a block left the progress line
# and --out silent for minutes
BLOCK_TREE_VISITS = 100_000_000
TASK_FAILED = "task failed"  # a block whose task failed on every attempt: its rows unknown


@dataclass(frozen=True)
class AuditWork:
    """What every block of an audit needs, sent to each worker once: the model, the data
    (the solver's anchors are data rows), the audit, and the limits."""

    ens: Ensemble
    data: Dataset
    spec: AuditSpec
    timeout_per_row: float = TIMEOUT_PER_ROW
    max_candidates: int | None = None  # None: compiler.audit.MAX_CANDIDATES
    deadline: float | None = None  # the whole audit's (time.time()); None: none
    memory_mb: int | None = None  # the solver queries' memory limit (None: the default)
    # the audit's rows to be certified, its blocks on workers: each block keeps the proofs
    # its box search records and sends them back (RowAnswers.proofs)
    keep_proofs: bool = False
    work_per_row: int | None = None  # each row's work budget (None: the clock decides)


def answer_block(work: AuditWork, rows: np.ndarray) -> RowAnswers:
    """The answers for the given row indices: by enumeration, and the rows it leaves
    unknown by solver queries (``timeout_per_row`` seconds each, none past the
    ``deadline``; a block begun past it is left unknown). An executor's task."""
    spec, X = work.spec, work.data.X[rows]
    if work.deadline is not None and time.time() >= work.deadline:
        return unanswered(work.ens, X, LATE_WHY)
    ans = audit_rows(work.ens, X, spec.vary, spec.target, spec.scales, work.max_candidates)
    why: list[str] = []
    limits = (work.timeout_per_row, work.deadline, work.memory_mb)
    own = work.keep_proofs and not keeping()  # a worker: its proofs kept and sent back
    with keeping_row_proofs() if own else nullcontext():
        if not solve_rows(work.ens, spec, X, ans, *limits, why=why, work=work.work_per_row):
            why.append(BUDGET_WHY)
        if own:
            ans = replace(ans, proofs=taken_proofs())
    return replace(ans, note="; ".join(dict.fromkeys(why))) if why else ans


def _candidates(ens: Ensemble, spec: AuditSpec) -> int:
    """The x2 a row's enumeration predicts: the product of F's cells."""
    ens = audit_reading(ens, spec.target)
    F = sorted(resolve_features(ens, spec.vary))
    return candidate_count([feature_cells(ens, f, spec.scales.get(f, 1.0)) for f in F])


def rows_go_to_the_solver(ens: Ensemble, spec: AuditSpec, max_candidates: int | None) -> bool:
    """Whether F has too many cells to enumerate, so that every row is a solver query
    (seconds each, up to the time limit per row, instead of thousands of rows a second)."""
    return _candidates(ens, spec) > (MAX_CANDIDATES if max_candidates is None else max_candidates)


def enumerated_block(ens: Ensemble, spec: AuditSpec, cap: int) -> int:
    """Rows per block of enumerated rows: at most ``cap``, and at most
    ``BLOCK_TREE_VISITS`` (a row's candidates times the model's trees) in a block."""
    visits = max(1, _candidates(ens, spec) * len(ens.trees))
    return max(1, min(cap, BLOCK_TREE_VISITS // visits))


def block_size(n_rows: int, workers: int, cap: int) -> int:
    """Rows per block: at most ``cap``, and small enough that every worker gets blocks."""
    if workers <= 1:
        return cap
    return max(1, min(cap, math.ceil(n_rows / (4 * workers))))


def answer_blocks(
    ens: Ensemble,
    data: Dataset,
    spec: AuditSpec,
    rows: np.ndarray,
    block: int = BLOCK,
    timeout_per_row: float = TIMEOUT_PER_ROW,
    *,
    executor: Executor | None = None,
    max_candidates: int | None = None,
    deadline: float | None = None,
    memory_mb: int | None = None,
    work_per_row: int | None = None,
) -> Iterator[tuple[np.ndarray, RowAnswers]]:
    """The answers for the given row indices, a block at a time: in this process in
    order, or one task per block on ``executor`` (in completion order). A block whose task
    fails on every attempt comes back with its rows unknown, saying why, as do the rows
    the ``deadline`` leaves unanswered. ``work_per_row``: each solver row's work budget."""
    ens = audit_reading(ens, spec.target)
    keep = executor is not None and keeping()  # the workers' proofs sent back
    limits = (timeout_per_row, max_candidates, deadline, memory_mb, keep, work_per_row)
    work = AuditWork(ens, data, spec, *limits)
    blocks = [rows[s : s + block] for s in range(0, len(rows), block)]
    if executor is None:
        for idx in blocks:
            yield idx, answer_block(work, idx)
        return
    for i, out in executor.run(answer_block, work, blocks):
        if isinstance(out, Failure):
            out = unanswered(ens, data.X[blocks[i]], f"{TASK_FAILED}: {out.message}")
        adopt_proofs(out.proofs)  # the rows' certificates from the worker's proofs
        yield blocks[i], replace(out, proofs={})


def row_result(
    ens: Ensemble,
    spec: AuditSpec,
    ans: RowAnswers,
    i: int,
    row: int,
    x1,
    timeout_per_row: float | None = None,
    work_per_row: int | None = None,
) -> dict:
    """One row's answer in the result schema, plus ``row`` (its index in the data); its
    record holds ``timeout_per_row``, the solver's time for the row, when given (a resumed
    audit with more time answers an unknown row again)."""
    ens = audit_reading(ens, spec.target)
    names = ens.feature_names
    status = ans.status[i]
    res = Result(
        query=spec.label,
        status=JSON_STATUS[status],
        backend=ans.answered_by.get(i, BACKEND),
        features=list(spec.vary),
        gap=result_gap(spec.target.gap, spec.target.delta)[0],
        gap_kind=result_gap(spec.target.gap, spec.target.delta)[1],
        model=ens.source,
        message="" if status != UNKNOWN else (ans.note or UNKNOWN_WHY),
        inputs=input_files(ens.inputs, spec.data_source),
    )
    if spec.target.delta is not None:
        res.delta = delta_field(spec)
    res.outputs = {"x1": ans.p_row[i].tolist()}
    if i in ans.times:  # the solver's times of the row (an enumerated row took none)
        res.time = dict(ans.times[i])
    if i in ans.work:  # the work the row used of its budget (a work budget per row)
        res.stats["work"] = dict(ans.work[i])
    if status == FLIPPABLE:
        res.witness = {
            "x1": {names[f]: shown_value(ens, f, x1[f]) for f in range(ens.n_features)},
            "x2": {names[f]: shown_value(ens, f, ans.x2[i, f]) for f in range(ens.n_features)},
        }
        res.outputs["x2"] = ans.p_x2[i].tolist()
        res.validated = True
        # smallest: whether the change is proven the smallest (a line without it reads
        # as not proven: unrecorded_smallest)
        res.stats.update(change=float(ans.change[i]), smallest=i not in ans.unproven)
        if i in ans.unproven:  # an x2 that flips, the smallest not proven (audit_solve)
            low = ans.unproven[i]
            res.stats["no_flip_below"] = low
            below = f"; none below {low:.4g} flips" if low > 0 else ""
            res.message = f"{UNPROVEN_WHY}{below}; a change of {ans.change[i]:.4g} flips"
    if ans.reach is not None and not np.isnan(ans.reach[i]).any():
        res.stats["reach"] = [float(v) for v in ans.reach[i]]
    record = audit_record(ens, spec)  # what --resume matches on
    if timeout_per_row is not None:
        record["timeout_per_row"] = float(timeout_per_row)
    if work_per_row is not None:  # each row's work budget (a resume with more asks again)
        record["work_per_row"] = int(work_per_row)
    recorded(res, record)
    out = res.to_dict()
    out["row"] = int(row)
    regressor = ens.is_regressor
    out["decision"] = float(ans.decision[i]) if regressor else int(ans.decision[i])
    return out


def frame_from_results(lines: list[dict], vary, extra=None, to: int | None = None):
    """The typed DataFrame of result lines (see :func:`audit`); ``to``: the class a
    flipped row goes to (``flip_to``), which its summary names."""
    import pandas as pd

    to_audit = {v: k for k, v in JSON_STATUS.items()}
    rec = []
    for d in lines:
        outs = d.get("outputs") or {}
        p1, p2 = outs.get("x1") or [], outs.get("x2")
        r = {
            "row": int(d["row"]),
            "decision": d["decision"] if "delta" in d else int(d["decision"]),
            "status": to_audit[d["status"]],
            "result_status": d["status"],
            "p_row": float(p1[-1]) if len(p1) == 2 else float(max(p1, default=math.nan)),
            "p_x2": math.nan if p2 is None else float(p2[-1] if len(p2) == 2 else max(p2)),
            "change": float((d.get("stats") or {}).get("change", math.nan)),
        }
        r["change_smallest"] = _smallest(d)
        if "delta" in d:  # a regressor's row: the predictions changing F reaches
            low, high = (d.get("stats") or {}).get("reach", (math.nan, math.nan))
            r["reach_low"], r["reach_high"] = float(low), float(high)
        x2 = (d.get("witness") or {}).get("x2") or {}
        for v in vary:
            r[f"x2_{v}"] = x2.get(v)
        rec.append(r)
    cols = ["row", "decision", "status", "result_status", "p_row", "p_x2", "change"]
    cols.append("change_smallest")
    regressor = any("delta" in d for d in lines)
    if regressor:
        cols += ["reach_low", "reach_high"]
    df = pd.DataFrame(rec, columns=cols + [f"x2_{v}" for v in vary])
    df["row"] = df["row"].astype("int64")
    df["decision"] = df["decision"].astype("float64" if regressor else "int64")
    df["status"] = pd.Categorical(df["status"], categories=list(STATUSES))
    for c in ("p_row", "p_x2", "change"):
        df[c] = df[c].astype("float64")
    df["change_smallest"] = df["change_smallest"].astype("boolean")
    df = df.sort_values("row").reset_index(drop=True)
    if extra is not None:
        df = df.join(extra, on="row")
    df.attrs["flip_to"] = to
    return df


def _smallest(line: dict):
    """Whether a row line's change is the smallest that flips: NA where it has none,
    True only where the line says it is proven (``stats.smallest``; a line without it
    was written before lines said it, see :func:`unrecorded_smallest`)."""
    stats = line.get("stats") or {}
    return None if "change" not in stats else bool(stats.get("smallest", False))


def unrecorded_smallest(line: dict) -> dict:
    """A flipped row's line without ``stats.smallest`` (an earlier treesens wrote it, which
    did not prove the change the smallest past the enumeration), as this version reads it:
    ``smallest`` false and its message saying why; any other line as it is."""
    stats = line.get("stats") or {}
    if line.get("status") != SENSITIVE or "change" not in stats or "smallest" in stats:
        return line
    why = f"{UNRECORDED_WHY}; a change of {float(stats['change']):.4g} flips"
    return {**line, "stats": {**stats, "smallest": False}, "message": why}


@suggests_keywords()
def audit(
    model,
    data,
    vary,
    *,
    gap: float | None = None,
    margin_gap: float | None = None,
    classes=None,
    delta: float | None = None,
    direction: str | None = None,
    label: str = "label",
    details=None,
    by=None,
    limit: int | None = None,
    timeout: float | None = None,
    timeout_per_row: float = TIMEOUT_PER_ROW,
    work: int | str | None = None,
    jobs: int | None = None,
    executor: str | Executor | None = None,
    memory_mb: int | None = None,
    certificates: str | Path | None = None,
    certify_budget: float | None = None,
    certify_rows: int | None = None,
    certify_timeout: float | None = None,
    certify_progress=None,
):
    """Which rows of ``data`` get another confident decision when only ``vary`` changes?

    Returns a DataFrame with one row per data row: ``row``, ``decision`` (class of the
    row), ``status`` (flippable / not flippable / unknown, categorical), ``result_status``
    (sensitive / insensitive / unknown), ``p_row`` and ``p_x2`` (P(class 1), or the top
    class probability for multiclass), ``change`` (the smallest change on F that flips,
    each feature's change over its range, NaN when none; not proven the smallest where
    ``change_smallest`` is False, a row past the enumeration) and ``x2_<F>`` (x2's values),
    and for a regressor (asked ``delta``: x2's prediction at least that far from the
    row's, ``direction`` up, down or either) ``reach_low`` / ``reach_high``, the lowest
    and highest prediction changing only F reaches (``decision``, ``p_row`` and ``p_x2``
    are then predictions), plus the ``by`` column when given: a feature, the label or
    any other column of the data (a protected attribute kept out of the model), or a
    pandas Series / sequence with one value per data row. :func:`summary` of the DataFrame breaks down by it
    (``df.attrs["by"]`` names it).

    ``timeout``: the whole audit's time limit in seconds, as ``check``'s: blocks of rows
    are begun and rows the enumeration leaves to the solver asked (each for at most
    ``timeout_per_row`` seconds) only until then; the rows left stay unknown, saying so
    in their ``message``.

    ``work``: each row's work budget (``"10k"``), as an audit block's ``work N``: its
    answer ends on counted work, not the load (``timeout_per_row`` a net; ``timeout``
    refused beside it); what each row used in ``df.attrs["work"]`` (row -> its stats).

    ``jobs``/``executor`` answer blocks of rows at once, as :func:`treesens.sweep` runs
    queries (``"local"``, ``"dask[=ADDRESS]"``, ``"ray[=ADDRESS]"`` or an
    executors.Executor); the answers are the same as with one job.

    ``memory_mb``: the memory limit, as ``check``'s (questions/memory.py): a model whose
    estimate passes it (or the default limit) is refused before any row (MemoryRefused).

    ``certificates``: a folder; each row that does not flip gets its certificate there,
    ``row-N.json``, by the box search within ``certify_budget`` seconds (default
    ``timeout_per_row``), checked by the independent checker, as ``treesens audit
    --certificates`` writes them (questions/audit_certificates.py, docs/certificates.md);
    ``df.attrs["certificates"]``: each such row -> "" (certified and verified) or why not.
    The model is given as its file, or loaded from one (the checker reads it; in memory: refused).
    ``certify_rows``: at most the first that many rows; ``certify_timeout``: rows begun
    only for that many seconds (either leaves a row "not attempted: ...");
    ``certify_progress`` (a callable): a line on how far they got, on a long run.

    >>> df = audit("adult.json", "test.csv", ["sex"], gap=0.1, label="income", by="sex")  # doctest: +SKIP
    >>> summary(df)                                    # doctest: +SKIP
    """
    t0 = time.time()
    deadline = None if timeout is None else t0 + check_timeout(timeout)
    per_row = row_work(work, timeout)
    certify = _certify_setting(
        model, certificates, certify_budget, certify_rows, certify_timeout, certify_progress
    )
    ens = _loaded(model, details, data, label, certify is not None)
    ds = load_data(data, ens, label)
    say_data_notes(ds)
    vary = feature_list(ens, vary, "vary")
    target = make_target(ens, gap, margin_gap, classes, delta=delta, direction=direction)
    spec = make_spec(ens, ds, vary, target)
    n = _rows_asked(limit, ds.n_rows)
    groups = by_column(ds, ens, by, label)  # a wrong column fails before any solving
    refuse_over_limit(ens, memory_mb)
    limits = ((row_timeout(timeout_per_row), per_row), deadline, memory_mb)
    lines, certified = _answered(ens, ds, spec, n, Campaign(executor, jobs), *limits, certify)
    df = frame_from_results(lines, spec.vary, groups, flip_to(ens, target))
    return _with_attrs(df, groups, certified, lines if work is not None else None)


def _loaded(model, details, data, label: str, certified: bool) -> Ensemble:
    """audit()'s model; with certificates asked (``certified``), refused before any row
    where the checker has no file of it to read (a model in memory), where each row's
    reason said so after every row was answered."""
    ens = load_model(model, details=details, data=data, label=label)
    if certified:
        refuse_without_model_file(model, ens, "certificates=")
    return ens


def _with_attrs(df, groups, certified: dict | None, lines: list | None):
    """audit()'s DataFrame with what ``summary`` breaks it down by, the certificates and,
    from ``lines`` (a work budget's), what each row a solver answered used of it."""
    if groups is not None:
        df.attrs["by"] = str(groups.columns[0])
    if certified is not None:
        df.attrs["certificates"] = certified
    if lines is not None:
        df.attrs["work"] = {d["row"]: d["stats"]["work"] for d in lines if "work" in d["stats"]}
    return df


def row_work(work, timeout: float | None = None) -> int | None:
    """audit()'s ``work``, checked: a whole number of work units (``"10k"`` read), and
    none beside the whole audit's ``timeout`` (WORK_WITH_TIMEOUT)."""
    value = work_amount(work)
    if work_problem(value):
        raise InputError(f"work={work!r} {work_problem(value)}")
    if value is not None and timeout is not None:
        raise InputError(WORK_WITH_TIMEOUT)
    return None if value is None else int(value)


def _rows_asked(limit, n_rows: int) -> int:
    """How many rows audit() answers: all, or the first ``limit`` (a whole number >= 1,
    as --limit takes)."""
    if limit is None:
        return n_rows
    whole = isinstance(limit, numbers.Integral) and not isinstance(limit, bool)
    if not (whole and limit >= 1):
        raise InputError(f"limit takes a whole number of rows from 1, not {limit!r}")
    return min(int(limit), n_rows)


def _certify_setting(model, certificates, budget, certify_rows, certify_timeout, progress):
    """audit()'s certificate settings checked before any row: a folder, not a file, a
    budget above 0, and :func:`row_bounds` with the progress callable; None without a
    folder, else (the model as given, the folder, the budget, the bounds)."""
    if certificates is not None and Path(certificates).is_file():
        raise InputError(f"certificates={str(certificates)!r}: a file, not a folder")
    check_certify_budget(budget)
    bounds = {**row_bounds(certify_rows, certify_timeout), "progress": progress}
    return None if certificates is None else (model, certificates, budget, bounds)


def row_bounds(certify_rows, certify_timeout) -> dict:
    """certify_rows's ``limit`` and ``seconds`` from audit()'s (and run_contract's)
    keywords, checked: a positive whole number of rows, a number of seconds >= 0."""
    whole = isinstance(certify_rows, int) and not isinstance(certify_rows, bool)
    if certify_rows is not None and not (whole and certify_rows > 0):
        raise InputError(f"certify_rows must be a positive whole number, not {certify_rows!r}")
    number = isinstance(certify_timeout, int | float) and not isinstance(certify_timeout, bool)
    if certify_timeout is not None and not (number and 0 <= certify_timeout < math.inf):
        raise InputError(
            f"certify_timeout must be a number of seconds >= 0, not {certify_timeout!r}"
        )
    return {"limit": certify_rows, "seconds": certify_timeout}


def _answered(
    ens, ds, spec, n: int, campaign, per_row: tuple, deadline, memory_mb, certify
) -> tuple[list, dict | None]:
    """The result lines of the first ``n`` rows, answered a block at a time (``per_row``:
    each row's time limit and work budget), and with
    ``certify`` (the model as given, the folder, the budget of a row and
    ``_certified_rows``' bounds) the certificates of those that do not flip (None
    without): a row the box search proved is certified from the proof it recorded."""
    with keeping_row_proofs(certify is not None):
        lines = _answered_lines(ens, ds, spec, n, campaign, per_row, deadline, memory_mb)
        timeout_per_row = per_row[0]
        if certify is None:
            return lines, None
        model, folder, budget, bounds = certify
        budget = timeout_per_row if budget is None else budget
        bounds = {**bounds, "work": per_row[1]}  # a row's certificate ends on its work
        asked = (folder, budget, memory_mb, bounds)
        return lines, _certified_rows(model, ens, spec, ds.X, lines, *asked)


def _answered_lines(ens, ds, spec, n: int, campaign, per_row: tuple, deadline, memory_mb):
    """The result lines of the first ``n`` rows, answered a block at a time (``per_row``:
    each row's time limit and work budget)."""
    timeout_per_row, work_per_row = per_row
    lines = []
    with opened(campaign, ens=ens) as run:
        ex = run.executor
        block = block_size(n, ex.workers if ex is not None else 1, BLOCK)
        blocks = answer_blocks(
            ens,
            ds,
            spec,
            np.arange(n),
            block,
            timeout_per_row,
            executor=ex,
            deadline=deadline,
            memory_mb=memory_mb,
            work_per_row=work_per_row,
        )
        for idx, ans in blocks:
            for i, row in enumerate(idx.tolist()):
                x, limits = ds.X[row], (timeout_per_row, work_per_row)
                lines.append(row_result(ens, spec, ans, i, row, x, *limits))
    return lines


def _certified_rows(
    model, ens, spec, X, lines, folder, budget, memory_mb, bounds: dict
) -> dict[int, str]:
    """The audit's rows that do not flip, certified into ``folder`` (row -> "" or why
    not): questions/audit_certificates.py, as the CLI's ``--certificates``. ``bounds``:
    certify_rows's ``limit``, ``seconds`` and ``progress``."""
    from .audit_certificates import certify_rows  # the checker

    model_file = model_file_of(model, ens)
    return certify_rows(ens, spec, X, lines, folder, model_file, budget, memory_mb, **bounds)


def flip_to(ens: Ensemble, target) -> int | None:
    """The class a flipped row goes to, where it is one (the other of two classes, the
    class asked); None for a regressor, or any other class."""
    if ens.is_regressor:
        return None
    if target.cls is not None:
        return int(target.cls)
    return -1 if ens.n_classes == 2 else None  # -1: the other of the two


def check_timeout(timeout, keyword: str = "timeout", what: str = "the audit's time limit") -> float:
    """An audit's whole time limit (or another of its limits, ``keyword``): a positive
    number of seconds."""
    ok = isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
    if not ok or not (math.isfinite(timeout) and timeout > 0):
        raise InputError(f"{keyword}={timeout!r}: give {what} in seconds (> 0)")
    return float(timeout)


def row_timeout(timeout_per_row) -> float:
    """audit()'s ``timeout_per_row``, checked as the command line's --timeout-per-row is
    (0 was taken)."""
    return check_timeout(timeout_per_row, "timeout_per_row", "each row's solver time limit")


def by_column(ds: Dataset, ens: Ensemble, by, label: str | None = None):
    """The column to break the summary down by, as a frame indexed by row (None when not
    asked): ``by`` names a feature, the label or any other column of the data, or is the
    values themselves (a pandas Series or a sequence, one per data row)."""
    if by is None:
        return None
    import pandas as pd

    if not isinstance(by, str):
        if not hasattr(by, "__iter__"):
            raise InputError(f"by takes a column's name, or one value per data row, not {by!r}")
        values = list(by)
        if len(values) != ds.n_rows:
            raise InputError(f"by has {len(values)} values for {ds.n_rows} data rows")
        return pd.DataFrame({str(getattr(by, "name", None) or "group"): values})
    check_by(ds, ens, by, label)
    if by == label and ds.y is not None:
        return pd.DataFrame({by: ds.y})
    if by in ds.extras:
        return pd.DataFrame({by: ds.extras[by]})
    f = ds.names.index(by)
    return pd.DataFrame({by: [shown_value(ens, f, v) for v in ds.X[:, f]]})


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion k / n ((nan, nan) when n = 0)."""
    if n == 0:
        return math.nan, math.nan
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    # at k = 0 (k = n) the bound is 0 (1) exactly; rounding would leave it off by 1e-18
    lo = 0.0 if k == 0 else max(0.0, mid - half)
    hi = 1.0 if k == n else min(1.0, mid + half)
    return lo, hi


def summary(df, by: str | None = None):
    """Counts and the fraction of flippable rows with its 95% Wilson interval: overall,
    per decision direction, and per value of ``by`` (default: the column the audit was
    asked to break down by, ``audit(..., by=)``; a numeric column of more than 12
    values per interval of its deciles: audit_groups.binned). Unknown rows count in ``rows`` but
    not in the fraction (whose denominator is the answered rows)."""
    import pandas as pd

    if not isinstance(df, pd.DataFrame) or not {"status", "decision"} <= set(df.columns):
        raise InputError(
            f"summary takes the DataFrame treesens.audit returns, not {type(df).__name__} "
            "(a sweep's results: treesens.results_frame)"
        )
    if by is None:
        by = df.attrs.get("by")
    elif by not in df.columns:
        raise InputError(f"by {by!r}: not a column of the audit's answer{closest(by, df.columns)}")

    groups = [("all", "all", df)]
    # a regressor's "decision" is its prediction: no breakdown by it
    if df["decision"].dtype.kind in "iu":
        to = df.attrs.get("flip_to")
        for d, sub in df.groupby("decision", sort=True):
            other = "other" if to is None else (1 - int(d) if to == -1 else to)
            groups.append(("decision", f"{d} -> {other}", sub))
    if by is not None:  # a numeric column of many values by its deciles (audit_groups.py)
        keyed = list(df.groupby(binned(df[by]), sort=True, dropna=False, observed=True))
        for (_v, sub), name in zip(keyed, group_names([v for v, _ in keyed]), strict=True):
            groups.append((by, name, sub))
    rec = []
    for col, val, sub in groups:
        k = int((sub["status"] == FLIPPABLE).sum())
        unk = int((sub["status"] == UNKNOWN).sum())
        n = len(sub) - unk
        lo, hi = wilson(k, n)
        frac = k / n if n else math.nan
        rec.append((col, val, len(sub), k, unk, frac, lo, hi))
    cols = ["group", "value", "rows", "flippable", "unknown", "fraction", "ci_low", "ci_high"]
    return pd.DataFrame(rec, columns=cols)


def format_summary(table) -> str:
    # wide enough for an interval's label ("[0.0123, 0.4567]"), up to 24 characters
    w = min(24, max([16, *(len(v) for v in table["value"])]))
    g = max([10, *(len(v) for v in table["group"])])  # a --by column's whole name
    lines = [
        f"{'group':<{g}} {'value':<{w}} {'rows':>7} {'flippable':>9} {'unknown':>7} "
        f"{'fraction':>8}  95% interval"
    ]
    for r in table.itertuples(index=False):
        lines.append(
            f"{r.group:<{g}} {r.value[:w]:<{w}} {r.rows:>7} {r.flippable:>9} {r.unknown:>7} "
            f"{r.fraction:>8.4f}  [{r.ci_low:.4f}, {r.ci_high:.4f}]"
        )
    return "\n".join(lines)


def report_text(
    ens: Ensemble, spec: AuditSpec, n_rows: int, seconds: float, table, unproven: int = 0
) -> str:
    """What an audit prints: a line saying what was asked, then the summary table, and a
    line on the ``unproven`` flipped rows (:func:`unproven_rows`) when there are any."""
    head = (
        f"audit of {ens.source}: vary {spec.label}, {spec.target.words()}, "
        f"{n_rows} rows ({seconds:.1f}s)"
    )
    tail = ""
    if unproven:
        tail = (
            f"\n{unproven} flippable row{'s' if unproven > 1 else ''}: the change shown is of "
            "an x2 that flips, not proven the smallest (change_smallest False)"
        )
    return head + "\n" + format_summary(table) + tail


def unproven_rows(df) -> int:
    """How many flipped rows of an audit's DataFrame have a change not proven the
    smallest (``change_smallest`` False: a row past the enumeration)."""
    if "change_smallest" not in df.columns:
        return 0
    return int((df["change_smallest"] == False).sum())  # noqa: E712 - NA counts not
