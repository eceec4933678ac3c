"""The cut walk (cut_walk.py) wired into the max-gap search, opt-in: once the compiled
search has visited ``after_boxes`` boxes at one floor without emptying, three phases run
beside it, it kept as it is: (1) a fresh recording search at the floor + ``rise_rows``,
to its end, (2) the walk of its tree of cuts at the floor, (3) a search from the boxes
the walk left open. The phases prove the floor only when all three close every box; a
record that overflows its room, a phase 1 not done in its share of the time left, a walk
or a phase 3 not done in the phases' share (PHASES_SHARE), or a walk leaving most recorded
boxes open: the main search goes on with the rest of the time (with phase 3's upper bound
where it got that far).

Sound by construction: phase 1's recorded boxes tile the pair space, the walk closes a
box only by a bound at most the floor and leaves the others open (cut_walk.py), and
phase 3's search drops a box only under the floor; what is left open bounds the rest.

With ``TREESENS_CUT_WALK_OWN=1`` as well (walk_setting.own_cuts), phase 1 is skipped and the
walk cuts where the kernel's rule says (cut_walk.walk_own), from the whole pair space.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

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


@dataclass
class WalkSwitch:
    """When the phases are due: ``setting``'s after_boxes boxes at one floor, once; and
    their end (``phases``; ``ended``: they proved the floor)."""

    setting: tuple[float, int] | None
    floor: float | None = None
    since: int = 0  # the boxes visited when the floor was last raised
    tried: bool = False
    phases: Phases = field(default_factory=Phases)
    ended: bool = False

    def run(self, b, root: float, heap_bytes: int, hooks: Hooks) -> int:
        """The phases run over ``b`` (gap_boxes._Bounds): the boxes they visited."""
        rise, after = self.setting
        least = int(RECORD_LEAST * after)
        # the walk calls its compiled code itself: Ctrl-C or SIGTERM there must reach the
        # main search as such, not as numba's SystemError (compiled_calls.py)
        with signals_raised():
            got, boxes = run_phases(b.tab, b.order, root, b.rel, rise, heap_bytes, hooks, least)
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
        self.tried = True
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
    hooks: Hooks, least_record: int = 0,
) -> tuple[Phases | None, int]:  # fmt: skip
    """The three phases, within ``heap_bytes`` (beside the main search's heap) and
    PHASES_SHARE of the time left: their end (the main search goes on unless it is
    complete), or None where they got no bound (or phase 1 recorded fewer than
    ``least_record`` boxes, or the tables have no pair-sum row for the walk's bound to
    read); and the boxes they visited."""
    cols, rows = len(tab.sizes), tab.values.shape[0]
    if tab.first_sum >= rows:  # a regressor's change: its one row is over both inputs
        return None, 0
    heap_bytes //= 4  # the main search holds its heap: phase 1's heap and record a quarter each
    now = time.time()
    time_left = max(hooks.deadline - now, 0.0)
    until, end = now + PHASE_1_SHARE * time_left, now + PHASES_SHARE * time_left
    if own_cuts():  # no phase 1: the walk cuts where the kernel's rule says (walk_own)
        mt = mplp_tables(gap_kernel.flatten(tab, order), gap_kernel.reads_varied(tab))
        return _walk_then_search(tab, order, root, rel, heap_bytes, hooks, end, mt, None, 0)
    record_max = gap_kernel.record_rows(min(heap_bytes, gap_kernel.TILING_BYTES), cols, rows)
    one = _search(tab, order, root, rel, heap_bytes, recording=True, record_max=record_max)
    status, boxes = _run(one, lambda: hooks.floor_rows() + rise_rows, until, hooks, 0)
    tiling = one.tiling() if status == gap_kernel.EMPTY and one.recording else None
    if tiling is None or len(tiling) < least_record:
        return None, boxes
    mt = mplp_tables(one.ft, one.reads_f)
    del one
    return _walk_then_search(tab, order, root, rel, heap_bytes, hooks, end, mt, tiling, boxes)


def _walk_then_search(
    tab: PairTables, order: np.ndarray, root: float, rel, heap_bytes: int, hooks: Hooks,
    end: float, mt, tiling: np.ndarray | None, boxes: int,
) -> tuple[Phases | None, int]:  # fmt: skip
    """Phases 2 and 3 at the floor now, until ``end``: the walk (of ``tiling``'s cuts;
    None: of its own), then a search from the boxes it left open."""
    floor, start = hooks.floor_rows(), time.time()

    def stop(walk: CutWalk) -> bool:
        hooks.progress(boxes + walk.visited)
        now = time.time()
        if tiling is None:
            return now >= end or beaten(walk) or too_slow(walk, now - start, end - start)
        return now >= end or too_coarse(walk)

    if tiling is None:
        walk = walk_own(mt, floor, stop=stop)
    else:
        walk = walk_cuts(mt, tiling, floor, stop=stop)
    boxes += walk.visited
    if walk.stopped:
        return None, boxes
    # the walk's bound reads no relation: a box it left open may hold no pair that meets them
    left, top = meeting_boxes(rel, walk.open_boxes(len(tab.sizes))), mt.rows(walk.closed_top)
    if len(left) == 0:
        return Phases(True, top, boxes), boxes
    three = _search(tab, order, root, rel, 2 * heap_bytes, start_boxes=left)
    status, boxes = _run(three, hooks.floor_rows, end, hooks, boxes)
    shed = three.shed if three.shed_boxes else None
    done = status == gap_kernel.EMPTY and (shed is None or shed <= hooks.floor_rows())
    return Phases(done, max(three.upper(), top), boxes), boxes


def too_coarse(walk: CutWalk) -> bool:
    """Whether the walk leaves so many of the recorded boxes it reached open that it is not
    worth going on."""
    return walk.reached >= GIVE_UP_AFTER and len(walk.open) > OPEN_SHARE * walk.reached


def beaten(walk: CutWalk) -> bool:
    """Whether walk_own has left a box open: every tree of F has one leaf there, so its
    pairs beat the floor, which the walk cannot prove; the main search will raise it
    (churn lgbm_t1000_l63's SeniorCitizen: walked at 0.4941, its gap 0.4954)."""
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
