"""Flags shared by the commands that take a model and a query, and result printing."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...answers.result import Result
from ...compiler.errors import InputError, as_number_hint
from ...compiler.max_gap_question import DEFAULT_TOLERANCE, check_tolerance
from ...compiler.options import (
    OPTION_BY_NAME,
    OPTIONS,
    idle_data_aware_option,
    work_amount,
    work_problem,
)
from ...questions.keywords import API_KEYWORDS, MODEL, Keyword
from ...questions.output_folder import writable_file
from ...questions.query_build import query_from_keywords
from ...readers.data import load_data, say_data_notes
from ...readers.formats import AUTO, format_names
from ...readers.load import (
    BOUNDS,
    base_score_problem,
    load_model,
    shown_base_score,
)
from ...readers.load_notes import saying
from ...views.result_view import render_result


def _converted(text: str, conv, noun: str):
    """``conv(text)``, or the argparse error that ``text`` is not a ``noun``."""
    try:
        return conv(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a {noun}{as_number_hint(text)}"
        ) from None


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (threads, megabytes)."""
    value = _converted(text, int, "whole number")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def work_budget(text: str) -> int:
    """argparse type: a work budget, 4000000 or 4M (compiler/options.work_amount)."""
    value = work_amount(text)
    if work_problem(value):
        raise argparse.ArgumentTypeError(f"{text!r}: {work_problem(value)}")
    return int(value)


def number(text: str) -> float:
    """argparse type: a finite number."""
    value = _converted(text, float, "number")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def numbers(text: str) -> float | tuple[float, ...]:
    """argparse type: a finite number, or finite numbers joined by commas."""
    values = tuple(number(part) for part in text.split(","))
    return values[0] if len(values) == 1 else values


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    value = _converted(text, float, "number")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: must be a positive number")
    return value


def add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model file (XGBoost .json/.ubj or tree dump, LightGBM .txt, ...)")
    p.add_argument(
        "--format",
        default="auto",
        help=f"model format when the file is ambiguous (default {AUTO}: told by its content "
        f"and name; {', '.join(format_names())})",
    )
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="load a joblib/pickle model file, which runs code while it loads (only files "
        "you trust; .skops files need no trust)",
    )
    p.add_argument(
        "--details",
        action=GivenOnce,
        metavar="CSV",
        help="feature declarations: feature,name,lb,ub[,kind][,missing]; by default a file beside "
        "the model (MODEL_details.csv, e.g. wine_details.csv for wine_xgb.json, or "
        "details.csv) is used when it names exactly the model's features",
    )
    p.add_argument(
        "--no-auto-details",
        action="store_true",
        help="do not use a details file found beside the model",
    )
    p.add_argument(
        "--data",
        action=GivenOnce,
        metavar="CSV",
        default=None,
        help=OPTION_BY_NAME["data"].help,
    )
    p.add_argument("--label", default="label", help=API_KEYWORDS["label"].help)
    p.add_argument(
        "--plugin",
        action="append",
        metavar="FILE.py",
        help="a Python file (or module) to import first, for the query kinds, model formats "
        "or backends it registers (repeatable; docs/extending.md)",
    )
    p.add_argument("--bounds", choices=BOUNDS, default="auto", help=API_KEYWORDS["bounds"].help)
    p.add_argument("--groups", metavar="SPEC", default=None, help=API_KEYWORDS["groups"].help)
    # an XGBoost dump records none of these (readers/formats/xgboost_dump.py)
    p.add_argument(
        "--objective",
        default=None,
        help="the objective of an XGBoost dump (default binary:logistic): binary:logitraw, "
        "reg:logistic, reg:squarederror, count:poisson, reg:tweedie, reg:gamma, "
        "multi:softprob or multi:softmax (with --num-class), ...",
    )
    p.add_argument(
        "--num-class",
        type=int,
        default=None,
        metavar="K",
        help="the classes of a multiclass XGBoost dump (tree i adds to class i mod K)",
    )
    p.add_argument(
        "--num-parallel-tree",
        type=int,
        default=None,
        metavar="P",
        help="the num_parallel_tree of a multiclass XGBoost dump (default 1): each round "
        "grows P trees of each class in turn, tree i adding to class (i // P) mod K",
    )
    p.add_argument(
        "--base-score",
        type=numbers,
        default=None,
        help="base_score of an XGBoost dump, as XGBoost stores it (default 0.5): one number, "
        "or one per class (0.1,0.2,0.3)",
    )


class GivenOnce(argparse.Action):
    """A flag given twice would keep its last value alone, the first dropped in silence
    (``--vary a --vary b`` asked about b): refused, a list flag saying to list both in one."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given_once", {})
        if self.dest in given:
            listed = self.metavar == "NAMES"
            hint = f"list them in one, {option_string} {given[self.dest]},{values}"
            raise argparse.ArgumentError(
                self,
                f"given twice ({given[self.dest]!r}, then {values!r}): "
                + (hint if listed else "give it once"),
            )
        given[self.dest] = values
        setattr(namespace, self.dest, values)


def add_query_args(
    p: argparse.ArgumentParser, vary_required: bool = True, vary_listed: bool = True
) -> None:
    """The query flags, made from the API's keyword table (questions/keywords.py) with its
    help; ``vary_listed=False`` keeps ``--vary`` out of ``--help`` (a command that chooses
    the features itself still reads it, to refuse it with a reason)."""
    p.add_argument(
        "--vary",
        action=GivenOnce,
        required=vary_required,
        metavar="NAMES",
        help="comma-separated features that may differ between the two inputs (all: every feature)"
        if vary_listed
        else argparse.SUPPRESS,
    )
    groups: dict[str, argparse._MutuallyExclusiveGroup] = {}
    for k in API_KEYWORDS.values():
        if k.role == MODEL or k.name in ("backend", "where"):
            continue
        if k.group and k.group not in groups:
            groups[k.group] = p.add_mutually_exclusive_group()
        add_keyword_flag(groups[k.group] if k.group else p, k)
    p.add_argument(
        "--where",
        action="append",
        metavar="CONSTRAINT",
        help=API_KEYWORDS["where"].help,
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object per query (JSON Lines)"
    )


# how a flag reads each kind of value (compiler/options.py's OptionSpec.takes)
_READS: dict[str, dict] = {
    "number": {"type": number},
    "positive": {"type": positive_float},
    "whole": {"type": positive_int},
    "work": {"type": work_budget},
    "int": {"type": int},
    "bool": {"action": argparse.BooleanOptionalAction},
    "pairs": {"action": "append"},
}
# the flag's value as --help shows it
METAVARS = {
    "margin_gap": "D",
    "classes": "C1,C2",
    "clause_width": "W",
    "max_clauses": "N",
    "clause_time": "S",
    "clauses": "FILE",
    "prob_alpha": "A",
    "prob_empty": "RULE",
    "stall_time": "S",
    "optimise_time": "S",
    "optimality_gap": "G",
    "heuristic_effort": "X",
    "solver_params": "NAME=VALUE",
    "memory_mb": "MB",
    "work": "N",
    "kind": "NAME",
    "params": "NAME=VALUE",
}
# the flags not named after their keyword
_FLAGS = {"solver_params": "--solver-param", "params": "--param"}


def add_keyword_flag(p, k: Keyword) -> None:
    """The flag of one keyword of the table: --the-name-with-dashes, its help and default."""
    how = dict(_READS.get(k.takes, {}))
    if k.choices:
        how["choices"] = list(k.choices)
    if k.name in METAVARS:
        how["metavar"] = METAVARS[k.name]
    flag = _FLAGS.get(k.name, "--" + k.name.replace("_", "-"))
    p.add_argument(flag, dest=k.name, default=k.default, help=k.help, **how)


def add_max_gap_args(p: argparse.ArgumentParser) -> None:
    """--max-gap: the largest gap instead of a verdict at one gap (questions/max_gap.py)."""
    p.add_argument(
        "--max-gap",
        action="store_true",
        help="find the largest gap g at which the model is sensitive (binary: in "
        "probability; multiclass: the ratio, with --classes; regressors: the largest change "
        "f(x1) - f(x2)): a replay-checked pair at that gap, a proof that no larger gap is "
        "reachable; the whole search within --timeout, or on --work N units (its bracket "
        "then the same on any machine); give no --gap or --delta",
    )
    p.add_argument(
        "--max-gap-tolerance",
        type=positive_float,
        default=None,
        metavar="T",
        help=f"--max-gap stops when its bounds are within T (binary: absolute, in "
        f"probability; multiclass: in ln units; regressors: relative to the bound; "
        f"default {DEFAULT_TOLERANCE:g})",
    )


def max_gap_tolerance(args) -> float | None:
    """The --max-gap tolerance, checked (None: no --max-gap)."""
    given = getattr(args, "max_gap_tolerance", None)
    if not getattr(args, "max_gap", False):
        if given is not None:  # it would change nothing: say so rather than ignore it
            raise InputError("--max-gap-tolerance is the tolerance of --max-gap: add --max-gap")
        return None
    return check_tolerance(DEFAULT_TOLERANCE if given is None else given)


def add_backend_arg(p: argparse.ArgumentParser) -> None:
    add_keyword_flag(p, API_KEYWORDS["backend"])


def add_memory_arg(p: argparse.ArgumentParser) -> None:
    add_keyword_flag(p, API_KEYWORDS["memory_mb"])


def add_run_limits(p: argparse.ArgumentParser, what: str) -> None:
    """--timeout, overriding ``what`` a .sens file sets, --work, overriding its work
    budgets, and --memory-mb: for the commands that run a .sens file's queries."""
    p.add_argument(
        "--timeout", type=number, default=None, metavar="S", help=f"override {what} (seconds)"
    )
    p.add_argument(
        "--work",
        type=work_budget,
        default=None,
        metavar="N",
        help="override every query's work budget (work units, e.g. 4M): its stages end on "
        "counted work, not the clock, so its verdict does not depend on the machine's "
        "load; the query's stats.work says what it used (docs/testing.md)",
    )
    add_keyword_flag(p, API_KEYWORDS["memory_mb"])


def load_from_args(args):
    bs, objective = args.base_score, getattr(args, "objective", None)
    if base_score_problem(bs, objective):
        said = base_score_problem(bs, objective)
        raise InputError(f"--base-score {shown_base_score(bs)}: {said}")
    quiet = getattr(args, "json", False)
    with saying(None if quiet else log):  # a long load and its steps, on stderr
        return load_model(
            args.model,
            format=args.format,
            details=args.details,
            base_score=args.base_score,
            objective=objective,
            n_classes=getattr(args, "num_class", None),
            num_parallel_tree=getattr(args, "num_parallel_tree", None),
            data=args.data,
            label=args.label,
            bounds=getattr(args, "bounds", "auto"),
            groups=getattr(args, "groups", None),
            auto_details=not args.no_auto_details,
            trust_pickle=getattr(args, "trust_pickle", False),
        )


def check_data(args, ens) -> None:
    """Read --data now (it is cached for the solve), so that columns that do not fit the
    model are one error before anything is solved."""
    if getattr(args, "data", None) is not None:
        say_data_notes(load_data(args.data, ens, args.label))


def query_maker_from_args(args, ens, backend: str | None = None):
    """``make(vary, name)`` -> the query the flags ask, for those features (questions/
    query_build.py builds it, as for the API and .sens)."""
    flags = vars(args) | ({"backend": backend} if backend else {}) | kind_flags(args)
    flags.pop("where", None)
    options = data_options(args)
    where = flag_constraints(args, ens)

    def make(vary, name: str = ""):
        q = query_from_keywords(vary, flags, ens=ens, name=name, options=options)
        return q if where is None else where.query(q)

    return make


def flag_constraints(args, ens):
    """The --where constraints, read against the model (language/where_flag.py, loaded
    only when given: the .sens grammar), or None."""
    texts = getattr(args, "where", None)
    if not texts:
        return None
    from ...language.where_flag import FlagConstraints

    return FlagConstraints(ens, texts)


def query_from_args(args, ens, backend: str | None = None):
    """The one query of --vary and the query flags."""
    return query_maker_from_args(args, ens, backend)(args.vary)


def what_is_asked(q) -> str:
    """What a query asks, in a .sens file's words: "gap 0.2", "gap max", or "kind NAME"
    for a kind of a plugin's."""
    if q.kind_name not in ("pair", "change", "max_gap"):
        return f"kind {q.kind_name}"
    return "gap max" if q.kind_name == "max_gap" else f"gap {q.gap}"


def kind_flags(args) -> dict:
    """The query's kind and its parameters: --kind NAME with --param NAME=VALUE flags, or
    --max-gap (the max_gap kind, its tolerance --max-gap-tolerance)."""
    kind = getattr(args, "kind", None)
    params = _pairs(getattr(args, "params", None) or [], "--param")
    tol = max_gap_tolerance(args)
    if tol is not None:
        if kind not in (None, "max_gap"):
            raise InputError(f"--max-gap asks the max_gap kind: drop --kind {kind}")
        kind, params = "max_gap", (("tolerance", tol), *params)
    return {"kind": kind, "params": params}


def data_options(args) -> dict:
    """The query options (compiler/options.py) the flags give; None: not given."""
    data = getattr(args, "data", None)
    out = {o.name: getattr(args, o.name, None) for o in OPTIONS}
    _refuse_idle_data_aware_flags(out, getattr(args, "data_aware", None))
    progress = out["progress"]
    return out | {
        "data": data,
        "label": getattr(args, "label", "label") if data else None,
        "progress": True if data and progress is None else progress,
        "solver_params": solver_params(args),
    }


def _refuse_idle_data_aware_flags(given: dict, data_aware) -> None:
    """A data-aware flag given with a mode it does not act in (``--clause-width`` without
    ``--data-aware clause``) is an error, as the same parameter is in a .sens file and the
    API: it would be ignored without a word."""
    why = idle_data_aware_option(given, data_aware, lambda name: "--" + name.replace("_", "-"))
    if why is not None:
        raise InputError(why)


def _param_value(text: str):
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text.strip()


def solver_params(args) -> tuple | None:
    """--solver-param NAME=VALUE flags as (name, value) pairs (CP-SAT only)."""
    given = getattr(args, "solver_params", None) or []
    if not given:
        return None
    if getattr(args, "backend", "cpsat") != "cpsat":
        raise InputError("--solver-param sets CP-SAT parameters: use it with --backend cpsat")
    return _pairs(given, "--solver-param")


def _pairs(given: list[str], flag: str) -> tuple:
    """NAME=VALUE flags as (name, value) pairs, the values read as numbers or booleans
    where they are."""
    out = []
    for item in given:
        name, eq, value = item.partition("=")
        if not eq or not name.strip().isidentifier():
            raise InputError(f"{flag} {item!r}: give NAME=VALUE")
        out.append((name.strip(), _param_value(value)))
    return tuple(out)


# how a probability model is asked in its other reading (compiler/readings.py), by flags;
# keyed by whether it is read as a regressor now
OTHER_READING = {
    True: "a binary classifier with --gap G or --max-gap",
    False: "a regressor with --delta D or --above A --below B",
}


# an audit asks by --gap or by --delta (no largest gap, no threshold form)
AUDIT_OTHER_READING = {
    True: "a binary classifier with --gap G",
    False: "a regressor with --delta D",
}


def what_it_predicts(ens, other: dict[bool, str] = OTHER_READING) -> str:
    """What the model predicts, as the line saying it loaded puts it; a probability
    model's says which reading answers, and how to ask the other (``other``)."""
    if not ens.probability:
        return ens.what_it_predicts
    return f"{ens.what_it_predicts}, or as {other[ens.is_regressor]}"


def emit_result(res: Result, as_json: bool, ens=None) -> None:
    if as_json:
        sys.stdout.write(res.to_json() + "\n")
        sys.stdout.flush()
    else:
        render_result(res, ens)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def kept_line(args, command: str) -> str | None:
    """What a sweep or an audit cut short (Ctrl-C, a signal) says of the answers it had:
    in its --out file, for --resume to go on from (None with --json: they are on stdout)."""
    kept = args.out or args.resume
    if kept:
        return (
            f"the answers so far are in {kept}: run the {command} again with --resume {kept} "
            "to ask the rest"
        )
    if args.json:
        return None
    return "the answers so far are not kept: --out FILE keeps each as it ends, for --resume"


# names of files that hold a table, not a results log (JSON Lines)
TABLE_SUFFIXES = (".csv", ".tsv", ".xlsx", ".xls", ".md", ".html", ".htm")


def check_results_log_name(flag: str, path: str, table: str = "") -> None:
    """A results log (--out, --resume) named as a table (``s.csv``, ``s.xlsx``) would
    get JSON Lines under a table's name: refused; ``table`` says where a table goes."""
    if Path(path).suffix.lower() in TABLE_SUFFIXES:
        raise InputError(
            f"the results log is JSON Lines (one result a line), not a table: name it "
            f"FILE.jsonl{table}",
            f"{flag} {path}",
        )


def check_writable(where: str, path: Path) -> None:
    """Can ``path`` be appended to (created if missing, and removed again; its folder
    made where missing)? An input error naming ``where`` (the flag and the file) otherwise."""
    writable_file(path, where)


@contextmanager
def told_by_flag(flag: str) -> Iterator[None]:
    """An InputError on the value ``flag`` gave names the flag, as argparse's own do
    (``--backend: unknown backend 'nope'``); one naming a file stays as it is."""
    try:
        yield
    except InputError as e:
        if e.where is not None:
            raise
        raise InputError(e.message.removeprefix(f"{flag.lstrip('-')}: "), flag) from None
