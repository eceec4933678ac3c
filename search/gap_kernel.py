"""The largest-gap search of gap_boxes.py, compiled (numba): the same bounds, split rule
and dives, at a fraction of the cost per box.

The split rule: a box is split on the node, among those that would split one of its
open trees, whose split lowers the box's bound the most: measured (both children walked
and bounded) for a node the search has not split before, at most ``PROBES`` a box, and
estimated otherwise by the mean of what splitting that node gained before (its
pseudo-cost, as MIP solvers choose what to branch on). On issue 34's adult sweep this
closes age with a tenth of the boxes, and fnlwgt and hours-per-week, which splitting
the first open tree of a fixed order (``PROBES`` 0) left open at 600 s, in seconds
(bench/reports/adult-max-gap-sweep.md). Any split is sound: the rule only orders them.

A box is only its ranks ``lo <= rank < hi`` per column: the leaves that meet it are found
by walking each pair tree from its root through the nodes the box lets through (a leaf
meets a box exactly when every node on its path does, the box being an interval per
column). A dive keeps the per-tree maxima and minima of the box it is in, and a split on
column c walks again only the trees with a node on c inside the box's interval of c,
for both children in one pass (they differ on c only), from below the nodes the box
passes on one side only.
While a box's bound is its pair-sum rows' (the rows of each input, summed over every
tree, above them), a dive is lazy (``LAZY_DIVES``, where at most 70% of the trees read F):
it starts with the trees that read F walked and the others at their maxima over the
whole space, and its splits walk only the trees that read F, since the others add
exactly 0 to a pair sum; their maxima, a larger box's, stay sound bounds. Nor do they
walk a tree of F whose pair sums no longer differ over the box (``SKIP_CLOSED``): they
are one value on every sub-box. Those trees are walked again once the pair sums close
or a row binds. On the scale tier's 1,000-tree
models, where a third of the trees read sex or race, this visits about 2.8 times the
boxes per CPU second (bench/reports/scale-tier.md, "Closing the max gap").
The heap holds (bound, lo, hi): about 130 bytes a box, where the Python search keeps a
bit per leaf. It is bounded (``HEAP_BYTES``): full, it sheds the quarter of its boxes
with the lowest bounds, and the largest bound shed stays under the reported upper
bound, as that of a box dropped under the floor does (so the bound stays sound; the
search is then no longer complete: bounds closed with boxes shed above the floor are not
proven).

The search returns to its caller after a number of boxes, when a resolved box beats the
incumbent (the caller replays its lower corner with the library and raises the floor), or
when the heap is empty. Numba is imported on first use; ``prepare`` loads the kernel, or
compiles it (about gap_kernel_compile.COMPILE_SECONDS of CPU, then cached on disk where
numba can write: beside the package, else numba's user-wide cache) before a search starts,
with, where a certificate is asked for, the kernels that rebuild its proof from the
search's record (``PROOF_COMPILE_SECONDS`` more), so that a max gap's time limit can leave
that out (search/gap_search.py), and a check's, which counts it, can go on without it
(gap_kernel_compile.compile_fits), rather than compile them within the time its proof's
rebuild has.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..compiler.memory_estimate import HEAP_BYTES  # the heap's bound (questions read it there)
from ..compiler.usage import note_compiled_search
from . import gap_kernel_compile
from .compiled_calls import signals_raised
from .pair_boxes import PairTables
from .pair_mplp import kernel_lag, mplp_setting

_NEG = -1e300
_POS = 1e300
# nodes never split before whose children a box measures, at most (the split rule)
PROBES = 4
# a split's gain: its worse child's fall, plus this much of its better child's
SPLIT_TIE = 1e-3
# run() statuses (gap_kernel_jit.py)
BUDGET, RESOLVED, EMPTY = 0, 1, 2
# a dive whose pair-sum rows bound its box walks only the trees that read F (the others
# add 0 to a pair sum) until the pair sums close or a row binds (gap_kernel_jit.run)
LAZY_DIVES = True
# ... where at most this share of the trees read F: where nearly all do, a lazy dive
# saves few walks and its looser rows cost boxes (adult_t200_d5's age, 194 of 200 trees:
# 80 CPU s against 69 eager); on churn lgbm_t1000_l63's features read by 55-69% of the
# trees, every upper bound the box search left open at 60 s was lower lazy, and
# SeniorCitizen's search emptied in 228 CPU s against 297 (bench/reports/scale-tier.md,
# "Closing the max gap", "Lazy dives where up to 70% of the trees read F"); with the
# closed trees left unwalked (SKIP_CLOSED) it pays up to 80%: churn's OnlineBackup (72-74%)
# and l255's Partner (70.1%) proven in 1.24-1.67x fewer CPU s ("Lazy dives up to 80%")
LAZY_SHARE = 0.8
# ... and its splits leave unwalked the trees that read F whose pair-sum rows no longer
# differ over the box (one value on every sub-box; their rows of x1 and x2 stay a larger
# box's, walked again with the trees outside F): on churn lgbm_t1000_l63's Partner and
# SeniorCitizen the same boxes at 1.48x and 1.60x fewer CPU s (bench/reports/
# scale-tier.md, "Trees of F closed on the pair sums left unwalked")
SKIP_CLOSED = True
# opt-in, to measure it: (sweeps, gate) runs the pair sum's Lagrangian bound (pair_mplp.py)
# on each box whose bound is within gate (row units) of the floor, at most sweeps MPLP
# sweeps from L = 0, before it is split; set from TREESENS_MPLP_BOUND="sweeps,gate" (e.g.
# "3,4"); None: never. Not while recording: a certificate checks its boxes with the plain
# bounds (bench/reports/scale-tier.md, "The per-box Lagrangian bound, compiled")
MPLP_BOUND = mplp_setting(os.environ.get("TREESENS_MPLP_BOUND", ""))
# a max gap's search starts from the pair space cut at every rank of F's columns (one box per
# pair of F's values, those with x1.F = x2.F among them) where there are at most this
# many, rather than from the whole space: a box that leaves x2.F open bounds each tree's
# pair sum by at least the 0 of x2.F = x1.F, and the split rule, which weighs one tree's
# node at a time, cut it late (``first_boxes``)
F_FIRST_BOXES = 64
# a max gap's dives keep up to this many of the children they do not enter, with their
# per-tree arrays, and go on from the last kept once their box is dropped, rather than push
# them on the heap and walk them again when popped (depth first under each box popped:
# every box above the floor is split whatever the order); 0: every child on the heap
# (SeniorCitizen of churn lgbm_t1000_l63 closes in about half best first's CPU s:
# bench/reports/scale-tier.md, "Frames, then best first for the last 30% of a limit")
DIVE_FRAMES = 64
# ... until the last this share of its time to its deadline: the children kept go on the
# heap, and it goes on best first (under a work budget it keeps none: gap_boxes)
BEST_FIRST_SHARE = 0.3
# ... unless its upper bound, falling at its pace over the last such share, reaches the
# floor within the time left over this (search/late_switch.py; looked at again each step)
CLOSE_MARGIN = 1.2
# ... and once this many boxes went by since the search last went on from the best box
# open (the heap's or a child kept), a dive whose box is not it leaves it (kept in a
# frame where there is room) and the search goes on from the best, the other children
# kept as they are: the box that holds the upper bound is split at least this often. Each
# such visit pops a box and walks its trees from their roots: at 4,096 rather than 64,
# churn lgbm_t1000_l63's Partner and SeniorCitizen closed in 0.71x the CPU s, and
# OnlineBackup stopped at 100 CPU s had an upper bound 0.0003 looser (0.4980 for 0.4977;
# bench/reports/scale-tier.md, "... the best box every 4,096 boxes")
DIVE_CHECK = 4096
# ... but a search for pairs (the floorless seed's: gap_floorless.py) goes on from the best
# box every this many: its pairs are the boxes it resolves, best first the highest (adult
# lgbm_t1000_l63's workclass at 4,096: its pairs' first polish raised nothing, the walk
# ran 0.0002 lower, 295.5 CPU s against 154.5)
PAIRS_DIVE_CHECK = 64
# ... and keep only the children whose bound is at most this share of the way from the
# floor to the heap's best bound, the others going on the heap (best first)
DIVE_LINE = 1.0
# ... within this many bytes (a frame is 2 float64 a tree and row, a bool a tree and
# column, 9 bytes a tree); a child above the smallest bound kept takes its frame when
# they are all in use (that one goes on the heap)
FRAME_BYTES = 16 << 20
# a heap's budget, at least (a memory limit that leaves less still lets the search run,
# shedding boxes early)
MIN_HEAP_BYTES = 16 << 20


# a recording search's longest step, in boxes (its record grows by up to two boxes a
# box: 65,536 boxes of 30 columns, 16 MB)
RECORDED_STEP = 1 << 16
# a max gap's record of its boxes, for its certificate, at most (gap_boxes.py; half its
# heap's room, under a memory limit): past it the search goes on unrecorded, and its
# certificate is searched for at U'
TILING_BYTES = 256 << 20


def heap_rows(heap_bytes: int, columns: int) -> int:
    """How many boxes a heap of ``heap_bytes`` holds over ``columns`` columns: a box is
    its bound (8 bytes) and two int32 per column; two thirds of the bytes, since the
    kernel copies the rows into twice as many when it grows them; at least 4."""
    return max(4, int(heap_bytes) * 2 // 3 // (8 + 8 * columns))


def record_rows(record_bytes: int, columns: int, rows: int, extra: int = 0) -> int:
    """How many boxes a record of ``record_bytes`` holds over ``columns`` columns and
    ``rows`` rows: a box is two int32 per column, held half again while the record grows
    (doubling, old and new at once), and its exact bound per row (8 bytes a row,
    compiled_proof.py's rebuild), and ``extra`` bytes besides (what its certificate
    holds of it, compiled_check.recording_within); 0 when there is no room."""
    return max(0, int(record_bytes) // (12 * columns + 8 * rows + extra))


@dataclass
class FlatTables:
    """PairTables as flat arrays the kernel reads."""

    values: np.ndarray  # float64[leaves, rows]: a leaf's rows side by side
    thresholds: np.ndarray  # float64[rows]
    first_sum: int
    node_start: np.ndarray  # int64[trees + 1]: the tree's nodes are node_start[t]..
    leaf_start: np.ndarray  # int64[trees]: a tree without nodes is this one leaf
    # int32[nodes, 4]: (column, R, yes, no): a side's node (a global node index), or -1 -
    # its leaf where that side is a leaf; 16 bytes, four nodes a cache line, which the
    # walks are bound by (a tree's nodes in depth-first order: a yes node is the next)
    nodes: np.ndarray
    order: np.ndarray  # int64[trees]: the split order (box_search.tree_order)
    sizes: np.ndarray  # int32[columns]


def flatten(tab: PairTables, order: np.ndarray) -> FlatTables:
    return FlatTables(
        values=np.ascontiguousarray(tab.values.T, dtype=np.float64),
        thresholds=np.ascontiguousarray(tab.thresholds, dtype=np.float64),
        first_sum=int(tab.first_sum),
        node_start=np.ascontiguousarray(tab.node_starts, dtype=np.int64),
        leaf_start=np.ascontiguousarray(tab.starts, dtype=np.int64),
        nodes=packed_nodes(tab),
        order=np.ascontiguousarray(order, dtype=np.int64),
        sizes=np.ascontiguousarray(tab.sizes, dtype=np.int32),
    )


def reads_varied(tab: PairTables) -> np.ndarray:
    """bool[trees]: whether each pair tree has a node on a column of F (a copy's column);
    the others are the same tree for both inputs and add 0 to every pair-sum row. Under a
    bound on one input (pair_scope.input_rank_ranges), also each tree that reads F in the
    model: its columns of F may be held to one rank each, another for each input."""
    varied = np.array([copy is not None for _f, copy in tab.columns], dtype=bool)
    trees = len(tab.starts)
    out = np.zeros(trees, dtype=np.bool_)
    if tab.reads_varied is not None:
        out |= tab.reads_varied
    table, start = tab.node_table, np.asarray(tab.node_starts, dtype=np.int64)
    if len(table):
        on_f = varied[table[:, 0]]
        tree_of = np.repeat(np.arange(trees), np.diff(start))
        out[tree_of[on_f]] = True
    return out


def search_bytes(tab: PairTables) -> int:
    """What a KernelSearch holds over ``tab`` besides the tables and its heap (bytes):
    the values leaf by leaf (8 a row and leaf), the packed nodes (16 a node, counted at 32:
    a margin) and the split rule's pseudo-costs (16 a node)."""
    return tab.values.nbytes + 48 * len(tab.node_table)


def packed_nodes(tab: PairTables) -> np.ndarray:
    """The pair tables' nodes as FlatTables.nodes: the fields of ``tab.node_table`` but
    the end, children numbered over every tree."""
    table, start = tab.node_table, np.asarray(tab.node_starts, dtype=np.int64)
    if start[-1] >= 2**31 or tab.values.shape[1] >= 2**31:
        raise OverflowError("more pair nodes or leaves than the compiled search indexes")
    out = np.zeros((len(table), 4), dtype=np.int32)
    out[:, :2] = table[:, :2]
    # each node's tree's first node, to make its children's indices global
    base = np.repeat(start[:-1], np.diff(start)).astype(np.int32)
    for j, leaf, field in ((2, 2, 5), (3, 3, 6)):
        k = table[:, field]
        out[:, j] = np.where(k >= 0, base + k, -1 - table[:, leaf])
    return out


def floor_in_rows(to_gap: Callable[[float], float], floor: float) -> float:
    """The largest u (row units) with ``to_gap(u) <= floor``: a box of bound u is dropped
    exactly when u is at most this (to_gap is non-decreasing), as gap_boxes._State.drop
    decides it; -inf when no u is, +inf when every u is."""
    lo, hi = -1e6, 1e6
    if to_gap(lo) > floor:
        return -math.inf
    if to_gap(hi) <= floor:
        return math.inf
    while True:
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            return lo
        if to_gap(mid) <= floor:
            lo = mid
        else:
            hi = mid


# prepare() is making the kernel ready in this process (its own one-node search must not
# prepare again)
_preparing = False


def prepare(
    log: Callable[[str], None] | None = None, rebuild: Callable[[], None] | None = None
) -> gap_kernel_compile.Readiness:
    """Load the kernel into this process, compiling it first when numba's cache has no
    build of it (``log`` says so, before and after): by a search over a one-node table,
    whose arrays have the types of every search's. ``rebuild`` (a certificate asked for:
    compiled_proof.ready_rebuild) loads a proof's rebuild kernels the same way, after it.
    Once loaded: ``Readiness(0.0, False)``.

    Processes sharing numba's cache compile it once: the first holds a lock file beside
    the cache while it compiles, and the others wait for it, then load its build (the
    wait counts as compiling: ``compiled`` is True, as for a first run's own compile)."""
    global _preparing
    t0 = time.time()
    run = gap_kernel_compile.kernel()
    kernels = (run, *(gap_kernel_compile.proof_kernels() if rebuild is not None else ()))
    if all(k.signatures for k in kernels) or _preparing:
        return gap_kernel_compile.Readiness(0.0, False)
    _preparing = True
    try:
        with gap_kernel_compile.compile_lock(run, log) as waited:
            # what is left to compile once the lock is held (after a wait: another
            # process's build is in the cache)
            first = gap_kernel_compile.cold(rebuild is not None)
            if log is not None and any(first):
                log(gap_kernel_compile.compiling_line(*first))
            search = KernelSearch(gap_kernel_compile.ONE_NODE, np.zeros(1, dtype=np.int64), 1.0)
            search.step(-math.inf, 16)
            if rebuild is not None:
                rebuild()
    finally:
        _preparing = False
    seconds = time.time() - t0
    compiled = any(first) or waited or any(gap_kernel_compile.cache_misses(k) > 0 for k in kernels)
    if log is not None and waited:
        log(
            f"max gap: the box search another process compiled is ready after {seconds:.1f}s "
            "(not counted in the time limit)"
        )
    elif log is not None and compiled:
        log(gap_kernel_compile.compiled_line(first, seconds))
    return gap_kernel_compile.Readiness(seconds, compiled)


class KernelSearch:
    """One compiled search over ``tab``: ``step`` runs it on. Its heap of open boxes
    holds at most ``heap_bytes`` (default ``HEAP_BYTES``; see ``heap_rows``): past that,
    the boxes of lowest bound are shed, and the largest bound shed (``shed``) stays under
    the upper bound, as the bound of a box dropped under the floor does (``dropped``)."""

    def __init__(
        self,
        tab: PairTables,
        order: np.ndarray,
        root_bound: float,
        capacity: int = 1024,
        probes: int = PROBES,
        heap_bytes: int = HEAP_BYTES,
        lazy: bool | None = None,
        recording: bool = False,
        record_max: int | None = None,
        rel=None,
        f_first: int = 1,
        frames: int = 0,
        start_boxes: np.ndarray | None = None,
        check: int | None = None,
    ):
        ft = self.ft = flatten(tab, order)
        # relations between the inputs (relation_boxes.RankRelations; None: none): a
        # child no pair of whose ranks meets them is dropped
        self.rels = (
            (np.zeros((0, 6), np.int64), np.zeros((0, 1), np.int64))
            if rel is None
            else (rel.table, rel.same)
        )
        self.reads_f = reads_varied(tab)
        few = len(self.reads_f) > 0 and float(self.reads_f.mean()) <= LAZY_SHARE
        self.lazy = LAZY_DIVES and few if lazy is None else bool(lazy)
        self.arrays = (ft.values, ft.node_start, ft.leaf_start, ft.nodes)
        cols = len(ft.sizes)
        # the children dives keep (``frames`` at most), out of the heap's bytes
        self.frames = _frames(ft, int(frames), heap_bytes, check)
        self.max_rows = heap_rows(heap_bytes - frame_bytes(self.frames), cols)
        # the heap's rows: the kernel doubles them when full, up to max_rows, from a
        # start that doubles to (about) max_rows: the old rows and the new, while the
        # kernel copies them, take at most heap_bytes
        start = self.max_rows
        while start > 2 * max(capacity, 1):
            start = -(-start // 2)
        # the boxes it starts from: ``start_boxes`` (rows lo | hi), or the whole space, or
        # cut at F's ranks where that makes at most ``f_first`` boxes (first_boxes; a max gap
        # without relations: F_FIRST_BOXES, a relation being checked at splits only)
        f_first = min(f_first, self.max_rows)
        first = start_boxes if start_boxes is not None else first_boxes(tab, f_first)
        start = max(start, len(first))
        self.hb = np.empty(start, dtype=np.float64)
        self.hx = np.empty((start, 2 * cols), dtype=np.int32)
        self.hn = len(first)
        self.hb[: self.hn] = root_bound  # equal bounds: a heap in any order
        self.hx[: self.hn] = first
        # the largest bound dropped under a floor, the largest shed for memory, how many
        # boxes were shed (row units; gap_kernel_jit.heap_shed), how many boxes shedding
        # dropped under the floor (unrecorded)
        self.lost = np.array([_NEG, _NEG, 0.0, 0.0])
        # a resolved box's lower and upper corners
        self.corners = np.zeros((2, cols), dtype=np.int32)
        self.corner, self.corner_hi = self.corners[0], self.corners[1]
        # per node, what splitting on it gained so far (sum, count): the split rule's
        # pseudo-costs, kept from one step to the next
        self.costs = np.zeros((max(len(ft.nodes), 1), 2))
        # 0: split the first open tree of ``order`` (gap_boxes.py's rule), for comparison
        self.probes = int(probes)
        # a dive held at a step's budget: its box (lo, hi), and (held?, its bound, the
        # boxes it visited); the next step goes on with it
        self.held_box = np.zeros(2 * cols, dtype=np.int32)
        self.held = np.array([0.0, _NEG, 0.0])
        self.interrupted_at: float | None = None  # upper() once a step was interrupted
        # ``recording``: the boxes dropped under the floor or resolved, in ``recorded``
        # (rows lo | hi), what a proof is rebuilt from; rec_n: how many, and whether one
        # found no room (then the record is incomplete); ``record_max``: the most boxes it
        # may hold, None: no bound (``record_room``)
        self.recording = recording
        self.record_max = record_max
        start = 1024 if record_max is None else min(1024, record_max)
        self.rec = np.empty((start if recording else 0, 2 * cols), dtype=np.int32)
        self.rec_n = np.zeros(2, dtype=np.int64)
        prepare()  # compiled once for every process sharing numba's cache
        self.run = gap_kernel_compile.kernel()
        self.root = self._root_walk()
        # the kernel's per-tree arrays, kept from one step to the next: a dive held at a
        # step's end goes on from them (walking it again cost a box: on the 255-leaf
        # LightGBM adult model's tables, 0.35-1.3 CPU s, at every step of one box)
        from .gap_kernel_jit import run_buffers  # noqa: PLC0415 - numba only when the search runs

        max_nodes = int(np.diff(ft.node_start).max(initial=0))
        with signals_raised():
            self.bufs = run_buffers(
                ft.values.shape[1], len(ft.order), cols, max_nodes, self.reads_f, SKIP_CLOSED
            )
        note_compiled_search()

    @cached_property
    def lag(self) -> tuple | None:
        """The opt-in Lagrangian bound's arrays for the kernel (MPLP_BOUND; off: None)."""
        return kernel_lag(self.ft, self.reads_f, None if self.recording else MPLP_BOUND)

    def _root_walk(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every tree's maxima, minima and open columns over the whole pair space, where
        a lazy dive starts from them: walked once per search, not at every step (on the
        scale tier's largest tables a walk of every node costs more than a box). Without
        lazy dives they are not read: empty arrays."""
        ft = self.ft
        trees, cols = len(ft.order), len(ft.sizes)
        if not self.lazy:
            rows = ft.values.shape[1]
            return (np.empty((0, rows)), np.empty((0, rows)), np.zeros((0, cols), dtype=np.bool_))
        from .gap_kernel_jit import root_walk  # noqa: PLC0415 - numba only when the search runs

        with signals_raised():
            return root_walk(self.arrays, trees, cols, int(np.diff(ft.node_start).max(initial=0)))

    @property
    def dropped(self) -> float:
        """The largest bound of a box dropped under a floor (row units; -1e300: none)."""
        return float(self.lost[0])

    @property
    def shed(self) -> float:
        """The largest bound of a box shed for memory (row units; -1e300: none)."""
        return float(self.lost[1])

    @property
    def shed_boxes(self) -> int:
        return int(self.lost[2])

    def step(self, u_floor: float, max_boxes: int) -> tuple[int, int, float]:
        """Run on: (status, boxes visited, the resolved box's bound); a RESOLVED box's
        lower corner is in ``self.corner``, its upper in ``self.corner_hi``."""
        ft = self.ft
        before = self.upper()
        if self.recording:  # a box visited records at most two boxes
            self._room(2 * int(max_boxes) + 2)
        try:
            with signals_raised():
                out = self.run(
                    self.arrays,
                    ft.thresholds,
                    ft.first_sum,
                    ft.order,
                    self.hb,
                    self.hx,
                    self.hn,
                    float(min(max(u_floor, -_POS), _POS)),
                    self.lost,
                    self.max_rows,
                    int(max_boxes),
                    self.corners,
                    int(np.diff(ft.node_start).max(initial=0)),
                    self.costs,
                    self.probes,
                    self.held_box,
                    self.held,
                    self.reads_f,
                    self.lazy,
                    self.root,
                    self.bufs,
                    (self.rec, self.rec_n),
                    self.rels,
                    self.frames,
                    self.lag,
                )
            status, self.hb, self.hx, self.hn, boxes, u = out
        except KeyboardInterrupt:
            # the heap the run was changing may be lost with its result: the bound from
            # before the step holds (a step only splits and drops boxes)
            self.interrupted_at = before
            raise
        return int(status), int(boxes), float(u)

    def record_room(self) -> int | None:
        """The boxes a step may still visit with its record within ``record_max`` (a
        box visited records at most two; None: no bound)."""
        if self.record_max is None:
            return None
        return max(0, (self.record_max - int(self.rec_n[0]) - 2) // 2)

    def recorded_budget(self, budget: int) -> int:
        """A step's ``budget`` held within the record's room (RECORDED_STEP at most); a
        full record stops recording (the search goes on unrecorded)."""
        room = self.record_room() if self.recording else None
        if room == 0:
            self.stop_recording()
        elif self.recording:
            budget = min(budget, RECORDED_STEP, budget if room is None else room)
        return budget

    def stop_recording(self) -> None:
        """The search goes on unrecorded, its record freed (``recorded`` is then None)."""
        self.recording = False
        self.rec = np.empty((0, self.rec.shape[1]), dtype=np.int32)

    def _room(self, more: int) -> None:
        """The record's buffer grown to hold ``more`` boxes past those recorded (at most
        ``record_max`` in all: a step's budget is held within ``record_room``)."""
        n = int(self.rec_n[0])
        if self.rec.shape[0] - n >= more:
            return
        rows = max(2 * self.rec.shape[0], n + more)
        if self.record_max is not None:
            rows = max(min(rows, self.record_max), n + more)
        grown = np.empty((rows, self.rec.shape[1]), np.int32)
        grown[:n] = self.rec[:n]
        self.rec = grown

    @property
    def recorded(self) -> np.ndarray | None:
        """The boxes recorded (rows lo | hi), in the order dropped; None where the record
        is incomplete (a box found no room, or shedding dropped some unrecorded)."""
        if not self.recording or self.rec_n[1] or self.lost[3]:
            return None
        return self.rec[: int(self.rec_n[0])]

    def box_tops(self, boxes: np.ndarray) -> np.ndarray:
        """Per box (rows lo | hi) and row, the exact bound: the sum over the trees of
        the row's largest value among the leaves meeting the box (no lazy maxima)."""
        return flat_box_tops(self.ft, boxes)

    def open_boxes(self) -> np.ndarray:
        """The boxes still open (rows lo | hi): the heap's, the dive held, if any, and the
        children dives kept (``frames``)."""
        boxes = self.hx[: self.hn].copy()
        if self.held[0] > 0:
            boxes = np.vstack([boxes, self.held_box[None, :]])
        kept = int(self.frames[7][0])
        return np.vstack([boxes, self.frames[1][:kept]]) if kept else boxes

    def tiling(self) -> np.ndarray | None:
        """The boxes recorded and those still open, which tile the pair space, each with
        a bound (exact, or the kernel's looser one) at most ``upper()``; None where the
        record is incomplete or boxes were shed for memory (they are in neither)."""
        done = self.recorded
        if done is None or self.shed_boxes or self.interrupted_at is not None:
            return None
        return np.vstack([done, self.open_boxes()])

    def best_open(self) -> float:
        """The largest bound on the heap, of the dive held or of a child kept (row units),
        or -1e300 when there is none."""
        held = float(self.held[1]) if self.held[0] > 0 else _NEG
        kept = int(self.frames[7][0])
        kept_u = float(self.frames[0][:kept].max()) if kept else _NEG
        return max(float(self.hb[0]) if self.hn > 0 else _NEG, held, kept_u)

    @property
    def keeps_frames(self) -> bool:
        return self.frames[0].shape[0] > 0

    def best_first(self, u_floor: float) -> None:
        """The children kept pushed on the heap (which sheds under ``u_floor`` as push
        does) and none kept from here on: the search goes on best first."""
        from .dive_frames_jit import flush_frames  # noqa: PLC0415 - numba only when the search runs

        with signals_raised():
            out = flush_frames(
                self.frames, self.hb, self.hx, self.hn, self.max_rows, u_floor, self.lost
            )
        self.hb, self.hx, self.hn = out[0], out[1], int(out[2])
        self.frames = _frames(self.ft, 0, 0)

    def upper(self) -> float:
        """A bound on every pair (row units): the largest bound open, dropped or shed
        (-1e300: none)."""
        if self.interrupted_at is not None:
            return self.interrupted_at
        return max(self.dropped, self.shed, self.best_open())


def _frames(ft: FlatTables, frames: int, heap_bytes: int, check: int | None = None) -> tuple:
    """The frames a search's dives keep children in (dive_frames_jit.dive_frames): at
    most ``frames``, within FRAME_BYTES and a quarter of the heap's ``heap_bytes`` (a
    heap of a few boxes keeps none); the best box open every ``check`` boxes (None:
    DIVE_CHECK)."""
    from .dive_frames_jit import dive_frames  # noqa: PLC0415 - numba only when the search runs

    rows, trees, cols = ft.values.shape[1], len(ft.order), len(ft.sizes)
    per_frame = trees * (16 * rows + cols + 9) + 8 * cols + 16
    depth = min(frames, min(FRAME_BYTES, heap_bytes // 4) // per_frame)
    check = DIVE_CHECK if check is None else check
    return dive_frames(depth, trees, rows, cols, check, DIVE_LINE)


def frame_bytes(frames: tuple) -> int:
    """What the frames of a search hold (bytes)."""
    return sum(a.nbytes for a in frames)


def max_gap_first_boxes(rel) -> int:
    """A max gap's ``f_first``: F_FIRST_BOXES, or 1 (the whole space) under relations
    between the inputs, which the kernel checks at splits only."""
    return F_FIRST_BOXES if rel is None else 1


def first_boxes(tab: PairTables, most: int) -> np.ndarray:
    """The boxes a search starts from (rows lo | hi): the pair space cut at every rank
    of the columns of F (a copy's column), where that makes at most ``most`` boxes, else
    the whole space. They tile it, so any of them may be dropped or split as the
    whole space would be."""
    sizes = np.asarray(tab.sizes, dtype=np.int32)
    cols = len(sizes)
    whole = np.concatenate([np.zeros(cols, np.int32), sizes])[None, :]
    varied = [c for c, (_f, copy) in enumerate(tab.columns) if copy is not None]
    if not varied or math.prod(int(sizes[c]) for c in varied) > most:
        return whole
    grid = np.stack(np.meshgrid(*[np.arange(sizes[c]) for c in varied], indexing="ij"))
    ranks = grid.reshape(len(varied), -1).T.astype(np.int32)
    out = np.repeat(whole, len(ranks), axis=0)
    out[:, varied] = ranks
    out[:, [cols + c for c in varied]] = ranks + 1
    return out


def flat_box_tops(ft: FlatTables, boxes: np.ndarray) -> np.ndarray:
    """KernelSearch.box_tops over the flattened tables ``ft`` (any tree order)."""
    from .gap_kernel_tops_jit import box_tops  # noqa: PLC0415 - numba only when used

    arrays = (ft.values, ft.node_start, ft.leaf_start, ft.nodes)
    max_nodes = int(np.diff(ft.node_start).max(initial=0))
    with signals_raised():
        return box_tops(arrays, np.ascontiguousarray(boxes, dtype=np.int32), max_nodes)
