"""The largest gap of a query by one best-first search over boxes of the pair space
(search/gap_boxes.py), where the pair tables describe the query exactly.

Every pair the search resolves is replayed with the library's own predict: the gap it
achieves there is the lower bound, and the pair with the largest one is the witness. The
upper bound is the search's: the bound on the (float32-relaxed) rows through the
library's link, rounded up.

The search runs in *gap units*: the probability gap for a binary model, the log of the
probability ratio for a multiclass one (so that a multiclass tolerance is relative); the
result states a binary gap in probability and a multiclass gap as the ratio. A
multiclass query with "any" class is searched one pair of classes at a time, the best
pair so far pruning the next.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..answers.accept import free_range_note, witness_dict
from ..answers.context import new_result
from ..answers.phrases import max_gap_searching
from ..answers.result import (
    INSENSITIVE,
    SENSITIVE,
    UNKNOWN,
    Result,
    fail,
    input_files,
    record_prover,
)
from ..answers.stats import KERNEL_COMPILE
from ..answers.work import Work
from ..compiler.bounds_as_domains import bounds_as_domains
from ..compiler.encode import Encoding, ensemble_structure, relation_coded
from ..compiler.ensemble import IDENTITY, SOFTMAX, Ensemble
from ..compiler.invert import witness_from_pair
from ..compiler.link_change import change_bound
from ..compiler.query import DOWN, Condition, Gap, GapKind, Query
from . import gap_kernel, gap_kernel_compile
from .gap_boxes import GapBoxOutcome, Later, largest_gap, root_bound, unsplit
from .gap_floorless import Floorless, floorless_seed, missed
from .gap_kernel_compile import Readiness
from .gap_seed import (
    LATE_STREAM_TIMES,
    LATE_TIMES,
    LATE_WORK_SHARE,
    box_evaluations,
    late_after,
    late_polish,
    saturation_slack,
    seed_floor,
)
from .gap_units import BestPair, gap_bound, shown_gap
from .heuristic import Spent
from .pair_boxes import PairTables, PairTablesPastDeadline, pair_tables, tables_held
from .pair_scope import (
    applies,
    class_pair_encodings,
    class_pair_refusal,
    input_rank_ranges,
    pair_encoding,
    refusal,
)
from .proof_tree import RecordedTiling, recording
from .ranked_trees import n_ranks
from .tolerance import Tolerance, as_tolerance

FOUND_BY = "box search (largest gap)"
SEED_FOUND_BY = "heuristic, replayed (the box search's first floor)"
PROGRESS_EVERY = 2.0  # seconds between two progress lines
MB = 1 << 20


def box_largest_gap(
    ens: Ensemble,
    q: Query,
    tolerance: float | Tolerance,
    deadline: float,
    log: Callable[[str], None] | None = None,
    heap_bytes: int = gap_kernel.HEAP_BYTES,
    memory_bytes: int | None = None,
    known_upper: float | None = None,
    work: Work | None = None,
) -> tuple[Result, GapBoxOutcome] | None:
    """The largest gap of ``q`` (its gap unused) by the box search, in gap units, or
    None where the pair tables do not describe the query (then the caller bisects with
    the check). ``heap_bytes``: each search's heap of open boxes, at most (beyond it the
    boxes of lowest bound are shed, their bound kept under the upper bound).
    ``memory_bytes``: the tables and the heap together, at most (None: the tables under
    their own bound). ``known_upper``: a sound bound on the gap had without the tables
    (the leaf values'): a seeded pair within the tolerance of it is the answer, and no
    table is built. ``work``: a work budget (answers/work.py), each box one unit spent
    as "box_search" (``box_limit``); the seed and its polishes on their work bounds
    alone. Raises PairTablesTooLarge when the tables would pass their
    bound, PairTablesPastDeadline when building them reaches ``deadline``."""
    t0 = time.time()
    tolerance = as_tolerance(tolerance)
    encs, bound = _searched_encodings(ens, q)
    if encs is None:
        return None
    if time.time() >= deadline:  # the encodings took the time: none left for the tables
        raise PairTablesPastDeadline(0)
    best = BestPair(ens, q)
    late = LatePolish(encs, best, tolerance, timed=work is None)
    t_build = None
    try:
        # the seed first: a pair within the tolerance of a bound had without the tables
        # needs no table (the 255-leaf LightGBM adult model's age: 25-31 CPU s of tables)
        seeded, t_seed, seed_pair = _seeded(encs, best, tolerance, deadline, late)
        if _closes(best, seed_pair, known_upper, tolerance):
            return _seed_closed(ens, q, best, known_upper, encs[0], (seeded, t_seed), t0)
        # the compiled search walks the nodes: the leaves' boxes are not recorded for it
        compiled = bound is None and gap_kernel_compile.available()
        # a certificate asked for: the boxes it drops and resolves tile the pair space
        record = compiled and len(encs) == 1 and recording()
        t_build = time.time()
        tables, heap_bytes = _tables_within(encs, memory_bytes, heap_bytes, not compiled, deadline)
        t_compile = time.time() - t0 - t_seed
        to_gap = gap_bound(ens)
        # the most promising pair of classes first; the others' root bounds stand for
        # them in the progress lines until their turn
        roots = [root_bound(tab, to_gap, bound) for tab in tables]
        order = sorted(range(len(encs)), key=lambda k: -roots[k])
        ready = Readiness(0.0, False)
        if all(map(unsplit, tables)):  # the root bounds answer, a certificate's tiling is
            compiled = False  # the whole space (largest_gap): the kernel is not needed
        if compiled and time.time() < deadline:
            # the search's kernel alone: a certificate's proof rebuilt from the boxes
            # recorded makes its own kernels ready where it is rebuilt (certify_tiling.py),
            # none where it needs no rebuild (one box under U')
            ready = gap_kernel.prepare(log)
            deadline = kernel_deadline(deadline, ready)
        floorless = _floorless(encs, tables, best, tolerance, compiled and work is None, deadline)
    except PairTablesPastDeadline as e:  # the seed's pair, if any, for the open bracket
        # the tables' own seconds (none: the time went before them), for a rate per tree
        e.build_seconds = time.time() - t_build if t_build is not None else 0.0
        e.seeded = _before_boxes(ens, q, best, known_upper, encs[0], tolerance, t0)
        raise
    except KeyboardInterrupt:  # before the boxes: the seed's pair so far, if any
        if known_upper is None:
            raise
        return _interrupted_before_boxes(ens, q, best, known_upper, encs[0], tolerance, t0)
    searches = _PairSearches(encs, tables, best, tolerance, bound, deadline, work)
    outs = searches.run(order, roots, log, heap_bytes, record, late.later_of(deadline))
    outside = seed_pair is not None or (floorless is not None and best.gap >= tolerance.least)
    out = _combined(outs, [roots[k] for k in order[len(outs) :]], best, outside)
    if work is not None and not (out.proven or out.interrupted) and work.left() <= 0:
        out = replace(out, spent=True)  # the budget ended it, whatever the clock said
    res = pair_result(ens, q, best, out, encs[0])
    if record and outs and outs[0].tiling is not None:
        res.box_proof = RecordedTiling(encs[0], tables[0], outs[0].tiling)
    if seed_pair is not None and best.pair is seed_pair and res.status == SENSITIVE:
        res.stats["found_by"] = SEED_FOUND_BY
    kernel = ready.seconds if ready.compiled else 0.0  # a load from the cache: the solve's
    res.time = {"compile": t_compile, "solve": time.time() - t0 - t_compile - kernel}
    if ready.compiled:
        res.time[KERNEL_COMPILE] = ready.seconds
    res.time["total"] = time.time() - t0
    res.stats["box_search"] = _search_stats(out, tables, best, (seeded, t_seed), ready, late)
    res.stats["box_search"]["seed"]["floorless"] = floorless and floorless.stats()
    if out.shed_boxes:
        _note_shed(ens, res, out, heap_bytes)
    return res, out


def at_gap_zero(ens: Ensemble, q: Query) -> Query:
    """``q`` (whose gap a max gap leaves unset) read at gap 0: a probability gap of 0, a
    multiclass ratio of 1, a regressor's change f(x1) - f(x2) >= 0 (x1 the higher)."""
    if ens.is_regressor:
        return q.with_(delta=0.0, direction=DOWN)
    return q.with_(gap=Gap(1.0 if ens.n_outputs > 1 else 0.0, GapKind.PROB))


def unsplit_query(ens: Ensemble, q: Query) -> bool:
    """``gap_boxes.unsplit`` of the query's pair tables, decided without building them
    (for a max gap bisected, or a forest's ratio searched at fixed ratios): each varied
    feature's column holds one rank for each input, the same for both, within the
    query's bounds (those alike read as the features' domains); relations between the
    inputs only narrow pairs that get one prediction each. False where the tables would
    not describe the bounds."""
    q = at_gap_zero(ens, q).with_(relations=())
    narrowed = bounds_as_domains(ens, q, per_input=True)
    if narrowed is not None:
        ens, q = narrowed
    enc = pair_encoding(ens, q)
    ranges = input_rank_ranges(enc) if q.bounds else {}
    if ranges is None:
        return False
    domains = ensemble_structure(ens).domains
    for f in enc.varying:
        whole = (0, n_ranks(ens, f) if f in domains else 1)  # a feature no tree reads: one
        spans = {ranges.get((f, c), whole) for c in (0, 1)}
        if len(spans) != 1 or any(b - a != 1 for a, b in spans):
            return False
    return True


def _searched_encodings(
    ens: Ensemble, q: Query
) -> tuple[list[Encoding] | None, Callable[[np.ndarray], float] | None]:
    """The encodings the box search searches (``q`` read at gap 0: one per pair of
    classes, or per level of a regressor's link) and the bound a box's terms give there
    (None: their least); no encodings where the pair tables do not describe ``q``."""
    if ens.n_outputs > 1 and ens.link != SOFTMAX:  # a forest's ratio rows are not log ratios
        return None, None
    at_zero = at_gap_zero(ens, q)
    if ens.is_regressor and ens.link != IDENTITY:
        # a relation on categories no split lists: the codes that keep their order
        coded = relation_coded(ens, at_zero)
        return level_encodings(pair_encoding(coded, at_zero)), link_bound(ens.link)
    # relations between the inputs read in rank space (relation_boxes.py), as a check's
    return class_pair_encodings(pair_encoding(ens, at_zero), relations=True), None


def searched_refusal(ens: Ensemble, q: Query) -> str | None:
    """Why the box search leaves ``q``'s largest gap to the bisection, in words
    (pair_scope.refusal of the encoding ``_searched_encodings`` found undescribed; None
    where it searches it, or the model is one it does not search)."""
    at_zero = at_gap_zero(ens, q)
    if ens.is_regressor and ens.link != IDENTITY:
        enc = pair_encoding(relation_coded(ens, at_zero), at_zero)
        return refusal(replace(enc, condition=LEVELS), relations=True)
    enc = pair_encoding(ens, at_zero)
    if ens.n_outputs > 1 and ens.link != SOFTMAX:
        return None
    return class_pair_refusal(enc, relations=True)


@dataclass
class _PairSearches:
    """The searches of each pair of classes in turn (``largest_gap``), the best pair so
    far pruning the next, each within the deadline and what is left of ``work``."""

    encs: list[Encoding]
    tables: list[PairTables]
    best: BestPair
    tolerance: Tolerance
    bound: Callable[[np.ndarray], float] | None
    deadline: float
    work: Work | None

    def run(self, order, roots, log, heap_bytes, record, later) -> list[GapBoxOutcome]:
        """The outcomes in ``order``, until the deadline, the budget or an interruption
        (the pairs not searched keep their ``roots`` bounds). ``later(limit)``: a
        search's late step, given its box limit."""
        ens, best, outs = self.best.ens, self.best, []
        for k in order:
            limit = box_limit(self.work)
            if time.time() >= self.deadline or limit <= 0:
                break
            pending = max((roots[j] for j in order[len(outs) + 1 :]), default=-math.inf)
            done = max((o.upper for o in outs), default=-math.inf)
            lower = best.gap if best.gap >= self.tolerance.least else None
            progress = _progress_lines(ens, log, max(pending, done), lower, self.deadline)
            offer = best.offer_for(self.encs[k])
            out = largest_gap(
                self.encs[k], self.tables[k], gap_bound(ens), offer, self.tolerance,
                self.deadline, progress, lower, self.bound, heap_bytes=heap_bytes,
                recording=record, later=later(limit), box_limit=limit,
            )  # fmt: skip
            if self.work is not None:
                self.work.spend("box_search", out.boxes)
            outs.append(out)
            if out.interrupted:
                break
        return outs


def box_limit(work: Work | None) -> float:
    """The boxes a search may visit: what is left of a work budget, one unit a box
    (none: no limit but the clock)."""
    return math.inf if work is None else work.left()


def _seeded(
    encs: list[Encoding], best: BestPair, tolerance: Tolerance, deadline: float, late: LatePolish
) -> tuple[int, float, tuple[np.ndarray, np.ndarray] | None]:
    """The heuristic's pairs offered as the search's first floor (one pair of classes
    only): how many, the seconds they took, and the best pair when it meets the
    tolerance; their evaluations counted in ``late.seed``. ``late.timed`` False (a work
    budget): each ask on its work bound alone."""
    t = time.time()
    seeded = 0
    if len(encs) == 1:
        saturation = saturation_slack(gap_bound(encs[0].ensemble), tolerance.least)
        offer = best.offer_for(encs[0])
        seeded = seed_floor(encs[0], offer, deadline, saturation, late.timed, late.seed)
    return seeded, time.time() - t, best.pair if best.gap >= tolerance.least else None


def _floorless(
    encs: list[Encoding],
    tables: list[PairTables],
    best: BestPair,
    tolerance: Tolerance,
    timed: bool,
    deadline: float,
) -> Floorless | None:
    """The floorless seed (gap_floorless.py) where it applies: a timed compiled search of
    one pair of classes whose seed's pairs came near the saturation slack and missed it.
    None: not run."""
    if not timed or len(encs) != 1 or time.time() >= deadline:
        return None
    saturation = saturation_slack(gap_bound(encs[0].ensemble), tolerance.least)
    if not missed(encs[0], best.gap, tolerance, saturation):
        return None
    offer = best.offer_for(encs[0])
    return floorless_seed(encs[0], tables[0], offer, tolerance, saturation, deadline, best.gap)


class LatePolish:
    """The late polish of the best pair so far (gap_seed.late_polish), run by the compiled
    search once it has done a few times the seed's work (gap_seed.late_after; ``seed``:
    the seed's evaluations): one pair of classes only. ``seconds``: what it took (None: not
    run). ``timed`` False (a work budget): due at a share of the search's boxes
    (gap_seed.LATE_WORK_SHARE), and polishing on its work bound alone; ``timed``, its steps
    count on a work clock (``clock``: the search's boxes and the polishes' evaluations,
    ``spent``), so that they come at the same boxes at any load: it runs again from each
    better pair the search resolves, and on further random streams from the pair it last
    started from (gap_seed.LATE_STREAM_TIMES: ``origin``, ``streams``) while the last
    polish raised the best gap by the tolerance (``climbing``): a pair no polish raises (a
    feature's largest gap, often) costs no further polish."""

    def __init__(self, encs: list[Encoding], best: BestPair, tolerance: Tolerance, timed=True):
        self.enc = encs[0] if len(encs) == 1 else None
        self.best = best
        self.tolerance = tolerance
        self.timed = timed
        self.seconds: float | None = None
        self.origin: tuple[np.ndarray, np.ndarray] | None = None
        self.streams = 0
        self.climbing = False
        self.seed = Spent()  # the seed's evaluations
        self.spent = Spent()  # the polishes'

    def later(self, deadline: float, limit: float) -> Later | None:
        """The search's ``later`` step, polishing until at most ``deadline``; ``limit``:
        the search's boxes, at most (a work budget's)."""
        if self.enc is None:
            return None
        after = late_after(self.seed)
        if not self.timed:  # due at a box, once: its floors at the same boxes on any machine
            return Later(after, lambda: self._run(deadline), int(LATE_WORK_SHARE * limit))
        return Later(
            after,
            lambda: self._run(deadline),
            again=LATE_TIMES,
            other=lambda: self._run(deadline, other=True),
            other_times=LATE_STREAM_TIMES,
            clock=self.clock,
        )

    def clock(self, boxes: int) -> float:
        """The late steps' work clock at the search's ``boxes``: its boxes and the
        polishes' evaluations, in row-tree evaluations (gap_seed.box_evaluations)."""
        return boxes * box_evaluations(self.enc) + self.spent.evaluations

    def later_of(self, deadline: float) -> Callable[[float], Later | None]:
        """``later`` of a search by its box limit."""
        return lambda limit: self.later(deadline, limit)

    def rounded(self) -> float | None:
        """``seconds`` as the result's stats state them."""
        return None if self.seconds is None else round(self.seconds, 3)

    def _run(self, deadline: float, other: bool = False) -> float | None:
        """The best pair polished (``other``: the pair the last such polish started from,
        on the next stream)."""
        t, enc, best = time.time(), self.enc, self.best
        if other and not self.climbing:
            return None
        if other:
            self.streams += 1
        else:
            self.origin = best.pair
        if self.origin is None:
            return None
        before = best.gap
        saturation = saturation_slack(gap_bound(enc.ensemble), self.tolerance.least)
        offer = best.offer_for(enc)
        got = late_polish(
            enc,
            self.origin,
            offer,
            saturation,
            deadline,
            self.timed,
            self.streams,
            spent=self.spent,
        )
        self.climbing = best.gap >= before + self.tolerance.width(before)
        self.seconds = (self.seconds or 0.0) + time.time() - t
        return got


SEED_PROVED_BY = "the leaf values' bound, within the tolerance of the heuristic's replayed pair"


def _closes(
    best: BestPair,
    seed_pair: tuple[np.ndarray, np.ndarray] | None,
    known_upper: float | None,
    tolerance: Tolerance,
) -> bool:
    """Whether the seeded pair alone proves the bounds: within ``tolerance`` of
    ``known_upper``, and not above it (a pair above a bound that should hold: the bound
    is not used, and the search finds out)."""
    if seed_pair is None or known_upper is None:
        return False
    return best.gap <= known_upper and tolerance.met(best.gap, known_upper)


def _seed_closed(
    ens: Ensemble,
    q: Query,
    best: BestPair,
    upper: float,
    enc: Encoding,
    seed: tuple[int, float],
    t0: float,
) -> tuple[Result, GapBoxOutcome]:
    """The answer when the seeded pair is within the tolerance of the bound had
    without the tables: proven, with no table built and no box searched."""
    out = GapBoxOutcome(proven=True, upper=upper, lower=best.gap, boxes=0)
    res = pair_result(ens, q, best, out, enc)
    res.stats["found_by"], res.stats["proved_by"] = SEED_FOUND_BY, SEED_PROVED_BY
    res.time = {"compile": 0.0, "solve": time.time() - t0, "total": time.time() - t0}
    res.stats["box_search"] = _search_stats(out, [], best, seed, Readiness(0.0, False))
    res.stats["box_search"]["tables"] = False
    return res, out


def _interrupted_before_boxes(
    ens: Ensemble,
    q: Query,
    best: BestPair,
    upper: float,
    enc: Encoding,
    tolerance: Tolerance,
    t0: float,
) -> tuple[Result, GapBoxOutcome]:
    """The bounds of a search interrupted before its first box: the best pair the seed
    replayed so far, under the bound had without the tables (``_boxed_final`` raises the
    interruption again, carrying them)."""
    res, out = _before_boxes(ens, q, best, upper, enc, tolerance, t0)
    return res, replace(out, interrupted=True)


def _before_boxes(
    ens: Ensemble,
    q: Query,
    best: BestPair,
    upper: float | None,
    enc: Encoding,
    tolerance: Tolerance,
    t0: float,
) -> tuple[Result, GapBoxOutcome]:
    """The bounds of a search ended before its first box (interrupted, or its time limit
    reached while the tables were built): the best pair the seed replayed, if it meets
    the tolerance, under the bound had without the tables (``upper``; None: unbounded)."""
    lower = best.gap if best.gap >= tolerance.least else None
    top = math.inf if upper is None else upper
    top = top if lower is None else max(top, lower)
    out = GapBoxOutcome(proven=False, upper=top, lower=lower, boxes=0)
    res = pair_result(ens, q, best, out, enc)
    if lower is not None:
        res.stats["found_by"] = SEED_FOUND_BY
    res.time = {"compile": 0.0, "solve": time.time() - t0, "total": time.time() - t0}
    return res, out


def _search_stats(
    out: GapBoxOutcome,
    tables: list[PairTables],
    best: BestPair,
    seed: tuple[int, float],
    ready: Readiness,
    late: LatePolish | None = None,
) -> dict:
    """The box search's figures in the result's stats."""
    return {
        "boxes": out.boxes,
        "leaves": sum(int(t.values.shape[1]) for t in tables),
        "pairs_replayed": best.offered,
        # the heuristic's pairs offered before the search, and the seconds they took; the
        # late polish's seconds (None: not run)
        "seed": {
            "pairs": seed[0],
            "seconds": round(seed[1], 3),
            "late_seconds": None if late is None else late.rounded(),
        },
        "class_pairs": len(tables),
        # seconds making the compiled search ready (left out of the time limit when
        # it was compiled)
        "kernel": {"seconds": ready.seconds, "compiled": ready.compiled},
    } | ({} if out.cut_walk is None else {"cut_walk": out.cut_walk})


def kernel_deadline(deadline: float, ready: Readiness) -> float:
    """The search's deadline once the compiled kernel is ready: moved on by what
    compiling it took (a first run's half minute, announced, not the query's), not by a
    load from numba's cache (about a second, counted as any other setup)."""
    return deadline + ready.seconds if ready.compiled else deadline


def _tables_within(
    encs: list[Encoding],
    memory_bytes: int | None,
    heap_bytes: int,
    boxes: bool = True,
    deadline: float | None = None,
) -> tuple[list[PairTables], int]:
    """Each class pair's tables, within what ``memory_bytes`` leaves after the others'
    (PairTablesTooLarge past it) and by ``deadline`` (PairTablesPastDeadline past it),
    and the heap's budget: at most ``heap_bytes`` and what the tables leave, at least
    ``MIN_HEAP_BYTES``. ``boxes``: record the leaves' boxes (pair_tables)."""
    tables: list[PairTables] = []

    def held() -> int:  # the tables, and the compiled search's copies of them
        copies = 0 if boxes else sum(map(gap_kernel.search_bytes, tables))
        return sum(map(tables_held, tables)) + copies

    for e in encs:
        left = None if memory_bytes is None else memory_bytes - held()
        tables.append(pair_tables(e, max_held=left, deadline=deadline, boxes=boxes))
    if memory_bytes is not None:
        left = memory_bytes - held()
        heap_bytes = max(gap_kernel.MIN_HEAP_BYTES, min(heap_bytes, left))
    return tables, heap_bytes


def _note_shed(ens: Ensemble, res: Result, out: GapBoxOutcome, heap_bytes: int) -> None:
    """The heap reached its memory budget and shed the boxes of lowest bound: in the
    result's stats and notes."""
    res.stats["box_search"]["shed"] = {
        "boxes": out.shed_boxes,
        "upper": shown_gap(ens, out.shed_upper),
        "heap_mb": round(heap_bytes / MB, 1),
    }
    res.notes.append(shed_note(ens, out, heap_bytes))


def shed_note(ens: Ensemble, out: GapBoxOutcome, heap_bytes: int) -> str:
    """What shedding boxes for memory did to the bounds, in one line."""
    kind = "change" if ens.is_regressor else "gap"
    return (
        f"the box search's open boxes reached their memory budget ({heap_bytes / MB:,.0f} MB; "
        f"--memory-mb raises it): {out.shed_boxes:,} boxes of lowest bound were shed, their "
        f"largest {kind} bound ({shown_gap(ens, out.shed_upper):.6g}) kept under the upper bound"
    )


# a regressor's raw scores as rows read at 0: x1's, minus x2's, and their difference
LEVELS = Condition(
    rows=((((1.0,), 0.0),), (((-1.0,), 0.0),)),
    pair_rows=(((1.0,), (-1.0,), 0.0),),
    description="raw(x1), -raw(x2), raw(x1) - raw(x2)",
)


def level_encodings(enc: Encoding) -> list[Encoding] | None:
    """The tables of a change through a nonlinear link: a box's bound on the change
    needs x1's highest raw score, x2's lowest and their largest difference, each a row
    (``link_bound``); None where the tables do not describe the query."""
    out = replace(enc, condition=LEVELS)
    return [out] if applies(out, relations=True) else None


def link_bound(link: str) -> Callable[[np.ndarray], float]:
    """A box's bound on g(s1) - g(s2) from its terms over the ``LEVELS`` rows (each
    relaxed by the float32 margin): s1 at most the first, s2 at least minus the second,
    s1 - s2 at most the third."""

    def bound(terms: np.ndarray) -> float:
        return change_bound(link, -float(terms[1]), float(terms[0]), float(terms[2]))

    return bound


def _progress_lines(
    ens: Ensemble, log, elsewhere: float, reached: float | None = None, deadline: float = math.inf
) -> Callable[[float | None, float, int], None]:
    """Progress lines of one search, whose bounds join ``elsewhere`` (the bound of the
    other pairs of classes) and ``reached`` (a gap reached before it: the seed's pair,
    another pair of classes'; the search reports only its own), and the seconds left
    before ``deadline``."""
    last = [0.0]

    def progress(lower: float | None, upper: float, boxes: int) -> None:
        if log is not None and time.time() - last[0] >= PROGRESS_EVERY:
            last[0] = time.time()
            lower = max((g for g in (lower, reached) if g is not None), default=None)
            low = None if lower is None else shown_gap(ens, lower)
            up = shown_gap(ens, max(upper, elsewhere))
            kind = "change" if ens.is_regressor else "gap"
            done = f"{boxes:,} box{'es' if boxes != 1 else ''}"
            log(max_gap_searching(kind, low, up, done, deadline - time.time()))

    return progress


def _combined(
    outs: list[GapBoxOutcome], unsearched: list[float], best: BestPair, seeded: bool = False
) -> GapBoxOutcome:
    """The searches of every class pair as one (the root bounds of pairs not searched
    stand for them): proven when each was. ``seeded``: a pair offered before the
    searches (gap_seed.py, gap_floorless.py) reached the tolerance."""
    found = seeded or any(o.lower is not None for o in outs)
    lower = best.gap if found else None
    shed = [o.shed_upper for o in outs if o.shed_upper is not None]
    return GapBoxOutcome(
        proven=not unsearched and all(o.proven for o in outs),
        upper=max([o.upper for o in outs] + unsearched),
        lower=lower,
        boxes=sum(o.boxes for o in outs),
        interrupted=any(o.interrupted for o in outs),
        shed_boxes=sum(o.shed_boxes for o in outs),
        shed_upper=max(shed) if shed else None,
        alike=bool(outs) and not unsearched and all(o.alike for o in outs) and not found,
        cut_walk=_cut_walks([o.cut_walk for o in outs]),
    )


def _cut_walks(walks: list[dict | None]) -> dict | list | None:
    """What the cut walk's phases did: the one class pair's where one search ran them,
    each class pair's (None: not run) where several did, None where none did."""
    ran = [w for w in walks if w is not None]
    if len(ran) <= 1:
        return ran[0] if ran else None
    return walks


def pair_result(
    ens: Ensemble, q: Query, best: BestPair, out: GapBoxOutcome, enc: Encoding
) -> Result:
    """The answer of a max-gap search from its best replayed pair and its bounds."""
    res = new_result(ens, q)
    res.features = [ens.feature_names[f] for f in sorted(enc.varying)]
    res.inputs = input_files(ens.inputs, q.plan.options.data)
    if best.disagreement is not None:
        fail(res, best.disagreement)
    elif out.lower is not None and best.pair is not None:
        w = witness_from_pair(best.enc, *best.pair)
        res.status, res.validated = SENSITIVE, True
        res.witness = witness_dict(ens, w)
        res.witness_arrays = w
        res.outputs = best.outputs
        res.stats["found_by"] = FOUND_BY
        if ens.n_outputs > 1:
            res.classes = [int(c) for c in best.enc.query.classes]
        if q.plan.options.data is None:
            res.notes.append(free_range_note(ens))
    elif out.proven:
        res.status = INSENSITIVE
    else:
        res.status = UNKNOWN
    if out.proven:
        res.stats["proved_by"] = FOUND_BY
    return record_prover(res)
