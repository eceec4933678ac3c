"""treesens compare MODEL --vary F --gap G --backends cpsat,cbc,...: one compiled query,
solved on several backends (each in its own worker process), side by side.

Backends that disagree -- one proves "insensitive" while another has a replayed witness
-- are flagged on stderr and the exit code is 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from ...answers.stats import asked_of
from ...compiler.errors import InputError
from ...compiler.kinds import resolve_condition
from ...compiler.options import DEFAULT_TIMEOUT
from ...language import load_queries
from ...questions.ask import refuse_query
from ...questions.compare import backend_list, compare_query, disagreement, not_taken
from ...views.console import output_console
from .check import before_search_note
from .common import (
    add_model_args,
    add_query_args,
    load_from_args,
    log,
    query_from_args,
    told_by_flag,
    what_is_asked,
)

HELP = "solve one query on several backends and compare"
DESCRIPTION = """
Compile one query once and solve it on several backends, each in its own worker process: a table
of status, time, objective and whether the witness replayed. The heuristic is off unless
--heuristic is given (it would answer for every backend alike). Exit code 1 if the backends
disagree (or one ended in error).
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    add_query_args(p, vary_required=False)
    p.add_argument(
        "--backends",
        default=None,
        metavar="NAMES",
        help="comma-separated backends, a race's own joined by '+' (cpsat,race:cpsat+highs; "
        "default: those a .sens query's backend line lists, else every installed one; see "
        "'treesens backends')",
    )
    add_sens_args(p)
    # --heuristic (the query flags): off unless given here, or it would answer for every
    # backend alike


def add_sens_args(p) -> None:
    p.add_argument(
        "--query",
        metavar="NAME",
        default=None,
        help="with a .sens file as MODEL: the query (or sweep) to use",
    )


def is_sens(path: str) -> bool:
    return str(path).endswith(".sens")


# the model / query flags that still apply when MODEL is a .sens file
SENS_RUN_FLAGS = ("timeout", "memory_mb", "json")


def flags_the_sens_file_sets(args) -> list[str]:
    """The model and query flags given on the command line that a .sens file sets itself
    (each query's model, features, gap, passes...). --timeout overrides, as in run; --json
    and --memory-mb are about the run, not the query."""
    ref = argparse.ArgumentParser(add_help=False, conflict_handler="resolve")
    add_model_args(ref)
    add_query_args(ref, vary_required=False)
    given = []
    for action in ref._actions:
        if not action.option_strings or action.dest in SENS_RUN_FLAGS:
            continue
        if getattr(args, action.dest, action.default) != action.default:
            given.append(max(action.option_strings, key=len))
    return given


def load_queries_from_args(args, backend: str | None = None, listed: list | None = None):
    """(ensemble, [queries]) from either a .sens file (+ --query) or a model and flags;
    ``listed`` gets the backends the file's queries name (``backend cpsat, highs``)."""
    if is_sens(args.model):
        given = flags_the_sens_file_sets(args)
        if given:
            raise InputError(
                f"{args.model}: {given[0]} is for a model file: a .sens file's queries set "
                "it themselves (with a .sens file: --query, --timeout, --memory-mb, --json)"
            )
        sf = load_queries(args.model)
        selected = sf.select(args.query)
        if listed is not None:
            listed.extend(dict.fromkeys(q.plan.backend for q in selected))
        queries = one_per_question(selected)
        if not queries:
            audit = args.query is not None and args.query in sf.audits
            why = (
                f"{args.query!r} is an audit block, which treesens run answers; this command "
                f"takes a query or a sweep ({', '.join(sf.groups) or 'the file has none'})"
                if audit
                else "no query to run"
            )
            raise InputError(f"{args.model}: {why}")
        if args.timeout != DEFAULT_TIMEOUT:
            queries = [q.planned(timeout=args.timeout) for q in queries]
        return sf.ensemble, queries
    if args.query is not None:
        raise InputError("--query NAME needs a .sens file as MODEL")
    if not args.vary:
        raise InputError(
            "give the features to vary (--vary NAMES), or a .sens file with --query NAME"
        )
    ens = load_from_args(args)
    q = query_from_args(args, ens, backend=backend or "cpsat")
    refuse_query(ens, q, args.memory_mb)  # over the memory limit: one line, exit 2
    resolve_condition(ens, q)  # a gap or classes the model cannot take: before any line
    return ens, [q]


def one_per_question(queries: list) -> list:
    """A .sens query with several backends (`backend cpsat, highs`) is one query per backend,
    named NAME@BACKEND; compare runs every backend anyway, so keep one of each."""
    seen, out = set(), []
    for q in queries:
        base = q.name.rsplit("@", 1)[0] if q.name.endswith(f"@{q.plan.backend}") else q.name
        key = repr(q.with_(name=base).planned(backend="cpsat"))
        if key not in seen:
            seen.add(key)
            out.append(q.with_(name=base))
    return out


def shown_backend(r) -> str:
    """The backend a result was asked of, and what answered where that is another (a
    max gap the box search answers: 'cpsat (answered by boxes)')."""
    asked = (asked_of(r.stats) or {}).get("backend") or r.backend
    return asked if asked == r.backend else f"{asked} (answered by {r.backend})"


def _row(r) -> dict:
    return {
        "backend": shown_backend(r),
        "status": r.status,
        "time": r.time.get("total", 0.0),
        "solve": r.time.get("solve", 0.0),
        "objective": r.stats.get("objective"),
        "validated": bool(r.validated),
        "note": r.error or (r.message if r.status in ("unknown", "error") else "") or "",
    }


def render_table(q, results, stream=None) -> None:
    stream = stream or sys.stdout
    try:
        from rich.table import Table
    except ImportError:  # pragma: no cover - rich is a dependency
        for r in results:
            d = _row(r)
            print(
                f"{d['backend']:8} {d['status']:12} {d['time']:8.2f}s {d['objective']!s:>14} "
                f"{'yes' if d['validated'] else 'no':4} {d['note']}",
                file=stream,
            )
        return
    t = Table(title=f"query {q.label}: vary {','.join(q.vary)}, {what_is_asked(q)}")
    for col, just in (
        ("backend", "left"),
        ("status", "left"),
        ("time (s)", "right"),
        ("solve (s)", "right"),
        ("objective", "right"),
        ("replayed", "center"),
        ("note", "left"),
    ):
        t.add_column(col, justify=just, no_wrap=col != "note")
    colors = {"sensitive": "red", "insensitive": "green", "unknown": "yellow", "error": "magenta"}
    for r in results:
        d = _row(r)
        obj = "" if d["objective"] is None else f"{d['objective']:.6g}"
        replay = "yes" if d["validated"] else ("-" if r.status != "sensitive" else "NO")
        note = d["note"].splitlines()[0] if d["note"] else ""
        if len(note) > 90:
            note = note[:87] + "..."
        t.add_row(
            d["backend"],
            f"[{colors.get(r.status, 'white')}]{r.status}[/]",
            f"{d['time']:.2f}",
            f"{d['solve']:.2f}",
            obj,
            replay,
            note,
        )
    width = None if stream.isatty() else 140
    output_console(file=stream, width=width).print(t)


def run(args) -> int:
    t0 = time.time()  # the interpreter, the imports and the flags took until now
    from_file = args.backends is None and is_sens(args.model)
    with told_by_flag("--backends"):
        backends = None if from_file else backend_list(args.backends)
    listed: list[str] = []
    ens, queries = load_queries_from_args(args, listed=listed)
    startup, load = t0 - args.start, time.time() - t0  # counted in the first query's limit
    if from_file:  # the backends its query lists (two or more), else every installed one
        backends = backend_list(",".join(listed) if len(listed) > 1 else None)
    if not args.json:
        log(
            f"loaded {ens.source}: {len(ens.trees)} trees, {ens.n_features} features ({time.time() - t0:.2f}s); "
            f"comparing {', '.join(backends)}"
        )
    code = 0
    for i, q in enumerate(queries):
        if not args.json and len(queries) > 1:  # whose answers the lines below are
            log(f"{q.label}:")

        advice: list[str] = []  # the notes on a time limit out before the search

        def show(res, q=q, advice=advice, before=(startup, load) if i == 0 else (0.0, 0.0)):
            had = len(res.notes)
            before_search_note(res, q.plan.timeout, *before)  # what took the time, as check
            advice.extend(res.notes[had:])
            if args.json:
                sys.stdout.write(json.dumps(res.to_dict(), allow_nan=False) + "\n")
                sys.stdout.flush()
            else:
                log(f"  {shown_backend(res)}: {res.status} ({res.time.get('total', 0.0):.2f}s)")

        results = compare_query(
            ens,
            q,
            backends,
            memory_mb=args.memory_mb,
            heuristic=bool(args.heuristic),
            on_result=show,
            start=args.start if i == 0 else None,  # the load counts once, for the first
        )
        if not args.json:
            render_table(q, results)
            for note in dict.fromkeys(advice):  # the backends share it: once
                log(f"note: {note}")
        msg = disagreement(results)
        if msg:
            print(f"treesens: {q.label}: {msg}", file=sys.stderr, flush=True)
            code = 1
        else:
            bad = [r.backend for r in results if r.status == "error" and not not_taken(r)]
            if bad:
                log(f"treesens: {q.label}: error on {', '.join(bad)}")
                code = max(code, 1)
    return code
