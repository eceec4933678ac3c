"""treesens audit MODEL --data ROWS.csv --vary F: which real rows flip when only F
changes, answered exactly row by row, with a summary table (and plot)."""

from __future__ import annotations

import json
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from ...compiler.errors import InputError
from ..audit import (
    TIMEOUT_PER_ROW,
    answer_blocks,
    by_column,
    format_summary,
    frame_from_results,
    make_spec,
    make_target,
    row_result,
    summary,
)
from ..audit_plot import draw
from ..data import load_data
from .common import (
    add_model_args,
    append_flushed,
    check_writable,
    close_quietly,
    load_from_args,
    log,
    os_error_text,
    positive_float,
    positive_int,
)

PROGRESS_BLOCK = 250  # rows per block: a block's lines are written before the next starts


def add_parser(sub) -> None:
    p = sub.add_parser(
        "audit",
        help="which rows of a data set flip when only some features change",
        description="For every row r of --data: is there an x2 equal to r outside the --vary "
        "features (within their bounds) that gets the other decision with the gap? Answered "
        "exactly (an x2 checked by the library's predict, or a proof by exhaustion).",
    )
    add_model_args(p)
    p.add_argument("--vary", required=True, metavar="NAMES", help="comma-separated features F")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--gap",
        type=float,
        default=None,
        help="binary: x2 has P <= 0.5-g (row decided 1) or P >= 0.5+g (row decided 0); "
        "default 0.2. Multiclass: x2's class has at least G times every other's probability "
        "(default 1)",
    )
    g.add_argument("--margin-gap", type=float, default=None, metavar="D", help="raw-score gap")
    p.add_argument(
        "--classes", default=None, metavar="C", help="multiclass: x2 must be class C (default any)"
    )
    p.add_argument(
        "--timeout-per-row",
        type=positive_float,
        default=TIMEOUT_PER_ROW,
        metavar="S",
        help="solver seconds for a row whose F has too many threshold cells to enumerate "
        f"(default {TIMEOUT_PER_ROW:g}); such rows are answered unknown past it",
    )
    p.add_argument("--by", default=None, metavar="COL", help="break the summary down by COL")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="first N rows")
    p.add_argument("--out", default=None, metavar="FILE", help="append one JSON line per row")
    p.add_argument(
        "--resume",
        default=None,
        metavar="FILE",
        help="skip the rows already in FILE (JSON lines of an earlier run) and append to it "
        "unless --out names another file",
    )
    p.add_argument("--plot", default=None, metavar="PNG", help="draw the summary (matplotlib)")
    p.add_argument("--json", action="store_true", help="print one JSON object per row")
    p.set_defaults(func=run)


def read_done(path: str | None) -> list[dict]:
    """The result lines of an earlier run (none when the file does not exist yet)."""
    if path is None or not Path(path).exists():
        return []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = os_error_text(e) if isinstance(e, OSError) else "not a text file"
        raise InputError(f"cannot read: {why}", f"--resume {path}") from None
    out = []
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            if not line.endswith("\n"):
                break  # a line cut short by an interrupt: answered again
            raise InputError(f"{path}:{n}: not a JSON line") from None
        if not isinstance(d, dict) or "row" not in d:
            raise InputError(f"{path}:{n}: a result line without 'row'")
        if isinstance(d["row"], bool) or not isinstance(d["row"], int) or d["row"] < 0:
            raise InputError(f"{path}:{n}: 'row' is {d['row']!r}, not a row number")
        out.append(d)
    return out


def check_outputs(args) -> None:
    """Fail before any row is answered when a file the audit writes cannot be written."""
    for flag in ("out", "resume", "plot"):
        path = getattr(args, flag)
        if path is not None:
            check_writable(f"--{flag} {path}", Path(path))


def run(args) -> int:
    if args.data is None:
        raise InputError("audit needs the rows: --data FILE")
    check_outputs(args)
    ens = load_from_args(args)
    ds = load_data(args.data, ens, args.label)
    spec = make_spec(ens, ds, args.vary, make_target(ens, args.gap, args.margin_gap, args.classes))
    by = by_column(ds, ens, args.by, args.label)
    n = ds.n_rows if args.limit is None else min(args.limit, ds.n_rows)
    done = [d for d in read_done(args.resume) if int(d["row"]) < n]
    seen = {int(d["row"]) for d in done}
    todo = np.array([r for r in range(n) if r not in seen], dtype=int)
    out_path = args.out or args.resume
    lines = list(done)
    t0 = time.time()
    if out_path and Path(out_path).exists() and out_path == args.resume:
        _drop_cut_line(out_path)
    with ExitStack() as stack:
        out = open_results(out_path) if out_path else None
        if out:
            stack.callback(close_quietly, out)
        for idx, ans in answer_blocks(ens, ds, spec, todo, PROGRESS_BLOCK, args.timeout_per_row):
            block = [row_result(ens, spec, ans, i, r, ds.X[r]) for i, r in enumerate(idx.tolist())]
            text = "".join(json.dumps(d, allow_nan=False) + "\n" for d in block)
            if out:
                append_flushed(out, text, out_path)
            if args.json:
                sys.stdout.write(text)
                sys.stdout.flush()
            lines += block
            if not args.json and len(todo) > PROGRESS_BLOCK:
                rate = (len(lines) - len(done)) / max(time.time() - t0, 1e-9)
                log(f"audit: {len(lines)}/{n} rows ({rate:.0f} rows/s)")
    df = frame_from_results(lines, spec.vary, by)
    table = summary(df, args.by)
    if not args.json:
        print(
            f"audit of {ens.source}: vary {spec.label}, {spec.target.gap.kind} gap "
            f"{spec.target.gap.value:g}, {n} rows ({time.time() - t0:.1f}s)"
        )
        print(format_summary(table))
    if args.plot:
        try:
            draw(df, table, args.by, spec, args.plot)
        except OSError as e:
            raise InputError(f"cannot write: {os_error_text(e)}", f"--plot {args.plot}") from None
    return 0


def open_results(path: str):
    """The results file, opened for appending (an input error naming it if it cannot be)."""
    try:
        return open(path, "a")  # noqa: SIM115 - the caller closes it
    except OSError as e:
        raise InputError(f"cannot write: {os_error_text(e)}", path) from None


def _drop_cut_line(path: str) -> None:
    """Remove a last line an interrupt cut short, so that appending starts cleanly."""
    try:
        data = Path(path).read_bytes()
        if data and not data.endswith(b"\n"):
            Path(path).write_bytes(data[: data.rfind(b"\n") + 1])
    except OSError as e:
        raise InputError(f"cannot rewrite its last line: {os_error_text(e)}", path) from None
