"""treesens sweep MODEL: every single feature, or subsets of k features, one query each."""

from __future__ import annotations

import json
import sys
import time

from .common import add_backend_arg, add_model_args, add_query_args, load_from_args, log


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sweep",
        help="one query per feature (or per subset of k features) of a model",
        description="Which features can flip the decision? Streams a result per query "
        "as it ends and prints a table at the end.",
    )
    add_model_args(p)
    add_query_args(p, vary_required=False)
    add_backend_arg(p)
    p.add_argument(
        "--subsets",
        type=int,
        default=1,
        metavar="K",
        help="size of the feature subsets (default 1)",
    )
    p.add_argument(
        "--sample", type=int, default=None, metavar="N", help="a random sample of N subsets"
    )
    p.add_argument(
        "--features",
        default=None,
        metavar="NAMES",
        help="sweep only these features (comma-separated)",
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="FILE.jsonl",
        help="append each result to this JSON Lines file",
    )
    p.add_argument(
        "--resume",
        default=None,
        metavar="FILE.jsonl",
        help="skip queries already answered in FILE and append new results to it",
    )
    p.add_argument(
        "--table",
        choices=["terminal", "markdown", "csv", "none"],
        default="terminal",
        help="the final table's format (default terminal; printed to stderr with --json)",
    )
    p.add_argument(
        "--table-out", default=None, metavar="FILE", help="also write the final table to FILE"
    )
    p.set_defaults(func=run)


def run(args) -> int:
    from ...compiler.errors import InputError
    from ...compiler.result import ERROR
    from ..api import make_query
    from ..sweep import done_labels, feature_subsets, run_sweep, table_rows, to_csv, to_markdown
    from .common import data_options

    if args.vary:
        raise InputError(
            "sweep chooses the features itself: use --features to restrict it, not --vary"
        )
    ens = load_from_args(args)
    features = [f.strip() for f in args.features.split(",")] if args.features else None
    subsets = feature_subsets(ens, args.subsets, args.sample, args.seed, features)
    out_path = args.resume or args.out
    skip = done_labels(args.resume)
    todo = [s for s in subsets if ",".join(s) not in skip]
    log(
        f"sweep of {ens.source}: {len(subsets)} queries ({len(subsets) - len(todo)} already done), "
        f"timeout {args.timeout:g}s each"
    )

    def mk(vary, label):
        return make_query(
            vary,
            gap=args.gap,
            margin_gap=args.margin_gap,
            classes=args.classes,
            passes=args.passes,
            baseline=args.baseline,
            backend=args.backend,
            timeout=args.timeout,
            threads=args.threads,
            seed=args.seed,
            name=label,
            data_aware=getattr(args, "data_aware", "none"),
            options=data_options(args),
        )

    out_file = open(out_path, "a") if out_path else None  # noqa: SIM115 - kept open while streaming
    progress = None
    task = None
    if sys.stderr.isatty():
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=__import__("rich.console").console.Console(file=sys.stderr),
        )
        progress.start()
        task = progress.add_task("sweep", total=len(todo))

    def on_result(res) -> None:
        line = res.to_json()
        if out_file:
            out_file.write(line + "\n")
            out_file.flush()
        if args.json:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()
        if progress is not None:
            progress.update(task, advance=1, description=f"{res.query}: {res.status}")
        else:
            log(f"{res.query}: {res.status} ({res.time['total']:.2f}s)")

    t0 = time.time()
    try:
        results = run_sweep(ens, todo, mk, on_result=on_result, memory_mb=args.memory_mb)
    finally:
        if progress is not None:
            progress.stop()
        if out_file:
            out_file.close()
    if args.resume:
        # the table covers every query of the sweep, including those answered before
        from ...compiler.result import Result

        prev = []
        with open(args.resume) as fh:
            for line in fh:
                try:
                    d = json.loads(line)
                except json.JSONDecodeError:
                    continue
                prev.append(Result(**{k: d[k] for k in Result.__dataclass_fields__ if k in d}))
        by_label = {r.query: r for r in prev}
        results = [by_label[",".join(s)] for s in subsets if ",".join(s) in by_label]
    rows = table_rows(results)
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    text = ""
    if args.table == "markdown":
        text = to_markdown(rows)
    elif args.table == "csv":
        text = to_csv(rows)
    stream = sys.stderr if args.json else sys.stdout
    if args.table == "terminal":
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"sweep: {summary} in {time.time() - t0:.1f}s")
        for c in rows[0] if rows else {"features": 0}:
            t.add_column(c)
        for r in rows:
            t.add_row(*[str(v) for v in r.values()])
        Console(file=stream, width=None if stream.isatty() else 200).print(t)
    elif text:
        stream.write(text)
    if args.table_out:
        with open(args.table_out, "w") as fh:
            fh.write(to_markdown(rows) if not args.table_out.endswith(".csv") else to_csv(rows))
    log(f"done: {summary}")
    return 1 if any(r.status == ERROR for r in results) else 0
