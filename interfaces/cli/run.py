"""treesens run FILE.sens: answer every query of a query file (or one of them)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import replace

from ...answers.result import ERROR
from ...compiler.errors import InputError
from ...compiler.query import Query
from ...language import load_queries
from ...questions.ask import solving_with
from ...questions.executors import parse_executor
from ...questions.memory import MemoryRefused
from ...readers.load_notes import saying
from ..sens_run import audit_report, run_audits, run_queries
from .common import (
    add_run_limits,
    emit_result,
    log,
    positive_float,
    positive_int,
    what_is_asked,
    what_it_predicts,
)

# how a probability model is asked in its other reading in a .sens file (a file's blocks
# may ask both)
SENS_OTHER_READING = {
    True: "a binary classifier with a gap",
    False: "a regressor with 'gap delta D' or 'gap above A below B'",
}

HELP = "run the queries of a .sens file"
DESCRIPTION = """
Run every query (and sweep) of a .sens query file, printing one result per query. Exit code 1 if
any query ended in error, 2 if the file is bad.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE.sens", help="the query file (see docs/language.md)")
    p.add_argument(
        "--query",
        metavar="NAME",
        action="append",
        default=None,
        help="run only this query, or every query of this sweep (repeatable, or NAME,NAME: "
        "those named, in the file's order within each)",
    )
    add_run_limits(p, "every query's time limit")
    p.add_argument(
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help="queries of a sweep run at once (overrides the file's 'jobs'; default 1)",
    )
    p.add_argument(
        "--budget",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="the seconds each sweep's queries take in all, each still within its time "
        "limit (overrides the file's 'budget'): a short first pass, then the queries it "
        "left open asked again with the time left (docs/language.md, Sweeps)",
    )
    p.add_argument(
        "--executor",
        default=None,
        metavar="KIND[=ADDRESS]",
        help="where a sweep's queries run: local (a process pool of --jobs processes), "
        "dask[=ADDRESS] or ray[=ADDRESS] (docs/distributed.md)",
    )
    p.add_argument(
        "--list", action="store_true", help="list the file's queries and stop (no solving)"
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object per query (JSON Lines)"
    )


def query_names(given: list[str] | None) -> list[str | None]:
    """The blocks --query names (each given, split at commas), or [None]: every one."""
    if not given:
        return [None]
    return list(dict.fromkeys(n.strip() for g in given for n in g.split(",") if n.strip()))


def run(args) -> int:
    if args.timeout is not None and not args.timeout > 0:
        raise InputError(f"--timeout must be positive, got {args.timeout}")
    if args.executor:
        parse_executor(args.executor)  # a wrong spec fails before anything runs
    t0 = time.time()
    with saying(None if args.json else log):  # a long load and its steps, on stderr
        sf = load_queries(args.file)
    names = query_names(args.query)
    queries = list({q.name: q for n in names for q in sf.select(n)}.values())
    ens = sf.ensemble
    if args.timeout is not None:
        queries = [q.planned(timeout=args.timeout) for q in queries]
    if args.work is not None:
        queries = [q.planned(work=args.work) for q in queries]
    audits = list({id(p): p for n in names for p in sf.select_audits(n)}.values())
    if args.work is not None:  # an audit's: each row's budget
        audits = [replace(p, run=replace(p.run, work_per_row=args.work)) for p in audits]
    if args.list:
        for q in queries:
            print(_listing(q))
        for plan in audits:
            print(plan.listing())
        return 0
    if not args.json:
        log(
            f"{args.file}: {ens.source}: {len(ens.trees)} trees, {ens.n_features} features, "
            f"{what_it_predicts(ens, SENS_OTHER_READING)}; {len(queries)} quer{'y' if len(queries) == 1 else 'ies'}"
            f"{f', {len(audits)} audit' + 's' * (len(audits) > 1) if audits else ''} "
            f"({time.time() - t0:.2f}s)"
        )
    counts: dict[str, int] = {}
    on_start = _starting(ens, len(queries), quiet=args.json)

    def on_result(res) -> None:
        counts[res.status] = counts.get(res.status, 0) + 1
        emit_result(res, args.json, ens)

    where = {"jobs": args.jobs, "executor": args.executor}  # for queries and audits alike
    try:
        run_queries(
            sf, queries, memory_mb=args.memory_mb, budget=args.budget,
            on_start=on_start, on_result=on_result, note=log, **where,
        )  # fmt: skip
    except KeyboardInterrupt as e:  # the answer so far of the query in flight, then the end
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            on_result(partial)
        raise
    try:
        run_audits(
            sf,
            audits,
            **where,
            timeout=args.timeout,
            memory_mb=args.memory_mb,
            on_block=lambda _plan, lines: _print_rows(lines) if args.json else None,
            on_audit=lambda plan, lines, s: (
                None if args.json else print(audit_report(ens, plan, lines, s))
            ),
            note=lambda m: log(f"note: {m}"),
        )
    except MemoryRefused as e:  # as a refused query: an error, exit 1
        log(f"error: {e}")
        counts[ERROR] = counts.get(ERROR, 0) + 1
    if not args.json:
        answered = [f"{n} {s}" for s, n in sorted(counts.items())]
        if audits:  # their rows are in their own reports above
            answered.append(f"{len(audits)} audit{'s' * (len(audits) > 1)}")
        log(f"done: {', '.join(answered)} ({time.time() - t0:.1f}s)")
    return 1 if counts.get(ERROR) else 0


def _starting(ens, total: int, quiet: bool) -> Callable[[Query], None]:
    """The line a query gets as it starts (none when ``quiet``): its number of
    ``total``; one a sweep's budget asks again keeps its number."""
    numbers: dict[str, int] = {}

    def on_start(q: Query) -> None:
        again = "again, " if q.name in numbers else ""
        n = numbers.setdefault(q.name, len(numbers) + 1)
        if not quiet:
            log(
                f"[{n}/{total}] {q.name}: {again}solving with {solving_with(ens, q)} "
                f"(time limit {q.plan.timeout:g}s)..."
            )

    return on_start


def _print_rows(lines: list[dict]) -> None:
    sys.stdout.write("".join(json.dumps(d, allow_nan=False) + "\n" for d in lines))
    sys.stdout.flush()


def _listing(q) -> str:
    """One line per query for --list: what it asks, tab-separated."""
    parts = [q.name, f"vary {','.join(q.vary)}", what_is_asked(q)]
    if q.classes:
        parts.append(f"classes {q.classes[0]},{q.classes[1]}")
    n = len(q.bounds) + len(q.relations)
    if n:
        parts.append(f"{n} constraint{'s' if n > 1 else ''}")
    parts += [f"backend {q.plan.backend}", f"timeout {q.plan.timeout:g}s"]
    return "\t".join(parts)
