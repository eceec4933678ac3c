"""The largest probability ratio of a multiclass forest (averaged probabilities) by box
searches at fixed ratios.

A forest's probability is the mean of its trees' leaf fractions, so P(c1) >= G P(k) is
linear in the leaves for a fixed G (the pair tables describe it exactly), but the ratio
itself is not: the best-first gap search (gap_boxes.py), which bounds log ratios as sums
of leaf values, does not apply. Instead each step asks the box search (box_search.py)
whether some pair reaches a ratio G, every pair of classes the query allows in turn:

* "proved" (no pair at G, the rows relaxed for float sums): ln G is an upper bound;
* a pair: replayed with the library's predict, the ratio it achieves raises the lower
  bound (the best pair is the witness).

The first step is at the tolerance (e^tol: none there is "insensitive"); the next ones
halve [lower, upper] in ln G, at least a tolerance above the lower bound, until they are
within the tolerance. The upper bound starts at the largest ratio a replayed pair can
show (``achieved_ratio``: a class at probability 0 is beaten by the largest float); no
step asks past the largest ratio a check takes (``MAX_RATIO``, 1e6): a pair beyond it
leaves the bounds open unless it shows the largest float itself. Everything is in gap
units (ln G), as gap_search.py's results.
"""

from __future__ import annotations

import math
import time

from ..answers.work import Work
from ..compiler.ensemble import Ensemble
from ..compiler.query import MAX_RATIO, Gap, GapKind, Query
from .box_search import FOUND, GAVE_UP, BoxSearch
from .gap_boxes import GapBoxOutcome
from .gap_search import pair_result, unsplit_query
from .gap_units import LOG_MAX, BestPair
from .pair_boxes import PairTablesPastDeadline, pair_tables
from .pair_scope import class_pair_encodings, pair_encoding

MAX_STEPS = 200  # a bound on the steps, whatever the tolerance (each at least halves or proves)


def forest_largest_ratio(
    ens: Ensemble,
    q: Query,
    tolerance: float,
    deadline: float,
    memory_bytes: int | None = None,
    work: Work | None = None,
) -> tuple[object, GapBoxOutcome] | None:
    """(Result, outcome) of the largest ratio of ``q`` (its gap unused) on a multiclass
    forest, or None where the pair tables do not describe the query. Each step's tables
    are built by ``deadline`` and within ``memory_bytes`` (pair_tables): past the deadline
    in the first step's build, PairTablesPastDeadline; in a later one, the bounds so far.
    ``work``: a work budget, one unit a box of every step's search (spent as
    "box_search"), whose end leaves the bounds so far (the outcome ``spent``)."""
    t0 = time.time()
    at_one = pair_encoding(ens, q.with_(gap=Gap(1.0, GapKind.PROB)))
    if class_pair_encodings(at_one, relations=True) is None:
        return None
    best = BestPair(ens, q)
    upper, boxes, proven, enc0 = LOG_MAX, 0, False, None
    g = tolerance
    for step in range(MAX_STEPS):
        try:
            status, n, enc = _step(ens, q, g, best, deadline, memory_bytes, work)
        except PairTablesPastDeadline:
            if step == 0:
                raise
            break
        boxes, enc0 = boxes + n, enc0 or enc
        if status == GAVE_UP or best.disagreement is not None:
            break
        if status == FOUND and best.gap < g:  # a pair of the relaxed rows only: stuck at g
            break
        if status != FOUND:
            upper = min(upper, g)
        if best.gap < tolerance:  # no pair yet: proved at the tolerance
            proven = True
            break
        if upper - best.gap <= tolerance:
            proven = True
            break
        if best.gap >= math.log(MAX_RATIO):  # no check asks beyond
            break
        # a step just inside the tolerance: proved there, the bounds are within it
        step = max(tolerance * (1 - 1e-6), (upper - best.gap) / 2)
        g = min(upper, best.gap + step, math.log(MAX_RATIO))
    lower = best.gap if best.gap >= tolerance else None
    # no tree splits on a varied feature within the bounds: one prediction, a ratio of 1
    alike = proven and lower is None and unsplit_query(ens, q)
    spent = not proven and work is not None and work.left() <= 0
    out = GapBoxOutcome(proven, upper, lower, boxes, alike=alike, spent=spent)
    res = pair_result(ens, q, best, out, enc0)
    res.time = {"compile": 0.0, "solve": time.time() - t0, "total": time.time() - t0}
    res.stats["box_search"] = {"boxes": boxes, "pairs_replayed": best.offered}
    return res, out


def _step(
    ens: Ensemble,
    q: Query,
    g: float,
    best: BestPair,
    deadline: float,
    memory_bytes: int | None,
    work: Work | None = None,
):
    """Is there a pair at ratio e^g? ("proved" | "found" | GAVE_UP, boxes, an encoding);
    each search within what is left of ``work``, one unit a box."""
    at = q.with_(gap=Gap(math.exp(g), GapKind.PROB))
    # relations between the inputs: read by the box search (relation_boxes.py)
    encs = class_pair_encodings(pair_encoding(ens, at), relations=True)
    boxes = 0
    for enc in encs:
        tables = pair_tables(enc, max_held=memory_bytes, deadline=deadline)
        search = BoxSearch(enc, tables)
        if work is not None:
            search.box_limit = work.left()
        out = search.run(deadline)
        if work is not None:
            work.spend("box_search", out.boxes)
        boxes += out.boxes
        if out.status == GAVE_UP:
            return GAVE_UP, boxes, enc
        if out.status == FOUND:
            best.offer_for(enc)(*out.pair)
            return FOUND, boxes, enc
    return "proved", boxes, encs[0]
