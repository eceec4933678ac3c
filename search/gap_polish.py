"""The saturation ask's polish: raise the smaller slack of the seed's best pair.

A saturated feature's max gap (within the tolerance of 0.5) closes only when a pair
reaches the saturation slack on both sides (gap_seed.py): no box's bound leaves 0.5. The
heuristic's ascent (heuristic.py) often stops just short of it: its score weights the
sum of the slacks (BALANCE), which near saturation keeps pushing the larger side, and it
samples at most MAX_CANDIDATES values per feature, so a fine-grained feature (fnlwgt,
age) misses the interval that would lift the smaller side.

The polish is an iterated local search from that best pair. A restart perturbs the best
pair (one to a few features set at random: the moves two features must make together,
more of them the longer no restart has helped), runs the ascent's own climb from there
(its weighted score crosses the valleys a climb on the smaller slack alone stops in:
18 random starts of that climb stayed below a margin of 4.8 on adult xgb_t1000_d8's
education, where the ascent's restarts reach 6.7-6.9), then, when the pair's mean
slack is above the best's smaller one, climbs on min(s1, s2) (ties broken by the sum)
over *all* the interval representatives of each feature: on both copies for a shared
feature, on one copy for a varied one (and on both together where a relation on it holds
for equal values: heuristic.py). The best pair by (min, sum) is kept. It is
bounded by the heuristic's deterministic work count (row-tree evaluations), so a query
gives the same pair on a loaded machine; the time is only a backstop. It gives up
early on a feature that does not saturate: a round ends after STALL_RESTARTS restarts
that have not raised the best pair's smaller slack, FAR_STALL_RESTARTS when that is far
below the ask (FAR_BELOW). A round that raised it is followed by another from its best
pair (``ROUNDS`` at most), with a random stream of its own and its perturbations small
again: on adult xgb_t1000_d8's native-country a round stopped at 6.30 of 6.91 after eight
restarts, and rounds from there with three other streams reached 6.69-6.78. Its pair is
only offered, replayed with the library's predict like any other.
"""

from __future__ import annotations

import time

import numpy as np

from ..compiler.encode import Encoding
from .heuristic import Move, Spent, applies, pair_ascent

# values of a feature evaluated at once (bounds the walk's arrays: trees x values)
CHUNK = 4096
# features set at random in a perturbation, at most
PERTURB_FEATURES = 4
# perturbed restarts without a rise of the smaller slack before the polish gives up; fewer
# when the smaller slack is still FAR_BELOW the ask (in row units: a logit), where the
# feature likely does not saturate (adult xgb_t1000_d8's race, sex)
STALL_RESTARTS = 8
FAR_STALL_RESTARTS = 3
FAR_BELOW = 1.0
# rounds of restarts, at most: a round that raised the smaller slack (and left it under
# the ask, within FAR_BELOW of it) is followed by another from its best pair, with a
# random stream and a work bound of its own
ROUNDS = 3
# the patient polish (gap_seed.late_polish, once the box search has run as long as the
# seed): every round stops after PATIENT_STALL restarts that have not raised the smaller
# slack, far below the ask or not, and one that raised it is followed by another
# (PATIENT_ROUNDS at most). It aims at the best pair, the search's floor, not at the ask:
# on churn lgbm_t1000_l63 it took SeniorCitizen's pair from 0.4941 to 0.4955 (the largest
# gap) and TechSupport's from 0.4800 to 0.4985, where the rules above stop after three
# restarts
PATIENT_STALL = 30
PATIENT_ROUNDS = 10
TIE = 1e-12


def _better(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Is (min, sum) ``a`` above ``b``, the min first?"""
    return a[0] > b[0] + TIE or (a[0] >= b[0] - TIE and a[1] > b[1] + 1e-9)


def polish_pair(
    enc: Encoding,
    x1: np.ndarray,
    x2: np.ndarray,
    margin: float,
    work: int,
    deadline: float,
    seed: int = 0,
    patient: bool = False,
    spent: Spent | None = None,
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The best pair found from (x1, x2) towards slack ``margin`` on both sides, and its
    smaller slack (the heuristic's float64 sums: the replay decides); None where the
    heuristic's evaluation does not apply. Stops at ``margin``, after ``ROUNDS`` rounds
    of ``work`` row-tree evaluations each at most, or at ``deadline``. ``patient``: the
    rounds of PATIENT_STALL and PATIENT_ROUNDS, far below the ask or not. ``spent``: the
    rounds' evaluations added to it."""
    if not applies(enc):
        return None
    x = [x1.astype(np.float64).copy(), x2.astype(np.float64).copy()]
    start = None
    stall = PATIENT_STALL if patient else None
    for r in range(PATIENT_ROUNDS if patient else ROUNDS):
        climb = _Climb(pair_ascent(enc, seed + r, deadline, margin, work))
        p = climb.point(x)
        if start is None:
            start = p.key[0]
        best = _round(climb, climb.run(p), margin, stall)
        if spent is not None:
            spent.evaluations += climb.a.ev.work
        raised = best.key[0] > start + TIE
        far = not patient and best.key[0] < margin - FAR_BELOW
        if not raised or best.key[0] >= margin or far:
            break
        if time.time() >= deadline:
            break
        start = best.key[0]
        x = [best.x[0].copy(), best.x[1].copy()]
    return best.x[0], best.x[1], best.key[0]


def _round(climb: _Climb, best: _Point, margin: float, stall: int | None = None) -> _Point:
    """One round of restarts from ``best``: perturbations growing with the restarts that
    do not raise its smaller slack, until STALL_RESTARTS of them (FAR_STALL_RESTARTS
    far below the ask; ``stall`` either way where given), the ask or the work bound."""
    a = climb.a
    stalled = 0
    while best.key[0] < margin and not a.out_of_budget():
        tried = climb.kicked(best, 1 + stalled // 2)
        if _better(tried.key, best.key):
            stalled = 0 if tried.key[0] > best.key[0] + TIE else stalled + 1
            best = tried
        else:
            stalled += 1
        far = best.key[0] < margin - FAR_BELOW
        if stalled >= (stall or (FAR_STALL_RESTARTS if far else STALL_RESTARTS)):
            break
    return best


class _Point:
    """A pair, its trees' contributions, raw scores and (min, sum) of slacks."""

    def __init__(self, x: list[np.ndarray], c: list[np.ndarray], raw, s: list[float]):
        self.x, self.c, self.raw, self.s = x, c, raw, s
        self.key = (min(s), s[0] + s[1])


class _Climb:
    """Local search on (min slack, sum) over every value of every feature."""

    def __init__(self, ascent):  # heuristic.pair_ascent's
        self.a = ascent
        self.rng = ascent.rng

    def kicked(self, best: _Point, strength: int) -> _Point:
        """One restart of the iterated search: a perturbation of ``best``, the ascent's
        own climb from it (sampled values, its weighted score: it crosses the valleys a
        climb on the smaller slack alone stops in), then the climb on the smaller slack
        over every value when the mean of the two slacks is above ``best``'s smaller."""
        a = self.a
        x1, x2, s1, s2, _met = a.ascend(*self.perturbed(best.x, strength))
        p = self.point([x1, x2])
        if min(s1, s2) >= a.margin or (s1 + s2) / 2 <= best.key[0]:
            return p
        return self.run(p)

    def point(self, x: list[np.ndarray]) -> _Point:
        """Pair ``x`` evaluated: its trees' contributions and slacks."""
        a = self.a
        c = [a.full_contrib(x[0]), a.full_contrib(x[1])]
        return _Point(x, c, *a.slacks(c))

    def run(self, p: _Point) -> _Point:
        """The local optimum from pair ``p`` (or the point reached at the budget)."""
        a = self.a
        improved = True
        while improved and p.key[0] < a.margin and not a.out_of_budget():
            improved = False
            for f in self.rng.permutation(a.feats):
                trees = a.ev.uses[f]
                if not len(trees):
                    continue
                for move in a.sides[f]:
                    if a.out_of_budget():
                        return p
                    v = self.best_value(p, f, move, trees)
                    if v is None:
                        continue
                    a.take(p.x, p.c, f, move, v, trees)
                    p = _Point(p.x, p.c, *a.slacks(p.c))
                    improved = True
                    if p.key[0] >= a.margin:
                        return p
        return p

    def best_value(self, p: _Point, f: int, move: Move, trees: np.ndarray) -> float | None:
        """The value of ``f`` (set by ``move``) whose (min, sum) of slacks is above the
        pair's, the best of all of ``f``'s values; None when none is."""
        a = self.a
        vals = a.reps[f]
        best_key, best_v = p.key, None
        for lo in range(0, len(vals), CHUNK):
            chunk = vals[lo : lo + CHUNK]
            s1, s2 = a.moved_slacks(p.x, p.c, p.raw, f, move, chunk, trees)
            low, total = np.minimum(s1, s2), s1 + s2
            top = low.max()
            k = int(np.argmax(np.where(low >= top - TIE, total, -np.inf)))
            key = (float(low[k]), float(total[k]))
            if _better(key, best_key):
                best_key, best_v = key, float(chunk[k])
        return best_v

    def perturbed(self, x: list[np.ndarray], strength: int) -> list[np.ndarray]:
        """A copy of pair ``x`` with 1 to ``strength`` features (at most
        PERTURB_FEATURES) set at random (a shared feature on both copies, a varied one on
        each independently), then made to meet the query's relations (heuristic.py)."""
        a, rng = self.a, self.rng
        out = [x[0].copy(), x[1].copy()]
        used = [f for f in a.feats if len(a.ev.uses[f])]
        k = int(rng.integers(1, min(strength, PERTURB_FEATURES) + 1))
        for f in rng.choice(used, min(k, len(used)), replace=False):
            if f in a.varying:
                out[0][f], out[1][f] = rng.choice(a.reps[f]), rng.choice(a.reps[f])
            else:
                out[0][f] = out[1][f] = rng.choice(a.reps[f])
        a.meet_relations(out[0], out[1])
        return out
