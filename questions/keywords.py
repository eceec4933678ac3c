"""The keywords of the Python API (``check``, ``sweep``, ``compare``, ``max_gap``), read
from one table: how the model loads, the query's shape, and the settings and options of
compiler/options.py's tables; and from a call's keywords, its model and its queries."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import (
    CONSTRAINT_WORDS,
    CONSTRAINTS_IN_SENS,
    InputError,
    closest,
    keyword_synonym,
)
from ..compiler.options import OPTION_BY_NAME, OPTIONS, SETTINGS, SHAPE, idle_data_aware_option
from ..compiler.query import PASS_NAMES, Query
from ..readers.data import label_column, load_data, say_data_notes
from ..readers.load import BOUNDS, DETAILS_COLUMNS, GROUPS_HELP, load_model
from .memory import refuse_file_over_limit
from .query_build import query_from_keywords

# what a keyword sets: how the model loads, the query, or one of its options
MODEL, QUERY, OPTION = "model", "query", "option"


@dataclass(frozen=True)
class Keyword:
    """A keyword that ``check``, ``sweep`` and ``compare`` all take, with its one help
    text; the commands' flags are made from the query's (interfaces/cli/common.py)."""

    name: str
    default: object
    help: str
    role: str
    takes: str = "text"  # the kind of value (compiler/options.py's OptionSpec.takes)
    choices: tuple = ()
    group: str = ""  # the flags of one group exclude each other


def _from_table(spec, role: str, default: object) -> Keyword:
    """The keyword of a row of compiler/options.py's tables."""
    return Keyword(spec.name, default, spec.help, role, spec.takes, spec.choices, spec.group)


_PASSES = (
    f"passes to use ({', '.join(PASS_NAMES)}; 'all', 'none', or 'no-NAME' to drop one from "
    "the default, e.g. no-obj): comma-separated or a list"
)

WHERE_HELP = (
    "a constraint on the inputs, as a .sens query's where clause writes it (repeatable; in "
    "Python a text or a list of them; 'x1.age <= 30', 'x1.age <= x2.age', 'age in [30, 40]', "
    "'workclass == \"Private\"'; docs/language.md, 'Constraints')"
)

API_KEYWORDS: dict[str, Keyword] = {
    k.name: k
    for k in (
        Keyword(
            "details",
            None,
            f"feature names, bounds and kinds: a CSV path or a DataFrame ({DETAILS_COLUMNS})",
            MODEL,
        ),
        Keyword(
            "data",
            None,
            "real data (a CSV / Parquet path, a DataFrame, or an array in model order): "
            + OPTION_BY_NAME["data"].help.split(": ", 1)[-1],
            MODEL,
        ),
        Keyword(
            "label",
            "label",
            "the data's label column, a name (default label, which data may lack; None: the "
            "data has no label column; no answer reads labels; an audit can group by them)",
            MODEL,
        ),
        Keyword(
            "bounds",
            "auto",
            f"where feature bounds come from ({', '.join(BOUNDS)}): 'data' narrows each to its "
            "column's min and max in the data, 'none' keeps the declared ones (without details: "
            "all reals), 'auto' (the default) is 'data' when data is given and no details "
            "declare bounds",
            MODEL,
        ),
        Keyword(
            "groups",
            None,
            GROUPS_HELP,
            MODEL,
        ),
        Keyword(
            "trust_pickle",
            False,
            "load a pickled model file (.pkl, .joblib), which runs code",
            MODEL,
        ),
        *(_from_table(s, QUERY, s.default) for s in SHAPE[:3]),
        Keyword("passes", None, _PASSES, QUERY, "text", (), "passes"),
        *(_from_table(s, QUERY, s.default) for s in (*SHAPE[3:], *SETTINGS)),
        *(_from_table(o, OPTION, None) for o in OPTIONS if o.name not in ("data", "label")),
        Keyword("where", None, WHERE_HELP, QUERY),
    )
}


def takes_query_keywords(fn: Callable) -> Callable:
    """Give ``fn`` (which takes ``**keywords``) the table's keywords as its signature and
    its docstring's last section, so ``help()`` and notebooks show them; a keyword ``fn``
    names itself keeps its own meaning."""
    sig = inspect.signature(fn)
    own = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    added = [k for k in API_KEYWORDS.values() if k.name not in sig.parameters]
    params = own + [
        inspect.Parameter(k.name, inspect.Parameter.KEYWORD_ONLY, default=k.default) for k in added
    ]
    fn.__signature__ = sig.replace(parameters=params)
    lines = [
        f"    ``{k.name}``{'' if k.default is None else f' (default {k.default!r})'}: {k.help}"
        for k in added
    ]
    fn.__doc__ = (
        (fn.__doc__ or "").rstrip()
        + "\n\n    Keywords shared with check, sweep and compare:\n\n"
        + "\n".join(lines)
        + "\n"
    )
    return fn


def keyword_values(given: dict, where: str, own: tuple[str, ...] = ()) -> dict:
    """Every table keyword's value: as given, else its default. An unknown keyword is a
    TypeError, as Python reports one (with the closest known name, among the table's and
    ``own``, the calling function's other keywords: max_gap's ``tolerance``)."""
    for k in given:
        if k in CONSTRAINT_WORDS and k not in API_KEYWORDS:
            raise TypeError(
                f"{where}() got an unexpected keyword argument {k!r}: {CONSTRAINTS_IN_SENS}"
            )
        if k not in API_KEYWORDS:
            raise TypeError(
                f"{where}() got an unexpected keyword argument {k!r}"
                f"{keyword_synonym(k, own) or closest(k, [*API_KEYWORDS, *own])}"
            )
    values = {name: given.get(name, k.default) for name, k in API_KEYWORDS.items()}
    label_column(values["label"])  # refused with or without data: label=0 is no class
    return values


def model_of(model, kw: dict) -> Ensemble:
    """The ensemble a call asks about: ``model`` as it is, or loaded (or re-declared) with
    the call's details, data and bounds. A model file whose size its format gives before
    the load (a .skops file) and that would pass the call's memory limit is refused
    before it is loaded (MemoryRefused)."""
    if (
        isinstance(model, Ensemble)
        and kw["details"] is None
        and kw["data"] is None
        and kw["bounds"] in ("auto", "none")
        and kw["groups"] is None
    ):
        return model
    if isinstance(model, (str, Path)):
        refuse_file_over_limit(model, kw.get("memory_mb"))
    return load_model(
        model,
        details=kw["details"],
        data=kw["data"],
        label=kw["label"],
        bounds=kw["bounds"],
        groups=kw["groups"],
        trust_pickle=kw["trust_pickle"],
    )


def query_maker(kw: dict, ens: Ensemble) -> Callable[..., Query]:
    """``make(vary, name)`` -> the call's query for those features, with the call's
    ``where`` constraints (given as a reader: interfaces/api.py's ``WhereTexts``, since
    their grammar is the language layer's). Data given in memory
    is read once into a data set (recorded in a result by its content's digest). A
    data-aware option that the call's mode ignores is an InputError, as its flag is."""
    why = idle_data_aware_option(kw, kw["data_aware"], str)
    if why is not None:
        raise InputError(why)
    data = kw["data"]
    if data is not None:
        ds = load_data(data, ens, kw["label"])  # a path's read is cached for the solve
        say_data_notes(ds)
        data = data if isinstance(data, (str, Path)) else ds
    opts = {o.name: kw[o.name] for o in OPTIONS}
    opts["data"] = data
    opts["label"] = kw["label"] if data is not None else None
    opts["clauses"] = str(kw["clauses"]) if kw["clauses"] is not None else None

    where = kw["where"].read(ens) if kw["where"] is not None else None

    def make(vary, name: str = "") -> Query:
        q = query_from_keywords(vary, kw, ens=ens, name=name, options=opts)
        return q if where is None else where.query(q)

    return make
