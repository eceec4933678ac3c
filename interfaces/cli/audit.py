"""treesens audit MODEL --data ROWS.csv --vary F: which real rows flip when only F
changes, answered exactly row by row, with a summary table (and plot)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ...compiler.errors import InputError
from ...questions.audit import (
    TIMEOUT_PER_ROW,
    by_column,
    flip_to,
    frame_from_results,
    make_spec,
    make_target,
    report_text,
    summary,
    unproven_rows,
)
from ...questions.audit_run import AuditRun, rate_text, run_audit
from ...questions.audit_solve import keeping_row_proofs, work_used_text
from ...questions.audit_spec import audit_reading
from ...questions.certificate_document import refuse_budget_alone, refuse_rows_alone
from ...questions.executors import parse_executor
from ...questions.output_folder import os_error_text
from ...readers.data import load_data, say_data_notes
from ...views.audit_plot import draw
from .check import add_certify_budget_arg
from .common import (
    AUDIT_OTHER_READING,
    GivenOnce,
    add_memory_arg,
    add_model_args,
    check_results_log_name,
    check_writable,
    kept_line,
    load_from_args,
    log,
    number,
    positive_float,
    positive_int,
    what_it_predicts,
    work_budget,
)

HELP = "which rows of a data set flip when only some features change"
DESCRIPTION = """
For every row r of --data: is there an x2 equal to r outside the --vary features (within their
bounds) that gets the other decision with the gap? Answered exactly (an x2 checked by the
library's predict, or a proof by exhaustion).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    p.add_argument(
        "--vary",
        action=GivenOnce,
        required=True,
        metavar="NAMES",
        help="comma-separated features F",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--gap",
        type=number,
        default=None,
        help="binary: x2 has P <= 0.5-g (row decided 1) or P >= 0.5+g (row decided 0); "
        "default 0.2. Multiclass: x2's class has at least G times every other's probability "
        "(default 1)",
    )
    g.add_argument("--margin-gap", type=number, default=None, metavar="D", help="raw-score gap")
    g.add_argument(
        "--delta",
        type=number,
        default=None,
        metavar="D",
        help="regressors: x2's prediction is at least D from the row's (see --direction)",
    )
    p.add_argument(
        "--direction",
        choices=("up", "down", "either"),
        default=None,
        help="regressors, with --delta: how the prediction moves from the row (x1) to x2: "
        "up (at least D above the row's), down (below) or either (the default)",
    )
    p.add_argument(
        "--classes", default=None, metavar="C", help="multiclass: x2 must be class C (default any)"
    )
    add_row_limit_args(p)
    p.add_argument(
        "--by",
        action=GivenOnce,
        default=None,
        metavar="COL",
        help="break the summary down by COL: any column of --data (a feature, the label, or "
        "a column the model does not use, such as a protected attribute kept out of it)",
    )
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="first N rows")
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="append one JSON line per row (a file holding another audit's lines is noted)",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="FILE",
        help="skip the rows already in FILE (JSON lines of an earlier run) and append to it "
        "unless --out names another file",
    )
    p.add_argument("--plot", default=None, metavar="PNG", help="draw the summary (matplotlib)")
    p.add_argument("--json", action="store_true", help="print one JSON object per row")
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help="blocks of rows answered at once, each by one worker process (default 1)",
    )
    p.add_argument(
        "--executor",
        default=None,
        metavar="KIND[=ADDRESS]",
        help="where the blocks run: local (a process pool of --jobs processes), "
        "dask[=ADDRESS] or ray[=ADDRESS], as for sweep (docs/distributed.md); rows reach "
        "--out as their block ends",
    )
    p.add_argument(
        "--certificates",
        default=None,
        metavar="DIR",
        help="write a certificate of each row that does not flip into DIR (row-N.json, N "
        "its index in --data) and check it with the independent checker of `treesens "
        "verify` (docs/certificates.md); a flipped row keeps its witness",
    )
    add_certify_budget_arg(p, "--timeout-per-row")
    add_certify_row_args(p)
    add_memory_arg(p)


def add_row_limit_args(p: argparse.ArgumentParser) -> None:
    """--timeout-per-row and --work: what ends a row past the enumeration."""
    p.add_argument(
        "--timeout-per-row",
        type=positive_float,
        default=TIMEOUT_PER_ROW,
        metavar="S",
        help="solver seconds for a row whose F has too many threshold cells to enumerate "
        f"(default {TIMEOUT_PER_ROW:g}); such rows are answered unknown past it",
    )
    p.add_argument(
        "--work",
        type=work_budget,
        default=None,
        metavar="N",
        help="a work budget per row (work units, e.g. 10k), as an audit block's work N: "
        "each row past the enumeration, and a flipped row's search of its smallest change, "
        "end on counted work, not the clock, so the rows' answers do not depend on the "
        "machine's load; the report ends with what the rows used (docs/audit.md). "
        "--timeout-per-row stays as a safety net",
    )


def add_certify_row_args(p: argparse.ArgumentParser) -> None:
    """--certify-rows and --certify-timeout: how many of an audit's rows that do not flip
    are certified (``certify_rows``'s ``limit`` and ``seconds``), for ``treesens audit``
    and a .sens file's audit blocks under ``treesens test``."""
    p.add_argument(
        "--certify-rows",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --certificates: certify the first N rows that do not flip (of each audit "
        "block), the rest listed as not tried (default: every row)",
    )
    p.add_argument(
        "--certify-timeout",
        type=positive_float,
        default=None,
        metavar="S",
        help="with --certificates: begin rows' certificates only for S seconds in all (of each "
        "audit block), each row within what is left; the rest are listed as not tried, "
        "saying why (default: no limit)",
    )


# how to have more rows certified than a bound of the command line let it try
UNTRIED_HINTS = {
    "only the first": "--certify-rows N tries the first N rows",
    "given to certificates": "--certify-timeout S gives them S seconds",
}


def untried_hint(text: str) -> str:
    """The flag that asks more rows of what ``certified_text`` says was left untried ("":
    none was)."""
    for words, hint in UNTRIED_HINTS.items():
        if "not attempted: " in text and words in text:
            return f" ({hint})"
    return ""


def check_outputs(args) -> None:
    """Fail before any row is answered when a file the audit writes cannot be written."""
    for flag in ("out", "resume"):
        if (path := getattr(args, flag)) is not None:
            check_results_log_name(f"--{flag}", path)
    for flag in ("out", "resume", "plot"):
        path = getattr(args, flag)
        if path is not None:
            check_writable(f"--{flag} {path}", Path(path))
    if args.certificates is not None and Path(args.certificates).is_file():
        raise InputError(f"--certificates {args.certificates}: a file, not a folder")


def run(args) -> int:
    if args.data is None:
        raise InputError("audit needs the rows: --data FILE")
    check_outputs(args)
    refuse_budget_alone(args.certify_budget, args.certificates, "certificates")
    refuse_rows_alone("--certify-rows", args.certify_rows, args.certificates)
    refuse_rows_alone("--certify-timeout", args.certify_timeout, args.certificates)
    if args.executor:
        parse_executor(args.executor)  # a wrong spec fails before anything runs
    ens = load_from_args(args)
    ds = load_data(args.data, ens, args.label)
    say_data_notes(ds)
    spec = make_spec(
        ens,
        ds,
        args.vary,
        make_target(
            ens, args.gap, args.margin_gap, args.classes, delta=args.delta, direction=args.direction
        ),
    )
    if ens.probability:  # which reading answers, and how to ask the other
        log(f"note: {what_it_predicts(audit_reading(ens, spec.target), AUDIT_OTHER_READING)}")
    by = by_column(ds, ens, args.by, args.label)
    n = ds.n_rows if args.limit is None else min(args.limit, ds.n_rows)
    run_spec = AuditRun(
        n_rows=n,
        out=args.out,
        resume=args.resume,
        timeout_per_row=args.timeout_per_row,
        work_per_row=args.work,
        jobs=args.jobs,
        executor=args.executor,
        memory_mb=args.memory_mb,
    )
    t0 = time.time()
    fresh = [0]

    def on_block(new: list[dict], answered: int) -> None:
        fresh[0] += len(new)
        if args.json:
            sys.stdout.write("".join(json.dumps(d, allow_nan=False) + "\n" for d in new))
            sys.stdout.flush()
        elif len(new) < n:  # rows come in blocks: say how far it got
            log(rate_text(t0, answered, n, fresh[0]))

    # MemoryRefused: one line, exit 2; a row the box search proves keeps its proof for
    # its certificate (questions/audit_solve.py)
    with keeping_row_proofs(args.certificates is not None):
        note, status = (lambda m: log(f"note: {m}")), (lambda m: log(f"audit: {m}"))
        try:
            lines = run_audit(ens, ds, spec, run_spec, on_block, note=note, status=status)
        except KeyboardInterrupt:  # Ctrl-C or a signal: where the rows answered are
            if (kept := kept_line(args, "audit")) is not None:
                log(kept)
            raise
        if args.certificates is not None:
            _certify(args, ens, spec, ds, lines)
    df = frame_from_results(lines, spec.vary, by, flip_to(ens, spec.target))
    table = summary(df, args.by)
    if not args.json:
        print(report_text(ens, spec, n, time.time() - t0, table, unproven_rows(df)))
        if used := work_used_text(lines):  # what the rows used, a budget sized from
            print(used)
    if args.plot:
        try:
            draw(df, table, args.by, spec, args.plot)
        except OSError as e:
            raise InputError(f"cannot write: {os_error_text(e)}", f"--plot {args.plot}") from None
    return 0


def _certify(args, ens, spec, ds, lines: list[dict]) -> None:
    """A certificate of each row that does not flip (questions/audit_certificates.py)."""
    from ...questions.audit_certificates import certified_text, certify_rows  # the checker

    budget = args.certify_budget if args.certify_budget is not None else args.timeout_per_row
    bounds = {"limit": args.certify_rows, "seconds": args.certify_timeout, "progress": log}
    bounds["work"] = args.work  # each row's work budget ends its certificate's search too
    outcome = certify_rows(
        ens, spec, ds.X, lines, args.certificates, args.model, budget, args.memory_mb, log, **bounds
    )
    text = certified_text(outcome, args.certificates)
    log(text + untried_hint(text))
