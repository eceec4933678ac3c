"""treesens emit MODEL --vary F --gap G --format smt2|lp|mps -o FILE: write the compiled
constraint problem, exactly as a backend would receive it.

smt2 is what the z3 backend solves (z3's pseudo-Boolean forms, no set-logic, when every
variable is boolean; ``--plain-smt`` for SMT-LIB 2.6 QF_LIA any solver reads); lp (CPLEX
LP) and mps (free MPS) are what the MILP backends solve, implications as big-M rows.
``--backend`` picks whose reductions apply (e.g. cpsat: integer-scaled coefficients).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...backends.lpformat import to_lp, to_mps
from ...backends.smtlib import to_smtlib
from ...compiler.errors import InputError
from ...compiler.question import where_words
from ...driver import compile_query, for_backend, is_race
from ...questions.output_folder import make_folder_of
from ...readers.data import dataset_for
from ...readers.formats import AUTO, format_names
from .common import add_model_args, add_query_args, log
from .compare import add_sens_args, load_queries_from_args

FORMATS = ("smt2", "lp", "mps")
DEFAULT_BACKEND = {"smt2": "z3", "lp": "highs", "mps": "highs"}
# the formats a solver's own problem is written in: z3's is SMT-LIB, the MILP solvers' LP or
# MPS (the LP writer makes implications big-M rows whatever the backend, so z3's problem as
# LP is HiGHS's); cpsat's integer scaling shows in any format, and it is in none of these
SOLVES = {"z3": ("smt2",), "highs": ("lp", "mps"), "cbc": ("lp", "mps"), "gurobi": ("lp", "mps")}


HELP = "write the compiled query as SMT-LIB 2, LP or MPS"
DESCRIPTION = """
Compile one query and write the constraint problem a backend would solve: SMT-LIB 2 (z3), CPLEX
LP or free MPS (any MILP solver).
"""
CONFLICT_HANDLER = "resolve"  # flags redefined below
# the query flags of the solve, which compiling does not read: hidden from --help, and
# refused when given (a --timeout or --threads that changed nothing was taken silently)
SOLVE_ONLY = (
    "timeout",
    "work",
    "threads",
    "seed",
    "stall_time",
    "optimise_time",
    "optimality_gap",
    "heuristic",
    "heuristic_effort",
    "box_search",
    "solver_params",
    "progress",
    "json",
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    add_query_args(p, vary_required=False)
    for action in p._actions:
        if action.dest in SOLVE_ONLY:
            action.help = argparse.SUPPRESS
    # --format here is the output format; the model's format moves to --model-format
    p.add_argument(
        "--format",
        dest="out_format",
        choices=FORMATS,
        default=None,
        help="output format (default: from the -o file's extension)",
    )
    p.add_argument(
        "--model-format",
        dest="format",
        default="auto",
        help=f"model format when the file is ambiguous (default {AUTO}: told by its content "
        f"and name; {', '.join(format_names())})",
    )
    p.add_argument(
        "-o", "--output", default="-", metavar="FILE", help="output file ('-': stdout, the default)"
    )
    p.add_argument(
        "--backend",
        default=None,
        help="whose reductions to apply (default: z3 for smt2, highs for lp/mps): z3 goes "
        "with smt2, highs, cbc and gurobi with lp and mps, cpsat (integer-scaled) with any",
    )
    p.add_argument(
        "--plain-smt",
        action="store_true",
        help="smt2: plain SMT-LIB 2.6 (QF_LIA arithmetic) instead of z3's pseudo-Boolean forms",
    )
    p.add_argument(
        "--objective",
        dest="emit_objective",
        action="store_true",
        help="smt2: include the objective as a (maximize/minimize) command (z3's Optimize)",
    )
    # the objective of a dump moves to --model-objective, as its format does
    p.add_argument(
        "--model-objective",
        dest="objective",
        default=None,
        help="the objective of an XGBoost dump (default binary:logistic; see check --objective)",
    )
    add_sens_args(p)


def refuse_solve_flags(args) -> None:
    """One InputError naming the first solve-only flag given (not at its default)."""
    ref = argparse.ArgumentParser(add_help=False)
    add_query_args(ref, vary_required=False)
    for action in ref._actions:
        if action.dest in SOLVE_ONLY and getattr(args, action.dest) != action.default:
            flag = "/".join(action.option_strings)
            raise InputError(
                f"{flag} is a setting of the solve, which emit does not run: it writes the "
                "compiled problem only"
            )


def _format(args) -> str:
    """--format, else the -o file's suffix; both, naming two formats (--format lp -o
    q.smt2), are refused rather than one format written under the other's name, and so
    is an existing file no format's suffix names (written over before)."""
    named = _named_format(args.output or "-")
    if args.out_format:
        if named is not None and named != args.out_format:
            raise InputError(
                f"--format {args.out_format} writes {args.out_format.upper()}, but the file's "
                f"name says {named}: drop --format, or name the file "
                f"{Path(args.output).with_suffix('.' + args.out_format).name}",
                args.output,
            )
        out = Path(args.output or "-")
        if named is None and out.is_file() and not _emitted(out):  # README.md, a model
            raise InputError(
                f"is a file whose name says no {'/'.join(FORMATS)} problem: not overwritten; "
                f"name the file {out.with_suffix('.' + args.out_format).name}",
                args.output,
            )
        return args.out_format
    if named is not None:
        return named
    raise InputError("give --format smt2|lp|mps (or an -o file ending in .smt2, .lp or .mps)")


def refuse_unsolved_format(fmt: str, backend: str | None) -> None:
    """A backend named with a format it does not solve (--backend z3 --format mps, whose
    file was HiGHS's problem: the backend left no trace) is one InputError naming both."""
    solves = SOLVES.get(backend or "")
    if solves is None or fmt in solves:
        return
    whose = "z3's" if fmt == "smt2" else "the MILP backends', highs, cbc and gurobi"
    raise InputError(
        f"--backend {backend} solves the {' or '.join(solves)} problem, not {fmt}: give "
        f"--format {solves[0]} (or -o FILE.{solves[0]}) for {backend}'s, or drop --backend "
        f"for the {fmt} problem ({whose}; --backend cpsat scales it to integers)"
    )


def _emitted(path: Path) -> bool:
    """Whether a file is empty or one emit wrote (its first line ``; query ...``, or
    ``\\ query`` / ``* query``: emit_text's header), which a rerun may write over."""
    with path.open("rb") as fh:
        head = fh.read(8)
    return not head or head.startswith((b"; query ", b"\\ query ", b"* query "))


def _named_format(out: str) -> str | None:
    """The format an output file's suffix names (``.smt`` is SMT-LIB too), else None."""
    for f in FORMATS:
        if out.endswith("." + f) or (f == "smt2" and out.endswith(".smt")):
            return f
    return None


def emit_text(
    ens,
    q,
    fmt: str,
    backend: str | None = None,
    *,
    plain_smt: bool = False,
    objective: bool | None = None,
) -> str:
    """The compiled problem of query ``q`` as ``fmt`` text."""
    backend = backend or DEFAULT_BACKEND[fmt]
    if is_race(backend):
        raise InputError("emit writes one backend's problem: give a backend, not a race")
    cq = compile_query(ens, q.planned(backend=backend), data=dataset_for(ens, q))
    compiled, _, _ = for_backend(cq, backend)
    problem = compiled.problem
    c = {"smt2": ";", "lp": "\\", "mps": "*"}[fmt]
    if q.delta is not None:
        asked = f"delta {q.delta:g} {q.direction}"
    elif q.threshold is not None:
        asked = f"above {q.threshold[0]:g} below {q.threshold[1]:g}"
    else:
        asked = f"gap {q.gap}"
    asked += where_words(q)
    header = f"{c} query {q.label}: vary {','.join(q.vary)}, {asked}; model {ens.source}\n"
    lc = cq.encoding.condition.link_change
    if lc is not None:  # the file holds the relaxation the driver starts from
        header += (
            f"{c} the change through the {lc.link} link as tangent rows: an outer "
            "approximation (infeasible: no pair meets it; a solution may not, replay it)\n"
        )
    if fmt == "smt2":
        return header + to_smtlib(problem, pb=not plain_smt, objective=objective)
    return header + (to_lp(problem) if fmt == "lp" else to_mps(problem))


def run(args) -> int:
    refuse_solve_flags(args)
    fmt = _format(args)
    refuse_unsolved_format(fmt, args.backend)
    ns = argparse.Namespace(**vars(args))
    ens, queries = load_queries_from_args(ns, backend=args.backend or DEFAULT_BACKEND[fmt])
    if len(queries) != 1:
        raise InputError(
            f"emit writes one query; {args.model} selects {len(queries)} "
            f"({', '.join(q.label for q in queries[:5])}{', ...' if len(queries) > 5 else ''}): "
            "name one with --query"
        )
    q = queries[0]
    text = emit_text(
        ens,
        q,
        fmt,
        args.backend,
        plain_smt=args.plain_smt,
        objective=True if args.emit_objective else None,
    )
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        make_folder_of(args.output, f"-o {args.output}")
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as e:
            raise InputError(f"cannot write {args.output}: {e.strerror}") from None
        log(f"wrote {args.output} ({fmt}, {text.count(chr(10))} lines) for query {q.label}")
    return 0
