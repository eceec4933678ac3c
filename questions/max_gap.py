"""How sensitive? The largest gap at which a binary model is sensitive to F.

The sensitivity at gap g (P(x1) >= 0.5+g, P(x2) <= 0.5-g) is monotone in g: a pair
meeting g meets every smaller gap. So the largest gap g* is found by a search over g
with the ordinary check, each step answered soundly:

* a witness at g is replay-checked by the library's predict; its *achieved* gap
  ``min(P(x1) - 0.5, 0.5 - P(x2))`` (at least g) is a lower bound on g*;
* a proof of insensitivity at g says that no pair reaches g: g* < g, an upper bound.

The search asks g = ``tolerance`` first (is the model sensitive at all, to within the
tolerance?), then bisects between the best achieved gap and the smallest proven bound,
until they are at most ``tolerance`` apart (absolute, in probability). It starts from an
upper bound computed from the leaf values alone (``score_bound``), soundly relaxed for
the library's float32 arithmetic.

"Insensitive" is the answer at that first gap: no pair reaches g = tolerance, so g* <
tolerance (and ``Result.gap`` is the tolerance, at which the model is proven
insensitive). The first question is not g = 0: there a pair only needs
P(x1) >= 0.5 >= P(x2), which for features that reach no leaf asks whether some input
scores exactly 0.5, a search over every input that the solvers cannot cut short. A time
limit that stops the search leaves the best bounds so far (``proven`` false); without a
witness and without a proof at the first gap the status is "unknown".
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..answers.accept import with_data_values
from ..answers.context import new_result
from ..answers.phrases import (
    NOT_DESCRIBED,
    max_gap_searching,
)
from ..answers.result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result, fail, input_files
from ..answers.work import Work
from ..backends.registry import BOXES
from ..compiler.affected import affected_leaves
from ..compiler.bounds_as_domains import bounds_as_domains
from ..compiler.dataset import Dataset
from ..compiler.encode import resolve_features
from ..compiler.ensemble import IDENTITY, LOGISTIC, SOFTMAX, Ensemble
from ..compiler.errors import InputError
from ..compiler.link_change import change_bound, rounding_band
from ..compiler.max_gap_question import (  # noqa: F401 - re-exported: the question's checks
    DEFAULT_TOLERANCE,
    MIN_TOLERANCE,
    check_max_gap_model,
    check_tolerance,
    max_gap_probe,
)
from ..compiler.query import DOWN, MAX_RATIO, Gap, GapKind, Query
from ..compiler.question import ANY
from ..compiler.readings import read_for
from ..compiler.rounding import gap_relaxation
from ..driver.solve import solve_query
from ..driver.solver_memory import QueryTooLarge
from ..search.forest_ratio import forest_largest_ratio
from ..search.gap_kernel import HEAP_BYTES
from ..search.gap_search import at_gap_zero, box_largest_gap, searched_refusal, unsplit_query
from ..search.gap_units import LOG_MAX, shown_gap, shown_lower
from ..search.pair_boxes import PairTablesPastDeadline, PairTablesTooLarge
from ..search.pair_scope import class_pair_refusal, pair_encoding
from ..search.proof_tree import recording_proofs
from ..search.tolerance import Tolerance
from .max_gap_bounds import (  # noqa: F401 - re-exported: a max gap's bounds and words
    CHANGE,
    INTERRUPTED,
    MEMORY,
    ROUNDING,
    TABLE_BUILD,
    WORK,
    MaxGap,
    bounds_meet,
    gap_kind,
    max_gap_line,
    result_gap_kind,
)
from .max_gap_direction import direction_note

# where between the bounds the next gap is asked (0.5: bisection)
SPLIT = 0.5
# added to the leaf-value bound: the float32 sigmoid of the library, rounded up
_PROBA_SLACK = 1e-6


def ratio_score_bound(ens: Ensemble, classes) -> float:
    """A multiclass model's bound on g* from the leaf values alone, in the box search's
    gap units (the log of the ratio): a softmax model's class c leads class k by at most
    c's largest score less k's least, relaxed as the encoding relaxes its rows, for the
    pair of ``classes`` (either may be "any") that leads most; a forest's ratio has no
    such bound (a class's probability may be 0: the largest float)."""
    if ens.link != SOFTMAX:
        return LOG_MAX
    top = np.array(ens.intercept, dtype=np.float64)
    bottom = top.copy()
    for t in ens.trees:
        vals = ens.scale * np.asarray(t.value)[t.leaves()]
        for j, o in enumerate(t.outputs):
            top[o] += float(vals[:, j].max())
            bottom[o] += float(vals[:, j].min())
    n = ens.n_outputs
    lead = [min(top[c] - bottom[k] for k in range(n) if k != c) for c in range(n)]
    sides = [range(n) if c == ANY else [int(c)] for c in classes]
    best = max(min(lead[a], lead[b]) for a in sides[0] for b in sides[1] if a != b)
    return min(LOG_MAX, best + 2.0 * gap_relaxation(ens) + _PROBA_SLACK)


def score_bound(ens: Ensemble, vary, deadline: float | None = None) -> float:
    """An upper bound on g* from the leaf values alone: x1's score is at most the sum of
    the trees' largest leaves, x2's at least the sum of the smallest, and the two scores
    differ only by the trees' affected leaves (``compiler/affected.py``), so
    m(x1) - m(x2) >= 2 * delta bounds delta by half of their spread. Relaxed as the
    encoding relaxes its gap rows; at most 0.5. Past ``deadline`` (an absolute time,
    looked at tree by tree) the trees left count all their leaves as affected: a looser
    bound, as sound, without the walks (0.5 CPU s on 1,000 trees of 255 leaves)."""
    varying = resolve_features(ens, vary)
    top = bottom = spread = 0.0
    for t in ens.trees:
        leaves = t.leaves()
        vals = np.asarray(t.value)[leaves, 0]
        top += float(vals.max())
        bottom += float(vals.min())
        if deadline is not None and time.time() >= deadline:
            spread += float(vals.max() - vals.min())  # every leaf: at least its own
            continue
        aff = sorted(affected_leaves(t, varying))
        if aff:
            av = np.asarray(t.value)[aff, 0]
            spread += float(av.max() - av.min())
    b = ens.intercept[0]
    s = abs(ens.scale)
    hi, lo = b + s * top, b + s * bottom
    relax = gap_relaxation(ens)
    if ens.is_regressor and ens.link != IDENTITY:
        return change_bound(ens.link, lo - relax, hi + relax, s * spread + 2.0 * relax)
    if ens.is_regressor:  # the largest change f(x1) - f(x2): the affected leaves' spread
        return s * spread + 2.0 * relax
    if ens.link == LOGISTIC:
        delta = min(hi, -lo, s * spread / 2.0) + relax
        g = 1.0 / (1.0 + math.exp(-delta)) - 0.5 if delta > -700 else -0.5
    else:  # the raw score is the probability
        g = min(hi - 0.5, 0.5 - lo, s * spread / 2.0) + relax
    return min(0.5, g + _PROBA_SLACK)


def achieved_gap(outputs: dict) -> float:
    """The largest gap the replayed pair meets: min(P(x1) - 0.5, 0.5 - P(x2)), rounded
    down until ``P(x1) >= 0.5 + g`` and ``P(x2) <= 0.5 - g`` hold in floating point; for a
    regressor's pair (one prediction each), the change f(x1) - f(x2)."""
    if len(outputs["x1"]) == 1:
        return float(outputs["x1"][0]) - float(outputs["x2"][0])
    p1, p2 = float(outputs["x1"][1]), float(outputs["x2"][1])
    g = min(p1 - 0.5, 0.5 - p2)
    while not (p1 >= 0.5 + g and p2 <= 0.5 - g):
        g = float(np.nextafter(g, -math.inf))
    return g


@dataclass
class _Search:
    """The state of one search: the best witness so far and the proven bound."""

    best: Result | None
    upper: float
    steps: list[dict]
    proved: float = math.inf  # the smallest gap proven out of reach
    compile: float = 0.0
    solve: float = 0.0
    work: Work | None = None  # the query's work budget: each step's check spends of it
    ended_by_work: bool = False  # a step's check ended on the budget (none left)

    def spent(self) -> bool:
        """Whether the work budget ended the search: a step ended on it, or none is left."""
        return self.work is not None and (self.ended_by_work or self.work.left() <= 0)

    @property
    def lower(self) -> float | None:
        return None if self.best is None else achieved_gap(self.best.outputs)

    def done(self, tol: Tolerance) -> bool:
        return tol.met(self.lower, self.upper)


def max_gap_query(ens: Ensemble, q: Query, **kw) -> Result:
    """The largest gap at which ``ens`` is sensitive to ``q.vary`` (``q.gap`` unused),
    within ``tolerance``; the whole search by ``deadline`` (default: the time limit from
    now). ``data``: the Dataset the query names (each step's check uses it).
    ``heap_bytes``, ``memory_bytes``: the box search's heap of open boxes, and its tables
    and heap together, at most (questions/memory.py); tables that would pass their bound
    leave the search to the bisection, with a note. Of a query that does not treat its
    inputs alike, a note says the gap's direction (``direction_note``), on the partial
    answer an interruption carries too."""
    note = direction_note(ens, q)
    work = None if q.plan.work is None else Work(q.plan.work)
    try:
        res = _max_gap_query(ens, q, work=work, **kw)
    except KeyboardInterrupt as e:  # the partial answer is of the same direction
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            _noted(partial, note)
        raise
    if work is not None and q.plan.data_aware == "none":  # a data-aware one sums its own
        res.stats["work"] = work_stats(work, res.max_gap)
    return _noted(res, note)


def work_stats(work: Work, bounds: dict | None) -> dict:
    """A max gap's ``stats["work"]``: what its stages used of the budget and, of bounds
    not proven, what ended the search: "work" (the budget: the same bounds on any
    machine) or "time" (the time limit, the net: they may follow the load)."""
    out = dict(work.stats())
    if bounds is not None and not bounds.get("proven"):
        by = bounds.get("stopped_by")
        if by in (None, TABLE_BUILD, WORK):
            out["ended_by"] = "work" if by == WORK else "time"
    return out


def _noted(res: Result, note: str | None) -> Result:
    """``res`` with ``note`` among its notes (once)."""
    if note is not None and note not in res.notes:
        res.notes.append(note)
    return res


def _max_gap_query(
    ens: Ensemble,
    q: Query,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    deadline: float | None = None,
    memory_mb: int | None = None,
    log: Callable[[str], None] | None = None,
    data: Dataset | None = None,
    heap_bytes: int = HEAP_BYTES,
    memory_bytes: int | None = None,
    work: Work | None = None,
) -> Result:
    """``max_gap_query``'s answer, before its direction note. ``work``: the query's work
    budget (answers/work.py), spent by the box search's boxes or the bisection's steps;
    the leaf values' bound is then walked whole, not cut short at the deadline."""
    t0 = time.time()
    if q.plan.data_aware != "none":
        sizes = {"heap_bytes": heap_bytes, "memory_bytes": memory_bytes}
        deadline = deadline if deadline is not None else q.plan.deadline(t0)
        return _data_aware(ens, q, tolerance, deadline, memory_mb, log, data, sizes)
    q = q.with_(kind="", params=())  # a max_gap query: the pair question its steps ask
    searched = q.with_(gap=Gap(q.gap.value, q.gap.kind, given=False))  # the gap it starts at
    ens = read_for(ens, searched)
    check_max_gap_model(ens, searched)
    tol = check_tolerance(tolerance)
    deadline = deadline if deadline is not None else q.plan.deadline(t0)
    multiclass = ens.n_outputs > 1
    cut = deadline if work is None else None  # bounded (about 0.5 CPU s): whole under work
    upper = ratio_score_bound(ens, q.classes) if multiclass else score_bound(ens, q.vary, cut)
    tol = search_tolerance(ens, tol, upper)
    skipped = None
    if q.plan.options.value("box_search") or multiclass:
        try:
            if multiclass and ens.link != SOFTMAX:  # a forest: box searches at fixed ratios
                boxed = forest_largest_ratio(ens, q, tol.least, deadline, memory_bytes, work)
            else:
                sizes = (heap_bytes, memory_bytes)
                boxed = box_largest_gap(ens, q, tol, deadline, log, *sizes, upper, work)
        except PairTablesPastDeadline as e:  # no time left to bisect in
            return _stopped_in_table_build(ens, q, upper, tol, e, t0, data)
        except PairTablesTooLarge as e:
            if multiclass:  # no bisection to fall back on: this query's error, not the run's
                raise QueryTooLarge(f"--max-gap / max_gap on this multiclass model: {e}") from None
            boxed, skipped = None, f"the box search was skipped ({e}): the bounds are bisected"
        if boxed is None and skipped is None:  # the solvers bisect: the box search says why
            skipped = box_skipped(ens, q)
        if boxed is not None:
            if data is not None:  # the pair as a check's with --data: data values, distance
                with_data_values(ens, _searched_encoding(ens, q), boxed[0], data)
            return _boxed_final(ens, q, *boxed, tol)
    if multiclass:
        raise InputError(
            "--max-gap / max_gap on a multiclass model is the box search's alone, and "
            f"{NOT_DESCRIBED} ({multiclass_refusal(ens, q)}): ask a ratio with --gap "
            "and --classes"
        )
    s = _Search(best=None, upper=upper, steps=[], work=work)
    g = tol.least
    res = None
    try:
        while True:
            res = _step(ens, q, g, s, deadline, memory_mb, log, data)
            if res.status in (UNKNOWN, ERROR) or s.best is None:
                break  # a time limit, an error, or insensitive at the first gap
            if s.done(tol) or time.time() >= deadline or s.spent():
                break
            following = s.lower + SPLIT * (s.upper - s.lower)
            if following == g:  # the bounds are a float apart: nothing left to split
                break
            g = following
    except KeyboardInterrupt as e:  # the bounds of the steps answered, if any
        if res is None:
            raise
        e.partial_result = _bisected(ens, q, s, res, tol, t0, skipped, INTERRUPTED)
        raise
    return _bisected(ens, q, s, res, tol, t0, skipped, WORK if s.spent() else None)


def multiclass_refusal(ens: Ensemble, q: Query) -> str | None:
    """Why a multiclass model's max gap of ``q`` is refused: the box search, its only
    method, does not describe the query (``pair_scope.class_pair_refusal``, in words);
    None when it does. A data-aware one is asked over all inputs first (``_data_aware``)."""
    if q.plan.data_aware != "none":
        return None
    at = at_gap_zero(ens, q.with_(kind="", params=()))  # the pair question its steps ask
    return class_pair_refusal(pair_encoding(ens, at), relations=True)


def box_skipped(ens: Ensemble, q: Query) -> str | None:
    """The note of a binary max gap or a regressor's change the box search left to the
    solvers' bisection, saying why (``gap_search.searched_refusal``); None where no
    reason is known."""
    why = searched_refusal(ens, q.with_(kind="", params=()))
    if why is None:
        return None
    return f"the box search does not describe this query ({why}): the bounds are bisected"


def _data_aware(ens, q: Query, tol, deadline, memory_mb, log, data, sizes: dict) -> Result:
    """A data-aware max gap: the bounds of the question over all inputs (a data-aware
    check is sensitive exactly when that one is: the data's restrictions never decide),
    then one data-aware check at the lower bound, for the pair closest to the data; its
    pair meets the lower bound, so the bounds stand (the lower one may rise)."""
    t0 = time.time()
    res = max_gap_query(
        ens, q.over_all_inputs(), tolerance=tol, deadline=deadline, memory_mb=memory_mb,
        log=log, data=data, **sizes,
    )  # fmt: skip
    lower = (res.max_gap or {}).get("lower")
    if res.status != SENSITIVE or lower is None or time.time() >= deadline:
        return res
    if not _a_check_asks(ens, lower):  # a gap of 0.5, a ratio past 1e6 or unbounded
        res.notes.append(
            f"no check asks a gap of {lower:.6g} (the largest a check asks: "
            f"{'a ratio of ' + format(MAX_RATIO, 'g') if ens.n_outputs > 1 else 'below 0.5'}): "
            "the pair shown is the search's over all inputs"
        )
        return res
    at = q.with_(kind="", params=())
    at = at.with_(delta=lower, direction=DOWN) if ens.is_regressor else at.with_(gap=Gap(lower))
    left = max(deadline - time.time(), 1e-3)
    at = at.planned(timeout=min(q.plan.timeout, left))
    spent = (res.stats.get("work") or {}).get("used", 0)
    if q.plan.work is not None:  # the check gets what the search over all inputs left
        if spent >= q.plan.work:
            res.notes.append(
                f"{DATA_AWARE_UNSPENT}: the pair shown is the search's over all inputs"
            )
            return res
        at = at.planned(work=q.plan.work - spent)
    near = solve_query(ens, at, deadline=deadline, memory_mb=memory_mb, data=data)
    if q.plan.work is not None:  # the search's work and the check's, of one budget
        res.stats["work"] = _summed_work(res.stats["work"], near.stats.get("work") or {})
    if near.status != SENSITIVE or not near.validated or not near.outputs:
        res.notes.append(
            "the data-aware search found no pair at the lower bound in the time "
            f"{'or work ' if q.plan.work is not None else ''}left: the pair shown is the "
            "search's over all inputs"
        )
        return res
    bounds = dict(res.max_gap, lower=max(lower, achieved_gap(near.outputs)))
    bounds["proven"] = bounds["proven"] or bounds_meet(bounds)
    out = replace(near, query=res.query, gap=bounds["lower"], gap_kind=res.gap_kind, delta=None)
    out.max_gap = bounds
    out.message = (
        f"{max_gap_line(bounds)}; {near.message}" if near.message else max_gap_line(bounds)
    )
    out.stats = {**res.stats, **near.stats}
    if q.plan.work is not None:  # both, summed above
        out.stats["work"] = res.stats["work"]
    out.time = {**near.time, "total": time.time() - t0}
    return out


# a data-aware max gap's note where its search over all inputs spent the work budget
DATA_AWARE_UNSPENT = "no work left for the data-aware check at the lower bound"


def _summed_work(search: dict, check: dict) -> dict:
    """A data-aware max gap's ``stats["work"]``: its search's, with the data-aware
    check's stages and timed stages added (the check had what the search left)."""
    out = {**search, "stages": dict(search.get("stages", {}))}
    for stage, units in check.get("stages", {}).items():
        out["stages"][stage] = out["stages"].get(stage, 0) + units
    out["used"] = sum(out["stages"].values())
    out.pop("over", None), out.pop("over_by", None)
    if out["used"] > out.get("budget", out["used"]):  # the check's solver ran past it
        out["over"] = out["used"] - out["budget"]
        out["over_by"] = check.get("over_by") or search.get("over_by") or ""
    timed = [*search.get("timed", []), *check.get("timed", [])]
    if timed:
        out["timed"] = list(dict.fromkeys(timed))
    return out


def _a_check_asks(ens: Ensemble, lower: float) -> bool:
    """Does a check take ``lower`` as its gap? A binary gap is below 0.5, a multiclass
    ratio at most MAX_RATIO (a pair at P = 1 and P = 0, or at a class of probability 0,
    reaches past them); a regressor's change is any number."""
    if ens.is_regressor:
        return math.isfinite(lower)
    return lower <= MAX_RATIO if ens.n_outputs > 1 else lower < 0.5


def _bisected(
    ens: Ensemble,
    q: Query,
    s: _Search,
    last: Result,
    tol: Tolerance,
    t0: float,
    skipped: str | None,
    stopped: str | None = None,
) -> Result:
    """The bisection's answer (``_final``) with its times and the note on a box search
    skipped; ``stopped``: what ended it, when not the time limit."""
    out = _final(ens, q, s, last, tol, stopped)
    out.time = {"compile": s.compile, "solve": s.solve, "total": time.time() - t0}
    if skipped is not None:
        out.notes.append(skipped)
    return out


def _step(
    ens: Ensemble,
    q: Query,
    g: float,
    s: _Search,
    deadline: float,
    memory_mb: int | None,
    log: Callable[[str], None] | None,
    data: Dataset | None,
) -> Result:
    """Ask the check at gap g and fold its answer into the search; under a work budget,
    the check's is what the steps before it left."""
    left = max(deadline - time.time(), 1e-3)
    if ens.is_regressor:
        step_q = q.with_(delta=g, direction=DOWN)
    else:
        step_q = q.with_(gap=Gap(g, GapKind.PROB))
    step_q = step_q.planned(timeout=min(q.plan.timeout, left))
    if s.work is not None:
        step_q = step_q.planned(work=s.work.left())
    with recording_proofs(False):  # a step's proof is not the max gap's certificate's
        res = solve_query(ens, step_q, deadline=deadline, memory_mb=memory_mb, data=data)
    if s.work is not None:
        _spend_step(s, res)
    s.compile += res.time.get("compile", 0.0)
    s.solve += res.time.get("solve", 0.0)
    step = {"gap": g, "status": str(res.status), "time": round(res.time.get("total", 0.0), 3)}
    if res.status == SENSITIVE and res.validated and res.outputs:
        a = achieved_gap(res.outputs)
        step["achieved"] = a
        if a >= s.proved:  # unsound somewhere: never a verdict
            fail(res, f"a pair reaches gap {a!r}, proven out of reach")
        elif s.best is None or a > achieved_gap(s.best.outputs):
            s.best = res
        if a > s.upper and s.upper < s.proved:  # the leaf-value bound was too tight: drop it
            s.upper = s.proved if ens.is_regressor else min(0.5, s.proved)
    elif res.status == INSENSITIVE:
        s.proved = min(s.proved, g)
        s.upper = min(s.upper, g)
    step["status"] = str(res.status)
    s.steps.append(step)
    if log is not None:
        kind = CHANGE if ens.is_regressor else "gap"
        said = f"gap {g:.4g}: {res.status}"
        log(max_gap_searching(kind, s.lower, s.upper, said, deadline - time.time()))
    return res


def _spend_step(s: _Search, res: Result) -> None:
    """A bisection step's work, spent of the max gap's budget (its stages, summed; the
    stages it left timed, named)."""
    used = res.stats.get("work") or {}
    for stage, units in used.get("stages", {}).items():
        s.work.spend(stage, units)
    s.work.timed.extend(t for t in used.get("timed", []) if t not in s.work.timed)
    if res.status == UNKNOWN and used.get("ended_by") == "work":
        s.ended_by_work = True


def _final(
    ens: Ensemble, q: Query, s: _Search, last: Result, tol: Tolerance, stopped: str | None = None
) -> Result:
    """The search's answer: the best witness's result (or the last step's), with the
    bounds as ``max_gap`` and the gap field set to the gap the witness achieves;
    ``stopped``: what ended a search not proven, when not the time limit."""
    lower = s.lower
    kind = gap_kind(ens)
    if lower is not None:
        proven = tol.met(lower, s.upper)
    else:
        proven = last.status == INSENSITIVE
    # no tree splits on a varied feature within the bounds: one prediction, a gap of 0
    alike = lower is None and proven and unsplit_query(ens, q)
    if stopped is None and last.status == ERROR:
        stopped = "error"  # a check's error ended the search, not the clock
    bounds = MaxGap(
        lower, shown_gap(ens, 0.0) if alike else s.upper, _stated(tol), proven, len(s.steps),
        kind, stopped_by=None if proven else stopped, unsplit=alike,
    )  # fmt: skip
    base = last if last.status == ERROR or s.best is None else s.best
    gap = lower if lower is not None else s.steps[-1]["gap"]
    out = replace(base, query=q.label, gap=gap, gap_kind=result_gap_kind(ens), delta=None)
    out.max_gap = bounds.to_dict()
    line = max_gap_line(bounds, out.features)
    out.message = f"{line}; {out.message}" if out.message else line
    out.stats = {**base.stats, "max_gap_steps": s.steps}
    return out


def _stopped_in_table_build(
    ens: Ensemble,
    q: Query,
    upper: float,
    tol: Tolerance,
    e: PairTablesPastDeadline,
    t0: float,
    data: Dataset | None = None,
) -> Result:
    """The time limit came while the box search built its tables: the bound from the leaf
    values (``score_bound``) the only upper one, the seed's pair found before the build
    (replayed) the lower one and witness ("sensitive"; none: "unknown"), and a note on how
    far the build got."""
    seeded = getattr(e, "seeded", None)  # (Result, outcome) of the seed (gap_search)
    res, lower = new_result(ens, q), None
    if seeded is not None and seeded[0].status in (SENSITIVE, ERROR):
        res = seeded[0]  # a disagreement of the library with the IR: the error
        if res.status == SENSITIVE:
            lower = shown_lower(ens, q, res, seeded[1].lower)
            if data is not None:  # the pair as a check's with --data: data values, distance
                with_data_values(ens, _searched_encoding(ens, q), res, data)
    res.backend = BOXES  # no solver ran
    res.features = [ens.feature_names[f] for f in sorted(resolve_features(ens, q.vary))]
    res.inputs = input_files(ens.inputs, q.plan.options.data)
    res.gap_kind = result_gap_kind(ens)
    res.gap = lower if lower is not None else tol.least
    shown = shown_gap(ens, upper)  # a multiclass bound: the ratio
    shown = shown if lower is None else max(shown, lower)
    bounds = MaxGap(lower, shown, _stated(tol), False, 0, gap_kind(ens), "boxes", TABLE_BUILD)
    res.max_gap = bounds.to_dict()
    line = max_gap_line(bounds)
    res.message = f"{line}; {res.message}" if res.message else line
    trees = len(ens.trees)
    res.notes.append(
        f"the time limit came while building the box search's tables ({e.leaves:,} pair "
        f"leaves built, the tables of {e.trees:,} of {trees:,} trees): raise --timeout"
    )
    took = time.time() - t0
    # how far the build got, for an estimate of the time it needs (questions/report.py)
    build = getattr(e, "build_seconds", 0.0)
    res.stats["table_build"] = {"seconds": took, "build": build, "trees": e.trees, "of": trees}
    res.time = {"compile": took, "solve": 0.0, "total": took}
    return res


def _searched_encoding(ens: Ensemble, q: Query):
    """The encoding the box search's pair lies in (read at gap 0): over the features'
    domains as the query's bounds narrow them (compiler/bounds_as_domains.py), so that the
    data's values put in its place stay within the bounds; a bound on one input of a
    varied feature stays in its query (with_data_values holds the values to it)."""
    ens, q = bounds_as_domains(ens, q, per_input=True) or (ens, q)
    return pair_encoding(ens, at_gap_zero(ens, q))


def _boxed_final(ens: Ensemble, q: Query, res: Result, out, tol: Tolerance) -> Result:
    """The box search's answer with its bounds as ``max_gap`` (a multiclass gap as the
    ratio: its tolerance is then relative); interrupted (Ctrl-C), the bounds so far ride
    on the KeyboardInterrupt as its ``partial_result``."""
    # the upper bound is the largest over the boxes left open, whatever stopped the
    # search (a work budget spent on the box that closed the bracket): bounds within
    # the tolerance are proven (an interrupt may leave a box popped and not yet split)
    met = not out.interrupted and tol.met(out.lower, out.upper)
    proven = met or (out.proven and out.lower is None)
    lower = None if out.lower is None else shown_lower(ens, q, res, out.lower)
    # boxes shed above the floor: the bounds cannot close below their bound
    floor = tol.floor(out.lower)
    shed_open = out.shed_upper is not None and out.shed_upper > floor
    stopped = None if proven else _stopped_by(out, shed_open)
    upper = shown_gap(ens, out.upper)
    alike = out.alike and proven and lower is None
    if alike:  # one prediction for both inputs: not the root's float allowance, 0 exactly
        upper = shown_gap(ens, 0.0)
    bounds = MaxGap(lower, upper, _stated(tol), proven, 0, gap_kind(ens), "boxes", stopped, alike)
    res.backend = BOXES  # the box search answered: no solver ran
    res.gap = lower if lower is not None else shown_gap(ens, tol.least)
    res.gap_kind = result_gap_kind(ens)
    res.max_gap = bounds.to_dict()
    line = max_gap_line(bounds, res.features)
    res.message = f"{line}; {res.message}" if res.message else line
    if out.interrupted:
        e = KeyboardInterrupt()
        e.partial_result = res
        raise e
    return res


def _stopped_by(out, shed_open: bool) -> str | None:
    """What left a box search's bounds apart (``MaxGap.stopped_by``; None: the time limit)."""
    if out.interrupted:
        return INTERRUPTED
    if shed_open:
        return MEMORY
    if getattr(out, "spent", False):  # a work budget's boxes (gap_boxes.GapBoxOutcome)
        return WORK
    if out.proven:  # the search ended: a resolved box's bound keeps the float32 allowance
        return ROUNDING
    return None


def search_tolerance(ens: Ensemble, tol: float, upper: float) -> Tolerance:
    """The search's tolerance from the one asked: absolute for a probability, and for a
    multiclass ratio too (the search works on its log, so it is relative). A regressor's
    change is in the prediction's units: relative to the change a pair reaches, and below
    any pair, ``tol`` of the leaf values' bound ``upper`` (a smaller change counts as
    none); never below the rounding of the link's inverse."""
    if not ens.is_regressor:
        return Tolerance(tol)
    band = rounding_band(ens) if ens.link != IDENTITY else 0.0
    least = tol * upper if upper > 0 else tol
    return Tolerance(max(least, band), relative=tol, band=band)


def _stated(tol: Tolerance) -> float:
    """The tolerance a result states: the one asked (relative for a change and a ratio)."""
    return tol.relative or tol.least
