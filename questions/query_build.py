"""A checked Query from the keywords that the CLI, the Python API and ``.sens`` give: the one
path by which every interface builds a query (names, values, modes and options checked):
its question (``make_question``: the kind and its parameters) and its solve plan
(``make_plan``: backend, time limit, passes, options)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..answers.work import work_refusal
from ..backends.registry import BACKENDS, get_info, is_search_method, require_installed
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, as_number_hint, closest, setting, spelled
from ..compiler.feature_names import feature_list, refuse_repeats
from ..compiler.kinds import check_kind
from ..compiler.options import (
    DEFAULT_BACKEND,
    DEFAULT_SEED,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT,
    OPTION_BY_NAME,
    DataAwareMode,
    QueryOptions,
    seed_problem,
    threads_problem,
    timeout_problem,
    work_amount,
    work_problem,
)
from ..compiler.plan import Plan
from ..compiler.query import (
    DEFAULT_PASSES,
    EITHER,
    KANT_PASSES,
    PASS_NAMES,
    Gap,
    Query,
    Question,
    check_delta,
)
from ..driver import is_race, race_backends
from ..driver.race_spec import unknown_backend

# the keywords of make_query (the API's, the CLI's dests, .sens's): what the question
# asks, and how it is solved
QUESTION_KEYWORDS = (
    "kind",
    "params",
    "gap",
    "margin_gap",
    "above",
    "below",
    "delta",
    "direction",
    "classes",
)
PLAN_KEYWORDS = (
    "passes",
    "baseline",
    "backend",
    "timeout",
    "work",
    "threads",
    "seed",
    "data_aware",
)


def query_from_keywords(
    vary,
    keywords: Mapping,
    *,
    ens: Ensemble | None = None,
    name: str = "",
    options=None,
    vary_keyword: str = "vary",
) -> Query:
    """make_query with the keywords ``keywords`` holds (by QUESTION_KEYWORDS' and
    PLAN_KEYWORDS' names; the rest take make_query's defaults): the one call by which
    every interface builds a query. With ``ens``, ``vary`` may also give indices or names
    as a library rewrote them (:func:`feature_list`); messages name ``vary_keyword``
    (``--vary`` on the CLI)."""
    given = {k: keywords[k] for k in (*QUESTION_KEYWORDS, *PLAN_KEYWORDS) if k in keywords}
    if ens is not None:
        vary = feature_list(ens, vary, vary_keyword)
    return make_query(vary, name=name, options=options, vary_keyword=vary_keyword, **given)


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


def as_number(value, what: str) -> float:
    """A number a user gave (a str that reads as one too), else one InputError."""
    if not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    raise InputError(f"{what} must be a number, not {value!r}{as_number_hint(value)}")


def gap_of(gap, margin_gap, default: Gap) -> Gap:
    """The gap a user gives as a probability gap or a margin gap (not both; neither:
    ``default``), a finite number: for a query and an audit alike."""
    if gap is not None and margin_gap is not None:
        raise InputError(
            f"{setting('gap', gap)} and {setting('margin_gap', margin_gap)}: give either a "
            "probability gap or a margin gap, not both"
        )
    if margin_gap is not None:
        g = Gap(as_number(margin_gap, "margin gap"), "margin")
    else:
        g = default if gap is None else Gap(as_number(gap, "gap"), "prob")
    if not math.isfinite(g.value):
        what = "gap" if g.kind == "prob" else "margin gap"
        raise InputError(f"{what} {g.value} is not a finite number")
    return g


# why the threshold form refuses above < below
A_BELOW_B = (
    "with A < B, one input whose prediction lies in [A, B] is both x1 and x2, nothing changed"
)


def _gap_given(gap, margin_gap) -> str | None:
    """The gap a user gave, as their interface spells it (None: none)."""
    if gap is not None:
        return setting("gap", gap)
    return None if margin_gap is None else setting("margin_gap", margin_gap)


def threshold_of(above, below, gap_given: str | None) -> tuple[float, float] | None:
    """A regressor's threshold form f(x1) >= above, f(x2) <= below (both or neither);
    ``gap_given``: the gap the user also gave, as :func:`_gap_given` spells it."""
    if above is None and below is None:
        return None
    if above is None or below is None:
        given, missing = ("below", "above A") if above is None else ("above", "below B")
        raise _half_threshold(given, below if above is None else above, missing)
    a, b = as_number(above, "above"), as_number(below, "below")
    if gap_given:
        raise InputError(
            f"{gap_given} and {setting('above', a)} {setting('below', b)}: give either a gap "
            "or the threshold form, not both"
        )
    for keyword, v in (("above", a), ("below", b)):
        if not math.isfinite(v):
            raise InputError(f"{setting(keyword, v)} must be a finite number")
    if a < b:
        raise InputError(
            f"{setting('above', a)} and {setting('below', b)}: the threshold form needs "
            f"above >= below ({A_BELOW_B})"
        )
    return a, b


def _half_threshold(keyword: str, value, missing: str) -> InputError:
    """One end of the threshold form given without the other, as one InputError."""
    other = setting(*missing.split())
    return InputError(
        f"{setting(keyword, value)} needs {other} too: the threshold form asks both, "
        "f(x1) >= A and f(x2) <= B"
    )


def delta_of(delta, direction, gap_given: str | None, threshold) -> tuple[float | None, str]:
    """A regressor's change by at least delta, and its direction (default either)."""
    if delta is None:
        if direction is not None:
            raise InputError(
                f"{setting('direction', direction)} goes with {setting('delta', 'D')} (the "
                "predictions differ by at least D)"
            )
        return None, EITHER
    if gap_given or threshold is not None:
        other = gap_given or f"{setting('above', threshold[0])} {setting('below', threshold[1])}"
        raise InputError(
            f"{other} and {setting('delta', delta)}: give one of a gap, the threshold form "
            "(above, below) or a change (delta), not both"
        )
    return check_delta(delta, EITHER if direction is None else direction)


def check_options(options: dict | QueryOptions | None) -> QueryOptions:
    """Query options with their values checked against the option table."""
    opts = QueryOptions.of({k: v for k, v in dict(options or {}).items() if v is not None})
    for name, value in opts:
        bad = OPTION_BY_NAME[name].check(value)
        if bad:
            raise InputError(f"option {name} {bad}, not {value!r}")
    return opts


def _a_name(backend) -> None:
    if not isinstance(backend, str):
        raise InputError(
            f"backend takes a backend's name (treesens backends lists them), not {backend!r}"
        )


def check_backend_name(backend: str) -> None:
    """A backend name is known (or a race of known ones) before anything runs: a query the
    heuristic answers never reaches the backend, and would otherwise report a made-up one."""
    _a_name(backend)
    if is_race(backend):
        race_backends(backend)
    elif not is_search_method(backend):
        if backend not in BACKENDS:
            raise InputError(unknown_backend(backend))
        get_info(backend)


def require_backend(backend: str) -> None:
    """The backend (or every backend of a race) is known and installed, checked before a
    model is loaded: otherwise the heuristic would answer under its name and the solver
    fail later. An InputError says how to install it."""
    _a_name(backend)
    if is_race(backend):
        race_backends(backend)
    else:
        check_backend_name(backend)
        require_installed(backend)


def make_question(
    vary,
    *,
    kind: str | None = None,
    params=None,
    gap: float | None = None,
    margin_gap: float | None = None,
    above: float | None = None,
    below: float | None = None,
    delta: float | None = None,
    direction: str | None = None,
    classes=None,
    name: str = "",
    vary_keyword: str = "vary",
) -> Question:
    """What is asked, checked: the varied features, the kind (compiler/kinds.py; default
    the pair question, or a regressor's change with ``delta``) with its ``params`` (a
    dict or (name, value) pairs), and the kind's gap, classes, change or threshold form."""
    if isinstance(vary, str):
        vary = [v.strip() for v in vary.split(",") if v.strip()]
    vary = tuple(vary)
    refuse_repeats(vary, vary_keyword)
    g = gap_of(gap, margin_gap, Gap(0.2, "prob", given=False))
    gap_given = _gap_given(gap, margin_gap)
    threshold = threshold_of(above, below, gap_given)
    change = delta_of(delta, direction, gap_given, threshold)
    if isinstance(classes, str):
        classes = tuple(c.strip() for c in classes.split(","))
        if len(classes) != 2:
            raise InputError("classes: give two classes, C1,C2 or (C1, C2); either may be 'any'")
        classes = tuple(int(c) if c.isdigit() else c for c in classes)
    elif getattr(classes, "ndim", None) == 1 and hasattr(classes, "tolist"):
        classes = _pair_of_classes(tuple(classes.tolist()))  # a numpy array, a Series
    elif classes is not None and (not isinstance(classes, (tuple, list)) or len(classes) != 2):
        raise InputError(
            f"classes: give two classes, C1,C2 or (C1, C2); either may be 'any' (got {classes!r})"
        )
    question = Question(
        vary=vary,
        gap=g,
        threshold=threshold,
        delta=change[0],
        direction=change[1],
        kind=kind or "",
        params=params_of(params),
        name=name,
        classes=tuple(classes) if classes else None,
    )
    check_kind(question)
    return question


def _pair_of_classes(classes: tuple) -> tuple:
    """A 1-d array's classes (its items as Python's numbers), two or an InputError."""
    if len(classes) != 2:
        raise InputError(
            f"classes: give two classes, C1,C2 or (C1, C2); either may be 'any' (got {classes!r})"
        )
    return classes


def params_of(params) -> tuple:
    """A kind's parameters from a dict or (name, value) pairs (None: none)."""
    if params is None:
        return ()
    if isinstance(params, dict):
        return tuple(params.items())
    try:
        pairs = tuple((str(k), v) for k, v in params)
    except (TypeError, ValueError):
        raise InputError(f"params: give a dict or (name, value) pairs, not {params!r}") from None
    return pairs


def make_plan(
    *,
    passes=None,
    baseline: str | None = None,
    backend: str = DEFAULT_BACKEND,
    timeout: float = DEFAULT_TIMEOUT,
    work: int | str | None = None,
    threads: int = DEFAULT_THREADS,
    seed: int = DEFAULT_SEED,
    data_aware: str | DataAwareMode = DataAwareMode.NONE,
    options: dict | QueryOptions | None = None,
) -> Plan:
    """How a question is solved, checked: backend, time limit, threads, seed, passes,
    data-aware mode and the query options of compiler/options.py by name (None: not
    given)."""
    if timeout_problem(timeout):
        raise InputError(
            f"timeout {timeout_problem(timeout)}, not {timeout!r}{as_number_hint(timeout)}"
        )
    work = work_amount(work)
    for name, value, problem in (
        ("work", work, work_problem),
        ("threads", threads, threads_problem),
        ("seed", seed, seed_problem),
    ):
        if problem(value):
            raise InputError(f"{name} {problem(value)}, not {value!r}")
    check_backend_name(backend)
    if work is not None and (why := work_refusal(backend)) is not None:
        raise InputError(why)
    mode = DataAwareMode.parse(data_aware)
    opts = check_options(options)
    if mode != DataAwareMode.NONE and opts.data is None:
        raise InputError(
            f"data-aware mode {mode.value!r} needs data ({spelled('data=', '--data FILE')})"
        )
    return Plan(
        passes=parse_passes(passes, baseline),
        backend=backend,
        timeout=float(timeout),
        work=None if work is None else int(work),
        threads=int(threads),
        seed=int(seed),
        data_aware=mode,
        options=opts,
    )


def make_query(
    vary, *, name: str = "", options=None, vary_keyword: str = "vary", **keywords
) -> Query:
    """A Query from the API's / the CLI's / ``.sens``'s arguments, checked: the question
    (``make_question``'s keywords) with its plan (``make_plan``'s). ``options``: the query
    options of compiler/options.py by name (None: not given)."""
    unknown = [k for k in keywords if k not in QUESTION_KEYWORDS and k not in PLAN_KEYWORDS]
    if unknown:
        known = (*QUESTION_KEYWORDS, *PLAN_KEYWORDS)
        raise TypeError(
            f"make_query() got an unexpected keyword argument {unknown[0]!r}"
            f"{closest(unknown[0], known)}"
        )
    question = make_question(
        vary,
        name=name,
        vary_keyword=vary_keyword,
        **{k: v for k, v in keywords.items() if k in QUESTION_KEYWORDS},
    )
    plan = make_plan(options=options, **{k: v for k, v in keywords.items() if k in PLAN_KEYWORDS})
    return Query.of(question, plan)
