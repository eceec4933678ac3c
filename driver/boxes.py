"""The box search stage (compiler/box_search.py): the last part of the time limit, when
the backend has not answered by then.

The backend gets ``BACKEND_SHARE`` of the time left; if it comes back without an answer,
the box search runs until the deadline. Queries the backend answers in its share never
reach it. The box search proves "insensitive" where the backend's encoding does not
(docs/benchmarks.md, "Why the defaults are what they are"); a pair it finds is
replay-checked like any other.
Only queries the pair tables describe exactly take part (``pair_boxes.applies``):
``box_search=false`` (``--no-box-search``) leaves the whole time to the backend.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..compiler.box_search import FOUND, PROVED, box_search
from ..compiler.invert import witness_from_pair
from ..compiler.pair_boxes import applies, pair_tables
from ..compiler.result import INSENSITIVE, UNKNOWN
from .accept import accept
from .context import SolveContext
from .verdict import Accepted, check_pair

BACKEND_SHARE = 0.7  # of the time left after the heuristic (docs/benchmarks.md)
FOUND_BY = "box search"


def box_search_applies(ctx: SolveContext) -> bool:
    return bool(ctx.q.options.value("box_search")) and applies(ctx.enc)


def backend_then_boxes(ctx: SolveContext, run_backend: Callable[[], None]) -> None:
    """Run the backend within its share of the time, then, if it gave no answer, the box
    search until the deadline (or the backend alone when the box search does not apply)."""
    if not box_search_applies(ctx):
        run_backend()
        return
    deadline = ctx.deadline
    ctx.deadline = time.time() + BACKEND_SHARE * max(0.0, ctx.time_left())
    try:
        run_backend()
    finally:
        ctx.deadline = deadline
    if ctx.result.status == UNKNOWN and ctx.time_left() > 0:
        box_stage(ctx)


def box_stage(ctx: SolveContext) -> None:
    """Search boxes until the deadline: a proof answers "insensitive", a pair that the
    library's replay confirms answers "sensitive"; anything else leaves the result as it
    was ("unknown")."""
    t0 = time.time()
    enc = ctx.enc
    tables = pair_tables(enc)
    out = box_search(enc, tables, ctx.deadline)
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
    elif out.status == FOUND:
        verdict = check_pair(ctx.ens, ctx.q, enc, witness_from_pair(enc, *out.pair))
        if isinstance(verdict, Accepted):
            accept(ctx, verdict, found_by=FOUND_BY)
            res.message = ""
