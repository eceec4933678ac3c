"""Data-aware fallback: when the optimiser returns no point in time, the pair the
heuristic found from data rows (the best of its runs for the data-aware objective)."""

from __future__ import annotations

from ..answers.accept import accept, with_preferred
from ..answers.context import SolveContext
from ..answers.verdict import Accepted, check_pair
from ..compiler.invert import witness_from_pair


def use_fallback(ctx: SolveContext) -> bool:
    """Accept the data-aware fallback pair if it replays; True if it did."""
    if ctx.fallback is None:
        return False
    enc = ctx.enc
    w = with_preferred(enc, witness_from_pair(enc, *ctx.fallback), ctx.prefer or {})
    verdict = check_pair(ctx.ens, ctx.q, enc, w)
    if not isinstance(verdict, Accepted):
        return False
    accept(ctx, verdict, found_by="heuristic-from-data")
    ctx.result.message = (
        "the solver returned no point in time: the pair the heuristic found "
        "from data rows (the best of its runs for the data-aware objective)"
    )
    return True
