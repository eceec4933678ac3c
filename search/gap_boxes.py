"""The largest gap of a binary query as one optimisation: a best-first branch and bound
over the boxes of the pair space (pair_boxes.py), keeping an anytime lower bound (the
best pair offered and accepted) and a proven upper bound.

The query's gap rows are read at gap 0, so a pair's *row value* is how far each row is
above its gap-0 threshold, and the pair's gap (in row units: margin for a logistic link,
probability for averaged forests, log of the ratio for a softmax) is the smallest of
them. On a box, with the per-tree maxima of box_search.py, each row's value is at most
its top sum minus its threshold, and the smaller of a row of x1 and its opposite row of
x2 is at most their mean, so

    U(box) = min(min over rows of (top_r - t_r), min over pair sums of (top_s - t_s) / 2)

bounds every pair in the box (in a pair sum the trees outside F cancel, which is what
makes the bound tight). The thresholds are relaxed by the encoding's float32 margin, so U
bounds the library's values too. A regressor's change through a nonlinear link combines the terms
otherwise (``bound``: g's rise from x2's lowest raw score to x1's highest, at most
their largest difference apart).

The search keeps the open boxes in a heap by U and dives from the best one, splitting
each box on the node whose split lowers U the most (``SplitRule``: measured for nodes
not split before, learned from past splits otherwise) and going always into the child
with the larger bound, until the box is resolved (every tree's value fixed: its
lower corner is an exact pair, offered to the caller, who replays it with the library)
or cannot beat the best accepted gap by more than the tolerance. The largest U of the
boxes dropped that way, and of the boxes still open, is the upper bound: when the heap
is empty it is proven.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..compiler.encode import Encoding
from . import gap_kernel, gap_kernel_compile, walk_setting
from .box_search import (
    CHECK_EVERY,
    corner_pair,
    leaf_low,
    leaf_top,
    split_index,
    tree_order,
    tree_to_split,
)
from .cut_walk_phases import Hooks, WalkSwitch
from .late_switch import UpperFall, closes_in_time
from .pair_boxes import PairTables
from .relation_boxes import RankRelations, box_meets, rank_relations
from .tolerance import Tolerance, as_tolerance

_LOW = -1e300

# a candidate pair's accepted gap (probability), or None when the library rejects it
Offer = Callable[[np.ndarray, np.ndarray], "float | None"]
# the bounds so far (lower gap or None, upper gap, boxes visited), for progress lines
Progress = Callable[[float | None, float, int], None]


# row units to a bound on the gap (probability): increasing, rounded up
ToGap = Callable[[float], float]
# a box's bound from its terms (each row's, half of each pair sum's), in place of their
# least: a regressor's change through a nonlinear link reads the rows of x1, of x2 and
# of their difference at once (search/gap_search.py)
TermsBound = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class Later:
    """A step of the search's caller run once, when the compiled search has run
    ``after`` seconds and its heap is not empty (gap_seed.late_polish): ``run`` returns
    the gap of a pair the caller's offer accepted meanwhile (a floor, as ``lower``), or
    None. ``boxes`` (a work budget's): due once the search has visited that many boxes,
    whatever the seconds, its steps cut to end there. ``again`` (None: once): run again
    each time a pair the search resolved beats every gap reached before it (the caller's
    step then starts from that pair), once the search has gone on ``again`` times as long
    as the last run took. ``other`` (None: none): a run on another random stream, due
    whenever the search has gone on ``other_times`` as long as all the runs so far took
    (at least ``after`` seconds each). ``clock`` (None: the seconds): the time the above
    count in, given the search's boxes (a work clock: the steps come at the same boxes at
    any load); the search then looks at it every LATER_EVERY boxes only."""

    after: float
    run: Callable[[], float | None]
    boxes: int | None = None
    again: float | None = None
    other: Callable[[], float | None] | None = None
    other_times: float = math.inf
    clock: Callable[[int], float] | None = None


@dataclass(frozen=True)
class GapBoxOutcome:
    proven: bool  # the search is complete (the heap emptied, no box shed above the floor)
    upper: float  # a bound on the gap of every pair (probability), relaxed
    lower: float | None  # the best accepted gap, None when no pair reached the tolerance
    boxes: int
    interrupted: bool = False
    # boxes shed for memory (the heap at its budget) and the largest gap bound among
    # them (under ``upper``; None: none shed)
    shed_boxes: int = 0
    shed_upper: float | None = None
    # with ``recording``: the boxes dropped, resolved and still open (rows lo | hi), which
    # tile the pair space, each bounded by ``upper``; None where incomplete (boxes shed)
    tiling: np.ndarray | None = None
    # no tree splits on a varied feature within its bounds (``unsplit``): x1 and x2 reach
    # the same leaves, one prediction, a gap of exactly 0 (``upper`` is still the root's
    # bound, the float allowance the tiling's one box is bounded by)
    alike: bool = False
    # not complete: the search visited the ``box_limit`` it was given (a work budget's)
    spent: bool = False
    # what the cut walk's phases did (cut_walk_phases.WalkReport.stats); None: not run
    cut_walk: dict | None = None


@dataclass
class _Box:
    live: np.ndarray  # packed bits: the pair leaves that meet the box
    lo: np.ndarray
    hi: np.ndarray


class _Bounds:
    """The per-box quantities of one search."""

    def __init__(
        self, tab: PairTables, bound: TermsBound | None = None, rel: RankRelations | None = None
    ):
        self.tab = tab
        self.bound = bound
        # relations between the inputs (None: none): a child box no pair of whose ranks
        # meets them is dropped, a resolved box's pair taken at ranks that meet them
        self.rel = rel
        self.n = tab.values.shape[1]
        self.first_sum = tab.first_sum
        self.order = tree_order(tab)
        self.split_rule = SplitRule(gap_kernel.PROBES)

    def low(self, live: np.ndarray) -> np.ndarray:
        return leaf_low(self.tab, live)

    def top(self, live: np.ndarray) -> np.ndarray:
        return leaf_top(self.tab, live)

    def terms(self, top: np.ndarray) -> np.ndarray:
        """The bounds on the box's gap (row units): each row's, half of each pair sum's."""
        t = top.sum(axis=1) - self.tab.thresholds
        t[self.first_sum :] /= 2.0
        return t

    def upper(self, top: np.ndarray) -> float:
        return self.of_terms(self.terms(top))

    def of_terms(self, terms: np.ndarray) -> float:
        return float(terms.min()) if self.bound is None else self.bound(terms)

    def unpack(self, packed: np.ndarray) -> np.ndarray:
        return np.unpackbits(packed, count=self.n).astype(bool)


def root_bound(tab: PairTables, to_gap: ToGap, bound: TermsBound | None = None) -> float:
    """The bound U of the whole pair space, in gap units."""
    u = root_rows(tab, bound)
    return u if u == -np.inf else to_gap(u)


def root_rows(tab: PairTables, bound: TermsBound | None = None) -> float:
    """The bound U of the whole pair space, in row units (-inf: no pair leaf)."""
    b = _Bounds(tab, bound)
    if b.n == 0:
        return -np.inf
    return b.upper(b.top(np.ones(b.n, dtype=bool)))


def unsplit(tab: PairTables) -> bool:
    """Whether the pair tables split on no varied feature (each copy's column one
    interval, the same for both: a bound on one input may hold it to another than the
    other input's): x1 and x2 then read every tree alike, no box splits the pair apart,
    and the root's bound (the rounding band over a difference of 0) is the search's
    answer (a feature no tree reads)."""
    ranks: dict[int, set[int]] = {}
    for j, (n, (f, copy)) in enumerate(zip(tab.sizes.tolist(), tab.columns)):
        if copy is not None:
            if n > 1:
                return False
            ranks.setdefault(f, set()).add(tab.domain_rank(j, 0))
    return all(len(r) == 1 for r in ranks.values())


def whole_space(tab: PairTables) -> np.ndarray:
    """The tiling of one box, the whole pair space (a row lo | hi, as the compiled search
    records its boxes)."""
    sizes = tab.sizes.astype(np.int32)
    return np.concatenate([np.zeros_like(sizes), sizes])[None, :]


def largest_gap(
    enc: Encoding,
    tab: PairTables,
    to_gap: ToGap,
    offer: Offer,
    tolerance: float | Tolerance,
    deadline: float,
    progress: Progress | None = None,
    lower: float | None = None,
    bound: TermsBound | None = None,
    compiled: bool = True,
    heap_bytes: int = gap_kernel.HEAP_BYTES,
    recording: bool = False,
    later: Later | None = None,
    box_limit: float = math.inf,
) -> GapBoxOutcome:
    """Bound the largest gap of the query ``enc`` (read at gap 0) until the bounds are
    ``tolerance`` apart (a number: absolute), the heap is empty, or ``deadline``
    (absolute time.time()).
    ``lower``: a gap already reached (another search's), which prunes this one; the
    outcome's ``lower`` is then this search's own, or None. ``bound``: a box's bound
    from its terms, in place of their least. ``compiled``: run the compiled search
    (gap_kernel.py) where it applies (a bound that is the terms' least), else this
    module's. ``heap_bytes``: the heap of open boxes, at most (beyond it the boxes of
    lowest bound are shed, their largest bound kept under the upper bound).
    ``recording``: the compiled search keeps every box it drops, for the outcome's
    ``tiling`` (a certificate of the upper bound, questions/certify_tiling.py).
    ``later``: run once by the compiled search, after its time (not by this module's).
    ``box_limit``: the boxes it visits at most (a work budget's, answers/work.py): the
    compiled search stops at that box exactly, this module's at the end of the dive that
    reaches it; the outcome's ``spent`` says it ended there.
    Relations between the inputs in ``enc``'s query are read in rank space
    (relation_boxes.py): a box no pair of whose ranks meets them is dropped, its bound
    -1e300 (unbounded, a certificate's ``relation`` step), and a resolved box's pair is
    taken at ranks that meet them."""
    tolerance = as_tolerance(tolerance)
    b = _Bounds(tab, bound, rank_relations(enc, tab))
    if b.n == 0:
        return GapBoxOutcome(True, 0.0, None, 0)
    if unsplit(tab):  # the root's bound is the answer: no box to search, the tiling one box
        root = max(to_gap(b.upper(b.top(np.ones(b.n, dtype=bool)))), 0.0)
        tiling = whole_space(tab) if recording else None
        return GapBoxOutcome(True, root, None, 0, tiling=tiling, alike=True)
    if bound is None and compiled and gap_kernel_compile.available():
        return _spent(
            _compiled_search(
                b, enc, to_gap, offer, tolerance, deadline, progress, lower, heap_bytes,
                recording, later, box_limit,
            ),
            box_limit,
        )  # fmt: skip
    state = _State(to_gap, tolerance, lower, heap_boxes(heap_bytes, b.n, len(tab.sizes)))
    tie = itertools.count()
    root = np.ones(b.n, dtype=bool)
    heap = [(-b.upper(b.top(root)), next(tie), _Box(np.packbits(root), *_full(tab)))]
    boxes = 0
    try:
        while heap:
            neg_u, _, box = heapq.heappop(heap)
            if state.drop(-neg_u):
                continue
            boxes += _dive(b, box, state, offer, heap, tie, enc)
            if progress is not None:
                progress(state.lower, state.upper_with(heap), boxes)
            if time.time() >= deadline or boxes >= box_limit:
                break
    except KeyboardInterrupt:
        return state.outcome(heap, boxes, interrupted=True)
    return _spent(state.outcome(heap, boxes), box_limit)


def _main_search(
    b: _Bounds, root: float, heap_bytes: int, recording: bool, box_limit: float
) -> tuple[int, gap_kernel.KernelSearch]:
    """The compiled search over ``b`` and its heap's bytes: a recording search's heap and
    record half the room each, the record's capped."""
    record_max = None
    if recording:
        heap_bytes //= 2
        rows = b.tab.values.shape[0]
        record_max = gap_kernel.record_rows(
            min(heap_bytes, gap_kernel.TILING_BYTES), len(b.tab.sizes), rows
        )
    return heap_bytes, gap_kernel.KernelSearch(
        b.tab, b.order, root, probes=gap_kernel.PROBES, heap_bytes=heap_bytes,
        recording=recording, record_max=record_max, rel=b.rel,
        f_first=gap_kernel.max_gap_first_boxes(b.rel),
        frames=gap_kernel.DIVE_FRAMES if math.isinf(box_limit) else 0,  # a work budget's: none
    )  # fmt: skip


def _spent(out: GapBoxOutcome, box_limit: float) -> GapBoxOutcome:
    """``out``, marked ``spent`` where it stopped incomplete at its box limit."""
    if out.proven or out.interrupted or out.boxes < box_limit:
        return out
    return replace(out, spent=True)


# a box on the Python search's heap beyond its bit per leaf and its lo and hi (4 bytes a
# column each): the arrays' and objects' headers, the heap's tuple (measured: about 500)
BOX_OVERHEAD = 512


def heap_boxes(heap_bytes: int, leaves: int, columns: int) -> int:
    """How many boxes the Python search's heap of ``heap_bytes`` holds over ``leaves``
    pair leaves and ``columns`` columns: a box keeps a bit per leaf; at least 4, as the
    compiled search's (gap_kernel.heap_rows)."""
    per_box = -(-leaves // 8) + 8 * columns + BOX_OVERHEAD
    return max(4, int(heap_bytes) // per_box)


# the compiled search's first step, in boxes: one, as a box of a large model's tables
# takes a tenth of a CPU second or more (and the query's time may be spent before the
# search starts); it measures the time per box, and the steps then grow while they stay
# short (next_step)
FIRST_STEP = 1
# a search whose ``later`` counts on a work clock looks at it every this many boxes only
# (its steps cut to end there): the looks, and the boxes a late step comes at, are then
# the same at any load (the kernel's boxes do not depend on where its steps end)
LATER_EVERY = 4096
LONGEST_STEP = 1 << 22


def next_step(budget: int, boxes: int, took: float, left: float, status: int) -> int:
    """The compiled search's next step, in boxes, after a step of ``budget`` that ran
    ``boxes`` in ``took`` seconds with ``left`` seconds to the deadline: about a tenth of
    a second between two looks at the clock, and never (at the measured time per box)
    more than a quarter of the time left. The boxes visited do not depend on the steps
    (the kernel holds a dive at a step's end and goes on with it at the next)."""
    if status != gap_kernel.RESOLVED and took < 0.05:
        budget = min(budget * 2, LONGEST_STEP)
    elif took > 0.2:
        budget = max(budget // 2, 1)
    if boxes > 0 and took > 0:
        budget = min(budget, max(1, int(0.25 * max(left, 0.0) * boxes / took)))
    return budget


def _compiled_search(
    b: _Bounds,
    enc: Encoding,
    to_gap: ToGap,
    offer: Offer,
    tolerance: Tolerance,
    deadline: float,
    progress: Progress | None,
    reached: float | None,
    heap_bytes: int,
    recording: bool = False,
    later: Later | None = None,
    box_limit: float = math.inf,
) -> GapBoxOutcome:
    """``largest_gap`` by the compiled kernel: the same bounds, split rule and dives, the
    kernel returning here to have a resolved box's pair replayed and to look at the
    clock (and to run ``later`` once, whose pair raises the floor as ``reached`` does).
    Boxes it sheds for memory keep their bound under ``upper``; one shed above the last
    floor leaves the bounds not proven."""
    tab = b.tab
    root = b.upper(b.top(np.ones(b.n, dtype=bool)))
    heap_bytes, search = _main_search(b, root, heap_bytes, recording, box_limit)
    best: float | None = None  # the best accepted gap
    runs = _LaterRuns(later)
    floors: dict[float, float] = {}
    boxes, budget, status = 0, FIRST_STEP, -1
    switch = WalkSwitch(None if recording or math.isfinite(box_limit) else walk_setting.cut_walk())

    def upper() -> float:  # the main search's, or the cut walk's phases' where lower
        u = min(search.upper(), switch.phases.upper)
        gap = to_gap(u) if u > _LOW else 0.0
        return max(gap, 0.0 if best is None else best)

    def outcome(interrupted: bool = False) -> GapBoxOutcome:
        shed = to_gap(search.shed) if search.shed_boxes else None
        floor = tolerance.floor(_best_of(best, reached))
        complete = (
            switch.phases.complete or status == gap_kernel.EMPTY and (shed is None or shed <= floor)
        )
        return GapBoxOutcome(
            complete and not interrupted,
            upper(),
            best,
            boxes,
            interrupted,
            search.shed_boxes,
            shed,
            search.tiling() if recording and not interrupted else None,
            cut_walk=switch.report and switch.report.stats(to_gap),
        )

    def rows() -> float:  # the floor now, in row units
        floor = tolerance.floor(_best_of(best, reached))
        if floor not in floors:
            floors[floor] = gap_kernel.floor_in_rows(to_gap, floor)
        return floors[floor]

    def take(s: gap_kernel.KernelSearch) -> None:  # a resolved box's pair offered
        nonlocal best
        got = offer(*corner_pair(enc, tab, s.corner, s.corner_hi, b.rel))
        if got is not None and got >= tolerance.least and (best is None or got > best):
            best = got

    def told(n: int) -> None:  # progress, with the cut walk's phases' ``n`` boxes
        if progress is not None:
            progress(_best_of(best, reached), upper(), boxes + n)

    started, fall = time.time(), UpperFall()  # fall: the upper bound's, for the switch
    try:
        while True:
            reached = runs.raised(reached, tolerance, status, started, boxes, best)
            u_floor = rows()
            _late_best_first(search, u_floor, started, deadline, fall)
            t0 = time.time()
            status, n, _u = search.step(u_floor, _cut(budget, boxes, box_limit, runs.later))
            boxes += n
            now = time.time()
            budget = next_step(budget, n, now - t0, deadline - now, status)
            budget = search.recorded_budget(budget)  # a record grows by twice the budget
            if status == gap_kernel.RESOLVED:
                take(search)
            told(0)
            if switch.due(u_floor, boxes, status):
                boxes += switch.run(b, root, heap_bytes, Hooks(rows, take, told, deadline))
            done = status == gap_kernel.EMPTY or time.time() >= deadline or boxes >= box_limit
            if done or switch.ended:
                break
    except KeyboardInterrupt:
        return outcome(interrupted=True)
    return outcome()


@dataclass
class _LaterRuns:
    """A search's runs of ``later``: once, or (``later.again``) again from each better
    pair the search resolves, and (``later.other``) on other streams as the search goes
    on; ``last``: the search's best gap at the last run, and the time from which a
    better one runs it again; ``spent``, ``runs``: the seconds and the number of all
    the runs."""

    later: Later | None
    last: tuple[float | None, float] | None = None
    spent: float = 0.0
    runs: int = 0

    def raised(self, reached, tolerance: Tolerance, status: int, started: float, boxes: int, best):
        """``reached``, raised by ``later``'s pair where it is due now (``_due``), or
        by its run on another stream where that is due."""
        later = self.later
        if later is None:
            return reached
        if later.clock is not None:  # the search's start on its clock; a look every so often
            if boxes % LATER_EVERY:
                return reached
            started = 0.0
        if _due(later, status, started, boxes, best, reached, self.last):
            run = later.run
        elif self.last is not None and self._other_due(status, started, boxes):
            run = later.other
        else:
            return reached
        t_run = _now(later, boxes)
        reached = _raised(reached, run(), tolerance)
        took = _now(later, boxes) - t_run
        self.spent, self.runs = self.spent + took, self.runs + 1
        if later.again is None:
            self.later = None
        elif run is later.run:
            self.last = (best, _now(later, boxes) + later.again * took)
        return reached

    def _other_due(self, status: int, started: float, boxes: int = 0) -> bool:
        """Whether the run on another stream is due: the search's own seconds (without
        the runs') ``other_times`` the runs' (at least ``after`` each)."""
        later = self.later
        if later.other is None or status == gap_kernel.EMPTY:
            return False
        runs = max(self.spent, later.after * self.runs)
        return _now(later, boxes) - started - self.spent >= later.other_times * runs


def _now(later: Later, boxes: int) -> float:
    """The time on ``later``'s clock at the search's ``boxes`` (its seconds, without one)."""
    return time.time() if later.clock is None else later.clock(boxes)


def _late_best_first(
    search: gap_kernel.KernelSearch,
    u_floor: float,
    started: float,
    deadline: float,
    fall: UpperFall,
) -> None:
    """``search``'s frames flushed, best first from here on, once it is in the last
    BEST_FIRST_SHARE of its time from ``started`` to ``deadline`` and its upper bound
    (``fall``: its course so far, this step's added) is not on course to reach the floor
    by then (late_switch.py). (A work budget's search keeps none from the start: its
    bracket at N boxes is best first's.)"""
    if not search.keeps_frames or math.isinf(deadline):
        return
    now = time.time()
    fall.add(now, search.upper())
    if deadline - now > gap_kernel.BEST_FIRST_SHARE * (deadline - started):
        return
    if not closes_in_time(fall, now, u_floor, started, deadline):
        search.best_first(u_floor)


def _cut(budget: int, boxes: int, box_limit: float, later: Later | None) -> int:
    """A compiled step's boxes: ``budget``, ending at the box limit and at the box
    ``later`` is due at (the kernel's boxes do not depend on its steps, so the boxes
    counted and the box a later floor comes in at do not depend on the clock)."""
    end = box_limit
    if later is not None and later.boxes is not None and boxes < later.boxes:
        end = min(end, later.boxes)
    if later is not None and later.clock is not None:  # a step ends at the next look
        end = min(end, (boxes // LATER_EVERY + 1) * LATER_EVERY)
    return int(max(1, min(budget, end - boxes)))


def _due(
    later: Later,
    status: int,
    started: float,
    boxes: int,
    best: float | None = None,
    reached: float | None = None,
    last_run: tuple[float | None, float] | None = None,
) -> bool:
    """Whether the search, started at ``started``, runs ``later`` now: its heap is not
    empty, and it has run ``later.after`` seconds (``later.boxes`` boxes, if given); once
    run (``last_run``: the search's best gap then, and when it may run again), whether
    its best gap ``best`` is above that and every gap ``reached``, and the time has come."""
    if status == gap_kernel.EMPTY:
        return False
    if last_run is not None:
        ran_at, again_at = last_run
        if best is None or _now(later, boxes) < again_at:
            return False
        return all(g is None or best > g for g in (ran_at, reached))
    if later.boxes is not None:
        return boxes >= later.boxes
    return _now(later, boxes) - started >= later.after


def _best_of(a: float | None, b: float | None) -> float | None:
    return max((g for g in (a, b) if g is not None), default=None)


def _raised(reached: float | None, got: float | None, tolerance: Tolerance) -> float | None:
    """The gap reached, raised by an accepted gap ``got`` that reaches the tolerance."""
    if got is None or got < tolerance.least or (reached is not None and got <= reached):
        return reached
    return got


class SplitRule:
    """Which node a box is split on (gap_kernel_jit.choose_split's rule, in Python): of
    the nodes that would split an open tree (split_node of each tree whose rows still
    differ over the box, pair-sum rows first), the one whose split lowers the bound most,
    measured for a node never split before (at most ``probes`` a box) and estimated by
    the mean gain of its past splits otherwise. ``probes`` 0: the first open tree of the
    fixed order."""

    def __init__(self, probes: int):
        self.probes = probes
        self.costs: dict[tuple[int, int], list[float]] = {}  # (tree, node): [sum, count]

    def children(self, b: _Bounds, live, lo, hi, top, low, u: float) -> list[tuple]:
        tab = b.tab
        spread = top - low
        rows = spread[b.first_sum :] if (spread[b.first_sum :] > 0).any() else spread
        trees = [t for t in b.order if rows[:, t].sum() > 0]
        if self.probes == 0:
            trees = trees[:1]
        best, best_gain, probed, kids = None, -1.0, 0, None
        for t in trees:
            k = split_index(tab.nodes[t], live)
            cost = self.costs.setdefault((int(t), k), [0.0, 0])
            if cost[1] == 0 and probed < self.probes:
                split = _children(b, tab.nodes[t][k], live, lo, hi, u)
                g = _gain(u, split)
                cost[0] += g
                cost[1] += 1
                probed += 1
            else:
                split = None
                g = cost[0] / cost[1] if cost[1] else 0.0
            if g > best_gain:
                best, best_gain, kids = (int(t), k), g, split
        if kids is None:
            t, k = best
            kids = _children(b, tab.nodes[t][k], live, lo, hi, u)
            if self.probes:
                cost = self.costs[best]
                cost[0] += _gain(u, kids)
                cost[1] += 1
        return kids


def _children(b: _Bounds, node, live, lo, hi, u: float) -> list[tuple]:
    tab = b.tab
    c, r = node[0], node[1]
    yes_hi, no_lo = hi.copy(), lo.copy()
    yes_hi[c], no_lo[c] = r, r
    yes = (live & (tab.lo[c] < r), lo, yes_hi)
    no = (live & (tab.hi[c] > r), no_lo, hi)
    out = []
    for side in (yes, no):
        t = b.top(side[0])
        out.append((side, min(b.upper(t), u), t))
    return out


def _met(rel: RankRelations | None, kids: list[tuple]) -> list[tuple]:
    """The children (box, bound, maxima) with the bound of one no pair of whose ranks
    meets the relations ``rel`` at -1e300, dropped (gap_kernel_jit.split's rule: after
    the split rule measured them)."""
    if rel is None:
        return kids
    return [(side, u if box_meets(rel, side[1], side[2]) else _LOW, t) for side, u, t in kids]


def _gain(u: float, kids: list[tuple]) -> float:
    """gap_kernel_jit.gain: the worse child's fall, then (SPLIT_TIE) the better one's."""
    uy, un = kids[0][1], kids[1][1]
    return (u - max(uy, un)) + gap_kernel.SPLIT_TIE * (u - min(uy, un))


def _full(tab: PairTables) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros_like(tab.sizes), tab.sizes.copy()


class _State:
    """The incumbent (best accepted gap), the largest bound of the dropped boxes, and the
    heap's budget: past ``max_boxes`` open boxes, the quarter of lowest bound is shed
    (gap_kernel_jit.heap_shed's rule) and the largest bound shed stays under the upper
    bound, so the bounds stay sound."""

    def __init__(
        self,
        to_gap: ToGap,
        tolerance: Tolerance,
        reached: float | None = None,
        max_boxes: int | None = None,
    ):
        self.to_gap = to_gap
        self.tol = tolerance
        self.reached = reached  # a gap another search reached: prunes, is not reported
        self.lower: float | None = None
        self.dropped = _LOW  # row units
        self.max_boxes = max_boxes  # the heap's budget (None: unbounded)
        self.shed = _LOW  # the largest bound shed for memory (row units)
        self.shed_boxes = 0

    def floor(self) -> float:
        """What a box's gap bound must pass to be kept: the tolerance above the best gap."""
        best = max((g for g in (self.lower, self.reached) if g is not None), default=None)
        return self.tol.floor(best)

    def drop(self, u: float) -> bool:
        """Whether a box of bound ``u`` (row units) cannot improve on the incumbent by
        more than the tolerance (or reach the tolerance at all); it is then recorded."""
        if self.to_gap(u) <= self.floor():
            self.dropped = max(self.dropped, u)
            return True
        return False

    def push(self, heap: list, item: tuple) -> None:
        """Put ``item`` (-bound, tie, box) on the heap, shedding a quarter of it first
        when it is at its budget."""
        if self.max_boxes is not None and len(heap) >= self.max_boxes:
            heap.sort()  # best bound first: a sorted list is a heap
            keep = len(heap) - max(1, len(heap) // 4)
            for neg_u, _, _ in heap[keep:]:
                if not self.drop(-neg_u):
                    self.shed = max(self.shed, -neg_u)
                    self.shed_boxes += 1
            del heap[keep:]
        heapq.heappush(heap, item)

    def upper_with(self, heap: list) -> float:
        u = max([self.dropped, self.shed] + [-h[0] for h in heap[:1]])
        gap = self.to_gap(u) if u > _LOW else 0.0
        return max(gap, 0.0 if self.lower is None else self.lower)

    def outcome(self, heap: list, boxes: int, interrupted: bool = False) -> GapBoxOutcome:
        """The search's bounds: proven when the heap is empty and no box was shed above
        the final floor."""
        shed = self.to_gap(self.shed) if self.shed_boxes else None
        complete = not heap and (shed is None or shed <= self.floor())
        upper = self.upper_with(heap)
        return GapBoxOutcome(
            complete and not interrupted,
            upper,
            self.lower,
            boxes,
            interrupted,
            self.shed_boxes,
            shed,
        )


def _dive(b: _Bounds, box: _Box, state: _State, offer: Offer, heap, tie, enc) -> int:
    """From ``box``, follow the child with the larger bound until it is dropped or
    resolved, pushing the other children on the heap. Returns the boxes visited."""
    tab = b.tab
    live, lo, hi = b.unpack(box.live), box.lo, box.hi
    top = b.top(live)
    visited = 0
    while True:
        visited += 1
        low = b.low(live)
        u = b.of_terms(b.terms(top))
        if state.drop(u):
            return visited
        tree = tree_to_split(top - low, b.order, b.first_sum)
        if tree < 0:  # resolved: the lower corner is an exact pair
            got = offer(*corner_pair(enc, tab, lo, hi, b.rel))
            if (
                got is not None
                and got >= state.tol.least
                and (state.lower is None or got > state.lower)
            ):
                state.lower = got
            state.dropped = max(state.dropped, u)
            return visited
        # each child: its box, its bound (at most this box's) and its per-tree maxima
        kids = b.split_rule.children(b, live, lo, hi, top, low, u)
        (go, u_go, top), (stay, u_stay, _) = sorted(_met(b.rel, kids), key=lambda s: -s[1])
        if not state.drop(u_stay):
            packed = _Box(np.packbits(stay[0]), stay[1], stay[2])
            state.push(heap, (-u_stay, next(tie), packed))
        if u_go <= _LOW:  # neither child holds a pair meeting the relations
            state.drop(u_go)
            return visited
        live, lo, hi = go
        if visited % CHECK_EVERY == 0 and heap and -heap[0][0] > u + 1e-12:
            # a better box waits: leave this dive to the heap
            state.push(heap, (-u, next(tie), _Box(np.packbits(live), lo, hi)))
            return visited
