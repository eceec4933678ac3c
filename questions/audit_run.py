"""Running an audit over a data set, as ``treesens audit`` and an ``audit`` block of a
``.sens`` file do: skip the rows a results file already holds, answer the others a block
at a time (here or on an executor), append each block's lines to the file as it ends,
and return every row's line."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import numpy as np

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.question import result_gap
from ..readers.data import Dataset
from .audit import answer_blocks, block_size, row_result
from .audit_spec import AuditRun, AuditSpec, audit_reading
from .campaign import Campaign, opened
from .memory import refuse_over_limit
from .results_log import read_log

PROGRESS_BLOCK = 250  # rows per block: a block's lines are written before the next starts


def read_done(path: str | None) -> list[dict]:
    """The result lines of an earlier run (none when the file does not exist yet); a
    complete line that is not a row's result is an input error naming it."""

    def check(d, n: int) -> dict:
        where = f"--resume {path}"
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
    a regressor's change) and model (its format, file and bounds, which name the data
    they came from): a file another audit wrote would have its rows' verdicts taken for
    this one's."""
    gap, kind = result_gap(spec.target.gap, spec.target.delta)
    model = audit_reading(ens, spec.target).source
    for d in done:
        same = (
            d.get("features") == list(spec.vary)
            and d.get("gap") == gap
            and d.get("gap_kind", kind) == kind
            and d.get("model") == model
        )
        if not same:
            raise InputError(
                f"holds the answers of another audit (row {d.get('row')}: vary "
                f"{','.join(d.get('features') or [])}, gap {d.get('gap')}, model "
                f"{d.get('model')}); {hint}",
                where,
            )


def run_audit(
    ens: Ensemble,
    data: Dataset,
    spec: AuditSpec,
    run: AuditRun,
    on_block: Callable[[list[dict], int], None] | None = None,
) -> list[dict]:
    """Every audited row's result line (earlier ones from ``run.resume`` first). Each new
    block's lines reach ``run.out`` (or the resume file) before the next block is
    awaited; ``on_block(lines, answered so far)`` sees them too. A model that would pass
    the memory limit (``run.memory_mb``, else the default) is refused before any row
    (MemoryRefused)."""
    refuse_over_limit(ens, run.memory_mb)
    n = run.n_rows
    done = read_done(run.resume)
    check_same_audit(done, ens, spec, f"--resume {run.resume}")
    done = [d for d in done if int(d["row"]) < n]
    seen = {int(d["row"]) for d in done}
    todo = np.array([r for r in range(n) if r not in seen], dtype=int)
    lines = list(done)
    campaign = Campaign(run.executor, run.jobs, run.out, run.resume)
    with opened(campaign, work=len(todo) > 0) as running:
        ex = running.executor
        size = block_size(len(todo), ex.workers if ex is not None else 1, PROGRESS_BLOCK)
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
        )
        for idx, ans in blocks:
            new = [row_result(ens, spec, ans, i, r, data.X[r]) for i, r in enumerate(idx)]
            running.append("".join(json.dumps(d, allow_nan=False) + "\n" for d in new))
            lines += new
            if on_block is not None:
                on_block(new, len(lines))
    return lines


def rate_text(t0: float, answered: int, total: int, fresh: int) -> str:
    rate = fresh / max(time.time() - t0, 1e-9)
    return f"audit: {answered}/{total} rows ({rate:.0f} rows/s)"
