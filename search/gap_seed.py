"""A binary max gap's first floor: the heuristic's pairs (search/heuristic.py), replayed.

The box search resolves a box (an exact pair) only once every pair tree is down to one
leaf over it: on the scale tier's 1,000-tree LightGBM models a first dive takes hundreds
of boxes, and the search may reach its time limit with no pair to state. The heuristic's
coordinate ascent, asked at gap 0 for pairs with growing slack (``SEED_MARGINS``), finds
them in seconds; each is replayed with the library's predict (the search's own offer),
and the best is the search's first lower bound: stated if the search resolves no better
pair, and a floor that prunes the boxes under it (plus the tolerance). Only ever a pair:
the upper bound is still the search's alone.

The last ask is at the slack where a pair ends the search (``saturation_slack``): a gap
within the tolerance of 0.5, above which no bound can be, so the floor passes every box
(on the scale tier most features of the XGBoost models saturate: adult xgb_t2000_d6's
age, fnlwgt, occupation are proven by the seed alone). It gets more work than the others
(``SATURATION_WORK``): on adult xgb_t1000_d8's education six times the work took the
best pair from margin 5.3 to 6.7, where 120 s of box search had reached 6.3. A pair that
misses its ask is offered all the same: the ascent's best, replayed, may still beat the
pairs before it.

The best pair of the ask that misses (the saturation ask's, or an earlier one's) is
polished towards the saturation slack (search/gap_polish.py: an iterated local search
from perturbations of that pair, in rounds of work ``POLISH_WORK`` each) and offered
too: the ascent's restarts from random pairs often end 0.01-0.2 in margin short of the
saturation slack (adult xgb_t1000_d8's education at 6.72 of 6.92), and restarts from
perturbations of the best pair reach it where more random restarts do not (education:
6.92 after five). On the scale tier's LightGBM models several saturated features
stopped at the slack-4 ask; polished, their pair reaches the saturation slack too
(lgbm_t1000_l255's race, sex).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ..compiler.encode import Encoding
from .gap_polish import polish_pair
from .heuristic import Spent, compiled_eval, find_witness
from .heuristic_stage import HEURISTIC_WORK_PER_LEAF, heuristic_work

# slack asked beyond gap 0, in the rows' units (a logit: 1, 4 are probability gaps of
# about 0.23, 0.48), then the saturation slack (saturation_slack); each asked only once
# the one before was met, none past the saturation slack
SEED_MARGINS = (1.0, 4.0)
# of the time left, at most, for each ask (the saturation ask: SATURATION_SHARE). The
# work bound is meant to decide: at 0.15 the time stopped the saturation ask first on
# the scale tier's LightGBM models (a 255-leaf model's work bound is 127 M row-tree
# evaluations, 6-23 CPU s), and features its work closes stayed open; a saturated
# feature's box search cannot close its bracket anyway (its upper bound stays at 0.5)
SEED_SHARE = 0.05
SATURATION_SHARE = 0.4
# the saturation ask's work, in the heuristic's own work bounds (heuristic_work)
SATURATION_WORK = 2.0
# from this heuristic work bound (20,000 leaves), the asks walk their trees compiled from
# their start (heuristic.py), loaded first: loaded inside an ask (after its first 3 million
# evaluations), the load (about 1 s) came out of that ask's time share (2 s for the
# slack-4 ask of a 43 s query on a 1,000-tree model), which then stopped it short of its
# pair. A smaller model's seed may end before the load would pay
PRELOAD_WORK = 10_000_000
# the polish of a missed ask's pair (gap_polish.py): each round's work in heuristic work
# bounds (gap_polish.ROUNDS at most), and the polish's share of the time left (a backstop)
POLISH_WORK = 2.0
POLISH_SHARE = 0.4
# the late polish (``late_polish``): once the box search has done LATE_TIMES the seed's
# work (``late_after``) with its bracket still open, the best pair so far is polished
# again, patiently (gap_polish.py's PATIENT_STALL, PATIENT_ROUNDS), within LATE_SHARE of
# the time left: a better pair is a higher floor, and the floor is what the search prunes
# by. It costs up to a few times the seed (2-11 s on churn lgbm_t1000_l63), so it waits
# about that long: a search that closes by then pays nothing for it. It runs again (a
# timed search's: gap_search.LatePolish) each time the search resolves a pair better than
# every gap before, once the search has gone on LATE_TIMES the last polish's work: a
# resolved pair lies elsewhere than the seed's, and its polish may climb past both (churn
# lgbm_t1000_l63's StreamingTV: 0.4834 -> 0.4890, proven in 2.1x fewer CPU s)
LATE_TIMES = 3.0
# the late polish on further random streams (a timed search's: gap_search.LatePolish): the
# pair the last polish started from, polished again on its next stream (the query's seed
# + 1, + 2, ...), once the search has gone on LATE_STREAM_TIMES as long as all the
# polishes' work (the search's without theirs; at least the first polish's wait,
# late_after, for each), while the last polish raised the best gap by the
# tolerance: the polishes stay under about 1 / (1 + LATE_STREAM_TIMES) of a long search,
# a search that closes within LATE_STREAM_TIMES of that wait pays nothing, and neither
# does one whose pair no polish raises (often its largest gap). A stream climbs from the
# same pair to another gap (churn lgbm_t1000_l63's OnlineBackup: streams 0..7 from the
# seed's 0.4833 reach 0.4906, 0.4926 (1, 3, 4, 6), 0.4833, 0.4911, 0.4912), where a
# polish of its own best pair stays in that pair's basin
LATE_STREAM_TIMES = 10.0
LATE_SHARE = 0.4
# the late polish's rounds (POLISH_WORK each, ``late_work``) count each tree's leaves up to
# LATE_TREE_LEAVES: a restart's row-tree evaluations follow the trees' number, not their
# leaves (3.8-4.2 million on churn's 1,000-tree models of 63 and 126 leaves a tree), so a
# round bounded by all the leaves ran twice the restarts on the bigger trees, each 2.3x the
# CPU (churn lgbm_t1000_l255's Partner: its best pair 7 restarts into the second round,
# then 59 restarts for nothing, 23 s of the polish's 38)
LATE_TREE_LEAVES = 64
# under a work budget (answers/work.py) the late polish is due once the box search has
# visited this share of its boxes, not after seconds, so that the floor it raises is
# raised at the same box on any machine; the seed's and the polishes' time shares are
# off (their work bounds decide, the deadline a net)
LATE_WORK_SHARE = 0.25
# the work the late polishes wait for is counted in row-tree evaluations (a timed search's
# late steps' clock, gap_search.LatePolish.clock), not in seconds, so that each polish
# comes at the same box at any load (churn lgbm_t1000_l63's StreamingTV ran 1.69-2.81
# million boxes with the seconds): the seed's evaluations (its asks' and its polish's),
# the polishes' own, and the search's boxes at BOX_TREE_EVALUATIONS evaluations a tree
# each. A box's CPU is 1.8 (63 leaves a tree) to 2.6 (255) evaluations a tree in a
# search's first 100,000 boxes, 0.8-1.0 later. At 1.4 the first polish comes 8,000-30,000
# boxes after the seconds put it on churn's LightGBM models (TechSupport's at 53,248, not
# 45,087; l255 StreamingTV's at 77,824, not 50,140), and after the search's own pair where
# that is the better origin (churn l63's DeviceProtection: its 0.4695 pair at 96,417 boxes,
# polished at 102,400 to 0.4839; at 2.0, at 73,728 from 0.4583 to 0.4743 only, and proven
# in 1.09 million boxes instead of 0.84)
BOX_TREE_EVALUATIONS = 1.4


def saturation_slack(to_gap: Callable[[float], float], tolerance: float) -> float:
    """The rows' value (u, in row units) from which a pair's gap, ``to_gap(u)``, is within
    ``tolerance`` of 0.5: with such a pair as the lower bound, the floor (lower bound plus
    tolerance) is at or above every box's bound, and the search ends proven. inf where no
    u reaches it."""
    target = 0.5 - tolerance
    lo, hi = -1e6, 1e6
    if to_gap(hi) < target:
        return math.inf
    while True:  # to_gap is non-decreasing: the least u with to_gap(u) >= target
        mid = lo + (hi - lo) / 2.0
        if mid <= lo or mid >= hi:
            return hi
        if to_gap(mid) >= target:
            hi = mid
        else:
            lo = mid


def seed_margins(saturation: float, relax: float = 0.0) -> list[tuple[float, float, float]]:
    """The asks: (slack, share of the time left, work in heuristic work bounds) each,
    SEED_MARGINS below the saturation slack, then the saturation slack when it is finite,
    plus twice the rows' float32 relaxation ``relax`` (the heuristic sums in float64 what
    the library may sum in float32; the replay decides)."""
    out = [(m, SEED_SHARE, 1.0 / (len(SEED_MARGINS) + 1)) for m in SEED_MARGINS if m < saturation]
    if math.isfinite(saturation):
        out.append((saturation + 2.0 * relax, SATURATION_SHARE, SATURATION_WORK))
    return out


def seeds(enc: Encoding) -> bool:
    """Whether the heuristic seeds this query's search: not a regressor, a multiclass
    model, bounds on the inputs (those that hold for both inputs alike are the encoding's
    domains, compiler/bounds_as_domains.py), or the heuristic turned off. Relations
    between the inputs are seeded: the heuristic's moves and starts meet them."""
    ens, q = enc.ensemble, enc.query
    if ens.is_regressor or ens.n_outputs > 1 or q.bounds:
        return False
    return bool(q.plan.options.value("heuristic"))


def seed_floor(
    enc: Encoding,
    offer: Callable[[np.ndarray, np.ndarray], float | None],
    deadline: float,
    saturation: float = math.inf,
    timed: bool = True,
    spent: Spent | None = None,
) -> int:
    """Offer the heuristic's pairs at growing slack until one is not met (that one's best
    pair offered too); returns how many were offered (0 where the heuristic does not
    apply: a regressor, a multiclass model, the heuristic turned off, bounds on the
    inputs). ``saturation``: the slack at which a pair ends the search
    (saturation_slack), the last ask. ``timed`` False (a work budget): each ask and the
    polish end on their work bounds alone, ``deadline`` the net. ``spent``: the asks' and
    the polish's evaluations added to it."""
    ens, q = enc.ensemble, enc.query
    if not seeds(enc):
        return 0
    offered = 0
    asks = seed_margins(saturation, enc.relax)
    if heuristic_work(ens) >= PRELOAD_WORK:
        compiled_eval()
    for margin, share, work in asks:
        left = deadline - time.time()
        if left <= 0:
            break
        work = int(work * heuristic_work(ens))
        seconds = share * left if timed else left
        found = find_witness(enc, seconds, seed=q.plan.seed, margin=margin, work=work, spent=spent)
        if found is None:
            break
        offer(found[0], found[1])
        offered += 1
        if not found[2]:
            if math.isfinite(saturation):
                offered += _polished(enc, found, offer, asks[-1][0], deadline, timed, spent)
            break
    return offered


def _polished(
    enc: Encoding,
    found: tuple[np.ndarray, np.ndarray, bool],
    offer: Callable[[np.ndarray, np.ndarray], float | None],
    margin: float,
    deadline: float,
    timed: bool = True,
    spent: Spent | None = None,
) -> int:
    """An ask's missed pair polished towards the saturation ask's slack ``margin``
    (search/gap_polish.py) and offered: how many pairs that offered (0 or 1); ``timed``
    False: within the whole time left (its work bound decides)."""
    ens, q = enc.ensemble, enc.query
    left = deadline - time.time()
    if left <= 0:
        return 0
    work = int(POLISH_WORK * heuristic_work(ens))
    until = time.time() + (POLISH_SHARE if timed else 1.0) * left
    polished = polish_pair(enc, found[0], found[1], margin, work, until, q.plan.seed, spent=spent)
    if polished is None:
        return 0
    offer(polished[0], polished[1])
    return 1


def late_after(seed: Spent) -> float:
    """When the late polish is due on its work clock (``box_evaluations``): LATE_TIMES the
    seed's evaluations."""
    return LATE_TIMES * seed.evaluations


def box_evaluations(enc: Encoding) -> float:
    """A box of the search in row-tree evaluations, on the late steps' work clock."""
    return BOX_TREE_EVALUATIONS * len(enc.ensemble.trees)


def late_work(enc: Encoding) -> int:
    """The heuristic's work bound (heuristic_work) with each tree's leaves counted up to
    LATE_TREE_LEAVES: a late polish round's unit."""
    leaves = sum(min(int((t.feature < 0).sum()), LATE_TREE_LEAVES) for t in enc.ensemble.trees)
    return HEURISTIC_WORK_PER_LEAF * leaves + 2000


def late_polish(
    enc: Encoding,
    pair: tuple[np.ndarray, np.ndarray],
    offer: Callable[[np.ndarray, np.ndarray], float | None],
    saturation: float,
    deadline: float,
    timed: bool = True,
    stream: int = 0,
    spent: Spent | None = None,
) -> float | None:
    """The best pair so far polished patiently towards the saturation slack (gap_polish.py,
    ``patient``) and offered: the gap the offer accepted, or None (no polish: the
    heuristic does not apply, or no time; or the library rejected the pair). ``timed``
    False (a work budget): within the whole time left, its work bound deciding.
    ``stream``: the random stream, past the query's seed; ``spent``: the polish's
    evaluations added to it."""
    q = enc.query
    left = deadline - time.time()
    if left <= 0 or not math.isfinite(saturation) or not seeds(enc):
        return None
    margin = saturation + 2.0 * enc.relax
    work = int(POLISH_WORK * late_work(enc))
    until = time.time() + (LATE_SHARE if timed else 1.0) * left
    seed = q.plan.seed + stream
    polished = polish_pair(enc, *pair, margin, work, until, seed, patient=True, spent=spent)
    return None if polished is None else offer(polished[0], polished[1])
