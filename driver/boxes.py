"""The box search stage (compiler/box_search.py): after the heuristic, before the
backend, for a share of the time left.

The box search proves "insensitive" where the backend's encoding does not, and finds
pairs faster than CP-SAT on the benchmark's solver-needed queries (docs/benchmarks.md,
"Why the defaults are what they are"); a pair it finds is replay-checked like any other.
When it has not answered within ``BOX_SHARE`` of the time left, the backend gets the
rest. Only queries the pair tables describe exactly take part
(``pair_boxes.applies``), and only with the heuristic on: ``box_search=false``
(``--no-box-search``) or ``heuristic=false`` leaves the whole time to the backend.
"""

from __future__ import annotations

import math
import time

from ..answers.result import INSENSITIVE
from ..compiler.box_search import FOUND, PROVED, box_search
from ..compiler.invert import witness_from_pair
from ..compiler.pair_boxes import PairTablesTooLarge, applies, pair_tables
from .accept import accept
from .context import SolveContext
from .verdict import Accepted, check_pair

BOX_SHARE = 0.5  # of the time left after the heuristic (docs/benchmarks.md)
# without a time limit, the box search's turn still ends, so that the backend (which
# may find a pair the boxes reach only late) gets one
UNLIMITED_TURN = 300.0
FOUND_BY = "box search"


def box_search_applies(ctx: SolveContext) -> bool:
    """On with the heuristic, as the other search before the backend: a query without
    the heuristic measures the encoding and the backend alone."""
    opts = ctx.q.options
    return bool(opts.value("box_search")) and bool(opts.value("heuristic")) and applies(ctx.enc)


def box_turn(time_left: float) -> float:
    """Seconds the box search may take: its share of a finite time left, else a fixed turn."""
    return UNLIMITED_TURN if math.isinf(time_left) else BOX_SHARE * time_left


def box_stage(ctx: SolveContext) -> bool:
    """Search boxes for ``BOX_SHARE`` of the time left: a proof answers "insensitive", a
    pair that the library's replay confirms answers "sensitive". True when it answered;
    otherwise the result is as it was and the backend goes on."""
    if not box_search_applies(ctx) or ctx.time_left() <= 0:
        return False
    t0 = time.time()
    enc = ctx.enc
    try:
        tables = pair_tables(enc)
    except PairTablesTooLarge as e:
        ctx.solve_time += time.time() - t0
        ctx.stats["box_search"] = {"status": "skipped", "reason": str(e)}
        return False
    out = box_search(enc, tables, t0 + box_turn(ctx.time_left()))
    spent = time.time() - t0
    ctx.solve_time += spent
    ctx.stats["box_search"] = {
        "status": out.status,
        "boxes": out.boxes,
        "leaves": int(tables.values.shape[1]),
        "time": spent,
    }
    res = ctx.result
    if out.status == PROVED:
        res.status = INSENSITIVE
        res.message = "proved by the box search: no box of the pair space meets the gap"
        ctx.stats["proved_by"] = FOUND_BY
        return True
    if out.status == FOUND:
        verdict = check_pair(ctx.ens, ctx.q, enc, witness_from_pair(enc, *out.pair))
        if isinstance(verdict, Accepted):
            accept(ctx, verdict, found_by=FOUND_BY)
            return True
    return False
