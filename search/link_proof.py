"""A recorded proof that a regressor predicting exp(raw score) changes by less than D:
the box search of search/link_boxes.py (the same pair tables, rows of raw scores) run
depth first with the ``link`` step's rule as its prune test, so that its search tree is
the certificate's proof (verify/link.py checks it).

A part of direction up rules out f(x2) - f(x1) >= D: on a box where x1's raw score is at
most R and r2 - r1 at most S, the change is at most exp(R) (e^S - 1) (the rule is exact
on a box where every tree's value is fixed). The tables hold two rows: the raw score of
the input whose prediction is the lower one (R) and the other's minus it (S); down is
the mirror. The rule is applied with each raw score widened by the encoding's
float32 relaxation (a hundredth more: the checker widens by its own, about as much) and the link's
rounding; the bounds are stated a little above the search's own (the checker recomputes
them and requires the stated ones at least its own, whose offsets it may read with a
float32 rounding's difference).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..compiler.encode import Encoding, gap_row_terms
from ..compiler.ensemble import EXP
from ..compiler.link_change import LINK_ROUNDING
from ..compiler.query import DOWN, UP, Condition
from .box_search import (
    CHECK_EVERY,
    corner_pair,
    leaf_low,
    leaf_top,
    split_node,
    tree_order,
    tree_to_split,
)
from .gap_boxes import unsplit
from .pair_boxes import PairTables
from .pair_scope import applies
from .proof_tree import ALIKE

PROVED, FOUND, GAVE_UP = "proved", "found", "gave up"
SHIFT = -math.log1p(-LINK_ROUNDING)  # the link's rounding as a shift of the raw score
RELAX_FACTOR = 1.01  # the encoding's relaxation, widened a little (the checker computes its own)
STATED_MARGIN = 1e-7  # a stated bound lies this far (relative, at least absolute) above


@dataclass(frozen=True)
class LinkOutcome:
    status: str  # PROVED, FOUND (a resolved box the rule does not close), GAVE_UP
    boxes: int
    pair: tuple[np.ndarray, np.ndarray] | None = None  # FOUND: the box's lower corner


def link_proof_encoding(enc: Encoding) -> Encoding | None:
    """The tables' encoding of a change through the exp link asked in one direction
    (``enc``: the query's own encoding, whose condition's ``link_change`` names it); None
    when the query is not one or the tables do not describe it."""
    lc = enc.condition.link_change
    if enc.ensemble.link != EXP or lc is None or lc.directions not in ((UP,), (DOWN,)):
        return None
    one, none = (((1.0,), 0.0),), ()
    if lc.directions == (UP,):  # x1 the lower prediction: R on x1, S = r2 - r1
        cond = Condition(rows=(one, none), pair_rows=(((-1.0,), (1.0,), 0.0),))
    else:  # x2 the lower prediction: R on x2, S = r1 - r2
        cond = Condition(rows=(none, one), pair_rows=(((1.0,), (-1.0,), 0.0),))
    out = replace(enc, condition=cond)
    return out if applies(out) else None


def link_search(
    enc: Encoding, tables: PairTables, delta: float, deadline: float, record: list
) -> LinkOutcome:
    """Search the pair space depth first ("yes" side first), recording in ``record``
    ``("split", column, rank)`` and ``("link", R, S)`` per box in preorder, until every
    box is closed (PROVED), a box whose trees are all fixed is not (FOUND) or
    ``deadline``; where no tree splits on a varied feature within its bounds, one box
    closed by ``ALIKE`` (x1 and x2 reach the same leaves: search/boxes.py reads_alike)."""
    if delta > 0 and unsplit(tables):  # x1 and x2 read every tree alike: one prediction
        record.append(ALIKE)
        return LinkOutcome(PROVED, 1)
    ens = enc.ensemble
    constant = gap_row_terms(ens, (1.0,))[1]  # the intercept, in R's row (S: it cancels)
    e = RELAX_FACTOR * enc.relax + SHIFT
    n_leaves = tables.values.shape[1]
    if n_leaves == 0:
        return LinkOutcome(PROVED, 0)
    order = tree_order(tables)
    root = np.ones(n_leaves, dtype=bool)
    stack = [(root, np.zeros_like(tables.sizes), tables.sizes.copy())]
    boxes = 0
    while stack:
        if boxes % CHECK_EVERY == 0 and time.time() >= deadline:
            return LinkOutcome(GAVE_UP, boxes)
        live, lo, hi = stack.pop()
        boxes += 1
        top = leaf_top(tables, live)
        r, s = _stated(float(top[0].sum()) + constant), _stated(float(top[1].sum()))
        if _closes(r, s, e, delta):
            record.append(("link", r, s))
            continue
        tree = tree_to_split(top - leaf_low(tables, live), order, tables.first_sum)
        if tree < 0:  # every tree's value fixed: the pair's change (relaxed) reaches D
            return LinkOutcome(FOUND, boxes, corner_pair(enc, tables, lo))
        c, rank = split_node(tables.nodes[tree], live)
        record.append(("split", int(c), int(rank)))
        yes_hi, no_lo = hi.copy(), lo.copy()
        yes_hi[c], no_lo[c] = rank, rank
        stack.append((live & (tables.hi[c] > rank), no_lo, hi))
        stack.append((live & (tables.lo[c] < rank), lo, yes_hi))
    return LinkOutcome(PROVED, boxes)


def _stated(v: float) -> float:
    """A bound as a certificate states it: a little above the search's own."""
    if not math.isfinite(v):
        return v
    return v + STATED_MARGIN * max(1.0, abs(v))


def _closes(r: float, s: float, e: float, delta: float) -> bool:
    """The ``link`` step's rule (verify/link.py) on bounds R and S widened by e."""
    rise = s + 2.0 * e
    if rise <= 0.0:
        return True
    if r + e > 700.0:
        return False
    return math.exp(r + e) * math.expm1(rise) < delta
