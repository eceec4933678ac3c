"""The box search stage (compiler/box_search.py): after the heuristic, before the
backend, for a share of the time left.

The box search proves "insensitive" where the backend's encoding does not, and finds
pairs faster than CP-SAT on the benchmark's solver-needed queries (docs/benchmarks.md,
"Why the defaults are what they are"); a pair it finds is replay-checked like any other.
When it has not answered within ``BOX_SHARE`` of the time left, the backend gets the
rest. Only queries the pair tables describe exactly take part
(``pair_boxes.applies``), and only with the heuristic on: ``box_search=false``
(``--no-box-search``) or ``heuristic=false`` leaves the whole time to the backend. A
change through a nonlinear link is searched on the largest change's tables instead
(driver/link_boxes.py).
"""

from __future__ import annotations

import math
import time

from ..answers.result import ERROR, UNKNOWN
from ..compiler.box_search import FOUND, PROVED, box_search
from ..compiler.invert import witness_from_pair
from ..compiler.pair_boxes import class_pair_encodings
from .accept import accept
from .box_answers import FOUND_BY, prove_insensitive, tables_or_skip
from .context import SolveContext
from .link_boxes import link_box_stage, link_tables
from .verdict import Accepted, check_pair

BOX_SHARE = 0.5  # of the time left after the heuristic (docs/benchmarks.md)
# without a time limit, the box search's turn still ends, so that the backend (which
# may find a pair the boxes reach only late) gets one
UNLIMITED_TURN = 300.0


def box_search_applies(ctx: SolveContext, alone: bool = False) -> bool:
    """On with the heuristic, as the other search before the backend: a query without
    the heuristic measures the encoding and the backend alone. ``alone``: the box search
    is the query's backend (``--backend boxes``), whatever the options."""
    opts = ctx.q.options
    if not alone and not (opts.value("box_search") and opts.value("heuristic")):
        return False
    return class_pair_encodings(ctx.enc) is not None or link_tables(ctx) is not None


def boxes_alone(ctx: SolveContext) -> None:
    """``--backend boxes``: the box search with the whole time left, no solver after it.
    A query the pair tables do not describe exactly is an error, not "unknown"."""
    if not box_search_applies(ctx, alone=True):
        ctx.result.status = ERROR
        ctx.result.error = (
            "the box search does not describe this query (it takes numeric features without "
            "missing values, no bounds or relations on the inputs and no data-aware mode): "
            "use a solver backend"
        )
        return
    if not box_stage(ctx, alone=True) and ctx.result.status == UNKNOWN:
        skipped = ctx.stats.get("box_search", {}).get("status") == "skipped"
        if skipped:
            ctx.result.status = ERROR
            ctx.result.error = ctx.stats["box_search"]["reason"]
        else:
            ctx.result.message = "time limit reached"


def box_turn(time_left: float) -> float:
    """Seconds the box search may take: its share of a finite time left, else a fixed turn."""
    return UNLIMITED_TURN if math.isinf(time_left) else BOX_SHARE * time_left


def box_stage(ctx: SolveContext, alone: bool = False) -> bool:
    """Search boxes for ``BOX_SHARE`` of the time left: a proof answers "insensitive", a
    pair that the library's replay confirms answers "sensitive". True when it answered;
    otherwise the result is as it was and the backend goes on. A multiclass query with
    "any" class is searched one pair of classes at a time: insensitive when every pair
    is proven, sensitive at the first replayed pair."""
    if not box_search_applies(ctx, alone) or ctx.time_left() <= 0:
        return False
    t0 = time.time()
    deadline = ctx.deadline if alone else t0 + box_turn(ctx.time_left())
    if ctx.enc.condition.link_change is not None:  # the largest change's tables
        answered = link_box_stage(ctx, deadline)
        ctx.solve_time += time.time() - t0
        ctx.stats["box_search"]["time"] = time.time() - t0
        return answered
    stats = {"status": PROVED, "boxes": 0, "leaves": 0, "class_pairs": 0}
    ctx.stats["box_search"] = stats
    answered = False
    for enc in class_pair_encodings(ctx.enc):
        stats["class_pairs"] += 1
        answered = _search_one(ctx, enc, deadline, stats)
        if answered or stats["status"] != PROVED:
            break
    ctx.solve_time += time.time() - t0
    stats["time"] = time.time() - t0
    if stats["status"] == PROVED:
        return prove_insensitive(ctx)
    return answered


def _search_one(ctx: SolveContext, enc, deadline: float, stats: dict) -> bool:
    """One encoding's box search, folded into ``stats``; True when a replayed pair
    answered the query."""
    tables = tables_or_skip(enc, stats)
    if tables is None:
        return False
    stop = ctx.stop.is_set if ctx.stop is not None else None
    out = box_search(enc, tables, deadline, stop=stop)
    stats["boxes"] += out.boxes
    stats["leaves"] += int(tables.values.shape[1])
    if out.status == PROVED:
        return False
    stats["status"] = out.status
    if out.status == FOUND:
        verdict = check_pair(ctx.ens, ctx.q, ctx.enc, witness_from_pair(enc, *out.pair))
        if isinstance(verdict, Accepted):
            accept(ctx, verdict, found_by=FOUND_BY)
            return True
    return False
