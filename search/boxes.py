"""The box search stage (search/box_search.py): after the heuristic, before the
backend, for a first turn; then, unfinished, alongside the backend (alongside.py).

The box search proves "insensitive" where the backend's encoding does not, and finds
pairs faster than CP-SAT on the benchmark's solver-needed queries (docs/benchmarks.md,
"Why the defaults are what they are"); a pair it finds is replay-checked like any other.
Its first turn is ``BOX_SHARE`` of the time left, at most ``FIRST_TURN`` seconds, so that
a longer time limit does not keep the backend waiting for pairs the solver finds at
once; a search left unfinished goes on where it stopped, beside the backend, until one
of them answers. Only queries the pair tables describe exactly take part
(``pair_scope.applies``), and only with the heuristic on: ``box_search=false``
(``--no-box-search``) or ``heuristic=false`` leaves the whole time to the backend. A
change through a nonlinear link is searched on the largest change's tables instead
(search/link_boxes.py), in its turn only.

A data-aware query (docs/data-aware.md) is searched for a proof only: the tables of the
same question over all inputs (``Query.over_all_inputs``), which is what its
"insensitive" states. A pair found there answers nothing, since the data-aware search is
for a pair near the data; it ends the box search, and is the query's last fallback when
the solver has no pair in time (driver/data_fallback.py).
"""

from __future__ import annotations

import time

from ..answers.accept import accept
from ..answers.context import SolveContext
from ..answers.phrases import NOT_DESCRIBED
from ..answers.result import UNKNOWN, fail
from ..answers.stats import KERNEL_COMPILE, KERNEL_UNBUILT
from ..answers.verdict import Accepted, NearMiss, check_pair
from ..answers.work import FIRST_TURN_SHARE, SPENT
from ..compiler.encode import Encoding, ensemble_structure, gap_row_terms
from ..compiler.kinds import ChangeQuestion, PairQuestion, kind_of
from ..compiler.question import ANY, GapKind
from .box_answers import FOUND_BY, box_witnesses, prove_insensitive, tables_or_skip
from .box_search import FOUND, GAVE_UP, PROVED, BoxSearch
from .compiled_check import COMPILED, HandedOver, check_search, note_rebuild
from .gap_boxes import unsplit
from .gap_kernel_compile import Readiness
from .heuristic_stage import pair_over_all_inputs
from .link_boxes import link_box_stage, link_refusal, link_tables
from .pair_scope import class_pair_encodings, class_pair_refusal, pair_encoding
from .proof_tree import ALIKE, ProofTree, RecordedPart, RecordedProof, recording

# how a data-aware query's proof reads (its restrictions are soft: docs/data-aware.md)
ALL_INPUTS = ", the data's restrictions aside (they never decide insensitivity)"
# a proof-only search's statistics when the question over all inputs has a pair
HEURISTIC_PAIR = "the heuristic found one over all inputs: the query is sensitive"
BOX_PAIR = "found one over all inputs: the query is sensitive"
# a link change's search that ended with neither a pair nor a proof (its bound, with the
# allowance for the library's float32 sums, stays at the change asked or above)
OPEN = (
    "the box search ended with neither a pair nor a proof: its bound on the change stays "
    "at or above the change asked (with its allowance for the library's float32 sums); "
    "a solver backend may decide it"
)
# a search that met a near miss in a box holding pairs with other float sums
# (``rows_of_each_input``) and found no pair
NEAR_MISS_OPEN = (
    "the box search ended with neither a pair nor a proof: the library's predict misses "
    "the question on a pair it found, by its float rounding, in a box holding other pairs "
    "whose float sums differ; a solver backend may decide it"
)
OPEN_STATUS = "open"
BOX_SHARE = 0.5  # of the time left after the heuristic (docs/benchmarks.md)
# the first turn's longest: past it the backend starts, with the box search beside it
FIRST_TURN = 20.0


def box_search_applies(ctx: SolveContext, alone: bool = False) -> bool:
    """On with the heuristic, as the other search before the backend: a query without
    the heuristic measures the encoding and the backend alone. ``alone``: the box search
    is the query's backend (``--backend boxes``), whatever the options."""
    opts = ctx.q.plan.options
    if not alone and not (opts.value("box_search") and opts.value("heuristic")):
        return False
    if not alone and proof_only(ctx):
        return class_pair_encodings(searched_encoding(ctx), relations=True) is not None
    return class_pair_encodings(ctx.enc, relations=True) is not None or link_tables(ctx) is not None


def proof_only(ctx: SolveContext) -> bool:
    """Whether the box search looks for a proof only: a data-aware query's pair is the
    data-aware search's."""
    return ctx.q.plan.data_aware != "none"


def searched_encoding(ctx: SolveContext) -> Encoding:
    """The encoding whose tables the box search reads: the query's, or a data-aware
    query's over all inputs."""
    if not proof_only(ctx):
        return ctx.enc
    return pair_encoding(ctx.ens, ctx.q.over_all_inputs())


def search_alone(ctx: SolveContext) -> None:
    """``--backend boxes``, the search method (backends/registry.py ``SEARCH_METHODS``):
    the box search with the whole time left, no solver after it.
    A query the pair tables do not describe exactly is an error, not "unknown"."""
    if not box_search_applies(ctx, alone=True):
        fail(ctx.result, f"{NOT_DESCRIBED} ({box_refusal(ctx)}): use a solver backend")
        return
    if not box_stage(ctx, alone=True) and ctx.result.status == UNKNOWN:
        status = ctx.stats.get("box_search", {}).get("status")
        if status == "skipped" and ctx.stats["box_search"].get("ended_by") == "time":
            ctx.result.message = ctx.stats["box_search"]["reason"]  # unknown: the clock's
        elif status == "skipped":
            fail(ctx.result, tables_refused(ctx.stats["box_search"]["reason"]))
        elif status == OPEN_STATUS and ctx.enc.condition.link_change is None:
            ctx.result.message = NEAR_MISS_OPEN  # BoxStage.open
        elif status == OPEN_STATUS:  # searched to the end: the bound stays at D or above
            ctx.result.message = OPEN
        elif ctx.work is not None and ctx.work.left() <= 0:
            ctx.result.message = SPENT
        else:
            ctx.result.message = "time limit reached"


MEMORY_FIX = "raise the memory limit (--memory-mb MB, memory_mb= in Python)"


def tables_refused(reason: str, left_out: str = "") -> str:
    """The error of a box search alone whose pair tables are too large (``reason``), with
    its fix: a solver backend, which needs no tables, or a memory limit that holds them.
    ``left_out``: the solvers a race left out for the memory limit (driver/race.py), which
    are no fix at that limit; a higher limit lets them run."""
    if left_out:
        held = "to hold them, or " if "memory limit" in reason else ""
        run = f"to run {left_out}, left out of the race (its note says what it needs)"
        return f"{reason}: {MEMORY_FIX} {held}{run}"
    fix = "use a solver backend (--backend cpsat), which builds no pair tables"
    if "memory limit" in reason:
        fix = f"{MEMORY_FIX} or {fix}"
    return f"{reason}: {fix}"


def box_refusal(ctx: SolveContext) -> str:
    """Why the box search does not describe the query, in words (``box_search_applies``
    is false): the tables' refusal of it, or of its largest-change tables."""
    if ctx.enc.condition.link_change is None:
        why = class_pair_refusal(ctx.enc, relations=True)
    else:
        why = link_refusal(ctx)
    return why or "it does not take this question"


def box_turn(time_left: float) -> float:
    """Seconds of the box search's first turn, alone: its share of the time left, at
    most ``FIRST_TURN``."""
    return min(FIRST_TURN, BOX_SHARE * time_left)


def box_stage(ctx: SolveContext, alone: bool = False) -> bool:
    """Search boxes for the first turn (``alone``: until the deadline): a proof answers
    "insensitive", a pair that the library's replay confirms answers "sensitive". True
    when it answered; otherwise the result is as it was, the backend goes on, and an
    unfinished search is kept in ``ctx.boxes`` to go on beside it. A multiclass query
    with "any" class is searched one pair of classes at a time: insensitive when every
    pair is proven, sensitive at the first replayed pair."""
    if not box_search_applies(ctx, alone) or ctx.time_left() <= 0:
        return False
    t0 = time.time()
    deadline = ctx.deadline if alone else t0 + box_turn(ctx.time_left())
    turn = None
    if ctx.work is not None:  # a work budget: the turn ends on its boxes, not the clock
        deadline = ctx.deadline
        turn = ctx.work.left() if alone else ctx.work.share(FIRST_TURN_SHARE)
    if ctx.enc.condition.link_change is not None:  # the largest change's tables, one turn
        answered = link_box_stage(ctx, deadline, turn)
        ctx.solve_time += time.time() - t0
        ctx.stats["box_search"]["time"] = time.time() - t0
        return answered
    stage = BoxStage(ctx)
    if stage.proof_only:  # a pair over all inputs: no proof to look for
        stage.pair = pair_over_all_inputs(ctx, stage.enc)
        if stage.pair is not None:
            stage.pair_found_by = "heuristic"
            stage.stats.update(status=FOUND, pair=HEURISTIC_PAIR)
    answered = stage.run(ctx, deadline, turn)
    if stage.unfinished or stage.pair is not None:
        ctx.boxes = stage
    return answered


class BoxStage:
    """The box searches of one query, one per pair of classes it allows, run in turns:
    each ``run`` goes on where the last one stopped. Its statistics are the query's
    ``stats["box_search"]``."""

    def __init__(self, ctx: SolveContext):
        self.enc = searched_encoding(ctx)
        self.encs = class_pair_encodings(self.enc, relations=True)
        self.proof_only = proof_only(ctx)
        # proof_only: a replayed pair found over all inputs (the search has ended), and
        # by what
        self.pair: Accepted | None = None
        self.pair_found_by = FOUND_BY
        self.at = 0  # the class pair searched now
        self.search: BoxSearch | None = None
        self.stats = {"status": PROVED, "boxes": 0, "leaves": 0, "class_pairs": 0, "time": 0.0}
        # the boxes visited, which a work budget counts: kept apart from ``stats``, which
        # a class pair's tables skipped (tables_or_skip) replace by why
        self.visited = 0
        ctx.stats["box_search"] = self.stats
        self.unfinished = False  # the last turn ended at its deadline
        self.box_limit: float = float("inf")  # the boxes this turn ends at (a work budget)
        # a near miss whose box holds other pairs (``rows_of_each_input``): the search
        # goes on for a pair, but its end is no proof
        self.open = False
        # per class pair searched, whether its resolved boxes fix each input's leaf values
        # (``rows_of_each_input``): asked at its first near miss
        self.fixed: dict[int, bool] = {}
        # a certificate asked for (proof_tree.recording): each search's proof, kept on
        # the result when they prove "insensitive"
        self.recorded: list[RecordedPart] | None = [] if recording() else None

    def run(self, ctx: SolveContext, deadline: float, boxes: int | None = None) -> bool:
        """One turn until ``deadline`` (or ``ctx.stop``), or, under a work budget, until
        it has visited ``boxes`` more boxes: True when it answered the query in ``ctx``."""
        t0, before = time.time(), self.visited
        self.box_limit = float("inf") if boxes is None else before + boxes
        try:
            return self._run(ctx, deadline)
        finally:
            ctx.solve_time += time.time() - t0
            self.stats["time"] = self.stats.get("time", 0.0) + time.time() - t0
            if ctx.work is not None:
                ctx.work.spend("box_search", self.visited - before)

    def _search(self, enc: Encoding, tables, ctx: SolveContext) -> BoxSearch | HandedOver:
        """The search of one pair of classes: box_search.py's, handed over to the
        compiled one past its first boxes (search/compiled_check.py), which gives up a
        proof recorded for a certificate."""
        proof = ProofTree() if self.recorded is not None else None
        on_hand_over = lambda r: self._handed_over(ctx, r)  # noqa: E731
        # its proof rebuilt by the query's deadline, not a turn's
        search = check_search(enc, tables, ctx.tables_mb, on_hand_over, proof, ctx.deadline)
        if ctx.work is not None and isinstance(search, HandedOver):
            search.compile_always = True  # the boxes counted do not depend on the clock
        return search

    def _handed_over(self, ctx: SolveContext, ready: Readiness) -> None:
        self.stats["search"] = COMPILED
        if ready.compiled:  # the first run after install: counted in the time limit
            ctx.result.time[KERNEL_COMPILE] = ready.seconds

    def _run(self, ctx: SolveContext, deadline: float) -> bool:
        stats = self.stats
        stop = ctx.stop.is_set if ctx.stop is not None else None
        self.unfinished = False
        if self.pair is not None:
            return False
        while self.at < len(self.encs):
            enc = self.encs[self.at]
            if self.search is None:
                # bounded by the query's time limit, not the turn's: a search left
                # unfinished goes on beside the backend on tables built once
                tables = tables_or_skip(enc, stats, ctx.tables_mb, ctx.deadline, ctx.note)
                if tables is None:
                    return False
                stats["class_pairs"] += 1
                stats["leaves"] += int(tables.values.shape[1])
                if self._read_alike(enc, tables):  # no pair changes at all: proven
                    self.at += 1
                    continue
                self.search = self._search(enc, tables, ctx)
            self.search.stop = stop
            before = self.search.boxes
            self.search.box_limit = before + (self.box_limit - self.visited)
            out = self.search.run(deadline)
            stats["boxes"] += out.boxes - before
            self.visited += out.boxes - before
            if getattr(self.search, "unbuilt", False):
                stats["kernel_skipped"] = KERNEL_UNBUILT
            if out.status == GAVE_UP:
                stats["status"] = GAVE_UP
                self.unfinished = True
                return False
            if out.status == FOUND:
                stats["status"] = FOUND
                for w in box_witnesses(ctx, enc, *out.pair):
                    verdict = check_pair(ctx.ens, self.enc.query, self.enc, w)
                    if isinstance(verdict, Accepted):
                        break
                if isinstance(verdict, Accepted) and self.proof_only:
                    self.pair = verdict
                    stats["pair"] = BOX_PAIR
                    return False
                if isinstance(verdict, Accepted):
                    accept(ctx, verdict, found_by=FOUND_BY)
                    return True
                if not isinstance(verdict, NearMiss):
                    return False
                if not self._fixes_each_input(enc):  # the box holds pairs not ruled out
                    self.open = True
                    continue
                # every tree's value is fixed on the box, so the library's predict gives
                # every pair in it the outputs it gave this one: none meets the gap, the
                # box is ruled out as the solver's near-miss cut rules out its leaves
                stats["near_misses"] = stats.get("near_misses", 0) + 1
                if self.search.proof is not None:  # the box, as the certificate states it
                    self.search.proof.leaf(self.search.found, ("replay", *out.pair))
                continue
            if self.recorded is not None:
                self.recorded.append(RecordedPart(enc, self.search.tab, self.search.proof))
                note_rebuild(stats, getattr(self.search, "rebuilt", None))
            self.at, self.search = self.at + 1, None
        if self.open:  # a near miss it could not rule out: neither a pair nor a proof
            stats["status"] = OPEN_STATUS
            return False
        stats["status"] = PROVED
        if self.recorded is not None and not any(p.tree.dropped for p in self.recorded):
            ctx.result.box_proof = RecordedProof(self.recorded)
        return prove_insensitive(ctx, ALL_INPUTS if self.proof_only else "")

    def _read_alike(self, enc: Encoding, tables) -> bool:
        """Whether x1 and x2 read every tree alike (``reads_alike``), so that no pair
        changes at all; its proof recorded, for a certificate asked for, as one box closed
        by the ``alike`` step (verify/alike.py checks it)."""
        if not reads_alike(enc, tables):
            return False
        if self.recorded is not None:
            tree = ProofTree(capped=False)
            tree.leaf(ProofTree.ROOT, ALIKE)
            self.recorded.append(RecordedPart(enc, tables, tree))
        return True

    def _fixes_each_input(self, enc: Encoding) -> bool:
        """``rows_of_each_input`` of the class pair searched now, worked out once."""
        if self.at not in self.fixed:
            self.fixed[self.at] = rows_of_each_input(enc)
        return self.fixed[self.at]


def reads_alike(enc: Encoding, tables) -> bool:
    """Whether x1 and x2 read every tree alike (no column of a varied feature has two
    intervals: gap_boxes.unsplit, a feature no tree splits on within its bounds) on a
    question that two equal predictions cannot meet (``alike_rules_out``): the library's
    predict, a function of the leaves reached, gives both inputs one prediction, so no
    pair meets it. Searched, every box of such a question is bounded by the allowance for
    the library's float sums, which no box rules out below it (a regressor's search ended
    "open"; a max gap's upper bound is that allowance)."""
    return alike_rules_out(enc.ensemble, enc.query) and unsplit(tables)


def alike_rules_out(ens, q) -> bool:
    """Whether no pair of inputs with one prediction meets ``q``: a regressor's change by
    more than 0, a binary gap above 0 (P(x1) above P(x2), or its margin), a multiclass
    gap between two classes above a ratio of 1 (or a margin of 0): each input's class
    would lead the other's."""
    name = kind_of(q).name
    if name == ChangeQuestion.name:
        return q.delta is not None and q.delta > 0
    if name != PairQuestion.name or q.threshold or q.gap is None or ens.is_regressor:
        return False
    if ens.n_outputs == 1:
        return q.gap.value > 0.0
    if q.classes is None or len(q.classes) != 2 or q.classes[0] == q.classes[1] != ANY:
        return False
    least = 1.0 if q.gap.kind == GapKind.PROB else 0.0
    return q.gap.value > least


def _reads_input(cond, copy: int) -> bool:
    """Whether the condition reads input ``copy`` (0 or 1) other than by its own rows:
    alternatives of it, rows over the pair, a nonlinear link's change."""
    alternatives = cond.alternatives[copy] if copy < len(cond.alternatives) else ()
    return bool(alternatives or cond.pair_rows or cond.link_change is not None)


def rows_of_each_input(enc: Encoding) -> bool:
    """Whether a box the search resolves fixes each input's leaf values in every tree, so
    that the library scores every pair of the box as the pair it replayed: the box fixes
    each tree's value in every row, and within a tree the leaves alike in every row of an
    input must be alike in every output. A regressor's change has a row over the pair
    only: on a resolved box each tree's difference is fixed, not its two values (a tree F
    does not reach gives both inputs one leaf, any leaf). A softmax model whose leaves
    hold every class (CatBoost's MultiClass) has rows on differences of classes: leaves
    shifted alike in every class share them. Other pairs of such a box have other float
    sums, some of which may meet the gap the replayed pair missed. An input the condition
    does not read (an audit row's x1, a point: the flip claim is of x2 alone) asks
    nothing."""
    ens = enc.ensemble
    leaves = ensemble_structure(ens).leaves
    cond = enc.condition
    for copy, rows in enumerate(cond.rows):
        if not rows and not _reads_input(cond, copy):
            continue  # the condition reads nothing of this input (an audit row's x1)
        terms = [gap_row_terms(ens, coefs)[0] for coefs, _ in rows]
        for ti, t in enumerate(ens.trees):
            outputs: dict[tuple, tuple] = {}
            for n in leaves[ti]:
                key = tuple(term.get(ti, {}).get(n, 0.0) for term in terms)
                added = tuple((t.value[n] * ens.scale).tolist())  # what the sums add
                if outputs.setdefault(key, added) != added:
                    return False
    return True
