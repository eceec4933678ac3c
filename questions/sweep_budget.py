"""A sweep within a budget: every query of it within a number of seconds in all.

Two passes. The first gives each query a short time limit (``FIRST_SHARE`` of the
budget, shared out between the queries and the slots that run them at once). The
queries it leaves open (a max gap not proven for the time limit, an unknown) are asked
again, from the start, the narrowest bracket first, each within its own time limit at
most: one at a time, each gets an even share of what is left when it starts, so that
what a query leaves over goes to the next; run at once, an even share of what the first
pass left. The quick queries so give their unused time to those that need it. A second
pass starts over (a search keeps nothing between passes), which costs at most the first
pass's share; a query it would give no more time than the first did keeps its answer,
and so does one whose second search ends with wider max gap bounds.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..answers.phrases import unproven_because
from ..answers.result import ERROR, UNKNOWN, Result
from ..compiler.errors import InputError
from ..compiler.kinds import LargestGap
from ..compiler.query import Query
from ..search import gap_kernel, gap_kernel_compile

# ask(queries, on_result) -> their results, in order (questions/campaign.ask_many)
Ask = Callable[[Sequence[Query], Callable[[Result], None]], list[Result]]

# the share of the budget the first pass gives out
FIRST_SHARE = 0.25
# a pass's time limit per query, at least (seconds)
MIN_STEP_SECONDS = 2.0
# an open query's time in the budget advised (budget_advice): this many times it had
MORE = 2.0


@dataclass(frozen=True)
class Budget:
    """``seconds`` for all the queries of a sweep; ``slots``: how many run at once."""

    seconds: float
    slots: int = 1

    @classmethod
    def of(cls, seconds: float | None, executor: object | None) -> Budget | None:
        """The budget of a sweep whose queries ``executor`` runs (None: one at a time in
        this process); None without ``seconds``."""
        if seconds is None:
            return None
        return cls(seconds, getattr(executor, "workers", None) or 1)

    def first_limit(self, queries: int, timeout: float) -> float:
        """Each query's time limit in the first pass, at most ``timeout``."""
        share = FIRST_SHARE * self.seconds * self.slots / max(1, queries)
        return min(timeout, max(MIN_STEP_SECONDS, share))

    def second_pass(
        self, results: list[Result], left: float, first: float, timeout: float
    ) -> tuple[list[int], float] | None:
        """The queries to ask again (their indices in ``results``) and the time limit
        each gets (``left`` seconds shared between them, at most ``timeout``), when that
        is more than the ``first`` they had; else None."""
        still = [i for i, r in enumerate(results) if still_open(r)]
        if not still:
            return None
        per = min(timeout, left, left * self.slots / len(still))
        return (still, per) if per > first and per >= MIN_STEP_SECONDS else None


def check_budget(seconds: float | None, where: str) -> None:
    """A budget is a positive, finite number of seconds (None: none)."""
    if seconds is None:
        return
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise InputError(f"the sweep's budget is a number of seconds, not {seconds!r}", where)
    if not (math.isfinite(seconds) and seconds > 0):
        raise InputError(f"the sweep's budget must be positive seconds, not {seconds!r}", where)


def still_open(r: Result) -> bool:
    """Whether more time could settle the answer: a max gap its time limit left
    unproven, or an unknown. Errors, and max gaps left apart by memory or rounding, are
    not."""
    if r.status == ERROR:
        return False
    if r.max_gap is not None:
        return not r.max_gap.get("proven") and unproven_because(r.max_gap).startswith("time limit")
    return r.status == UNKNOWN


def answer_within(
    budget: Budget | None,
    queries: Sequence[Query],
    ask: Ask,
    ended: Callable[[Result], None],
    note: Callable[[str], None],
    cut_short: Callable[[Result], None] | None = None,
) -> list[Result]:
    """The queries' results in order: asked once (no ``budget``), or in its two passes.
    ``ended`` sees each query's final result as it ends; a result the first pass leaves
    open is held until it is known whether it is asked again. What ``ended`` spends (a
    certificate's proof and check) is not counted in the budget; nor is the box search's
    compile on a first run, made ready before the first pass. Interrupted (Ctrl-C, a
    signal), each result held is handed to ``cut_short`` (default ``ended``), a sound
    answer within its first pass's time limit, before the interruption goes on: the
    query in flight's own (its ``partial_result``) when it has one at least as narrow."""
    if budget is None or not queries:
        return ask(queries, ended)
    if any(q.kind_name == LargestGap.name for q in queries) and gap_kernel_compile.available():
        gap_kernel.prepare(note)
    held = _Held(ended)
    try:
        return _two_passes(budget, queries, ask, held, note)
    except KeyboardInterrupt as e:
        held.cut_short(e, cut_short or ended)
        raise


class _Held:
    """The results of the first pass held (open) and not yet ended, by query."""

    def __init__(self, ended: Callable[[Result], None]) -> None:
        self.results: dict[str, Result] = {}
        self.ended = ended

    def first(self, res: Result) -> None:
        """A first-pass result: ended when settled, else held."""
        if still_open(res):
            self.results[res.query] = res
        else:
            self.ended(res)

    def final(self, res: Result) -> None:
        self.results.pop(res.query, None)
        self.ended(res)

    def cut_short(self, e: KeyboardInterrupt, written: Callable[[Result], None]) -> None:
        """Each result held to ``written``, but the one of the query in flight when
        the interruption carries a partial result of it (``e.partial_result``, which
        the caller writes): that stays, unless the first pass's is narrower (a max
        gap's second search starts over), which then rides on ``e`` in its place."""
        partial = getattr(e, "partial_result", None)
        mine = self.results.pop(partial.query, None) if partial is not None else None
        if mine is not None and _width(mine) < _width(partial):
            e.partial_result = mine
        for res in self.results.values():
            with contextlib.suppress(KeyboardInterrupt):  # the CLI's raises its signal again
                written(res)
        self.results.clear()


def _two_passes(budget: Budget, queries, ask: Ask, held: _Held, note) -> list[Result]:
    clock = _Clock()
    timeout = max(q.plan.timeout for q in queries)
    first = budget.first_limit(len(queries), timeout)
    note(f"budget {budget.seconds:g}s: a first pass of at most {first:.3g}s a query")
    results = ask([_limited(q, first) for q in queries], clock.aside(held.first))
    again = budget.second_pass(results, budget.seconds - clock.spent(), first, timeout)
    if again is None:
        for res in results:
            if still_open(res):
                held.final(res)
        return results
    # the narrowest brackets first: they are the likeliest to close, and what they leave
    # over goes to the others
    order = sorted(again[0], key=lambda i: _width(results[i]))
    note(
        f"{len(order)} still open after the first pass, asked again with the time left "
        f"(about {again[1]:.3g}s each): {', '.join(results[i].query for i in order)}"
    )
    firsts = {results[i].query: results[i] for i in order}

    def kept(res: Result) -> None:
        held.final(_kept(firsts.get(res.query), res))

    if budget.slots > 1:  # asked at once: an even share each
        redone = ask([_limited(queries[i], again[1]) for i in order], clock.aside(kept))
        for i, res in zip(order, redone, strict=True):
            results[i] = _kept(results[i], res)
        return results
    for k, i in enumerate(order):  # one at a time: the time left shared among the rest
        limit = min(timeout, (budget.seconds - clock.spent()) / (len(order) - k))
        if limit <= first:  # no more time than it had: its first answer stands
            held.final(results[i])
            continue
        (res,) = ask([_limited(queries[i], limit)], clock.aside(kept))
        results[i] = _kept(results[i], res)
    return results


def _kept(first: Result | None, again: Result) -> Result:
    """The answer of a query asked in both passes: the second, unless the first's max
    gap bounds are closer on one side and as close on the other. Both are sound; a
    search started over with more time may spend it elsewhere (a longer seed) and end
    with wider bounds ([0.4989, 0.49999952] in 2 s, [0.4989, 0.5] in 5 s)."""
    if first is None or first.max_gap is None or again.max_gap is None or again.status == ERROR:
        return again
    lo1, lo2 = (_lower(r) for r in (first, again))
    up1, up2 = first.max_gap.get("upper"), again.max_gap.get("upper")
    if not all(isinstance(u, (int, float)) for u in (up1, up2)):
        return again
    return first if lo1 >= lo2 and up1 <= up2 and (lo1 > lo2 or up1 < up2) else again


def _lower(r: Result) -> float:
    lo = r.max_gap.get("lower") if r.max_gap else None
    return lo if isinstance(lo, (int, float)) else -math.inf


class _Clock:
    """The budget's seconds spent: the time since the start, less what the callbacks
    ``aside`` wraps took."""

    def __init__(self) -> None:
        self.start, self.set_aside = time.time(), 0.0

    def spent(self) -> float:
        return time.time() - self.start - self.set_aside

    def aside(self, fn: Callable[[Result], None]) -> Callable[[Result], None]:
        def run(res: Result) -> None:
            t = time.time()
            fn(res)
            self.set_aside += time.time() - t

        return run


def _width(r: Result) -> float:
    """How far apart an open answer's bounds are (an unknown: infinitely)."""
    bounds = r.max_gap or {}
    lo, up = bounds.get("lower"), bounds.get("upper")
    if isinstance(lo, (int, float)) and isinstance(up, (int, float)):
        return up - lo
    return math.inf


def _limited(q: Query, seconds: float) -> Query:
    return q.planned(timeout=min(q.plan.timeout, seconds))


def budget_advice(
    results: list[Result],
    budget: float,
    share: float = 1.0,
    again: str = "",
    asked: str = "--budget {:.0f}",
) -> str | None:
    """Where a sweep within ``budget`` seconds (a report's ranking: ``share`` of the
    report's) left queries open at their time limits: how many, why, and the budget that
    gives each of them MORE times the time it had (the closed ones theirs again, the
    first pass its share); None when none is open. ``again``: how a run again keeps what
    this one settled (said last, in brackets); ``asked``: how the caller sets a budget
    of so many seconds (the CLI's flag, the API's ``budget={:.0f}``, a .sens file's
    ``budget {:.0f}s``)."""
    left = [r for r in results if still_open(r)]
    if not left:
        return None
    opened = {id(r) for r in left}
    need = sum(_seconds(r) for r in results if id(r) not in opened and r.status != ERROR)
    need += sum(MORE * max(_seconds(r), _whole_build(r)) for r in left)
    advised = _rounded_up(max(need / (1 - FIRST_SHARE) / share, 2 * budget))
    why, more = _table_build_why(left)
    gaps = any(r.max_gap is not None for r in results)  # a max gap sweep's (a ranking)
    doing = f"Ranking {_features(results)}" if gaps else f"Answering {_queries(results)}"
    given = f"the {share * budget:.0f}s this budget gave it"
    given += f" ({share:.0%} of {budget:.0f}s)" if share < 1 else ""
    what = "max gap" if gaps else "query"
    return (
        f"{doing} needs more than {given}: {len(left)} {_plural(left, what)} "
        f"stayed open at {_plural(left, 'its', 'their')} time limit{why}. Run with "
        f"{asked.format(advised)} at least: it gives each open {what} {MORE:g} times "
        f"the time it had{more}{f' ({again})' if again else ''}."
    )


def _whole_build(r: Result) -> float:
    """The seconds an open query would take to build the tables of all its trees at the
    rate it built those it did (``stats.table_build``: the time limit came during the
    build), the time before the build (its encodings, the seed) included; 0 where it
    built none."""
    build = r.stats.get("table_build") if r.stats else None
    if not build or not build.get("trees"):
        return 0.0
    own = build.get("build", build["seconds"])  # the tables' own seconds
    if own <= 0:  # not measured: no rate
        return 0.0
    return build["seconds"] - own + own * build["of"] / build["trees"]


def _table_build_why(left: list[Result]) -> tuple[str, str]:
    """What the table builds that stopped open queries say: how many stopped there and
    how far the slowest got, and what the advised budget gives them."""
    built = [r for r in left if "table_build" in r.stats]
    if not built:
        return "", ""
    trees = built[0].stats["table_build"]["of"]
    why = (
        f"; the time limit of {len(built)} of them came while the box search built "
        f"its tables ({trees:,} trees), before any search"
    )
    slowest = max(built, key=_whole_build)
    if _whole_build(slowest) <= 0:
        return why, ""
    b = slowest.stats["table_build"]
    why += (
        f" (the slowest built {b['trees']:,} of {b['of']:,} trees' tables in "
        f"{_shown_seconds(b.get('build', b['seconds']))}: about "
        f"{_whole_build(slowest):.0f}s with all "
        "of them)"
    )
    more = (
        f", and one stopped in its table build {MORE:g} times the time it takes with "
        "every table at that rate (a floor: the search after the build may need more)"
    )
    return why, more


def _shown_seconds(s: float) -> str:
    """Seconds in words: two significant digits below one (a build of 4 trees took 0.04s,
    which one decimal showed as 0.0s)."""
    return f"{s:.2g}s" if s < 1 else f"{s:.1f}s"


def _seconds(r: Result) -> float:
    return float((r.time or {}).get("total", 0.0))


def _features(results: list[Result]) -> str:
    """The features a ranking's ``results`` ask of, in words."""
    return "the feature" if len(results) == 1 else f"the {len(results)} features"


def _queries(results: list[Result]) -> str:
    return "the query" if len(results) == 1 else f"the {len(results)} queries"


def _plural(items: list, one: str, many: str | None = None) -> str:
    if len(items) == 1:
        return one
    return many or (one[:-1] + "ies" if one.endswith("y") else one + "s")


def _rounded_up(seconds: float) -> float:
    """A budget to type: up to a multiple of 10 s, of 60 s past ten minutes."""
    step = 60 if seconds > 600 else 10
    return math.ceil(seconds / step) * step
