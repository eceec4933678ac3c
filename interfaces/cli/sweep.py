"""treesens sweep MODEL: every single feature, or subsets of k features, one query each."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ...answers.result import ERROR, UNKNOWN
from ...compiler.errors import InputError, name_list
from ...compiler.kinds import resolve_condition
from ...compiler.readings import read_for
from ...questions.campaign import Campaign, sweep_campaign
from ...questions.certificate_document import refuse_budget_alone
from ...questions.cores import THREADS_CAPPED
from ...questions.executors import parse_executor
from ...questions.memory import refuse_file_over_limit, refuse_over_limit
from ...questions.query_build import require_backend
from ...questions.results_log import refuse_other_file
from ...questions.sweep import (
    by_max_gap,
    feature_subsets,
    held_features,
    held_reason,
    parse_shard,
    shard_of,
    table_rows,
    to_csv,
    to_markdown,
)
from ...questions.sweep_budget import budget_advice
from ...questions.sweep_certs import SweepCertificates
from ...views.console import output_console
from ...views.progress import skipped_for_memory, sweep_progress
from .check import add_certify_budget_arg
from .common import (
    GivenOnce,
    add_backend_arg,
    add_max_gap_args,
    add_model_args,
    add_query_args,
    check_data,
    check_results_log_name,
    check_writable,
    flag_constraints,
    kept_line,
    load_from_args,
    log,
    positive_float,
    positive_int,
    query_maker_from_args,
    told_by_flag,
    what_it_predicts,
)
from .interrupts import raise_if_interrupted
from .plot import add_plot_arg, check_plot_arg, write_sweep_plot

HELP = "one query per feature (or per subset of k features) of a model"
DESCRIPTION = """
Which features can flip the decision? Streams a result per query as it ends and prints a table
at the end. With --json, stdout holds a result per query of the sweep, those reused by --resume
first.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    add_query_args(p, vary_required=False, vary_listed=False)
    add_backend_arg(p)
    p.add_argument(
        "--subsets",
        type=int,
        default=1,
        metavar="K",
        help="size of the feature subsets (default 1)",
    )
    p.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="a random sample of N subsets, drawn with --seed",
    )
    p.add_argument(
        "--features",
        action=GivenOnce,
        default=None,
        metavar="NAMES",
        help="sweep only these features (comma-separated)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE.jsonl",
        help="append each result to this JSON Lines file as it ends (what it holds stays: "
        "--resume goes on from it; a new sweep wants a new file, and a file holding another "
        "model's results is warned of; with --resume: the same file or none)",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="FILE.jsonl",
        help="reuse the results in FILE that answer the same question (the same model, by "
        "content and bounds wherever its file is; feature set, gap (a regressor's delta and "
        "direction, or threshold), classes, passes, backend, data content and data-aware settings): sensitive and insensitive always, unknown only if its time limit was at "
        "least --timeout; errors and the rest are run again (and left out of the table); "
        "new results are appended to FILE",
    )
    p.add_argument(
        "--table",
        choices=["terminal", "markdown", "csv", "none"],
        default="terminal",
        help="the final table's format (default terminal; printed to stderr with --json)",
    )
    p.add_argument(
        "--table-out",
        default=None,
        metavar="FILE",
        help="also write the final table to FILE: CSV for a name ending in .csv, Markdown for "
        ".md, .txt or no suffix (whatever --table shows)",
    )
    p.add_argument(
        "--budget",
        type=positive_float,
        default=None,
        metavar="SECONDS",
        help="the seconds the sweep's queries take in all, each still within --timeout: a "
        "first pass gives each query a short time (a quarter of the budget, shared out), and "
        "those it leaves open (a max gap not proven, an unknown) are asked again, from the "
        "start, with the time left (docs/max-gap.md, 'A sweep within a budget')",
    )
    add_executor_args(p)
    add_plot_arg(p, "the sweep plot (a bar per query, coloured by verdict, as long as its gap)")
    add_max_gap_args(p)
    p.add_argument(
        "--certificates",
        default=None,
        metavar="DIR",
        help="write the box search's proof of each insensitive answer to DIR/QUERY.json "
        "and check it with the independent checker of `treesens verify` "
        "(docs/certificates.md); the table's proof column says which were certified",
    )
    add_certify_budget_arg(p, "each query's --timeout")


# where the queries run (docs/distributed.md): flag, metavar, help
EXECUTOR_FLAGS = (
    (
        "--jobs",
        "N",
        "queries run at once, each with one solver thread (default 1; with --executor "
        "dask/ray and no address: the workers of the local cluster, default every core)",
    ),
    (
        "--executor",
        "KIND[=ADDRESS]",
        "local (a process pool of --jobs processes), dask[=ADDRESS] (a dask.distributed "
        "scheduler, e.g. tcp://host:8786; none: a local cluster) or ray[=ADDRESS] (e.g. auto; "
        "none: a local Ray); results reach --out in completion order, the table is in "
        "query order",
    ),
    (
        "--shard",
        "I/N",
        "run only shard I of N (0 <= I < N) of the sweep's queries, e.g. a job array's "
        "task; concatenate the shards' --out files and --resume from them to merge",
    ),
)


def add_executor_args(p) -> None:
    """Where the queries run: --jobs, --executor, --shard (docs/distributed.md)."""
    for flag, metavar, help_text in EXECUTOR_FLAGS:
        read = {"type": positive_int} if flag == "--jobs" else {}
        p.add_argument(flag, default=None, metavar=metavar, help=help_text, **read)


# a sweep within a budget of seconds under a work budget: its passes' time limits end the
# queries the work would have (docs/testing.md), which a run should not take for a verdict
# the load does not change
BUDGET_OVER_WORK = (
    "; the budget's time limits may end a query before its --work does, so its verdict may "
    "follow the load: give --work alone for one that does not"
)


def run(args) -> int:
    if args.vary:
        raise InputError(
            "sweep chooses the features itself: use --features to restrict it, not --vary"
        )
    check_outputs(args)
    check_plot_arg(args)
    refuse_budget_alone(args.certify_budget, args.certificates, "certificates")
    if args.executor:
        parse_executor(args.executor)  # a wrong spec fails before anything runs
    features = parse_features(args.features)
    with told_by_flag("--backend"):
        require_backend(args.backend)
    refuse_file_over_limit(args.model, args.memory_mb)  # a skops file's size, before its load
    ens = load_from_args(args)
    refuse_over_limit(ens, args.memory_mb)  # over the memory limit: one line, exit 2
    check_data(args, ens)
    subsets = feature_subsets(ens, args.subsets, args.sample, args.seed, features)
    subsets = not_held_by_where(args, ens, subsets, features)
    shard = parse_shard(args.shard) if args.shard else None
    if shard is not None:
        log(f"shard {shard[0]} of {shard[1]}")
    subsets = shard_of(subsets, shard)
    if not subsets:
        raise InputError(f"shard {args.shard} has no queries: the sweep has fewer than {shard[1]}")
    mk = query_maker_from_args(args, ens)
    # a wrong gap or classes is a bad input, before any progress
    first = mk(list(subsets[0]), "")
    resolve_condition(ens, first)
    # a probability model: which reading answers, and how to ask the other
    reading = f" ({what_it_predicts(read_for(ens, first))})" if ens.probability else ""
    limit = f"timeout {args.timeout:g}s each"
    if args.budget is not None:
        limit = f"budget {args.budget:g}s in all, at most {args.timeout:g}s each"
    if args.budget is not None and getattr(args, "work", None) is not None:
        limit += BUDGET_OVER_WORK
    log(
        f"sweep of {ens.source}{reading}: {len(subsets):,} quer{'y' if len(subsets) == 1 else 'ies'}, {limit}"
    )
    if len(subsets) > MANY_QUERIES and args.budget is None and args.sample is None:
        keep = "" if args.out or args.resume else ", --out FILE.jsonl keeps each answer"
        log(
            f"note: {len(subsets):,} queries may take long (each up to its --timeout): "
            f"--sample N asks N of them at random, --budget SECONDS caps the sweep{keep}"
        )
    if features is None and (held := held_features(ens)):
        log(f"left out ({held_reason(ens)}): {', '.join(held)}")
    certs = None
    if args.certificates is not None:
        certs = SweepCertificates(
            ens,
            mk,
            subsets,
            args.certificates,
            args.model,
            budget=args.certify_budget,
            max_gap=bool(args.max_gap),
            note=log,
        )
    t0 = time.time()
    results = run_campaign(args, ens, subsets, mk, certs)
    rows = table_rows(by_max_gap(results) if args.max_gap else results)
    summary = status_summary(results)
    print_table(args, rows, f"sweep: {summary} in {time.time() - t0:.1f}s")
    write_sweep_plot(args, results)
    if certs is not None:
        log(certs.summary())
    if (skipped := skipped_note(results)) is not None:
        log(skipped)
    if (threads := threads_note(results)) is not None:
        log(threads)
    log(f"done: {summary}")
    if args.budget is not None and (
        advice := budget_advice(results, args.budget, 1.0, _again(args))
    ):
        log(advice)
    return 1 if any(r.status == ERROR for r in results) else 0


def skipped_note(results) -> str | None:
    """The note of the queries left unknown with their solver stage skipped for memory
    (each line said so in brief): which, and the first one's message, which says the
    size, the limit and how to raise it."""
    skipped = [r for r in results if r.status == UNKNOWN and skipped_for_memory(r)]
    if not skipped:
        return None
    which = name_list(r.query for r in skipped)
    why = skipped[0].message.removeprefix("solver stage skipped: ")
    return f"note: unknown with the solver stage skipped: {which}; {why}"


def threads_note(results) -> str | None:
    """The note of solver threads capped to the cores, once: the table shows no notes."""
    said = next((n for r in results for n in r.notes if THREADS_CAPPED in n), None)
    return None if said is None else f"note: {said}"


def _again(args) -> str:
    """How a sweep run again keeps what this one settled (budget_advice's last words)."""
    kept = args.out or args.resume
    if kept:
        return f"a sweep run again with --resume {kept} reuses the answers this one settled"
    return "with --out FILE, a sweep run again with --resume FILE reuses the answers settled"


def not_held_by_where(args, ens, subsets: list, features) -> list:
    """The feature sets of a sweep over every feature that the --where constraints do
    not hold to one value for both inputs (``--where "sex == 1"``: no pair differs in
    sex), as a .sens sweep leaves them out, saying so; each remaining set's query is
    checked against the constraints before any runs (a contradiction: one line, exit 2)."""
    where = flag_constraints(args, ens)
    if where is None:
        return subsets
    if features is None:
        held = [s for s in subsets if where.held(s)]
        if held:
            names = ", ".join("+".join(s) for s in held)
            log(
                f"left out (the --where constraints hold them to one value for both inputs): {names}"
            )
            subsets = [s for s in subsets if s not in held]
    mk = query_maker_from_args(args, ens)
    for s in subsets:
        mk(list(s), "")
    return subsets


MANY_QUERIES = 10_000  # a sweep past this many says how to ask fewer
TABLE_CSV = "FILE.csv"
MARKDOWN_SUFFIXES = ("", ".md", ".markdown", ".txt")


def check_table_name(path: str) -> None:
    """--table-out writes CSV (``.csv``) or Markdown (``.md``, ``.txt``, no suffix); a name
    promising another format (``t.xlsx``, ``t.html``) is refused, not written as Markdown."""
    suffix = Path(path).suffix.lower()
    if suffix != ".csv" and suffix not in MARKDOWN_SUFFIXES:
        raise InputError(
            f"the table is written as CSV ({TABLE_CSV}) or Markdown (FILE.md, FILE.txt), not "
            f"as {suffix}",
            f"--table-out {path}",
        )


def parse_features(text: str | None) -> list[str] | None:
    """The --features list (None: every feature of the model)."""
    if text is None:
        return None
    names = [f.strip() for f in text.split(",") if f.strip()]
    if not names:
        raise InputError("no features given", f"--features {text!r}")
    if len(names) < len(text.split(",")):  # 'a,,b', 'a,': as check's --vary says it
        raise InputError(
            f"holds an empty name (did you mean {','.join(names)!r}?)", f"--features {text!r}"
        )
    return names


def check_outputs(args) -> None:
    """Fail before anything runs when a file the sweep writes cannot be written."""
    if args.out and args.resume and Path(args.out) != Path(args.resume):
        raise InputError(
            "--resume FILE appends the new results to FILE: give --out the same file or drop it",
            f"--out {args.out}",
        )
    for flag in ("out", "resume"):
        if (path := getattr(args, flag)) is not None:
            check_results_log_name(f"--{flag}", path, f" (the table: --table-out {TABLE_CSV})")
    if args.table_out is not None:
        check_table_name(args.table_out)
    for flag in ("out", "resume", "table_out"):
        path = getattr(args, flag)
        if path is not None:
            check_writable(f"--{flag.replace('_', '-')} {path}", Path(path))
    for flag in ("out", "resume"):  # a results log: a file that holds none, before the load
        path = getattr(args, flag)
        if path is not None and Path(path).is_file():
            # an audit's rows: --resume reads none, --out is warned of (campaign.py)
            refuse_other_file(path, f"--{flag} {path}", of="sweep" if flag == "resume" else None)


def print_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def run_campaign(args, ens, subsets, mk, certs: SweepCertificates | None = None) -> list:
    """The sweep's queries (those --resume answers reused), each result streamed as it
    ends: to the results log, to stdout with --json, to the progress display; certified
    first by the campaign when ``certs`` (--certificates) asks."""

    def on_result(res) -> None:
        if args.json:
            print_line(res.to_json())
        raise_if_interrupted()  # a Ctrl-C lost in a finaliser ends the sweep here

    try:
        return sweep_campaign(
            ens,
            subsets,
            mk,
            Campaign(args.executor, args.jobs, args.out, args.resume),
            memory_mb=args.memory_mb,
            display=sweep_progress,
            count_reused=False,
            warn=lambda msg: log(f"treesens: warning: {msg}"),
            on_reused=(lambda line: print_line(json.dumps(line))) if args.json else None,
            on_result=on_result,
            certificates=certs,
            budget=args.budget,
        )
    except KeyboardInterrupt:  # Ctrl-C or a signal: where what was answered is
        if (kept := kept_line(args, "sweep")) is not None:
            log(kept)
        raise


def status_summary(results) -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))


def print_table(args, rows: list[dict], title: str) -> None:
    stream = sys.stderr if args.json else sys.stdout
    if args.table == "terminal":
        from rich.table import Table

        t = Table(title=title)
        for c in rows[0] if rows else {"features": 0}:
            t.add_column(c)
        for r in rows:
            t.add_row(*[str(v) for v in r.values()])
        output_console(file=stream, width=None if stream.isatty() else 200).print(t)
    elif args.table == "markdown":
        stream.write(to_markdown(rows))
    elif args.table == "csv":
        stream.write(to_csv(rows))
    if args.table_out:
        with open(args.table_out, "w") as fh:
            fh.write(to_csv(rows) if args.table_out.endswith(".csv") else to_markdown(rows))
