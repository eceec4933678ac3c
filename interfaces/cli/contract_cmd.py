"""treesens test FILE.sens: check the expectations of a query file, as a CI step."""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...compiler.errors import InputError
from ...questions.certificate_document import refuse_rows_alone
from ...questions.contract import ERROR, FAIL, PASS, UNKNOWN, Outcome
from ...readers.load_notes import saying
from ...views.junit import junit_xml
from ..sens_contract import load_contract, run_contract
from .audit import add_certify_row_args, untried_hint
from .common import add_run_limits, log

HELP = "check the expectations of a .sens file (a model's contract, for CI)"
DESCRIPTION = """
Answer every query, sweep and audit of a .sens file that says what must hold (expect
insensitive, expect sensitive, expect max gap <= L, expect audit flippable <= L%) and print
one line per expectation: PASS, FAIL (with the replay-checked pair or the count that breaks
it) or UNKNOWN (a time limit: what was proven so far). Exit code 0 when every expectation
holds, 1 when one fails (an UNKNOWN fails unless the file says 'or unknown'), 2 on bad
input. docs/testing.md.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.sens", help="the contract (see docs/testing.md)")
    p.add_argument(
        "--model", metavar="M", default=None, help="test this model instead of the file's"
    )
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="load a joblib/pickle model (--model's, or the file's), which runs code while "
        "it loads (only files you trust; .skops files need no trust)",
    )
    p.add_argument(
        "--data",
        metavar="D",
        default=None,
        help="use this data instead of the file's data line (the rows of the audits that "
        "name no data of their own)",
    )
    p.add_argument(
        "--junit",
        metavar="OUT.xml",
        default=None,
        help="write JUnit XML (one test case per expectation), rewritten as each "
        "expectation ends (a killed run leaves the report of those that finished); stdout "
        "then has only the summary line (add -v for the others)",
    )
    p.add_argument(
        "--certificates",
        metavar="DIR",
        default=None,
        help="write a certificate of each passing expectation proven by 'insensitive' "
        "(expect insensitive, expect max gap) into DIR, and one of each row an audit "
        "block's expectation finds does not flip, DIR/NAME.rows/row-N.json "
        "(docs/certificates.md)",
    )
    add_certify_row_args(p)
    p.add_argument(
        "--query", metavar="NAME", default=None, help="only the expectations of this block"
    )
    add_run_limits(p, "every query's time limit and every audit's time per row")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print each expectation's full answer (the witness table, the audit's "
        "counts); with --junit, print the lines too",
    )


def run(args) -> int:
    if args.timeout is not None and not args.timeout > 0:
        raise InputError(f"--timeout must be positive, got {args.timeout}")
    if args.junit is not None:
        _check_writable(args.junit, "--junit")
    if args.certificates is not None and Path(args.certificates).is_file():
        raise InputError(f"--certificates {args.certificates}: a file, not a folder")
    refuse_rows_alone("--certify-rows", args.certify_rows, args.certificates)
    refuse_rows_alone("--certify-timeout", args.certify_timeout, args.certificates)
    t0 = time.time()
    with saying(log):  # a long load and its steps, on stderr
        sf = load_contract(
            args.file,
            model=args.model,
            data=args.data,
            trust_pickle=args.trust_pickle,
        )
    lines = args.junit is None or args.verbose
    report = None
    if args.junit is not None:
        report = JUnitFile(Path(args.junit), args.file, t0, _properties(sf))
        report.write()  # a valid report from the start: no expectation finished yet

    def shown(out: Outcome) -> None:
        if report is not None:
            report.add(out)
        if not lines and not out.ok:  # the CI log says what failed; stdout stays quiet
            print(out.line(), file=sys.stderr, flush=True)
        if not lines and unwritten_certificate(out):  # and why DIR lacks a certificate
            print(f"{out.name}: {unwritten_certificate(out)}", file=sys.stderr, flush=True)
        if lines:
            print(out.line(), flush=True)
            if args.verbose and out.detail:
                print(_indented(out.detail), flush=True)
            if out.certificate:  # a query's file (or why none), an audit's count of rows
                said = out.certificate
                rows = said.startswith("certificates:")
                said = said + untried_hint(said) if rows else f"certificate: {said}"
                print(f"        {said}", flush=True)

    outcomes = run_contract(
        sf,
        query=args.query,
        timeout=args.timeout,
        work=args.work,
        memory_mb=args.memory_mb,
        certificates=args.certificates,
        on_outcome=shown,
        certify_rows=args.certify_rows,
        certify_timeout=args.certify_timeout,
        note=log,
    )
    seconds = time.time() - t0
    if report is not None:
        report.outcomes = list(outcomes)
        report.write()
    print(summary_line(args.file, outcomes, seconds), flush=True)
    return 0 if all(o.ok for o in outcomes) else 1


VERDICTS = (PASS, FAIL, UNKNOWN, ERROR)


@dataclass
class JUnitFile:
    """The --junit report, rewritten whole as each expectation ends: written beside
    itself and renamed over it, so that the file is always a complete report (of the
    expectations finished so far) whenever the run is killed."""

    path: Path
    suite: str  # the .sens file as given
    t0: float
    properties: dict[str, str]
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, out: Outcome) -> None:
        self.outcomes.append(out)
        self.write()

    def write(self) -> None:
        xml = junit_xml(
            self.outcomes,
            suite=self.suite,
            classname=Path(self.suite).stem,
            seconds=time.time() - self.t0,
            properties=self.properties,
        )
        part = self.path.with_name(f".{self.path.name}.{os.getpid()}.part")
        try:
            part.write_text(xml, encoding="utf-8")
            os.replace(part, self.path)
        except OSError as e:
            part.unlink(missing_ok=True)
            raise InputError(f"--junit {self.path}: cannot write it ({e.strerror})") from None


def _properties(sf) -> dict[str, str]:
    return {"model": str(sf.model_path), "data": str(sf.data_path or "")}


def unwritten_certificate(out: Outcome) -> str | None:
    """What the terminal says of an expectation whose certificate was asked and not
    written (a query's reason, an audit's rows not all certified), else None."""
    said = out.certificate
    if not said:
        return None
    if said.startswith("certificates:"):
        done, _, rest = said.removeprefix("certificates: ").partition(" of ")
        total = rest.split(" ", 1)[0]
        return None if done == total else said + untried_hint(said)
    return None if Path(said).is_file() else f"certificate: {said}"


def summary_line(file: str, outcomes: list[Outcome], seconds: float) -> str:
    """``FILE: 5 expectations: 4 passed, 1 failed (12.3s)``."""
    n = {v: sum(o.verdict == v and not o.skipped for o in outcomes) for v in VERDICTS}
    parts = [
        f"{n[PASS]} passed",
        *([f"{n[FAIL]} failed"] if n[FAIL] else []),
        *([f"{n[UNKNOWN]} unknown"] if n[UNKNOWN] else []),
        *([f"{n[ERROR]} error{'s' * (n[ERROR] > 1)}"] if n[ERROR] else []),
    ]
    allowed = sum(o.skipped for o in outcomes)
    if allowed:
        parts.append(f"{allowed} unknown (allowed)")
    verdict = "ok" if all(o.ok for o in outcomes) else "FAILED"
    count = f"{len(outcomes)} expectation{'s' * (len(outcomes) != 1)}"
    return f"{file}: {verdict}: {count}: {', '.join(parts)} ({seconds:.1f}s)"


def _indented(text: str) -> str:
    return "\n".join("        " + line for line in text.splitlines())


def _check_writable(path: str, flag: str) -> None:
    """The report's file can be written: not a folder; its folder is made (as pytest's
    --junitxml makes it)."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{flag} {path}: a folder, not a file")
    try:
        p.resolve().parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{flag} {path}: cannot make its folder ({e.strerror})") from None
