"""What a Result's ``stats`` and ``time`` hold: one typed mapping per stage of the answer.

A result's statistics are the JSON object ``stats`` (README.md, "Usage"), so they stay a
mapping; each key a stage may write is declared here with its type, by the stage that
writes it. tests/package/test_stats_keys.py fails on a key the library writes that is
not declared.
"""

from __future__ import annotations

from typing import TypedDict

# ``stats["race"]``'s value of a backend that gave no answer before the race ended (killed
# once another answered, or past the time limit); every other backend's value is the
# status it answered with ("sensitive", "insensitive", "unknown", "error")
RACE_STOPPED = "stopped"
# its value of every backend of a race the heuristic answered before any of them started
# (driver/solve.py; ``stats["winner"]`` is then "heuristic")
RACE_NOT_STARTED = "not started"
# its value of every solver of a race the memory limit left out (driver/race.py), and a
# check's ``stats["solver_stage"]`` where it skipped the solver stage (driver/solve.py)
SKIPPED_MEMORY = "skipped: memory"


class Asked(TypedDict, total=False):
    """``stats["asked"]``: what the result answers beyond its own fields
    (questions/ask.py writes it; ``--resume`` matches on it)."""

    ensemble: str  # the model's fingerprint
    backend: str  # the backend asked for (a race's result names its winner)
    timeout: float
    work: int  # the work budget (None: none)
    data_aware: str
    data: object  # a data file's sha256, or {"rows", "sha256"} of data in memory
    label: str
    clause_width: int
    max_clauses: int
    clause_time: float
    clauses: str
    max_gap: float  # a max gap's tolerance
    classes: list  # classes asked with "any"; an audited row's: the class a flip must reach
    timeout_per_row: float  # an audited row's: the solver's time for it


def asked_of(stats: object) -> dict | None:
    """A result's ``stats["asked"]`` (``stats``: its ``Result.stats``, or a result line's
    ``"stats"``), or None when there is none (a line an earlier treesens wrote) or it is
    not a mapping: what every reader of the record goes through."""
    asked = stats.get("asked") if isinstance(stats, dict) else None
    return asked if isinstance(asked, dict) else None


class CompileStats(TypedDict, total=False):
    """The encoding and the constraint IR it became (driver/solve.py, driver/backend.py)."""

    vars: int
    constraints: int
    Linear: int  # constraints by type (compiler/ir.py's Problem.stats)
    ExactlyOne: int
    Implication: int
    trees: int
    leaves: int
    unaffected_leaves: int
    relax: float  # how far the gap rows are relaxed for the library's float arithmetic
    scaling_error: float  # IntegerScaling's worst rounding
    prob_forbidden_intervals: int  # data-aware: intervals (and NaNs) the data never visit
    clauses: int  # data-aware: cavity clauses stated


class DataStats(TypedDict, total=False):
    """The data-aware mode's cavity clauses: where they came from (driver/clauses.py)."""

    clauses_source: str  # "learned", "cache PATH" or the clauses file
    clauses_learned: int
    clauses_discarded: int
    clause_learning: str  # why learning stopped early
    clause_budget_reached: bool
    clause_time_used: float
    clause_learning_time: float
    clause_iterations: int


class BoxSearch(TypedDict, total=False):
    """``stats["box_search"]``: the box search's turn (search/boxes.py, link_boxes.py,
    gap_search.py; driver/alongside.py)."""

    status: str  # proved, found, gave up, skipped, timeout, open, searched
    reason: str  # why it was skipped
    # "time": a skip because the tables' build reached the time limit, not for the model's
    # size (search/box_answers.py): the answer is unknown, not an error
    ended_by: str
    error: str  # how it failed beside the backend
    boxes: int
    leaves: int
    class_pairs: int
    pairs_replayed: int
    tables: bool  # max gap: False when the seed's pair met the leaf values' bound (no table)
    near_misses: int  # boxes a near-miss pair ruled out (every tree's value fixed)
    # a data-aware query's proof-only search: which stage found a pair over all inputs
    pair: str
    time: float
    search: str  # "compiled": a check's search was the compiled kernel (search/compiled_check.py)
    # KERNEL_UNBUILT: a check's search past its first boxes stayed box_search.py's, since
    # compiling the kernel (numba's cache held none) would have outlasted the time limit
    kernel_skipped: str
    # a certificate asked for: the boxes the compiled search recorded, and the seconds its
    # proof's rebuild from them took (search/compiled_proof.py)
    recorded: int
    rebuild_time: float


class CertificateStats(TypedDict, total=False):
    """``stats["certificate"]``: a certificate's own search after the answer, where the
    compiled search recorded its proof (questions/certify.py), a max gap's own search's
    boxes its upper bound's certificate was rebuilt from (certify_tiling.py), or an
    answer's own proof its time limit left unbuilt, rebuilt within the certificate's
    budget (certify_recorded.py); the sums where there are two."""

    recorded: int  # the boxes it recorded
    rebuild_time: float  # the seconds the proof's rebuild from them took
    # a max gap's proof rebuilt on an empty numba cache: the seconds compiling the
    # rebuild's kernels first (certify_tiling.py), counted neither in the budget nor in
    # rebuild_time
    rebuild_compile: float
    # the checker's compiled steps (verify/walk_jit.py) compiled on an empty numba cache
    # before its walk of a large proof: the seconds, left out of the time it says it took
    verify_compile: float


class WorkStats(TypedDict, total=False):
    """``stats["work"]``: a query's work budget (answers/work.py) and what it used, in
    work units, in all and by stage ("box_search", "solver"); ``timed``: the stages that
    ran on the clock all the same (their verdict may depend on the load)."""

    budget: int
    used: int
    stages: dict
    timed: list
    ended_by: str  # "work" or "time": which of the two ended an unknown answer
    over: int  # units past the budget: the solver's last step (answers/work.SOLVER_OVER)
    over_by: str  # what ran past it, in words
    unreported: list  # stages stopped before they reported their work (not in used)


class TableBuild(TypedDict):
    """``stats["table_build"]``: a max gap whose time limit came while the box search
    built its tables (questions/max_gap.py): the query's seconds, the ``build``'s own
    (after the encodings and the seed), and the ``trees`` of ``of`` whose tables were
    whole (the budget advice's estimate of the time they need: questions/sweep_budget.py)."""

    seconds: float
    build: float
    trees: int
    of: int


class SearchStats(TypedDict, total=False):
    """The searches before and with the backend (search/heuristic_stage.py, boxes.py;
    driver/backend.py, race.py; answers/accept.py)."""

    heuristic_time: float
    heuristic_work: int
    work: WorkStats
    hint_meets_gap: bool  # data-aware: the heuristic's hint meets the gap
    box_search: BoxSearch
    solver_stage: str  # "skipped: memory": its compile would pass the memory limit
    beside: str  # the box search answered beside the backend, which was stopped
    search: str  # which search of CP-SAT's schedule answered
    cuts: int  # near-miss pairs excluded
    data_restrictions_dropped: bool  # the soft (data) group was infeasible and dropped
    solver_status: str  # "optimal" or "feasible"
    solver_traceback: str
    objective: float | None
    objective_bound: float | None
    objective_gap: float | None
    stopped_by: str  # how an optimising run ended
    race: dict  # backend -> the status it answered with, or RACE_STOPPED
    winner: str  # the race's winning backend, or "heuristic" (it ran before the race)
    found_by: str  # which search found the pair
    proved_by: str  # which search proved "insensitive"
    max_gap_steps: list  # the checks a max-gap bisection asked
    table_build: TableBuild  # a max gap stopped while building the box search's tables


class AnswerStats(TypedDict, total=False):
    """The pair measured against the data (answers/accept.py), an audited row's change
    (questions/audit.py)."""

    nearest_row: dict  # {"index", "values"}: the data row nearest the witness
    change: float  # an audited row: the change on F of the x2 that flips it
    smallest: bool  # an audited row: False where that change is not proven the smallest
    no_flip_below: float  # an audited row whose change is not proven the smallest: no x2
    # flips with a change below it (0: none known)
    reach: list  # an audited regressor row: the lowest and highest prediction F reaches
    certificate: CertificateStats


class Stats(CompileStats, DataStats, SearchStats, AnswerStats, total=False):
    """A Result's ``stats``: every stage's keys, and what was asked."""

    asked: Asked


class _Seconds(TypedDict):
    compile: float
    solve: float
    total: float


class Times(_Seconds, total=False):
    """A Result's ``time``: seconds spent compiling, solving, and in all; compiling
    the largest-gap box search's kernel on its first run (not counted in the limit); and,
    in ``treesens check``'s, the command's start-up and the model's load (in ``total``)."""

    box_search_compile: float
    startup: float
    load: float


# Result.time's key for the seconds a first max-gap search spent compiling the box search
# (search/gap_search.py): left out of the time limit, and said so in the verdict line
KERNEL_COMPILE = "box_search_compile"
# stats["box_search"]["kernel_skipped"] of a check that went on without the compiled search
KERNEL_UNBUILT = "not compiled: its first compile would outlast the time limit"


def stat_keys() -> frozenset[str]:
    """Every key a stage may write into ``stats`` (or into its ``box_search``)."""
    out: set[str] = set()
    for typed in (Stats, BoxSearch):
        for cls in typed.__mro__:
            out.update(getattr(cls, "__annotations__", {}))
    return frozenset(out)
