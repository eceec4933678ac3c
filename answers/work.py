"""A query's work budget (``Plan.work``, ``.sens`` ``work 4M``, ``--work 4M``): the stages
that would end on the clock end on counted work instead, so that the verdict is a
function of the model and the query, not of the machine's load (docs/testing.md, "A
contract for CI").

Work is counted in work units: one box the box search visits (search/boxes.py, the
Python search and the compiled one alike) is one unit, one second of CP-SAT's
deterministic time (its ``max_deterministic_time``, counted on one worker) is
``UNITS_PER_DET_SECOND``. The heuristic and a max gap's seed end on their own work
bounds already (``heuristic_effort``); under a budget their time backstops are off. The
stages run one after the other, never beside each other: the box search's first turn
(``FIRST_TURN_SHARE`` of the budget), the solver (``SOLVER_SHARE`` of what is left), then
the box search's rest. ``stats["work"]`` says what each stage used, so that a budget can
be sized from a run. The time limit stays a safety net: a query it ends says "time
limit", not "work budget".
"""

from __future__ import annotations

from .result import UNKNOWN
from .stats import WorkStats

# one second of CP-SAT's deterministic time, in work units (about what a second of
# visiting boxes counts on the example models: docs/testing.md)
UNITS_PER_DET_SECOND = 10_000
FIRST_TURN_SHARE = 0.5  # of the budget: the box search's first turn
SOLVER_SHARE = 0.5  # of what the first turn left: the solver; the rest, the box search's
# the backends whose solver ends on counted work (backends/registry.py names), and the
# search methods that are the box search alone
WORK_BACKENDS = ("cpsat", "z3", "boxes")
# the message of a query whose budget was spent before an answer
SPENT = "work budget spent"
# stats["beside"] of an answer the box search gave after the solver, under a work budget
BOXES_AFTER = "the box search answered after the solver, on the work budget left"
# the end of an audit's outcome in a contract with a work budget whose audit block has
# none (interfaces/sens_contract.py): its rows are answered within its time per row.
# An audit block's ``work N`` is each row's budget (questions/audit_solve.solve_rows).
AUDIT_TIMED = (
    " (timed: an audit's rows end on its time per row; give the audit block a work budget "
    "per row, work N, for a verdict the load does not change)"
)
# stats["work"]["timed"] of a query that learns the data's cavity clauses (clause_time)
CLAUSES_TIMED = "data-aware clauses: learned within clause_time seconds"
# stats["work"]["over_by"] of a query whose solver ran past the budget: CP-SAT checks its
# deterministic limit between its steps (a presolve step, a search's step), z3 its
# rlimit between its own, so the step under way when the limit comes ends past it. Its
# size is the model's, not the load's: the same on every run (stats["work"]["over"]).
SOLVER_OVER = (
    "the solver's last step: CP-SAT checks its deterministic limit between its steps (a "
    "presolve step can be long on a large model), z3 its rlimit between its own, so the "
    "step under way when the budget ran out ended past it"
)


class Work:
    """The budget of one query and what each stage used of it."""

    def __init__(self, budget: int):
        self.budget = int(budget)
        self.used: dict[str, int] = {}
        self.timed: list[str] = []  # the stages that ran on the clock: named in stats
        self.caps: dict[str, int] = {}  # by stage, the units it may have used by its end
        self.last = ""  # the stage that spent last (the one that passed the budget, if any)
        # the stages whose work went uncounted: their process stopped (the time limit)
        # before it reported it (the solver's, killed in a long presolve step)
        self.unreported: list[str] = []

    def spent(self) -> int:
        return sum(self.used.values())

    def left(self) -> int:
        return max(0, self.budget - self.spent())

    def spend(self, stage: str, units: float) -> None:
        self.used[stage] = self.used.get(stage, 0) + int(round(units))
        self.last = stage

    def over(self) -> int:
        """The units spent past the budget: the last step of a stage that cannot stop
        inside one (the solver's, ``SOLVER_OVER``); 0 within it."""
        return max(0, self.spent() - self.budget)

    def allow(self, stage: str, units: int) -> None:
        """Give ``stage`` ``units`` more of what is left (``allowed`` then says how much
        of it is unused)."""
        self.caps[stage] = self.used.get(stage, 0) + units

    def allowed(self, stage: str) -> int:
        return max(0, min(self.caps.get(stage, 0) - self.used.get(stage, 0), self.left()))

    def share(self, fraction: float) -> int:
        """``fraction`` of what is left, at least one unit while any is."""
        left = self.left()
        return min(left, max(1, int(fraction * left)))

    def stats(self) -> WorkStats:
        out: WorkStats = {"budget": self.budget, "used": self.spent(), "stages": dict(self.used)}
        if self.timed:
            out["timed"] = list(self.timed)
        if self.over():
            out["over"] = self.over()
            out["over_by"] = over_by(self.last)
        if self.unreported:
            out["unreported"] = [unreported_words(stage) for stage in self.unreported]
        return out


def unreported_words(stage: str) -> str:
    """A stage whose units ``used`` lacks, in stats["work"]["unreported"]."""
    return f"{stage}: its process was stopped at the time limit before it reported its work"


def over_by(stage: str) -> str:
    """What ran past a budget, in stats["work"]["over_by"]: ``stage``'s last step."""
    return SOLVER_OVER if stage == "solver" else f"the last step of {stage}"


def spent_words(work: Work) -> str:
    """What a spent budget used, in a message: "1,000 of 1,000 work units", or where the
    solver's last step ran past it, "6,456 work units, 4,456 past the budget of 2,000 in
    the solver's last step, which it does not stop inside"."""
    used, budget = work.spent(), work.budget
    if not work.over():
        return f"{used:,} of {budget:,} work units"
    step = "the solver's last step" if work.last == "solver" else f"the last step of {work.last}"
    return (
        f"{used:,} work units, {work.over():,} past the budget of {budget:,} in {step}, "
        "which it does not stop inside"
    )


def work_line(work: dict) -> str:
    """A query's ``stats["work"]`` in one line, which a budget is sized from (``treesens
    test -v`` and the JUnit report): "work: 217 of 20,000 units used (box_search 217)"."""
    used, budget = work.get("used", 0), work.get("budget", 0)
    stages = ", ".join(f"{k} {v:,}" for k, v in work.get("stages", {}).items() if v)
    line = f"work: {used:,} of {budget:,} units used" + (f" ({stages})" if stages else "")
    if work.get("over"):
        line += f"; {work['over']:,} past the budget in the solver's last step"
    if work.get("unreported"):
        stages = ", ".join(u.split(":")[0] for u in work["unreported"])
        line += f"; {stages} stopped before reporting its units (not counted)"
    if work.get("ended_by") == "time":
        line += "; the time limit ended it, not the budget"
    return line


def det_seconds(units: int) -> float:
    """CP-SAT's deterministic time for ``units``."""
    return units / UNITS_PER_DET_SECOND


def det_units(seconds: float) -> int:
    return int(round(seconds * UNITS_PER_DET_SECOND))


def work_refusal(backend: str) -> str | None:
    """Why a work budget cannot decide a query on ``backend`` (None: it can): a race
    ends on whichever backend answers first, and the other solvers end on the clock."""
    if backend.startswith("race") or "+" in backend:
        return (
            f"a work budget cannot decide a race ({backend}): its answer is the first "
            "backend's to answer; give one backend (cpsat, z3 or boxes)"
        )
    if backend not in WORK_BACKENDS:
        return (
            f"a work budget is not counted by backend {backend} (it ends on the clock); "
            "give the backend cpsat, z3 or boxes, or no work budget"
        )
    return None


def work_ended(ctx) -> None:
    """The budget's statistics on the result of ``ctx`` (a SolveContext), and an answer
    left unknown named after what ended it: the work budget, or the time limit (the
    safety net, whose verdict may depend on the load)."""
    work: Work = ctx.work
    res = ctx.result
    res.stats["work"] = work.stats()
    if res.status != UNKNOWN:
        return
    msg = res.message or ""
    by_time = "time limit" in msg or ctx.time_left() <= 0
    res.stats["work"]["ended_by"] = "time" if by_time else "work"
    if by_time:
        # a stage stopped before it reported its work: "used" is only what was counted
        unreported = "".join(f"; the {s}'s not reported" for s in work.unreported)
        counted = "counted" if unreported else "used"
        res.message = (
            f"{msg or 'time limit reached'} (the time limit, not the work budget: "
            f"{work.spent():,} of {work.budget:,} work units {counted}{unreported})"
        )
    elif work.left() <= 0 or SPENT in msg:
        res.message = f"{SPENT} ({spent_words(work)})"
