"""A check's box search by the compiled kernel of the largest-gap search (gap_kernel.py):
the same question as box_search.py's, for pairs that meet the query's gap rows, with the
kernel's floor held just below 0 in row units, so that it drops a box exactly when one of
its rows' bounds is below that row's threshold, as box_search.py prunes one. Its boxes are
searched best first with the kernel's split rule, a few thousand a CPU second on the scale
tier's 1,000-tree models where box_search.py visits a few hundred; on adult's XGBoost
model of 1,000 trees of depth 8, the check of sex at gap 0.499 proves "insensitive" in 14 s
where box_search.py gave up at 110 s (bench/reports/scale-tier.md, "Checks by the
compiled search").

A certificate asked for: box_search.py records its proof until the hand-over, and the
compiled search then records the boxes it drops, from which compiled_proof.py rebuilds
the proof the certificate writes out (sex at gap 0.499 on that model: 35,899 boxes,
verified by the independent checker in 10 s).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..compiler.memory_estimate import (
    CERTIFICATE_BYTES_PER_BOX,
    MB,
    certificate_mb,
    room_bytes,
)
from . import gap_kernel, gap_kernel_compile
from .box_search import FOUND, GAVE_UP, PROVED, BoxOutcome, BoxSearch, corner_pair, tree_order
from .compiled_proof import INCOMPLETE, NOT_A_PROOF, UnbuiltProof, ready_rebuild, rebuilt_within
from .gap_boxes import FIRST_STEP, next_step, root_bound
from .pair_boxes import PairTables, tables_held
from .proof_bounds import TiledTree
from .proof_tree import ProofTree
from .relation_boxes import rank_relations, relation_events

# the largest float below 0: the kernel drops a box whose bound is at most its floor,
# so this floor drops exactly the boxes with a row below its threshold
BELOW_ZERO = -5e-324
# box_search.py's work before the compiled search takes over a check, in boxes times
# pair leaves (its cost per box grows with the leaves): 4,096 boxes on tables of 8,192
# leaves, 256 on the scale tier's 131,072. Under it a search ends in a second or two,
# about what loading numba and the kernel costs a process; past it a search may need
# minutes where the compiled one needs seconds (bench/reports/solver-needed-box.md,
# "Checks by the compiled search")
HAND_OVER = 4096 * 8192
# the compiled search on or off, for benchmarks comparing the two
ENABLED = True
# stats["box_search"]["search"] of a check the compiled search went on with
COMPILED = "compiled"
RECORDED_STEP = gap_kernel.RECORDED_STEP


def compiled_check_applies() -> bool:
    """Whether a check's box search may hand over to the compiled one (numba installed)."""
    return ENABLED and gap_kernel_compile.available()


def heap_within(enc, tables: PairTables, memory_mb: float | None) -> int:
    """The kernel's heap: ``HEAP_BYTES`` at most, and at most what the query's memory
    limit leaves above the model's estimate, the tables and the kernel's copy of them
    (at least ``MIN_HEAP_BYTES``), as a max gap's search has it."""
    left = _left(enc, tables, memory_mb)
    if left is None:
        return gap_kernel.HEAP_BYTES
    return max(gap_kernel.MIN_HEAP_BYTES, min(gap_kernel.HEAP_BYTES, left))


def fits(enc, tables: PairTables, memory_mb: float | None) -> bool:
    """Whether the kernel's copy of the tables and its least heap fit what the query's
    memory limit leaves: else the check's search stays box_search.py's."""
    left = _left(enc, tables, memory_mb)
    return left is None or left >= gap_kernel.MIN_HEAP_BYTES


def recording_within(enc, tables: PairTables, memory_mb: float | None) -> tuple[int, int | None]:
    """A recording search's heap (bytes) and the most boxes its record may hold
    (gap_kernel.record_rows): out of what the query's memory limit leaves, less the
    certificate's part no box adds to (memory_estimate.certificate_mb), the heap gets half
    (``heap_within``'s bounds), the record the rest, each box with what the certificate
    written from it holds (memory_estimate.CERTIFICATE_BYTES_PER_BOX: its tree is
    rebuilt while the heap is held); with no limit, the heap ``HEAP_BYTES`` and no bound
    on the record."""
    left = _left(enc, tables, memory_mb)
    if left is None:
        return gap_kernel.HEAP_BYTES, None
    # the certificate's part that no box adds to
    left -= int(certificate_mb(0, enc.ensemble.n_leaves()) * MB)
    heap = max(gap_kernel.MIN_HEAP_BYTES, min(gap_kernel.HEAP_BYTES, left // 2))
    cols, rows = len(tables.sizes), tables.values.shape[0]
    return heap, gap_kernel.record_rows(left - heap, cols, rows, CERTIFICATE_BYTES_PER_BOX)


def _left(enc, tables: PairTables, memory_mb: float | None) -> int | None:
    room = room_bytes(enc.ensemble, memory_mb)
    if room is None:
        return None
    return room - tables_held(tables) - gap_kernel.search_bytes(tables)


class _Replays:
    """A recording compiled search's proof while it runs: the replays that ruled out
    resolved boxes (box n: the n-th box recorded), as BoxStage states them."""

    dropped = False

    def __init__(self) -> None:
        self.events: dict[int, tuple] = {}

    def leaf(self, n: int, event: tuple) -> None:
        self.events[n] = event


class CompiledBoxSearch:
    """box_search.BoxSearch's interface over the kernel: ``run`` goes on until a proof, a
    resolved box (a pair, FOUND), the deadline or ``stop``. Boxes shed at the heap's
    memory budget leave no proof: the search then ends GAVE_UP for good (``exhausted``).
    ``recording``: its proof, once PROVED, is ``proof`` (compiled_proof.py; one given up
    where it cannot be rebuilt by the deadline, ``why_not`` saying why, or an answer's own
    kept unbuilt for its certificate: compiled_proof.UnbuiltProof). ``since``: when the
    budget of a certificate's search (``capped`` False) began (None: at this search's
    start); a rebuild it has no time for names the budget to ask for, counting from it."""

    def __init__(
        self,
        enc,
        tables: PairTables,
        memory_mb: float | None = None,
        recording: bool = False,
        capped: bool = True,
        rebuild_by: float | None = None,
        since: float | None = None,
    ):
        self.enc, self.tab = enc, tables
        # the rebuild's deadline (None: run's): a search run in turns rebuilds its proof
        # by the query's, not the turn's
        self.rebuild_by = rebuild_by
        self.since = time.time() if since is None else since
        self.stop: Callable[[], bool] | None = None
        self.proof: _Replays | ProofTree | TiledTree | UnbuiltProof | None = (
            _Replays() if recording else None
        )
        self.found = -1  # the last resolved box, as recorded
        self.capped = capped  # the rebuilt proof's (proof_tree.ProofTree)
        self.boxes = 0
        self.box_limit: float = float("inf")  # a work budget's: box_search.BoxSearch's
        # a certificate's search under a work budget: its proof rebuilt whatever its
        # estimate (compiled_proof.rebuilt_within's ``by_work``), the deadline a net
        self.rebuild_by_work = False
        self.exhausted = False
        self.why_not = ""  # why a recording search has no proof (its proof given up)
        # the boxes its proof was rebuilt from, and the rebuild's seconds (None: none yet)
        self.rebuilt: tuple[int, float] | None = None
        root = root_bound(tables, float)
        heap, record_max = heap_within(enc, tables, memory_mb), None
        if recording:  # its record out of the same room
            heap, record_max = recording_within(enc, tables, memory_mb)
        order = tree_order(tables)
        self.rel = rank_relations(enc, tables)
        self.search = gap_kernel.KernelSearch(
            tables,
            order,
            root,
            heap_bytes=heap,
            recording=recording,
            record_max=record_max,
            rel=self.rel,
        )
        self.budget = FIRST_STEP

    def run(self, deadline: float) -> BoxOutcome:
        while not self.exhausted:
            if time.time() >= deadline or (self.stop is not None and self.stop()):
                return BoxOutcome(GAVE_UP, self.boxes)
            if self.boxes >= self.box_limit:
                return BoxOutcome(GAVE_UP, self.boxes)
            room = self.search.record_room() if self.search.recording else None
            if room == 0:  # an answer's own search goes on unrecorded, a certificate's ends
                if not self._record_full():
                    break
                room = None
            t0 = time.time()
            budget = self.budget if room is None else min(self.budget, room)
            # the kernel's boxes do not depend on its steps: a step that ends at the
            # budget's last box leaves a work budget's count exact
            budget = int(min(budget, self.box_limit - self.boxes))
            status, n, _u = self.search.step(BELOW_ZERO, budget)
            self.boxes += n
            now = time.time()
            self.budget = next_step(self.budget, n, now - t0, deadline - now, status)
            if self.proof is not None:  # its buffer grows at each step to twice the budget
                self.budget = min(self.budget, RECORDED_STEP)
            if status == gap_kernel.RESOLVED:
                self.found = int(self.search.rec_n[0]) - 1
                corner = (self.search.corner, self.search.corner_hi, self.rel)
                return BoxOutcome(FOUND, self.boxes, corner_pair(self.enc, self.tab, *corner))
            if status == gap_kernel.EMPTY:
                if self.search.shed_boxes and self.search.shed > BELOW_ZERO:
                    self.exhausted = True  # boxes shed that may hold a pair: no proof
                    break
                if self.proof is not None and self.search.recording:
                    by = deadline if self.rebuild_by is None else self.rebuild_by
                    self.proof = self._rebuilt(by)
                return BoxOutcome(PROVED, self.boxes)
        return BoxOutcome(GAVE_UP, self.boxes)

    def _record_full(self) -> bool:
        """The record at the most boxes the memory limit leaves it: an answer's own
        search (``capped``) goes on unrecorded, its proof given up (True); a
        certificate's ends for good (False). ``why_not`` says so."""
        held = self.search.record_max
        self.why_not = (
            f"its record of the boxes it dropped reached {held:,} boxes, what the memory "
            "limit leaves it and its certificate beside the search's heap (--memory-mb "
            "raises it)"
        )
        self.search.stop_recording()
        self.proof = ProofTree()
        self.proof.give_up()
        self.exhausted = not self.capped
        return self.capped

    def _rebuilt(self, deadline: float) -> ProofTree | TiledTree | UnbuiltProof:
        """The proof from the boxes the search recorded, rebuilt by ``deadline``, or one
        given up (``why_not``); an answer's own (``capped``) given up for want of time
        is kept unbuilt, for its certificate to rebuild within its budget."""
        t0, recorded = time.time(), self.search.recorded
        ft = self.search.ft  # not the heap
        # the replays, and the boxes a relation drops (their steps: relation_boxes.py)
        events = {**relation_events(self.rel, recorded), **self.proof.events}
        # a certificate's: the rest of its budget, the line naming the budget to ask for
        share = None if self.capped else 1.0
        tree, self.why_not = rebuilt_within(
            recorded,
            ft,
            self.tab,
            events,
            self.capped,
            deadline,
            share=share,
            spent=t0 - self.since,
            by_work=self.rebuild_by_work,
        )
        self.rebuilt = (0 if recorded is None else len(recorded), time.time() - t0)
        if tree is None and self.capped and self.why_not not in (INCOMPLETE, NOT_A_PROOF):
            return UnbuiltProof(recorded, ft, self.tab, events, self.capped)
        if tree is None:
            tree = ProofTree()
            tree.give_up()
        return tree


def note_rebuild(stats: dict, rebuilt: tuple[int, float] | None) -> None:
    """A proof rebuilt from the compiled search's record (``rebuilt``: its boxes and the
    rebuild's seconds), added to ``stats``'s ``recorded`` and ``rebuild_time``."""
    if rebuilt is not None:
        stats["recorded"] = stats.get("recorded", 0) + rebuilt[0]
        stats["rebuild_time"] = stats.get("rebuild_time", 0.0) + rebuilt[1]


def hand_over_boxes(tables: PairTables) -> int:
    """box_search.py's boxes before the compiled search takes over (``HAND_OVER``)."""
    return HAND_OVER // max(int(tables.values.shape[1]), 1)


class HandedOver:
    """box_search.BoxSearch for its first ``hand_over_boxes`` boxes, then, still without
    an answer, CompiledBoxSearch from the whole pair space again (the boxes before are a
    second's or two): box_search.BoxSearch's interface, ``on_hand_over`` given the
    kernel's ``gap_kernel_compile.Readiness`` when the compiled search starts."""

    def __init__(
        self,
        enc,
        tables: PairTables,
        memory_mb: float | None,
        on_hand_over,
        proof=None,
        rebuild_by: float | None = None,
        since: float | None = None,
    ):
        self.enc, self.tab, self.memory_mb = enc, tables, memory_mb
        self.rebuild_by, self.since = rebuild_by, since  # CompiledBoxSearch's
        self.first = BoxSearch(enc, tables, proof=proof)
        self.limit = hand_over_boxes(tables)
        self.then: CompiledBoxSearch | None = None
        self.stop: Callable[[], bool] | None = None
        self.on_hand_over = on_hand_over
        # the compiled search was not built: its compile would have outlasted the limit
        self.unbuilt = False
        self.box_limit: float = float("inf")  # a work budget's: box_search.BoxSearch's
        # under a work budget the compiled search takes over whatever its compile costs
        # (the time limit its safety net), so that the boxes counted do not depend on it
        self.compile_always = False
        self.rebuild_by_work = False  # the compiled search's (CompiledBoxSearch)

    @property
    def boxes(self) -> int:
        return self.first.boxes + (0 if self.then is None else self.then.boxes)

    @property
    def proof(self):
        """The recorded proof (a certificate asked for): box_search.py's, then, handed
        over, the compiled search's (its record's, rebuilt once it proves)."""
        return self.first.proof if self.then is None else self.then.proof

    @property
    def found(self) -> int:
        return self.first.found if self.then is None else self.then.found

    @property
    def why_not(self) -> str:
        """Why the compiled search's recorded proof was given up ("": it was not)."""
        return "" if self.then is None else self.then.why_not

    @property
    def rebuilt(self) -> tuple[int, float] | None:
        """The compiled search's boxes recorded and its proof's rebuild's seconds."""
        return None if self.then is None else self.then.rebuilt

    def run(self, deadline: float) -> BoxOutcome:
        if self.then is None:
            stop = self.stop
            self.first.stop = lambda: self.first.boxes >= self.limit or bool(stop and stop())
            self.first.box_limit = self.box_limit
            out = self.first.run(deadline)
            stopped = time.time() >= deadline or bool(stop and stop())
            at_limit = self.first.boxes >= self.box_limit
            if out.status != GAVE_UP or self.first.boxes < self.limit or stopped or at_limit:
                return BoxOutcome(out.status, self.boxes, out.pair)
            # box_search.py's, to the end, where the memory limit leaves the kernel no
            # room, or its compile (the first after install) would outlast the time limit
            # (a certificate asked for: with the kernels rebuilding its proof, which would
            # otherwise compile within the time its rebuild has)
            first = self.first.proof
            fit = fits(self.enc, self.tab, self.memory_mb)
            by = self.rebuild_by or deadline
            self.unbuilt = (
                fit
                and not self.compile_always
                and not gap_kernel_compile.compile_fits(by, first is not None)
            )
            if not fit or self.unbuilt:
                self.limit = float("inf")
                out = self.first.run(deadline)
                return BoxOutcome(out.status, self.boxes, out.pair)
            if first is not None:  # the compiled search records its own, from the whole space
                first.give_up()
            # the kernels loaded, or compiled on their first run after install
            rebuild = None if first is None else ready_rebuild
            self.on_hand_over(gap_kernel.prepare(None, rebuild))
            self.then = CompiledBoxSearch(
                self.enc,
                self.tab,
                self.memory_mb,
                first is not None,
                first is None or first.capped,
                self.rebuild_by,
                self.since,
            )
            self.then.rebuild_by_work = self.rebuild_by_work
        self.then.stop = self.stop
        self.then.box_limit = self.box_limit - self.first.boxes
        out = self.then.run(deadline)
        return BoxOutcome(out.status, self.boxes, out.pair)


def check_search(
    enc,
    tables: PairTables,
    memory_mb: float | None = None,
    on_hand_over=None,
    proof=None,
    rebuild_by: float | None = None,
    since: float | None = None,
) -> BoxSearch | HandedOver:
    """A check's box search over ``tables``: box_search.py's, handed over to the compiled
    one past its first boxes where numba is installed (HandedOver; ``on_hand_over``
    given the kernel's readiness, if any); ``proof``: the ProofTree it records into, its
    rebuild from the compiled search's boxes due by ``rebuild_by`` (None: each run's
    deadline); ``since``: when a certificate's budget began (CompiledBoxSearch's)."""
    if not compiled_check_applies():
        return BoxSearch(enc, tables, proof=proof)
    ready = on_hand_over or (lambda _ready: None)
    return HandedOver(enc, tables, memory_mb, ready, proof, rebuild_by, since)
