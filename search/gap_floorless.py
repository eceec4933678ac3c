"""A binary max gap's floorless seed: pairs from a short box search with no floor,
polished, offered before the search proper (search/gap_search.py).

Where the seed's pairs (gap_seed.py) come near the saturation slack and miss it, the
search's floor (their gap plus the tolerance) is so near its boxes' bounds that every
dive's box drops under it before it resolves: on adult lgbm_t1000_l63's workclass (the
seed's pair 0.498752, 0.22 in rows short of the slack) the search resolved no pair in
600 s. Without the seed's floor (its own best pair's only: the tolerance's least at
first) the same compiled search resolves better and better pairs in seconds (8 in 7 CPU
s there, 0.430-0.4967), in regions the seed's ascent does not reach, and the patient
polish (gap_polish.py) from them climbed past the seed's pair (0.4989477 from 4 of 7
starts). This is that step, bounded: the first ``FLOORLESS_PAIRS`` pairs
resolved or ``FLOORLESS_STALL`` boxes past the last (a stop in boxes, the same at any
load; ``FLOORLESS_SHARE`` of the time left caps it), then the patient polish of the best
``FLOORLESS_POLISHED`` of them, each within ``POLISH_SHARE`` of the time left (none past
the first where it raises nothing above the seed's pair and the search's). Every pair
goes through the search's own offer (replayed with the library's predict); the upper
bound is still the search's alone.

It runs only where the seed's best pair is within ``FLOORLESS_NEAR`` (rows) of the
saturation slack: a lower floor lets the search resolve pairs of its own, and there the
step only costs (adult_t500_d6's race, 0.4457, proven in 1.3 s: 3 s more). A timed
query's only: a work budget's answer must not depend on how far the clock let this
search go.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..compiler.encode import Encoding
from . import gap_kernel
from .box_search import corner_pair, tree_order
from .gap_boxes import FIRST_STEP, next_step, root_rows
from .gap_polish import polish_pair
from .gap_seed import POLISH_WORK, seeds
from .gap_units import gap_bound
from .heuristic_stage import heuristic_work
from .pair_boxes import PairTables
from .relation_boxes import rank_relations
from .tolerance import Tolerance

# how far below the saturation slack (rows: a logit) the seed's best pair may be for the
# step to run (gap_polish.FAR_BELOW's: farther, the feature likely does not saturate)
FLOORLESS_NEAR = 1.0
# resolved pairs, at most
FLOORLESS_PAIRS = 8
# the floorless search stops this many boxes past its last resolved pair (or its start):
# its pairs come in runs at most ~20,000 boxes apart (churn lgbm_t1000_l255's
# StreamingMovies 19,366, adult lgbm_t1000_l63's education 17,821), and past a run's last
# the next came 60,000 or more boxes on (workclass's) or never in 250,000 (OnlineBackup's,
# DeviceProtection's). Counted in boxes, the same query resolves the same pairs at any load
FLOORLESS_STALL = 25_000
# the share of the time left the floorless search may take whatever it finds: a cap only
FLOORLESS_SHARE = 0.05
# the best resolved pairs polished (patiently), each within this share of the time left
FLOORLESS_POLISHED = 3
POLISH_SHARE = 0.015

Offer = Callable[[np.ndarray, np.ndarray], "float | None"]


@dataclass(frozen=True)
class Floorless:
    """What the floorless seed did: the pairs its search resolved (each offered), its
    boxes, the polishes offered, and the seconds it all took."""

    pairs: int = 0
    boxes: int = 0
    polished: int = 0
    seconds: float = 0.0

    def stats(self) -> dict:
        return {
            "pairs": self.pairs,
            "boxes": self.boxes,
            "polished": self.polished,
            "seconds": round(self.seconds, 3),
        }


def missed(enc: Encoding, best_gap: float, tolerance: Tolerance, saturation: float) -> bool:
    """Whether the floorless seed runs for a search seeded to ``best_gap``: the seed
    applies (gap_seed.seeds), a pair can saturate (``saturation`` finite), and the seed's
    best pair is short of it (its floor below 0.5, above which no bound is) by at most
    FLOORLESS_NEAR in rows."""
    if not (math.isfinite(saturation) and seeds(enc)) or tolerance.floor(best_gap) >= 0.5:
        return False
    rows = gap_kernel.floor_in_rows(gap_bound(enc.ensemble), best_gap)
    return rows >= saturation - FLOORLESS_NEAR


def floorless_seed(
    enc: Encoding,
    tab: PairTables,
    offer: Offer,
    tolerance: Tolerance,
    saturation: float,
    deadline: float,
    reached: float = -math.inf,
) -> Floorless:
    """Run the floorless search over ``tab``, offering each pair it resolves, then
    polish the best few towards the saturation slack and offer them, until one
    saturates or the first raises nothing above every gap before it (``reached``: the
    seed's best gap; the search's pairs')."""
    t0 = time.time()
    until = t0 + _share(FLOORLESS_SHARE, deadline)
    found, boxes = _resolved(enc, tab, offer, tolerance, until)
    found.sort(key=lambda g_pair: -g_pair[0])
    polished = 0
    margin = saturation + 2.0 * enc.relax
    work = int(POLISH_WORK * heuristic_work(enc.ensemble))
    top = max([reached] + [g for g, _pair in found])
    for _gap, (x1, x2) in found[:FLOORLESS_POLISHED]:
        until = time.time() + _share(POLISH_SHARE, deadline)
        if until <= time.time():
            break
        got = polish_pair(enc, x1, x2, margin, work, until, enc.query.plan.seed, patient=True)
        if got is None:
            continue
        polished += 1
        gap = offer(got[0], got[1])
        if gap is not None and tolerance.floor(gap) >= 0.5:
            break
        # the best pair's polish raising nothing above every gap before it: the seed's
        # pair is likely near the feature's largest gap (churn lgbm_t1000_l255's
        # DeviceProtection, adult lgbm_t1000_l63's education), and the lower pairs'
        # polishes are not worth their shares (8.5 s each on a 255-leaf model)
        if polished == 1 and (gap is None or gap <= top):
            break
    return Floorless(len(found), boxes, polished, time.time() - t0)


def _share(share: float, deadline: float) -> float:
    return share * max(deadline - time.time(), 0.0)


def _resolved(
    enc: Encoding, tab: PairTables, offer: Offer, tolerance: Tolerance, until: float
) -> tuple[list[tuple[float, tuple[np.ndarray, np.ndarray]]], int]:
    """The pairs (accepted gap, pair) the compiled search resolves with its own floor (the
    tolerance above the best of them; at first the tolerance's least), until
    FLOORLESS_PAIRS of them, FLOORLESS_STALL boxes past the last (or the start), its heap
    empty, or ``until``; and the boxes it visited."""
    rel = rank_relations(enc, tab)
    search = gap_kernel.KernelSearch(
        tab, tree_order(tab), root_rows(tab), probes=gap_kernel.PROBES,
        heap_bytes=gap_kernel.MIN_HEAP_BYTES, rel=rel,
        f_first=gap_kernel.max_gap_first_boxes(rel),
        frames=gap_kernel.DIVE_FRAMES, check=gap_kernel.PAIRS_DIVE_CHECK,
    )  # fmt: skip
    to_gap = gap_bound(enc.ensemble)
    found: list[tuple[float, tuple[np.ndarray, np.ndarray]]] = []
    boxes, budget, stop = 0, FIRST_STEP, FLOORLESS_STALL
    while len(found) < FLOORLESS_PAIRS and boxes < stop and time.time() < until:
        floor = gap_kernel.floor_in_rows(to_gap, tolerance.floor(_best(found, tolerance)))
        t = time.time()
        status, n, _u = search.step(floor, min(budget, stop - boxes))
        boxes += n
        budget = next_step(budget, n, time.time() - t, until - time.time(), status)
        if status == gap_kernel.RESOLVED:
            pair = corner_pair(enc, tab, search.corner, search.corner_hi, rel)
            got = offer(*pair)
            if got is not None:
                found.append((got, pair))
                stop = boxes + FLOORLESS_STALL
        elif status == gap_kernel.EMPTY:
            break
    return found, boxes


def _best(found: list[tuple[float, tuple]], tolerance: Tolerance) -> float | None:
    """The best gap of ``found`` that reaches the tolerance (None: none does)."""
    gaps = [g for g, _pair in found if g >= tolerance.least]
    return max(gaps, default=None)
