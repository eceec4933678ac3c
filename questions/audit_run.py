"""Running an audit over a data set, as ``treesens audit`` and an ``audit`` block of a
``.sens`` file do: skip the rows a results file already holds, answer the others a block
at a time (here or on an executor), append each block's lines to the file as it ends,
and return every row's line."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..answers.result import UNKNOWN
from ..answers.stats import asked_of
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.question import result_gap
from ..readers.data import Dataset
from .audit import (
    TASK_FAILED,
    answer_blocks,
    block_size,
    enumerated_block,
    row_result,
    rows_go_to_the_solver,
    unrecorded_smallest,
)
from .audit_spec import AuditRun, AuditSpec, audit_reading, audit_record, delta_field
from .campaign import Campaign, opened, starting_workers
from .memory import refuse_over_limit
from .results_log import read_log, refuse_other_file

PROGRESS_BLOCK = 250  # rows per block: a block's lines are written before the next starts
# rows per block when each row is a solver query (up to its time limit): each row's line
# is written, and its progress told, as soon as it is answered
SOLVER_BLOCK = 1


def read_done(path: str | None, where: str | None = None) -> list[dict]:
    """The result lines of an earlier run (none when the file does not exist yet); a
    complete line that is not a row's result is an input error naming it and ``where``
    (default: the --resume flag)."""
    where = where or f"--resume {path}"

    def check(d, n: int) -> dict:
        if d is None:
            raise InputError(f"{path}:{n}: not a JSON line", where)
        if not isinstance(d, dict) or "row" not in d:
            raise InputError(f"{path}:{n}: a result line without 'row'", where)
        if isinstance(d["row"], bool) or not isinstance(d["row"], int) or d["row"] < 0:
            raise InputError(f"{path}:{n}: 'row' is {d['row']!r}, not a row number", where)
        return d

    return read_log(path, check)


def check_same_audit(
    done: list[dict],
    ens: Ensemble,
    spec: AuditSpec,
    where: str,
    hint: str = "resume from this audit's own file, or give a new one",
) -> None:
    """The lines a resumed audit reuses must answer it: the same features varied, gap (or
    a regressor's change and direction), model (by its fingerprint: its trees and bounds),
    data (its rows' content, which decides what a row index means), and class asked; a
    file another audit wrote would have its rows' verdicts taken for this one's. A line
    written before lines recorded the model and data (``line_record``) is checked on what it
    shows (its model by its ``model`` text); ``run_audit`` answers its row again."""
    gap, kind = result_gap(spec.target.gap, spec.target.delta)
    delta = delta_field(spec)
    expect = {"features": list(spec.vary), "gap": gap, "gap_kind": kind, "delta": delta}
    model = audit_reading(ens, spec.target).source
    record = audit_record(ens, spec)
    for d in done:
        differs = _differences(d, expect)
        asked = line_record(d)
        if asked is None:
            if d.get("model") != model:
                differs.append(f"model {d.get('model')} (this audit: {model})")
        else:
            differs += _record_differences(asked, record)
        if differs:
            raise InputError(
                f"holds the answers of another audit (row {d.get('row')}: "
                f"{'; '.join(differs)}); {hint}",
                where,
            )


def _note_other_audit(path: str, ens: Ensemble, spec: AuditSpec, note: Callable[[str], None]):
    """An ``--out`` file (no ``--resume``) that already holds another audit's lines is
    appended to as asked, but ``note`` hears it once: its summary mixes the two, and
    ``--resume`` from it is refused."""
    try:
        check_same_audit(read_done(path), ens, spec, path)
    except InputError as e:
        what = e.message.split(" (row ")[0]
        note(
            f"{what if what.startswith(path) else f'{path} {what}'}: this audit's lines are "
            "appended to it, and --resume from it will refuse them; give this audit a new file"
        )


def line_record(d: dict) -> dict | None:
    """A row line's record of its model, data and class (``audit_record``); None for a
    line written before lines held one."""
    return asked_of(d.get("stats"))


def _differences(d: dict, expect: dict) -> list[str]:
    """What a line shows that this audit does not ask (features, gap, delta), in words."""
    out = []
    if d.get("features") != expect["features"]:
        shown = ",".join(map(str, d.get("features") or []))
        out.append(f"vary {shown} (this audit: {','.join(expect['features'])})")
    if d.get("gap") != expect["gap"] or d.get("gap_kind", expect["gap_kind"]) != expect["gap_kind"]:
        out.append(
            f"gap {d.get('gap')} {d.get('gap_kind', 'prob')} "
            f"(this audit: {expect['gap']} {expect['gap_kind']})"
        )
    if d.get("delta") != expect["delta"]:
        out.append(f"delta {d.get('delta')} (this audit: {expect['delta']})")
    return out


def _record_differences(asked: dict, record: dict) -> list[str]:
    """Where a line's record (model, data, class) is not this audit's, in words."""
    out = []
    if asked.get("ensemble") != record["ensemble"]:
        out.append(
            f"another model (fingerprint {str(asked.get('ensemble'))[:12]}; this audit's "
            f"{record['ensemble'][:12]})"
        )
    if asked.get("data") != record["data"]:
        out.append(
            f"other data ({_rows_words(asked.get('data'))}; this audit's "
            f"{_rows_words(record['data'])})"
        )
    if asked.get("classes") != record.get("classes"):
        out.append(
            f"flip to {_class_words(asked.get('classes'))} (this audit: "
            f"{_class_words(record.get('classes'))})"
        )
    return out


def _class_words(classes) -> str:
    """The class a recorded flip must reach (``classes[1]``), in words."""
    if isinstance(classes, list) and len(classes) == 2:
        return f"class {classes[1]}"
    return "any other class"


def _rows_words(rows) -> str:
    if not isinstance(rows, dict):
        return "none recorded"
    return f"{rows.get('rows')} rows, sha256 {str(rows.get('sha256'))[:12]}"


def reusable(
    done: list[dict], n: int, timeout_per_row: float | None = None, work_per_row: int | None = None
) -> Reuse:
    """One line per row below ``n`` (its last answer, else its last unknown: a file two
    runs appended to holds a row twice, which would count twice), from the lines that
    record their model and data; an unknown only when its record says it had at least
    ``timeout_per_row`` seconds (None: any), at least ``work_per_row`` work units where
    this run has a work budget per row, and its block's task did not fail (a resume with
    more time or work, or after a crash, asks it again)."""
    best: dict[int, dict] = {}
    unrecorded: set[int] = set()
    for d in done:
        r = int(d["row"])
        if r >= n:
            continue
        if line_record(d) is None:
            unrecorded.add(r)
        elif r not in best or d.get("status") != UNKNOWN or best[r].get("status") == UNKNOWN:
            best[r] = d
    limits = (timeout_per_row, work_per_row)
    retried = {r for r, d in best.items() if not _unknown_reusable(d, *limits)}
    kept = [d for r, d in best.items() if r not in retried]
    return Reuse(kept, len(unrecorded - best.keys()), len(retried))


@dataclass(frozen=True)
class Reuse:
    """What a resumed audit takes from its file: the ``lines`` it reuses, how many rows
    only a line without a record holds (``stale``), and how many unknown rows it asks
    again (``retried``: less time than this run's, or a failed task)."""

    lines: list[dict]
    stale: int
    retried: int


def _unknown_reusable(d: dict, timeout_per_row: float | None, work: int | None = None) -> bool:
    if d.get("status") != UNKNOWN:
        return True
    if str(d.get("message", "")).startswith(TASK_FAILED):
        return False
    had = line_record(d).get("timeout_per_row")
    had_work = line_record(d).get("work_per_row")
    if work is not None and not (isinstance(had_work, int) and had_work >= work):
        return False  # less work than this run's, or the clock's answer
    if timeout_per_row is None:
        return True
    return isinstance(had, (int, float)) and had >= timeout_per_row


def run_audit(
    ens: Ensemble,
    data: Dataset,
    spec: AuditSpec,
    run: AuditRun,
    on_block: Callable[[list[dict], int], None] | None = None,
    note: Callable[[str], None] | None = None,
    status: Callable[[str], None] | None = None,
) -> list[dict]:
    """Every audited row's result line (earlier ones from ``run.resume`` first). Each new
    block's lines reach ``run.out`` (or the resume file) before the next block is
    awaited; ``on_block(lines, answered so far)`` sees them too. A model that would pass
    the memory limit (``run.memory_mb``, else the default) is refused before any row
    (MemoryRefused). A resumed line without the record of its model and data (an earlier
    treesens wrote it) is not reused: its row is answered again (``note`` hears how
    many); a flipped row's line that does not say whether its change is the smallest
    is read as not proven (``unrecorded_smallest``, said to ``note``); ``status`` hears that an executor's workers are starting."""
    refuse_over_limit(ens, run.memory_mb)
    n = run.n_rows
    if run.resume is None and run.out is not None and Path(run.out).is_file():
        refuse_other_file(run.out, f"--out {run.out}")  # before any row is answered
        if note is not None:
            _note_other_audit(run.out, ens, spec, note)
    done = read_done(run.resume)
    check_same_audit(done, ens, spec, f"--resume {run.resume}")
    reuse = reusable(done, n, run.timeout_per_row, run.work_per_row)
    if note is not None and reuse.stale:
        note(
            f"{run.resume}: {reuse.stale} rows' lines record no model and data "
            "fingerprint (an earlier treesens wrote them): those rows are answered again"
        )
    if note is not None and reuse.retried:
        more_work = "" if run.work_per_row is None else f" or work {run.work_per_row:,}"
        note(
            f"{run.resume}: {reuse.retried} unknown rows had less time per row than "
            f"{run.timeout_per_row:g} s{more_work}, or a failed task: those rows are asked again"
        )
    done = [unrecorded_smallest(d) for d in reuse.lines]
    unrecorded = sum(a is not b for a, b in zip(done, reuse.lines))
    if note is not None and unrecorded:
        note(
            f"{run.resume}: {unrecorded} flippable rows' lines do not say whether their "
            "change is the smallest (an earlier treesens wrote them): read as not proven "
            "(change_smallest False)"
        )
    seen = {int(d["row"]) for d in done}
    todo = np.array([r for r in range(n) if r not in seen], dtype=int)
    lines = list(done)
    campaign = Campaign(run.executor, run.jobs, run.out, run.resume)
    with opened(campaign, work=len(todo) > 0, ens=ens) as running:
        ex = running.executor
        slow = rows_go_to_the_solver(ens, spec, run.max_candidates)
        cap = SOLVER_BLOCK if slow else enumerated_block(ens, spec, PROGRESS_BLOCK)
        size = block_size(len(todo), ex.workers if ex is not None else 1, cap)
        if ex is not None and status is not None and len(todo):
            status(starting_workers(ex))
        blocks = answer_blocks(
            ens,
            data,
            spec,
            todo,
            size,
            run.timeout_per_row,
            executor=ex,
            max_candidates=run.max_candidates,
            memory_mb=run.memory_mb,
            work_per_row=run.work_per_row,
        )
        for idx, ans in blocks:
            new = [
                row_result(ens, spec, ans, i, r, data.X[r], run.timeout_per_row, run.work_per_row)
                for i, r in enumerate(idx)
            ]
            running.append("".join(json.dumps(d, allow_nan=False) + "\n" for d in new))
            lines += new
            if on_block is not None:
                on_block(new, len(lines))
    return lines


def rate_text(t0: float, answered: int, total: int, fresh: int) -> str:
    """How far an audit got: rows answered of all, at what rate (the rows asked since
    ``t0``, ``fresh``, not those --resume reused), and the time the rows left take at it."""
    seconds = max(time.time() - t0, 1e-9)
    left = f", about {_duration(seconds / fresh * (total - answered))} left" if fresh else ""
    if answered >= total:
        left = ""
    if fresh and seconds / fresh >= 1:  # rows the solver answers: seconds each
        return f"audit: {answered}/{total} rows ({seconds / fresh:.1f} s/row{left})"
    rate = fresh / seconds  # below 10 rows/s, a tenth: "1 rows/s" was 1.0 to 1.5 of them
    return f"audit: {answered}/{total} rows ({rate:.{1 if rate < 10 else 0}f} rows/s{left})"


def _duration(seconds: float) -> str:
    """A time to come, as a progress line rounds it: 40s, 12m, 1h 40m."""
    if seconds < 90:
        return f"{seconds:.0f}s"
    minutes = round(seconds / 60)
    return f"{minutes}m" if minutes < 90 else f"{minutes // 60}h {minutes % 60:02d}m"
