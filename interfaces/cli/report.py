"""treesens report MODEL --data ROWS.csv --out report.html: the auditor's deliverable, one
self-contained HTML page (questions/report.py gathers it, views/report_html.py draws it)."""

from __future__ import annotations

import argparse
import shlex
from functools import partial
from pathlib import Path

from ...compiler.errors import InputError
from ...questions.certificate_document import refuse_budget_alone, refuse_rows_alone
from ...questions.report import (
    CERTIFY_SECONDS,
    DEFAULT_BUDGET,
    DEFAULT_GAP,
    report,
    results_logs,
)
from ...views.progress import sweep_progress
from ...views.report_html import check_report_path, render
from .check import add_certify_budget_arg
from .common import (
    GivenOnce,
    add_model_args,
    check_writable,
    load_from_args,
    log,
    number,
    positive_float,
    positive_int,
)

HELP = "an HTML report: features ranked by max gap, protected features checked and audited"
DESCRIPTION = """
Rank every feature by its max gap, check each --protected feature globally (with a witness pair
near the data) and audit the rows of --data by group and by decision; write one self-contained
HTML page (no network, images inline).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    p.add_argument(
        "--out",
        required=True,
        metavar="FILE.html",
        help="the report file to write: an HTML page, so its name ends in .html or .htm",
    )
    p.add_argument(
        "--features", action=GivenOnce, default=None, metavar="NAMES", help="rank only these"
    )
    p.add_argument(
        "--protected",
        action=GivenOnce,
        default="",
        metavar="NAMES",
        help="comma-separated protected features (default none: the page ranks the features only)",
    )
    p.add_argument(
        "--gap",
        type=number,
        default=None,
        help=f"the gap asked of the protected features (default {DEFAULT_GAP:g}; a multiclass "
        "model's: a probability ratio, needed)",
    )
    p.add_argument(
        "--delta",
        type=positive_float,
        default=None,
        metavar="D",
        help="regressors: the change of the prediction asked of the protected features "
        "(instead of --gap)",
    )
    p.add_argument("--classes", default=None, metavar="C1,C2", help="multiclass: the class pair")
    p.add_argument(
        "--budget",
        type=positive_float,
        default=DEFAULT_BUDGET,
        metavar="S",
        help=f"total time in seconds, shared between the steps (default {DEFAULT_BUDGET:g})",
    )
    p.add_argument(
        "--results",
        default=None,
        metavar="JSONL",
        help="keep the answers beside this path (NAME.rank.jsonl, NAME.checks.jsonl) and "
        "reuse them when run again (default: beside --out)",
    )
    p.add_argument(
        "--certificates",
        default=None,
        metavar="DIR",
        help="write the proof of each protected feature's insensitive answer to DIR and "
        "check it with the independent checker of `treesens verify` (docs/certificates.md); "
        "the page says which were certified, and lists those that were not",
    )
    add_certify_budget_arg(p, f"{CERTIFY_SECONDS:g}")
    p.add_argument(
        "--certify-rows",
        type=positive_int,
        default=None,
        metavar="N",
        help="with --certificates: certify the first N audited rows that do not flip of each "
        "protected feature, whatever the time (default: as many as the --budget leaves time "
        "for; the page says how many were certified of how many, and why the rest were not)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress display")


def _names(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [n.strip() for n in text.split(",") if n.strip()]


def run(args) -> int:
    out = Path(args.out)
    check_writable(f"--out {out}", out)
    check_report_path(out, f"--out {out}")
    if args.certificates is not None and Path(args.certificates).is_file():
        raise InputError(f"--certificates {args.certificates}: a file, not a folder")
    refuse_budget_alone(args.certify_budget, args.certificates, "certificates")
    refuse_rows_alone("--certify-rows", args.certify_rows, args.certificates)
    if args.data is None:
        raise InputError("report needs --data ROWS.csv: the rows it audits")
    results = Path(args.results) if args.results else out.with_suffix(".jsonl")
    ens = load_from_args(args)
    try:
        rep = _report(args, ens, results)
    except KeyboardInterrupt:  # Ctrl-C or a signal: where what was answered is
        if kept := [str(p) for p in results_logs(results) if p.is_file()]:
            log(
                f"the answers so far are in {' and '.join(kept)}: the same command run again "
                "reuses them"
            )
        raise
    out.write_text(render(rep), encoding="utf-8")
    log(f"report written to {out} ({rep.seconds:.0f}s)")
    for line in rep.unanswered:
        log(f"not answered: {line}")
    return 0


def _report(args, ens, results: Path):
    """The report the flags ask for, its answers kept in the logs beside ``results``."""
    return report(
        ens,
        args.data,
        label=args.label,
        features=_names(args.features),
        protected=_names(args.protected) or [],
        gap=args.gap,
        classes=args.classes,
        delta=args.delta,
        budget=args.budget,
        results=results,
        command=shlex.join(["treesens", *args.argv]),
        model_file=args.model,
        progress=partial(sweep_progress, enabled=not args.no_progress),
        note=log,
        certificates=args.certificates,
        certify_budget=CERTIFY_SECONDS if args.certify_budget is None else args.certify_budget,
        certify_rows=args.certify_rows,
    )
