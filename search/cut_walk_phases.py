"""The cut walk (cut_walk.py) wired into the max-gap search (walk_setting.py: on by default
over a varied feature of at least 8 values): once the compiled search has visited
``after_boxes`` boxes at one floor without emptying, the phases run beside it, it kept as it
is. With the walk's own cuts (walk_setting.own_cuts, the default): (1) the walk of the whole
pair space at the floor, each box it does not close cut where the kernel's rule says
(cut_walk.walk_own), (2) a search from the boxes it left open. With a record's cuts
(TREESENS_CUT_WALK_OWN=0): (1) a fresh recording search at the floor + ``rise_rows``, to its
end, (2) the walk of its tree of cuts at the floor, (3) a search from the boxes the walk left
open. The phases prove the floor only when all of them close every box; a record that
overflows its room, a phase 1 not done in its share of the time left, a walk or a last
search not done in the phases' share (PHASES_SHARE), or a walk that gives up (too_coarse,
beaten, too_slow): the main search goes on with the rest of the time (with the last
search's upper bound where it got that far).

Sound by construction: phase 1's recorded boxes tile the pair space, the walk closes a
box only by a bound at most the floor and leaves the others open (cut_walk.py), and
the last search drops a box only under the floor; what is left open bounds the rest.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from time import process_time

import numpy as np

from . import gap_kernel
from .compiled_calls import signals_raised
from .cut_walk import CutWalk, walk_cuts, walk_own
from .pair_boxes import PairTables
from .pair_mplp import mplp_tables
from .relation_boxes import meeting_boxes
from .walk_setting import own_cuts

# phase 1 must end within this share of the time left when the phases start
PHASE_1_SHARE = 0.25
# the walk gives up (the main search goes on) once it has reached GIVE_UP_AFTER recorded
# boxes and left more than OPEN_SHARE of them open: the record's cuts are too coarse for
# its bound there, and phase 3 would redo the main search's work (adult lgbm_t1000_l63's
# race and sex: 99% and 90% left open; education and workclass: under 1%)
GIVE_UP_AFTER = 512
OPEN_SHARE = 0.5
# walk_own gives up (the main search goes on) once it leaves a box open (beaten), or once
# it has visited OWN_GIVE_UP_AFTER boxes and its pace says it will not end within the
# phases' share: the time it took over the share of its tree of cuts done (CutWalk.done)
OWN_GIVE_UP_AFTER = 2048
# and all three within this share: a walk that will not close leaves the main search the
# rest (bench/reports/scale-tier.md, "The cut walk's schedule")
PHASES_SHARE = 0.7
# the walk only over a record of at least this share of after_boxes: a record far smaller
# than the main search's boxes at the floor is cut too coarsely for the walk to close much
# at the floor, and phase 3 redoes the main search from its leaves (bench/reports/
# scale-tier.md, "The cut walk's schedule")
RECORD_LEAST = 0.25


@dataclass
class Phases:
    """The phases' end: ``complete`` where every box closed at the floor; ``upper`` (row
    units) bounds every pair: the largest bound phase 3 left open, dropped or shed, or
    a box the walk closed was closed by."""

    complete: bool = False
    upper: float = math.inf
    boxes: int = 0


# how the phases ended (WalkReport.ended)
PROVED = "proved"
BEATEN = "gave up: beaten"
TOO_SLOW = "gave up: too slow"
TOO_COARSE = "gave up: too coarse"
RECORD_TOO_SMALL = "record too small"
RECORD_FULL = "record full"
OUT_OF_TIME = "out of time"
BOXES_SHED = "boxes shed"
FEW_VALUES = "not walked: few values"


@dataclass
class WalkReport:
    """What the phases did, for the result's stats: after how many of the main search's
    boxes they started, the cuts walked ("own" or "record"), the floor walked at (row
    units; None: no walk), the boxes the walk visited, closed and left open, the CPU
    seconds of the phases and how they ended (None: they did not run)."""

    after_boxes: int
    cuts: str
    floor_rows: float | None = None
    visited: int = 0
    closed: int = 0
    left_open: int = 0
    cpu_seconds: float = 0.0
    ended: str | None = None

    def walked(self, walk: CutWalk, floor_rows: float) -> None:
        self.floor_rows, self.visited, self.left_open = floor_rows, walk.visited, len(walk.open)
        self.closed = walk.closed_plain + walk.closed_inherited + walk.closed_swept

    def stats(self, to_gap: Callable[[float], float]) -> dict:
        """As the result's stats, the floor as a gap (``to_gap`` of its rows)."""
        return {
            "after_boxes": self.after_boxes,
            "cuts": self.cuts,
            "floor": _gap_of(self.floor_rows, to_gap),
            "visited": self.visited,
            "closed": self.closed,
            "left_open": self.left_open,
            "cpu_seconds": round(self.cpu_seconds, 3),
            "ended": self.ended,
        }


def _gap_of(rows: float | None, to_gap: Callable[[float], float]) -> float | None:
    """A floor in row units as a gap: None where not walked, 0 where none was set."""
    if rows is None:
        return None
    return max(to_gap(rows), 0.0) if math.isfinite(rows) else 0.0


@dataclass
class WalkSwitch:
    """When the phases are due: ``setting``'s after_boxes boxes at one floor, once; and
    their end (``phases``; ``ended``: they proved the floor) and what they did
    (``report``; None: they did not run)."""

    setting: tuple[float, int] | None
    floor: float | None = None
    since: int = 0  # the boxes visited when the floor was last raised
    tried: bool = False
    phases: Phases = field(default_factory=Phases)
    ended: bool = False
    report: WalkReport | None = None
    boxes: int = 0  # the main search's when the phases became due

    def run(self, b, root: float, heap_bytes: int, hooks: Hooks) -> int:
        """The phases run over ``b`` (gap_boxes._Bounds): the boxes they visited."""
        rise, after = self.setting[:2]
        least = int(RECORD_LEAST * after)
        report = WalkReport(self.boxes, "own" if own_cuts() else "record")
        if len(self.setting) > 2 and varied_values(b.tab) < self.setting[2]:
            report.ended, self.report = FEW_VALUES, report
            return 0
        started = process_time()
        # the walk calls its compiled code itself: Ctrl-C or SIGTERM there must reach the
        # main search as such, not as numba's SystemError (compiled_calls.py)
        with signals_raised():
            got, boxes = run_phases(
                b.tab, b.order, root, b.rel, rise, heap_bytes, hooks, least, report
            )  # fmt: skip
        report.cpu_seconds = process_time() - started
        self.report = report if report.ended is not None else None
        self.phases = got or self.phases
        self.ended = self.phases.complete
        return boxes

    def due(self, floor: float, boxes: int, status: int) -> bool:
        if self.setting is None or self.tried or status == gap_kernel.EMPTY:
            return False
        if floor != self.floor:
            self.floor, self.since = floor, boxes
        if boxes - self.since < self.setting[1]:
            return False
        self.tried, self.boxes = True, boxes
        return True


@dataclass
class Hooks:
    """The main search's: its floor now in row units (it rises as better pairs are
    accepted), its offer of a resolved box's pair, its progress (the phases' boxes)."""

    floor_rows: Callable[[], float]
    resolved: Callable[[gap_kernel.KernelSearch], None]
    progress: Callable[[int], None]
    deadline: float


def run_phases(
    tab: PairTables, order: np.ndarray, root: float, rel, rise_rows: float, heap_bytes: int,
    hooks: Hooks, least_record: int = 0, report: WalkReport | None = None,
) -> tuple[Phases | None, int]:  # fmt: skip
    """The three phases, within ``heap_bytes`` (beside the main search's heap) and
    PHASES_SHARE of the time left: their end (the main search goes on unless it is
    complete), or None where they got no bound (or phase 1 recorded fewer than
    ``least_record`` boxes, or the tables have no pair-sum row for the walk's bound to
    read); and the boxes they visited. What they did goes in ``report`` (its ``ended``
    left None where they could not run)."""
    report = report or WalkReport(0, "")
    cols, rows = len(tab.sizes), tab.values.shape[0]
    if tab.first_sum >= rows:  # a regressor's change: its one row is over both inputs
        return None, 0
    heap_bytes //= 4  # the main search holds its heap: phase 1's heap and record a quarter each
    now = time.time()
    time_left = max(hooks.deadline - now, 0.0)
    until, end = now + PHASE_1_SHARE * time_left, now + PHASES_SHARE * time_left
    if own_cuts():  # no phase 1: the walk cuts where the kernel's rule says (walk_own)
        mt = mplp_tables(gap_kernel.flatten(tab, order), gap_kernel.reads_varied(tab))
        return _walk_then_search(
            tab, order, root, rel, heap_bytes, hooks, end, mt, None, 0, report
        )  # fmt: skip
    record_max = gap_kernel.record_rows(min(heap_bytes, gap_kernel.TILING_BYTES), cols, rows)
    one = _search(tab, order, root, rel, heap_bytes, recording=True, record_max=record_max)
    status, boxes = _run(one, lambda: hooks.floor_rows() + rise_rows, until, hooks, 0)
    tiling = one.tiling() if status == gap_kernel.EMPTY and one.recording else None
    if tiling is None:  # its record overflowed its room, or phase 1 went past its share
        report.ended = RECORD_FULL if not one.recording else OUT_OF_TIME
        return None, boxes
    if len(tiling) < least_record:
        report.ended = RECORD_TOO_SMALL
        return None, boxes
    mt = mplp_tables(one.ft, one.reads_f)
    del one
    return _walk_then_search(
        tab, order, root, rel, heap_bytes, hooks, end, mt, tiling, boxes, report
    )  # fmt: skip


def _walk_then_search(
    tab: PairTables, order: np.ndarray, root: float, rel, heap_bytes: int, hooks: Hooks,
    end: float, mt, tiling: np.ndarray | None, boxes: int, report: WalkReport,
) -> tuple[Phases | None, int]:  # fmt: skip
    """Phases 2 and 3 at the floor now, until ``end``: the walk (of ``tiling``'s cuts;
    None: of its own), then a search from the boxes it left open."""
    floor, start = hooks.floor_rows(), time.time()

    def stop(walk: CutWalk) -> bool:
        hooks.progress(boxes + walk.visited)
        report.ended = _why_stopped(walk, time.time(), start, end, own=tiling is None)
        return report.ended is not None

    if tiling is None:
        walk = walk_own(mt, floor, stop=stop)
    else:
        walk = walk_cuts(mt, tiling, floor, stop=stop)
    boxes += walk.visited
    report.walked(walk, floor)
    if walk.stopped:
        return None, boxes
    # the walk's bound reads no relation: a box it left open may hold no pair that meets them
    left, top = meeting_boxes(rel, walk.open_boxes(len(tab.sizes))), mt.rows(walk.closed_top)
    report.ended = PROVED
    if len(left) == 0:
        return Phases(True, top, boxes), boxes
    three = _search(tab, order, root, rel, 2 * heap_bytes, start_boxes=left)
    status, boxes = _run(three, hooks.floor_rows, end, hooks, boxes)
    shed = three.shed if three.shed_boxes else None
    done = status == gap_kernel.EMPTY and (shed is None or shed <= hooks.floor_rows())
    if not done:
        report.ended = OUT_OF_TIME if status != gap_kernel.EMPTY else BOXES_SHED
    return Phases(done, max(three.upper(), top), boxes), boxes


def _why_stopped(walk: CutWalk, now: float, start: float, end: float, own: bool) -> str | None:
    """Why the walk stops now (an ending of WalkReport's), or None: it goes on."""
    if now >= end:
        return OUT_OF_TIME
    if own and beaten(walk):
        return BEATEN
    if own and too_slow(walk, now - start, end - start):
        return TOO_SLOW
    if not own and too_coarse(walk):
        return TOO_COARSE
    return None


def varied_values(tab: PairTables) -> int:
    """The most values (intervals between thresholds, or categories) a varied feature's
    column has in ``tab``."""
    return max(
        (int(tab.sizes[i]) for i, (_, c) in enumerate(tab.columns) if c is not None), default=0
    )


def too_coarse(walk: CutWalk) -> bool:
    """Whether the walk leaves so many of the recorded boxes it reached open that it is not
    worth going on."""
    return walk.reached >= GIVE_UP_AFTER and len(walk.open) > OPEN_SHARE * walk.reached


def beaten(walk: CutWalk) -> bool:
    """Whether walk_own has left a box open: every tree of F has one leaf there, which
    fixes the pair sum (F's trees' leaf values of x1 less x2) above the floor. Its pairs'
    gaps also depend on the margin both inputs share (the trees outside F), so they need
    not beat the floor; but the walk, which bounds by the pair sum alone, cannot close the
    box, so it gives up and the main search goes on (bench/reports/scale-tier.md, "The own
    walk settling its open boxes": churn lgbm_t1000_l63's SeniorCitizen)."""
    return len(walk.open) > 0


def too_slow(walk: CutWalk, took: float, share: float) -> bool:
    """Whether walk_own, ``took`` seconds into its ``share`` of seconds, has visited enough
    boxes to judge its pace and will not end within the share at that pace."""
    return walk.visited >= OWN_GIVE_UP_AFTER and took >= walk.done * share


def _search(tab, order, root, rel, heap_bytes, **kw) -> gap_kernel.KernelSearch:
    return gap_kernel.KernelSearch(
        tab, order, root, probes=gap_kernel.PROBES, heap_bytes=heap_bytes, rel=rel,
        f_first=gap_kernel.max_gap_first_boxes(rel), frames=gap_kernel.DIVE_FRAMES, **kw,
    )  # fmt: skip


def _run(
    search: gap_kernel.KernelSearch, floor: Callable[[], float], until: float, hooks: Hooks,
    boxes: int,
) -> tuple[int, int]:  # fmt: skip
    """``search`` run at ``floor()`` until it empties, its record is full or ``until``:
    its last status and ``boxes`` plus those it visited. Steps of about 0.05-0.2 s."""
    budget, status, recording = 1, -1, search.recording
    while True:
        budget = search.recorded_budget(budget)
        if recording and not search.recording:  # full: the record is of no use
            return status, boxes
        t0 = time.time()
        status, n, _ = search.step(floor(), budget)
        boxes, took = boxes + n, time.time() - t0
        if status != gap_kernel.RESOLVED and took < 0.05:
            budget = min(2 * budget, 1 << 22)
        elif took > 0.2:
            budget = max(budget // 2, 1)
        if status == gap_kernel.RESOLVED:
            hooks.resolved(search)
        hooks.progress(boxes)
        if status == gap_kernel.EMPTY or time.time() >= until:
            return status, boxes
