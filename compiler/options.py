"""The query options: one declarative table that the CLI, the API and ``.sens`` all read.

Each option is a field of :class:`QueryOptions` (``Plan.options``) and a row of
:data:`OPTIONS`: its type, default, one help text, the kind of value it takes and how
``.sens`` sets it; :data:`SETTINGS` are the solve plan's own fields (compiler/plan.py:
backend, timeout, ...) and :data:`SHAPE` what the query asks (compiler/question.py: its
kind and parameters, gap, classes, ...; and the passes and data-aware mode). Its name is the API keyword
(questions/keywords.py), which the CLI's flag spells with dashes (interfaces/cli/common.py
adds the presentation: metavars). The data-aware modes are :class:`DataAwareMode`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from functools import partial

from .enums import StrValue
from .errors import InputError, closest

# the longest time limit accepted (about 31 years): a limit must be a finite deadline
MAX_TIMEOUT = 1e9


class DataAwareMode(StrValue):
    """How a query uses its data (docs/data-aware.md): ``prob`` a utility objective,
    ``clause`` learned cavity clauses excluded, ``probclause`` both."""

    NONE = "none"
    PROB = "prob"
    CLAUSE = "clause"
    PROBCLAUSE = "probclause"

    @property
    def uses_prob(self) -> bool:
        return self in (DataAwareMode.PROB, DataAwareMode.PROBCLAUSE)

    @property
    def uses_clauses(self) -> bool:
        return self in (DataAwareMode.CLAUSE, DataAwareMode.PROBCLAUSE)

    @classmethod
    def parse(cls, text: str | DataAwareMode | None) -> DataAwareMode:
        """A mode from its name (any case, or an alias: off, prob+clause, clause+prob)."""
        if isinstance(text, DataAwareMode):
            return text
        name = (text or "none").lower()
        name = MODE_ALIASES.get(name, name)
        try:
            return cls(name)
        except ValueError:
            raise InputError(
                f"unknown data-aware mode {name!r}{closest(name, MODE_NAMES)}; "
                f"known: {', '.join(MODE_NAMES)}"
            ) from None


MODE_NAMES: tuple[str, ...] = tuple(m.value for m in DataAwareMode)
MODE_ALIASES = {"prob+clause": "probclause", "clause+prob": "probclause", "off": "none"}
_CLAUSE_MODES = (DataAwareMode.CLAUSE, DataAwareMode.PROBCLAUSE)
_PROB_MODES = (DataAwareMode.PROB, DataAwareMode.PROBCLAUSE)


# ---- value checks: what a value must be, when it is not (None: it is fine) -------------


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole_at_least_1(v: object) -> str | None:
    ok = _finite(v) and v >= 1 and float(v).is_integer()
    return None if ok else "takes a whole number of at least 1"


# the most solver threads asked for (CP-SAT refuses a model with 65,536 workers as
# "invalid"; far more than any machine's cores)
MAX_THREADS = 1024


def threads_problem(v: object) -> str | None:
    ok = _finite(v) and float(v).is_integer() and 1 <= v <= MAX_THREADS
    return None if ok else f"takes a whole number from 1 to {MAX_THREADS}"


# the largest seed every solver takes (CP-SAT's random_seed is a 32-bit int; numpy's
# generators take no negative seed)
MAX_SEED = 2**31 - 1


def seed_problem(v: object) -> str | None:
    ok = _finite(v) and float(v).is_integer() and 0 <= v <= MAX_SEED
    return None if ok else f"takes a whole number from 0 to {MAX_SEED}"


def _positive_seconds(v: object) -> str | None:
    return None if _finite(v) and v > 0 else "takes a positive number of seconds"


def _timeout_seconds(v: object) -> str | None:
    if _finite(v) and 0 < v <= MAX_TIMEOUT:
        return None
    return (
        f"takes a number of seconds above 0 and at most {MAX_TIMEOUT:g} (about 31 years; use "
        "that for no limit)"
    )


# the largest work budget accepted (work units: docs/testing.md, "A contract for CI")
MAX_WORK = 1e15


WORK_SUFFIXES = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}


def work_amount(v: object) -> object:
    """A work budget as a whole number: ``4000000``, or text with a suffix (``"4M"``,
    ``"250k"``, ``"1.5G"``); anything else is returned as given (``work_problem`` then
    says what it must be)."""
    if not isinstance(v, str):
        return v
    text = v.strip().replace("_", "")
    unit = text[-1:] if text[-1:] in WORK_SUFFIXES else ""
    try:
        n = float(text[: len(text) - len(unit)]) * WORK_SUFFIXES[unit]
    except ValueError:
        return v
    return int(n) if math.isfinite(n) and n == int(n) else n


def fmt_work(n: float) -> str:
    """A work budget as ``.sens`` and the messages write it: 4M, 250k, 1500."""
    for unit in ("G", "M", "k"):
        k = WORK_SUFFIXES[unit]
        if n >= k and n % (k // 10) == 0:  # at most one decimal: 1.5G, not 1.234k
            return f"{n / k:g}{unit}"
    return f"{int(n)}"


def work_problem(v: object) -> str | None:
    """What a work budget must be (None: it is fine)."""
    if v is None or (_finite(v) and float(v).is_integer() and 1 <= v <= MAX_WORK):
        return None
    return f"takes a whole number of work units from 1 to {MAX_WORK:g} (e.g. 4M)"


def _positive(v: object) -> str | None:
    return None if _finite(v) and v > 0 else "takes a positive number"


def _non_negative(v: object) -> str | None:
    return None if _finite(v) and v >= 0 else "takes a number >= 0"


def _boolean(v: object) -> str | None:
    return None if isinstance(v, bool) else "takes true or false"


def _empty_rule(v: object) -> str | None:
    return None if v in ("smooth", "forbid") else "takes smooth or forbid"


def _file_name(v: object) -> str | None:
    return None if isinstance(v, str) else "takes a file name"


def _anything(v: object) -> str | None:
    return None


# how a ``.sens`` file sets an option
SENS_DATA = "data"  # the data statement: data "train.csv" label NAME
SENS_DATA_AWARE = "data_aware"  # a parameter of the data_aware line
SENS_OPTION = "option"  # option NAME = VALUE
SENS_STATEMENT = "statement"  # a statement of its own: timeout 30s, threads 4, ...


@dataclass(frozen=True)
class OptionSpec:
    """One query option: its name (the API keyword; the CLI flag is the name with dashes,
    questions/keywords.py), what it takes, its one help text, and how .sens sets it."""

    name: str  # the field of QueryOptions
    type: str  # what it takes, as a message says it
    default: object
    help: str
    sens: str | None  # SENS_DATA, SENS_DATA_AWARE or SENS_OPTION; None: not settable, see why
    check: Callable[[object], str | None] = _anything
    modes: tuple[DataAwareMode, ...] = ()  # the data-aware modes it acts in (empty: all)
    answer: bool = False  # it changes a query's answer (recorded as stats["asked"])
    why_not_in_sens: str = ""
    # the kind of value: whole, int, number, positive, bool, choice, file, text, pairs, data
    takes: str = "text"
    choices: tuple[str, ...] = ()
    group: str = ""  # the options of one group exclude each other

    @property
    def sens_key(self) -> str | None:
        """The word a .sens file writes for it (None: not settable there)."""
        if self.sens == SENS_DATA:
            return "data" if self.name == "data" else "label"
        return self.name if self.sens else None


# a data-aware parameter that counts (clause width, number of clauses)
_clause_count = partial(
    OptionSpec,
    type="a whole number >= 1",
    sens=SENS_DATA_AWARE,
    check=_whole_at_least_1,
    modes=_CLAUSE_MODES,
    answer=True,
    takes="whole",
)


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "data",
        "a data file or a dataset",
        None,
        "data file (CSV or Parquet with a label column): realistic witness values and the "
        "witness's distance to the data; also names the features of a model that has only "
        "generic names (XGBoost f0, f1, ...; LightGBM Column_0, ...; scikit-learn x0, ...)",
        SENS_DATA,
        answer=True,
        takes="data",
    ),
    OptionSpec(
        "label",
        "a column name",
        None,
        "label column of the data",
        SENS_DATA,
        answer=True,
        takes="text",
    ),
    _clause_count(
        name="clause_width",
        default=2,
        help="cavity clauses: at most W features per box (default 2)",
    ),
    _clause_count(name="max_clauses", default=50, help="cavity clauses: at most N (default 50)"),
    OptionSpec(
        "clause_time",
        "seconds",
        60.0,
        "cavity clauses: learning time budget in seconds (default 60; cached on disk)",
        SENS_DATA_AWARE,
        _positive_seconds,
        _CLAUSE_MODES,
        answer=True,
        takes="number",
    ),
    OptionSpec(
        "clauses",
        "a file name",
        None,
        "cavity clauses JSON file: read from it if it exists, else learn and write it",
        SENS_DATA_AWARE,
        _file_name,
        _CLAUSE_MODES,
        answer=True,
        takes="file",
    ),
    OptionSpec(
        "clause_cache",
        "true or false",
        True,
        "cavity clauses: reuse the clauses cached on disk (default true)",
        SENS_DATA_AWARE,
        _boolean,
        _CLAUSE_MODES,
        takes="bool",
    ),
    OptionSpec(
        "prob_alpha",
        "a number >= 0",
        1.0,
        "utility objective: Laplace smoothing of the data's bin counts (default 1)",
        SENS_DATA_AWARE,
        _non_negative,
        _PROB_MODES,
        takes="number",
    ),
    OptionSpec(
        "prob_empty",
        "smooth or forbid",
        "smooth",
        "utility objective: bins the data never visits are smoothed (smooth, the default) or "
        "forbidden (forbid)",
        SENS_DATA_AWARE,
        _empty_rule,
        _PROB_MODES,
        takes="choice",
        choices=("smooth", "forbid"),
    ),
    OptionSpec(
        "stall_time",
        "seconds",
        60.0,
        "utility objective: stop optimising when the best pair has not improved for S "
        "seconds (default 60; the best pair found answers, not proven optimal)",
        SENS_DATA_AWARE,
        _positive_seconds,
        _PROB_MODES,
        takes="number",
    ),
    OptionSpec(
        "optimise_time",
        "seconds",
        40.0,
        "utility objective: stop optimising S seconds after the optimiser started, once it "
        "has a pair (default 40; the best pair found answers, with its proven gap)",
        SENS_DATA_AWARE,
        _positive_seconds,
        _PROB_MODES,
        takes="number",
    ),
    OptionSpec(
        "optimality_gap",
        "a number >= 0",
        0.0,
        "utility objective: stop optimising when the best pair's utility is within this "
        "relative gap of the solver's bound (default 0: run to a proof or a stop rule)",
        SENS_DATA_AWARE,
        _non_negative,
        _PROB_MODES,
        takes="number",
    ),
    OptionSpec(
        "heuristic",
        "true or false",
        True,
        "run the pre-solver local search (default true; false measures the encoding and "
        "solver alone)",
        SENS_OPTION,
        _boolean,
        takes="bool",
    ),
    OptionSpec(
        "progress",
        "true or false",
        False,
        "log the compiler's progress (on by default with data)",
        SENS_OPTION,
        _boolean,
        takes="bool",
    ),
    OptionSpec(
        "heuristic_effort",
        "a positive number",
        1.0,
        "the pre-solver local search's work bound, a multiple of the default (default 1; "
        "more finds more pairs before the solver, and costs that much on 'insensitive')",
        SENS_OPTION,
        _positive,
        takes="positive",
    ),
    OptionSpec(
        "box_search",
        "true or false",
        True,
        "after the heuristic, search boxes of the pair space for up to half the time left "
        "before the solver (default true; gaps and regressors' changes, features of every "
        "kind; docs/benchmarks.md)",
        SENS_OPTION,
        _boolean,
        takes="bool",
    ),
    OptionSpec(
        "memory_mb",
        "a whole number of MB >= 1",
        None,
        "memory limit in MB: a query whose model would need more (estimated from its "
        "leaves, before compiling) is refused; the box search keeps its tables and a max "
        "gap's open boxes within what is left, a certificate whose proof would not fit "
        "is refused, and the solver process's address space is limited to it (default: "
        "3/4 of the memory available, at most 2,000 MB, for the estimate, the box "
        "search's tables, a max gap's open boxes and certificates only)",
        SENS_OPTION,
        _whole_at_least_1,
        takes="whole",
    ),
    OptionSpec(
        "solver_params",
        "NAME=VALUE pairs",
        (),
        "CP-SAT parameters (SatParameters fields, e.g. linearization_level=2)",
        None,
        why_not_in_sens="solver parameters cannot be set from a .sens file "
        "(treesens check --solver-param NAME=VALUE)",
        takes="pairs",
    ),
)
OPTION_BY_NAME: dict[str, OptionSpec] = {o.name: o for o in OPTIONS}

# the settings that are fields of the solve plan itself (not of its options)
SETTINGS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "backend",
        "a backend name",
        "cpsat",
        "solver backend (see 'treesens backends'; default cpsat)",
        SENS_STATEMENT,
        takes="text",
    ),
    OptionSpec(
        "timeout",
        "seconds",
        600.0,
        "seconds per query, compile included (default 600)",
        SENS_STATEMENT,
        _timeout_seconds,
        takes="number",
    ),
    OptionSpec(
        "work",
        "work units",
        None,
        "a work budget: every stage ends on counted work (the box search's boxes, the "
        "solver's deterministic time), not on the clock, so the verdict is the same on a "
        "loaded machine; the query's stats.work says what it used (docs/testing.md). The "
        "time limit stays as a safety net (default: none, the time limit decides)",
        SENS_STATEMENT,
        work_problem,
        takes="work",
    ),
    OptionSpec(
        "threads",
        f"a whole number from 1 to {MAX_THREADS}",
        1,
        "solver threads (default 1)",
        SENS_STATEMENT,
        threads_problem,
        takes="whole",
    ),
    OptionSpec(
        "seed",
        f"a whole number from 0 to {MAX_SEED}",
        0,
        "solver random seed (default 0)",
        SENS_STATEMENT,
        seed_problem,
        takes="int",
    ),
)
# the query's shape besides its features and passes: what it asks (its kind and the
# kind's parameters) and the passes and data-aware mode (set in .sens by statements of
# their own)
SHAPE: tuple[OptionSpec, ...] = (
    OptionSpec(
        "gap",
        "a number",
        None,
        "probability gap g: binary P(x1) >= 0.5+g, P(x2) <= 0.5-g (0 <= g < 0.5, default "
        "0.2); multiclass ratio g >= 1",
        SENS_STATEMENT,
        takes="number",
        group="gap",
    ),
    OptionSpec(
        "margin_gap",
        "a number",
        None,
        "the gap in raw-score (margin) space instead: m(x1) >= D, m(x2) <= -D",
        SENS_STATEMENT,
        takes="number",
        group="gap",
    ),
    OptionSpec(
        "above",
        "a number",
        None,
        "regressors (and probability models): x1's prediction is at least A (with --below B: "
        "f(x1) >= A, f(x2) <= B)",
        SENS_STATEMENT,
        takes="number",
    ),
    OptionSpec(
        "below",
        "a number",
        None,
        "regressors: x2's prediction is at most B (with --above A)",
        SENS_STATEMENT,
        takes="number",
    ),
    OptionSpec(
        "delta",
        "a number",
        None,
        "regressors (and probability models, read as one): the two predictions differ by at "
        "least D (D > 0; see direction)",
        SENS_STATEMENT,
        takes="number",
    ),
    OptionSpec(
        "direction",
        "up, down or either",
        None,
        "regressors, with delta: how the prediction moves from x1 to x2: up "
        "(f(x2) - f(x1) >= D), down (f(x1) - f(x2) >= D) or either (the default)",
        SENS_STATEMENT,
        takes="choice",
        choices=("up", "down", "either"),
    ),
    OptionSpec(
        "classes",
        "two classes",
        None,
        "multiclass: x1 predicted C1, x2 predicted C2, 'C1,C2' or a pair; either may be 'any'",
        SENS_STATEMENT,
    ),
    OptionSpec(
        "baseline",
        "kant",
        None,
        "kant: the Kantchelian baseline encoding (the paper's optimisations off)",
        SENS_STATEMENT,
        takes="choice",
        choices=("kant",),
        group="passes",
    ),
    OptionSpec(
        "kind",
        "a query kind",
        None,
        "what the query asks of its pair (compiler/kinds.py): pair (the default: the gap; a "
        "regressor's change with delta), change, anchored, max_gap, or a kind a plugin "
        "registers (docs/extending.md)",
        SENS_STATEMENT,
        takes="text",
    ),
    OptionSpec(
        "params",
        "NAME=VALUE pairs",
        None,
        "the kind's parameters (max_gap: tolerance=T; a plugin kind's own)",
        SENS_STATEMENT,
        takes="pairs",
    ),
    OptionSpec(
        "data_aware",
        "a data-aware mode",
        DataAwareMode.NONE.value,
        "steer the search toward the data: prob (utility objective), clause (exclude learned "
        "data cavities), probclause (both); default none: data alone only measures "
        "(docs/data-aware.md)",
        SENS_STATEMENT,
        takes="choice",
        choices=MODE_NAMES,
    ),
)
SETTING_BY_NAME: dict[str, OptionSpec] = {o.name: o for o in SETTINGS}
DEFAULT_BACKEND: str = SETTING_BY_NAME["backend"].default
DEFAULT_TIMEOUT: float = SETTING_BY_NAME["timeout"].default
timeout_problem: Callable[[object], str | None] = SETTING_BY_NAME["timeout"].check
DEFAULT_THREADS: int = SETTING_BY_NAME["threads"].default
DEFAULT_SEED: int = SETTING_BY_NAME["seed"].default
# the options that change a query's answer (the rest only steer the search or its logs)
ANSWER_OPTIONS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.answer)
DATA_AWARE_PARAMS: tuple[str, ...] = tuple(o.name for o in OPTIONS if o.sens == SENS_DATA_AWARE)


def idle_data_aware_option(
    given: Mapping, mode: str | DataAwareMode | None, spell: Callable[[str], str]
) -> str | None:
    """Why an option ``given`` (name: value, None: not given) would be ignored under the
    data-aware ``mode`` (``--clause-width`` without a clause mode; ``prob_alpha`` with
    ``prob_empty`` forbid), naming options as ``spell`` writes them; None when none is."""
    mode = DataAwareMode.parse(mode)
    for o in OPTIONS:
        if o.modes and given.get(o.name) is not None and mode not in o.modes:
            return (
                f"{spell(o.name)} has no effect with {spell('data_aware')} {mode.value}: "
                f"it acts in the {' and '.join(m.value for m in o.modes)} modes"
            )
    if given.get("prob_alpha") is not None and given.get("prob_empty") == "forbid":
        return (
            f"{spell('prob_alpha')} has no effect with {spell('prob_empty')} forbid: the "
            "intervals with data use plain frequencies (no smoothing)"
        )
    return None


def _solver_pairs(given: object) -> tuple:
    """Solver parameters as (name, value) pairs, from a dict or pairs; else an InputError
    (a dict's names read as pairs became tuples of letters)."""
    items = list(given.items()) if isinstance(given, dict) else given
    if not isinstance(items, str):
        try:
            pairs = tuple(tuple(p) for p in items)  # type: ignore[union-attr]
        except TypeError:
            pairs = None
        if pairs is not None and all(len(p) == 2 and isinstance(p[0], str) for p in pairs):
            return pairs
    raise InputError(
        f"solver_params: give a dict {{name: value}} or (name, value) pairs, not {given!r}"
    )


@dataclass(frozen=True)
class QueryOptions:
    """The options of one query (``Plan.options``); ``None``: not given (the default
    applies). Frozen and picklable; hashable while its values are (``data`` may be an
    in-memory dataset).

    It also reads as the ``(name, value)`` pairs of the options given, so
    ``dict(q.plan.options).get(name, default)`` keeps working."""

    data: object = None
    label: str | None = None
    clause_width: int | None = None
    max_clauses: int | None = None
    clause_time: float | None = None
    clauses: str | None = None
    clause_cache: bool | None = None
    prob_alpha: float | None = None
    prob_empty: str | None = None
    stall_time: float | None = None
    optimise_time: float | None = None
    optimality_gap: float | None = None
    heuristic: bool | None = None
    progress: bool | None = None
    heuristic_effort: float | None = None
    box_search: bool | None = None
    memory_mb: int | None = None
    solver_params: tuple | None = None

    @classmethod
    def of(cls, given: QueryOptions | dict | tuple | list | None = None) -> QueryOptions:
        """Options from a record, a dict or ``(name, value)`` pairs; an unknown name is an
        InputError. ``None`` values mean "not given"."""
        if isinstance(given, QueryOptions):
            return given
        pairs = dict(given or ())
        unknown = [k for k in pairs if k not in OPTION_BY_NAME]
        if unknown:
            k = unknown[0]
            raise InputError(
                f"unknown query option {k!r}{closest(k, OPTION_BY_NAME)}; "
                f"known: {', '.join(OPTION_BY_NAME)}"
            )
        if pairs.get("solver_params") is not None:
            pairs["solver_params"] = _solver_pairs(pairs["solver_params"])
        return cls(**pairs)

    def value(self, name: str) -> object:
        """The option's value, or its default when it was not given."""
        v = getattr(self, name)
        return OPTION_BY_NAME[name].default if v is None else v

    def given(self) -> dict[str, object]:
        """The options that were given, by name (in table order)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }

    def with_(self, **kw: object) -> QueryOptions:
        return replace(self, **kw)

    # ---- the (name, value) pairs view: dict(q.plan.options), `for k, v in q.plan.options` -------

    def __iter__(self) -> Iterator[tuple[str, object]]:
        return iter(self.given().items())

    def __len__(self) -> int:
        return len(self.given())

    def __bool__(self) -> bool:
        return bool(self.given())

    def get(self, name: str, default: object = None) -> object:
        v = getattr(self, name, None) if name in OPTION_BY_NAME else None
        return default if v is None else v
