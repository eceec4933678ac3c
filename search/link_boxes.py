"""The box stage of a check of a change through a nonlinear link (exp, sigmoid).

The check's own rows are an outer approximation (compiler/link_change.py), which the box
search must not prove anything from. It searches the tables of the largest change
instead (search/gap_search.py: x1's raw score, minus x2's and their difference, bounded
through the link) with every box whose bound is under D dropped: a resolved pair whose
change by the library's predict reaches D answers "sensitive" (replay-checked as every
witness), and a search that empties its heap with every bound under D proves
"insensitive". Only a query of one direction that the tables describe takes part (one
the same for both inputs, so "either" is up): the tables' pairs go down from x1 to x2,
and for the direction up each is taken with its inputs swapped, a bound on one input of
a varied feature and a relation between the inputs with them (``swapped``,
``swapped_relations``). Anything else is the backend's.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..answers.accept import accept
from ..answers.context import SolveContext
from ..answers.result import fail
from ..answers.verdict import Accepted, check_pair
from ..compiler.encode import Encoding
from ..compiler.query import DOWN, UP, FeatureBound, FeatureRelation
from .box_answers import FOUND_BY, box_witnesses, prove_insensitive, tables_or_skip
from .gap_boxes import largest_gap, unsplit
from .gap_search import LEVELS, level_encodings, link_bound
from .gap_units import BestPair
from .pair_scope import refusal


class _Reached(Exception):
    """A replayed pair reached D: the search stops there, after the dive that found it
    (``boxes``: the boxes visited by then, dives whole, counted under a work budget)."""

    def __init__(self, boxes: int):
        super().__init__(boxes)
        self.boxes = boxes


def link_tables(ctx: SolveContext) -> Encoding | None:
    """The largest-change tables' encoding of a check through a nonlinear link, or None
    when the check is not one or the tables do not describe it. Their pairs go down:
    for the direction up, the query's x1 is their x2 and its bounds are taken so."""
    lc = ctx.enc.condition.link_change
    if lc is None or lc.directions not in ((UP,), (DOWN,)):
        return None
    encs = level_encodings(_levels_of(ctx.enc))
    return None if encs is None else encs[0]


def link_refusal(ctx: SolveContext) -> str | None:
    """Why ``link_tables`` is None for a check through a nonlinear link, in words."""
    if ctx.enc.condition.link_change.directions not in ((UP,), (DOWN,)):
        return "it takes a change through a nonlinear link up or down, not either"
    return refusal(replace(_levels_of(ctx.enc), condition=LEVELS))


def _levels_of(enc: Encoding) -> Encoding:
    """The query whose pairs go down: for the direction up, x1 and x2 swapped in its
    bounds and relations."""
    q = enc.query
    if enc.condition.link_change.directions == (UP,) and (q.bounds or q.relations):
        q = q.with_(bounds=swapped(q.bounds), relations=swapped_relations(q.relations))
        return replace(enc, query=q)
    return enc


def swapped(bounds: tuple[FeatureBound, ...]) -> tuple[FeatureBound, ...]:
    """The bounds with x1's and x2's exchanged (a bound on both stays one)."""
    return tuple(replace(b, copies=tuple(sorted(3 - c for c in b.copies))) for b in bounds)


def swapped_relations(relations: tuple[FeatureRelation, ...]) -> tuple[FeatureRelation, ...]:
    """The relations with x1 and x2 exchanged (``x1.f <= x2.f`` becomes ``x2.f <= x1.f``)."""
    return tuple(replace(r, left=3 - r.left, right=3 - r.right) for r in relations)


def link_box_stage(ctx: SolveContext, deadline: float, boxes: int | None = None) -> bool:
    """Search the tables until ``deadline``, or, under a work budget, until it has
    visited ``boxes`` boxes (each spent, one unit a box); True when the search answered."""
    enc = link_tables(ctx)
    if enc is None:
        return False
    stats = {"status": "searched", "boxes": 0, "leaves": 0, "class_pairs": 1}
    ctx.stats["box_search"] = stats
    tables = tables_or_skip(enc, stats, ctx.tables_mb)
    if tables is None:
        return False
    stats["leaves"] = int(tables.values.shape[1])
    delta = float(ctx.q.delta)
    if unsplit(tables) and delta > 0:  # no tree tells x1 from x2: one prediction for both
        stats["status"] = "proved"  # (searched, the root's bound is the float allowance)
        return prove_insensitive(ctx)
    best = BestPair(ctx.ens, enc.query)  # the tables' pairs: their bounds, swapped for up
    measure = best.offer_for(enc)

    reached = []

    def offer(x1, x2):
        got = measure(x1, x2)
        if got is not None and got >= delta:
            reached.append(got)
        return got

    def dived(_lower, _upper, visited: int) -> None:  # after each dive, its boxes counted
        if reached:
            raise _Reached(visited)

    below = math.nextafter(delta, -math.inf)  # boxes bounded under D are dropped
    bound = link_bound(ctx.ens.link)
    limit = math.inf if boxes is None else boxes
    try:
        out = largest_gap(
            enc, tables, lambda u: u, offer, 0.0, deadline, dived, below, bound, box_limit=limit
        )
        stats["boxes"] = out.boxes
    except _Reached as stop:
        out = None
        stats["boxes"] = stop.boxes
    if ctx.work is not None:
        ctx.work.spend("box_search", stats["boxes"])
    if best.disagreement is not None:
        fail(ctx.result, best.disagreement)
        return True
    if out is None:
        stats["status"] = "found"
        x1, x2 = best.pair
        if ctx.enc.condition.link_change.directions == (UP,):  # the tables' pair goes down
            x1, x2 = x2, x1
        for w in box_witnesses(ctx, enc, x1, x2):
            verdict = check_pair(ctx.ens, ctx.q, ctx.enc, w)
            if isinstance(verdict, Accepted):
                accept(ctx, verdict, found_by=FOUND_BY)
                return True
        return False
    if out.proven and out.upper < delta:
        stats["status"] = "proved"
        return prove_insensitive(ctx, f" (bounded through the {ctx.ens.link} link)")
    stats["status"] = "timeout" if not out.proven else "open"
    if out.spent:
        stats["status"] = "spent"
    return False
