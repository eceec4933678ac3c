"""The Python API, mirroring the CLI: ``check`` and ``compare`` here, ``sweep`` in
sweep.py. All three take the same keywords, read from one table (:data:`API_KEYWORDS`):
how the model loads, the query's shape, and the settings and options of
compiler/options.py's tables."""

from __future__ import annotations

import inspect
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..answers.result import Result
from ..backends.registry import get_info, require_installed
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, closest
from ..compiler.options import (
    DEFAULT_BACKEND,
    DEFAULT_SEED,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    OPTION_BY_NAME,
    OPTIONS,
    SETTINGS,
    DataAwareMode,
    QueryOptions,
)
from ..compiler.query import DEFAULT_PASSES, KANT_PASSES, PASS_NAMES, Gap, Query
from ..driver import is_race, race_backends, solve_query
from ..frontends.data import load_data
from ..frontends.load import BOUNDS, DETAILS_COLUMNS, load_model
from ..questions.compare import backend_list, compare_query, disagreement
from ..questions.max_gap import DEFAULT_TOLERANCE, check_tolerance, max_gap_query

# what a keyword sets: how the model loads, the query, one of its options, or the run
MODEL, QUERY, OPTION, RUN = "model", "query", "option", "run"


@dataclass(frozen=True)
class Keyword:
    """A keyword that ``check``, ``sweep`` and ``compare`` all take."""

    name: str
    default: object
    help: str
    role: str


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
        Keyword("label", "label", "label column of data (default label)", MODEL),
        Keyword(
            "bounds",
            "none",
            f"where feature bounds come from ({' or '.join(BOUNDS)}): 'none' keeps the declared "
            "ones (without details: all reals), 'data' narrows each to its column's min and max",
            MODEL,
        ),
        Keyword(
            "trust_pickle",
            False,
            "load a pickled model file (.pkl, .joblib), which runs code",
            MODEL,
        ),
        Keyword(
            "gap",
            None,
            "probability gap g: binary P(x1) >= 0.5+g, P(x2) <= 0.5-g (0 <= g < 0.5, default "
            "0.2); multiclass ratio g >= 1",
            QUERY,
        ),
        Keyword("margin_gap", None, "the gap in raw-score (margin) space instead", QUERY),
        Keyword("classes", None, "multiclass: (C1, C2) or 'C1,C2'; either may be 'any'", QUERY),
        Keyword(
            "passes",
            None,
            f"passes to use ({', '.join(PASS_NAMES)}; 'all', 'none', 'no-NAME'): a list or 'a,b'",
            QUERY,
        ),
        Keyword("baseline", None, "'kant': the Kantchelian encoding without the passes", QUERY),
        Keyword(
            "data_aware",
            DataAwareMode.NONE.value,
            "steer the search toward data: prob, clause or probclause (docs/data-aware.md)",
            QUERY,
        ),
        *(Keyword(s.api_keyword, s.default, s.help, QUERY) for s in SETTINGS),
        *(
            Keyword(o.api_keyword, None, o.help, OPTION)
            for o in OPTIONS
            if o.api_keyword and o.name not in ("data", "label")
        ),
        Keyword("memory_mb", None, "memory limit of the solver process in MB", RUN),
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


def keyword_values(given: dict, where: str) -> dict:
    """Every table keyword's value: as given, else its default. An unknown keyword is a
    TypeError, as Python reports one (with the closest known name)."""
    for k in given:
        if k not in API_KEYWORDS:
            raise TypeError(
                f"{where}() got an unexpected keyword argument {k!r}{closest(k, API_KEYWORDS)}"
            )
    return {name: given.get(name, k.default) for name, k in API_KEYWORDS.items()}


def model_of(model, kw: dict) -> Ensemble:
    """The ensemble a call asks about: ``model`` as it is, or loaded (or re-declared) with
    the call's details, data and bounds."""
    if (
        isinstance(model, Ensemble)
        and kw["details"] is None
        and kw["data"] is None
        and kw["bounds"] == "none"
    ):
        return model
    return load_model(
        model,
        details=kw["details"],
        data=kw["data"],
        label=kw["label"],
        bounds=kw["bounds"],
        trust_pickle=kw["trust_pickle"],
    )


def query_maker(kw: dict, ens: Ensemble) -> Callable[..., Query]:
    """``make(vary, name)`` -> the call's query for those features. Data given in memory
    is read once into a data set (recorded in a result by its content's digest)."""
    data = kw["data"]
    if data is not None and not isinstance(data, (str, Path)):
        data = load_data(data, ens, kw["label"])
    opts = {o.name: kw[o.api_keyword] for o in OPTIONS if o.api_keyword}
    opts["data"] = data
    opts["label"] = kw["label"] if data is not None else None
    opts["clauses"] = str(kw["clauses"]) if kw["clauses"] is not None else None

    def make(vary, name: str = "") -> Query:
        return make_query(
            vary,
            gap=kw["gap"],
            margin_gap=kw["margin_gap"],
            classes=kw["classes"],
            passes=kw["passes"],
            baseline=kw["baseline"],
            backend=kw["backend"],
            timeout=kw["timeout"],
            threads=kw["threads"],
            seed=kw["seed"],
            name=name,
            data_aware=kw["data_aware"],
            options=opts,
        )

    return make


def parse_passes(passes=None, baseline: str | None = None) -> frozenset[str]:
    if baseline is not None:
        if baseline.lower() != "kant":
            raise InputError(f"unknown baseline {baseline!r} (known: kant)")
        return KANT_PASSES
    if passes is None:
        return DEFAULT_PASSES
    if isinstance(passes, str):
        items = [p.strip().lower() for p in passes.split(",") if p.strip()]
    else:
        items = [str(p).lower() for p in passes]
    if items in (["all"], ["default"]):
        return DEFAULT_PASSES
    if items == ["none"] or items == []:
        return frozenset()
    for whole in ("all", "default", "none"):
        if whole in items:
            raise InputError(
                f"pass list {','.join(items)!r}: {whole!r} stands alone, not in a list"
            )
    out = set()
    for p in items:
        neg = p.startswith("-") or p.startswith("no-")
        name = p.lstrip("-").removeprefix("no-")
        if name not in PASS_NAMES:
            raise InputError(f"unknown pass {name!r} (known: {', '.join(PASS_NAMES)}, all, none)")
        if neg:
            out = (out or set(DEFAULT_PASSES)) - {name}
        else:
            out.add(name)
    return frozenset(out)


def check_options(options: dict | QueryOptions | None) -> QueryOptions:
    """Query options with their values checked against the option table."""
    opts = QueryOptions.of({k: v for k, v in dict(options or {}).items() if v is not None})
    for name, value in opts:
        bad = OPTION_BY_NAME[name].check(value)
        if bad:
            raise InputError(f"option {name} {bad}, not {value!r}")
    return opts


def check_backend_name(backend: str) -> None:
    """A backend name is known (or a race of known ones) before anything runs: a query the
    heuristic answers never reaches the backend, and would otherwise report a made-up one."""
    if is_race(backend):
        race_backends(backend)
    else:
        get_info(backend)


def require_backend(backend: str) -> None:
    """The backend (or every backend of a race) is known and installed, checked before a
    model is loaded: otherwise the heuristic would answer under its name and the solver
    fail later. An InputError says how to install it."""
    if is_race(backend):
        race_backends(backend)
    else:
        require_installed(backend)


def make_query(
    vary,
    *,
    gap: float | None = None,
    margin_gap: float | None = None,
    classes=None,
    passes=None,
    baseline: str | None = None,
    backend: str = DEFAULT_BACKEND,
    timeout: float = DEFAULT_TIMEOUT,
    threads: int = DEFAULT_THREADS,
    seed: int = DEFAULT_SEED,
    name: str = "",
    data_aware: str | DataAwareMode = DataAwareMode.NONE,
    options: dict | QueryOptions | None = None,
) -> Query:
    """A Query from the API's / the CLI's arguments, checked (names, values, modes).
    ``options``: the query options of compiler/options.py by name (None: not given)."""
    if isinstance(vary, str):
        vary = [v.strip() for v in vary.split(",") if v.strip()]
    vary = tuple(vary)
    twice = [v for i, v in enumerate(vary) if v in vary[:i]]
    if twice:
        raise InputError(f"--vary / vary: feature {twice[0]!r} listed twice")
    if gap is not None and margin_gap is not None:
        raise InputError("give either a probability gap or a margin gap, not both")
    if margin_gap is not None:
        g = Gap(float(margin_gap), "margin")
    else:
        g = Gap(0.2, "prob", given=False) if gap is None else Gap(float(gap), "prob")
    if not math.isfinite(g.value):
        raise InputError(f"gap {g.value} is not a finite number")
    if timeout is None or not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(
            f"timeout must be a positive number of seconds up to {MAX_TIMEOUT:g}, got {timeout}"
        )
    if int(threads) < 1:
        raise InputError(f"threads must be at least 1, got {threads}")
    check_backend_name(backend)
    if isinstance(classes, str):
        classes = tuple(c.strip() for c in classes.split(","))
        if len(classes) != 2:
            raise InputError("--classes takes two classes: C1,C2 (C2 may be 'any')")
        classes = tuple(int(c) if c.isdigit() else c for c in classes)
    mode = DataAwareMode.parse(data_aware)
    opts = check_options(options)
    if mode != DataAwareMode.NONE and opts.data is None:
        raise InputError(f"data-aware mode {mode.value!r} needs data (--data FILE / data=...)")
    return Query(
        vary=tuple(vary),
        gap=g,
        name=name,
        classes=tuple(classes) if classes else None,
        passes=parse_passes(passes, baseline),
        backend=backend,
        timeout=float(timeout),
        threads=int(threads),
        seed=int(seed),
        data_aware=mode,
        options=opts,
    )


@takes_query_keywords
def check(
    model, vary, *, name: str = "", answer: Callable[..., Result] | None = None, **keywords
) -> Result:
    """Is ``model`` sensitive to the features in ``vary``? One query, one Result.

    ``model``: a model file path, a fitted XGBoost / LightGBM / scikit-learn model, or a
    loaded ``Ensemble``. ``data`` gives realistic witnesses and ``Result.distance`` to the
    data; ``data_aware`` ("prob", "clause", "probclause") also steers the search toward it
    (docs/data-aware.md). ``name`` labels the query (default: the features).
    ``answer``: what answers the query (default ``solve_query``; ``max_gap`` passes its
    search).

    >>> r = check("model.json", vary=["sex"], gap=0.2)   # doctest: +SKIP
    >>> r.status, r.witness
    """
    t0 = time.time()
    kw = keyword_values(keywords, "check")
    require_backend(kw["backend"])
    ens = model_of(model, kw)
    q = query_maker(kw, ens)(vary, name)
    res = (answer or solve_query)(ens, q, deadline=t0 + q.timeout, memory_mb=kw["memory_mb"])
    res.time["total"] = time.time() - t0
    return res


@takes_query_keywords
def compare(model, vary, *, backends=None, name: str = "", **keywords) -> list[Result]:
    """One query, compiled once, solved on several backends (each in its own worker
    process): a Result per backend, as ``treesens compare`` prints them.

    ``backends``: a list or "cpsat,highs" (default: every installed backend). The
    heuristic is off unless ``heuristic=True`` (it would answer for every backend alike).
    Backends that disagree (one proves "insensitive", another has a replayed witness)
    raise a RuntimeWarning: one of them is wrong.
    """
    kw = keyword_values(keywords, "compare")
    if isinstance(backends, (list, tuple)):
        backends = ",".join(backends)
    names = backend_list(backends)
    ens = model_of(model, kw)
    q = query_maker(kw, ens)(vary, name)
    results = compare_query(
        ens, q, names, memory_mb=kw["memory_mb"], heuristic=bool(kw["heuristic"])
    )
    msg = disagreement(results)
    if msg:
        warnings.warn(f"{q.label}: {msg}", RuntimeWarning, stacklevel=2)
    return results


@takes_query_keywords
def max_gap(model, vary, *, tolerance: float = DEFAULT_TOLERANCE, **check_kw) -> Result:
    """How sensitive is a binary ``model`` to ``vary``: the largest gap g* at which it is
    sensitive, within ``tolerance`` (absolute, in probability), found by bisection with
    ``check`` (questions/max_gap.py). The keywords are ``check``'s, without a gap; the whole
    search runs within ``timeout``.

    ``Result.max_gap`` holds the bounds: ``lower`` (the gap the replay-checked witness
    achieves, also ``Result.gap``), ``upper`` (proven: no pair reaches a larger gap),
    ``proven`` (they meet within the tolerance). Status "insensitive": no pair at any
    gap; "unknown": no witness and no proof within the time limit.

    >>> r = max_gap("model.json", vary=["sex"])   # doctest: +SKIP
    >>> r.max_gap["lower"], r.max_gap["upper"]
    """
    for name in ("gap", "margin_gap"):
        if check_kw.get(name) is not None:
            raise InputError(f"max_gap searches the gap itself: drop {name}=")
    tol = check_tolerance(tolerance)

    def answer(ens, q, **kw) -> Result:
        return max_gap_query(ens, q, tolerance=tol, **kw)

    return check(model, vary, answer=answer, **check_kw)
