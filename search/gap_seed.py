"""A binary max gap's first floor: the heuristic's pairs (search/heuristic.py), replayed.

The box search resolves a box (an exact pair) only once every pair tree is down to one
leaf over it: on the scale tier's 1,000-tree LightGBM models a first dive takes hundreds
of boxes, and the search may reach its time limit with no pair to state. The heuristic's
coordinate ascent, asked at gap 0 for pairs with growing slack (``SEED_MARGINS``), finds
them in seconds; each is replayed with the library's predict (the search's own offer),
and the best is the search's first lower bound: stated if the search resolves no better
pair, and a floor that prunes the boxes under it (plus the tolerance). Only ever a pair:
the upper bound is still the search's alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..compiler.encode import Encoding
from .heuristic import find_witness
from .heuristic_stage import heuristic_work

# slack asked beyond gap 0, in the rows' units (a logit: 1, 4, 8 are probability gaps of
# about 0.23, 0.48, 0.4997); each asked only once the one before was met
SEED_MARGINS = (1.0, 4.0, 8.0)
# of the time left, at most, for each ask
SEED_SHARE = 0.05


def seed_floor(
    enc: Encoding,
    offer: Callable[[np.ndarray, np.ndarray], float | None],
    deadline: float,
) -> int:
    """Offer the heuristic's pairs at growing slack until one is not met; returns how
    many were offered (0 where the heuristic does not apply: a regressor, a multiclass
    model, the heuristic turned off, bounds or relations on the inputs)."""
    ens, q = enc.ensemble, enc.query
    if ens.is_regressor or ens.n_outputs > 1 or q.bounds or q.relations:
        return 0
    if not q.plan.options.value("heuristic"):
        return 0
    work = heuristic_work(ens) // len(SEED_MARGINS)
    offered = 0
    for margin in SEED_MARGINS:
        left = deadline - time.time()
        if left <= 0:
            break
        found = find_witness(enc, SEED_SHARE * left, seed=q.plan.seed, margin=margin, work=work)
        if found is None or not found[2]:
            break
        offer(found[0], found[1])
        offered += 1
    return offered
