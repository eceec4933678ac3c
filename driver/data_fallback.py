"""Data-aware fallback: when the optimiser finds no pair within the time limit, the pair the
heuristic found from data rows (the best of its runs for the data-aware objective), else
the pair the box search found over all inputs (search/boxes.py, ``proof_only``)."""

from __future__ import annotations

from ..answers.accept import accept, with_preferred
from ..answers.context import SolveContext
from ..answers.verdict import Accepted, check_pair
from ..compiler.invert import witness_from_pair
from ..compiler.passes.feature_constraints import constraint_violations


def use_fallback(ctx: SolveContext) -> bool:
    """Accept a data-aware fallback pair; True if one was."""
    return _data_rows_pair(ctx) or _box_pair(ctx)


def no_pair_text(ctx: SolveContext) -> str:
    """What the optimiser ran out of before it found a pair: the time limit, or under a
    work budget its units (the same on every run)."""
    if ctx.work is None or ctx.time_left() <= 0:
        return "the solver found no pair within the time limit"
    return "the solver found no pair within its work budget"


def _box_pair(ctx: SolveContext) -> bool:
    """The box search's replayed pair over all inputs, if it found one."""
    verdict = getattr(ctx.boxes, "pair", None)
    if verdict is None:
        return False
    by = ctx.boxes.pair_found_by
    accept(ctx, verdict, found_by=f"{by} (over all inputs)")
    ctx.result.message = (
        f"{no_pair_text(ctx)}: the pair the {by} found over all inputs, "
        "not steered by the data (its distance to the data says how far from it it lies)"
    )
    return True


def _data_rows_pair(ctx: SolveContext) -> bool:
    """The heuristic's pair from data rows, if it replays."""
    if ctx.fallback is None:
        return False
    enc, q = ctx.enc, ctx.q
    w = witness_from_pair(enc, *ctx.fallback)
    preferred = with_preferred(enc, w, ctx.prefer or {})  # each input's own data values
    if not (q.relations and constraint_violations(ctx.ens, q, preferred.x1, preferred.x2)):
        w = preferred
    verdict = check_pair(ctx.ens, q, enc, w)
    if not isinstance(verdict, Accepted):
        return False
    accept(ctx, verdict, found_by="heuristic-from-data")
    ctx.result.message = (
        f"{no_pair_text(ctx)}: the pair the heuristic found from data rows"
        " (the best of its runs for the data-aware objective)"
    )
    return True
