"""The pair space a proof covers, and each tree's leaves as boxes of it: a box part
(an interval of the library's values, or a run of a coded feature's listed codes, with
or without NaN) routed through each node as the library routes each value (a numeric
test, NaN to its side, LightGBM's zero band read as 0.0, a categorical node's codes one
by one), within the certificate's domain."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .claims import Claim
from .domain import EMPTY, INF, Domain, codes_from_0, per_input_domain, read_domain
from .models import Model, ModelError, Tree
from .relations import claimed_relations
from .replay import RawScores
from .rounding import (
    after,
    after32,
    before,
    before32,
    ceil_end,
    f32_down,
    f32_nearest,
    f32_up,
    floor_end,
)


class PairSpace:
    """The pair space of a certificate's claim over the model's trees: one column per
    feature outside the varied set, two per varied feature (one per input), each over the
    domain the certificate states (checked here: codes where splits are categorical, an
    unlisted code only where it stands for every code no split lists, no empty domain);
    a box part routed through a node as the library routes each value, and the leaves
    each input reaches as boxes of the space. box_checks.Checker walks a proof over it."""

    def __init__(
        self,
        model: Model,
        question: dict,
        columns: list,
        version: int = 2,
        replay: RawScores | None = None,
        replay_refusal: str = "",
    ):
        self.m = model
        self.replay, self.replay_refusal = replay, replay_refusal
        # the part's judge of a replayed pair on the library's probabilities, which
        # ``replay`` then gives (claims.library_misses); None: on its raw scores
        self.misses: Callable[[np.ndarray], bool] | None = None
        # the claim an ``alike`` step rules out (set by _check_claim), and that step's
        # walk of every tree, once: [why it fails, or None] (verify/alike.py)
        self.claim: Claim | None = None
        self.alike_walk: list = []
        names = model.features
        self.varied = {names.index(v) for v in question["vary"]}
        # the claim's relations between x1 and x2 (verify/relations.py)
        self.relations = claimed_relations(question, names, self.varied)
        # per feature its domain; a varied feature's stated per input (version 4) is in
        # ``inputs`` as (x1's, x2's), and ``domain`` holds x1's for the verdict's order
        self.inputs: dict[int, tuple[Domain, Domain]] = {}
        self.domain = []
        for f, d in enumerate(question["domain"]):
            if isinstance(d, dict) and "x1" in d:
                self.inputs[f] = per_input_domain(d, version, names[f] if f < len(names) else f)
                if f not in self.varied:
                    raise ValueError(
                        f"feature {names[f]!r}: a domain per input of a shared feature"
                    )
            self.domain.append(self.inputs[f][0] if f in self.inputs else read_domain(d, version))
        if len(self.domain) != len(names):
            raise ValueError("one domain entry per feature expected")
        self.columns = [(int(f), c) for f, c in columns]
        # per column, the input its values are (0: x1, and a shared column's) and its domain
        self.col_input = [0 if c in (None, 1) else 1 for _, c in self.columns]
        self.col_of = [{}, {}]  # per input: feature -> column
        for i, (f, c) in enumerate(self.columns):
            for k in (0, 1):
                if c is None or c == k + 1:
                    self.col_of[k][f] = i
        for k in (0, 1):
            if sorted(self.col_of[k]) != list(range(len(names))):
                raise ValueError("the columns do not cover every feature of both inputs")
            if any(
                (self.columns[self.col_of[k][f]][1] is None) == (f in self.varied)
                for f in range(len(names))
            ):
                raise ValueError("a varied feature must have a column per input")
        for t in model.trees:
            for n, codes in enumerate(t.cats or ()):
                if codes is not None and self._either(t.feature[n], lambda d: d.codes is None):
                    raise ValueError(
                        f"feature {names[t.feature[n]]!r} has categorical splits: its "
                        "domain must list its codes"
                    )
        for f in model.meaning:  # a group's feature: its values are codes, never NaN
            if self._either(f, lambda d: d.codes is None or d.missing):
                raise ValueError(f"feature {names[f]!r}: a group's domain lists its codes alone")
        for f, n_codes in model.known_codes.items():
            if self._either(f, lambda d, n=n_codes: not all(0 <= c < n for c in d.codes or ())):
                raise ValueError(
                    f"feature {names[f]!r}: the model knows the codes 0..{n_codes - 1}"
                )
        for f in range(len(names)):
            why = next(filter(None, (self._unlisted_refusal(f, k) for k in (0, 1))), None)
            if why is not None:
                raise ValueError(f"feature {names[f]!r}: {why}")
        self.col_dom = [self.dom(f, k) for (f, _), k in zip(self.columns, self.col_input)]
        self.col_missing = np.array([d.missing for d in self.col_dom])
        self._require_values()
        self.eps = self._relaxation()
        self.reads_varied = [_reads(t, self.varied) for t in model.trees]
        self._leaves: dict[tuple[int, int], LeafBoxes] = {}
        self._whole: tuple | None = None  # _full_box's

    def dom(self, f: int, k: int = 0) -> Domain:
        """Feature f's domain for input k (0: x1, 1: x2): the feature's, or the one
        stated for that input (version 4)."""
        pair = self.inputs.get(f)
        return self.domain[f] if pair is None else pair[k]

    def _either(self, f: int, test: Callable[[Domain], bool]) -> bool:
        """Whether ``test`` holds of feature f's domain for some input."""
        return any(test(self.dom(f, k)) for k in (0, 1))

    def _unlisted_refusal(self, f: int, k: int) -> str | None:
        """Why input k's domain of feature f may not state an unlisted code r (None: it
        may, or states none): r stands for every whole number c >= 0 in its bounds no
        split lists only where the library routes each such c as r (``open_codes``: of
        any code beyond its bitsets, negative or past 2^31, as predict shows), every split
        on f is categorical (a threshold would tell codes apart) listing neither r nor c,
        and r and 0 (where it is such a c) go right (LightGBM's zero band would send 0 to
        a split's default side)."""
        d = self.dom(f, k)
        if d.unlisted is None:
            return None
        if not self.m.open_codes or f in self.m.meaning or f in self.m.known_codes:
            return "this model's codes are its own: a domain's unlisted code stands for none"
        if self.m.zero_band >= 1.0:
            return "its zero band holds codes: a domain's unlisted code stands for none"
        lo, hi = codes_from_0(d).lb, d.ub
        tried = [float(d.unlisted)] + ([0.0] if lo <= 0 <= hi and 0 not in d.codes else [])
        for t in self.m.trees:
            for n in np.flatnonzero(np.asarray(t.feature) == f).tolist():
                if t.cats is None or t.cats[n] is None:
                    return "a split on it is numeric: a domain's unlisted code stands for none"
                if d.unlisted in t.cats[n] or any(goes_left(self.m, t, n, v) for v in tried):
                    return f"a split lists its unlisted code {d.unlisted} or sends it left"
        return None

    def _require_values(self) -> None:
        """Every feature's domain (per input, where stated so) must hold some value the
        library reads: an empty one leaves every box of the pair space empty, each bound
        minus infinity, so a proof of any claim at all would pass."""
        for f in range(len(self.domain)):
            for k in (0, 1) if f in self.inputs else (0,):
                d = self.dom(f, k)
                if d.codes is not None or d.missing:
                    continue  # codes are never empty (``read_domain``); NaN is a value
                lo, hi = self._domain_interval(f, k)
                if not lo < hi:
                    said = f"x{k + 1}'s domain" if f in self.inputs else "its domain"
                    raise ValueError(
                        f"feature {self.m.features[f]!r}: {said} [{d.lb:g}, {d.ub:g}]"
                        + (" of integers" if d.integer else "")
                        + " holds no value"
                    )

    def _relaxation(self) -> float:
        """How far the library's accumulation may move one raw score (in raw units):
        2^-20 of its largest sum, or for a float32 sum taken tree by tree (XGBoost),
        2^-24 of every partial sum's bound and of the result's, when that is larger; the
        largest over the outputs."""
        s = self.m.margin_per_logit
        worst = 0.0
        for k in range(self.m.n_outputs):
            tops = [_top(t, k) * s for t in self.m.trees]
            offset = abs(self.m.offset_of(k)) * s
            relax = 2.0**-20 * (sum(tops) + offset)
            if self.m.float32_sums:
                partial, err = offset, 0.0
                for top in tops:
                    if top:
                        partial += top
                        err += 2.0**-24 * partial
                relax = max(relax, err + 2.0**-24 * partial)
            worst = max(worst, relax)
        return (worst + 1e-7) / s

    # ---- intervals, normalised so that two meet iff max(lo) < min(hi) ----------
    def _norm(self, f: int, lo: float, hi: float) -> tuple[float, float]:
        """An interval of the library's test ([lo, hi) for "<", (lo, hi] for "<=") of
        feature f, as the same set of admissible values with integer ends for an
        integer feature; two normalised intervals share a value iff max lo < min hi."""
        if not self.domain[f].integer:  # the same for both inputs (per_input_domain)
            return lo, hi
        if self.m.test == "<":  # [lo, hi) holds the integers [ceil lo, ceil hi)
            return ceil_end(lo), ceil_end(hi)
        return floor_end(lo), floor_end(hi)  # (lo, hi] holds (floor lo, floor hi]

    def _domain_interval(self, f: int, k: int = 0) -> tuple[float, float]:
        d = self.dom(f, k)
        lb, ub = d.lb, d.ub
        if self.m.float32:  # the library compares float32(x), rounded to nearest: x in
            # [lb, ub] maps onto [float32(lb), float32(ub)], as rounding is monotone
            lb, ub = f32_nearest(lb), f32_nearest(ub)
        if self.m.test == "<":  # [lb, ub] as [lb, after(ub))
            lo, hi = lb, (after32(ub) if self.m.float32 else after(ub))
        else:  # [lb, ub] as (before(lb), ub]
            lo, hi = (before32(lb) if self.m.float32 else before(lb)), ub
        return self._norm(f, lo, hi)

    def _split(self, lo: float, hi: float, t: float):
        """The (yes, no) parts of an interval at threshold t (the test holds on yes)."""
        return (lo, min(hi, t)), (max(lo, t), hi)

    # ---- routing a box part through a node, as the library routes each value ------
    def _route(self, t: Tree, n: int, part: tuple, k: int = 0) -> tuple[list, list]:
        """The pieces of a box part (lo, hi, nan) of node n's feature that go left and
        right: each an interval (of values; of code positions for a coded feature, in
        input k's list) with or without NaN."""
        lo, hi, nan = part
        f = t.feature[n]
        codes = self.dom(f, k).codes
        sides: tuple[list, list] = ([], [])
        if codes is not None:  # each code as the library routes it, in runs
            start, end = max(lo, 0), min(hi, len(codes))  # a NaN-only part: none
            for i in range(int(start), int(end)) if start < end else ():
                side = sides[0 if goes_left(self.m, t, n, float(codes[i])) else 1]
                if side and side[-1][1] == i:
                    side[-1] = (side[-1][0], i + 1, False)
                else:
                    side.append((i, i + 1, False))
        else:
            yes, no = self._split(lo, hi, self._test_at(float(t.threshold[n])))
            band = self._band(t, n)
            if band is None:
                sides[0].append((*yes, False))
                sides[1].append((*no, False))
            else:  # the band goes as 0.0 does: carved out of both sides
                interval, left = band
                for side, part_ in ((sides[0], yes), (sides[1], no)):
                    side.extend((*p, False) for p in _minus(part_, interval))
                sides[0 if left else 1].append((max(lo, interval[0]), min(hi, interval[1]), False))
        out = tuple(_merged([p for p in side if p[0] < p[1]]) for side in sides)
        if nan:
            side = out[0 if goes_left(self.m, t, n, math.nan) else 1]
            if side:
                side[-1] = (side[-1][0], side[-1][1], True)
            else:
                side.append((*EMPTY, True))
        return out

    def _test_at(self, t: float) -> float:
        """A split's threshold as a float32 model's test parts the float32 values it
        compares: at the largest float32 at most t ("<=") or the least at least t ("<"),
        so that no value lies between (scikit-learn's thresholds are doubles)."""
        if not self.m.float32:
            return t
        return f32_down(t) if self.m.test == "<=" else f32_up(t)

    def _band(self, t: Tree, n: int):
        """LightGBM's zero band as an interval of the node's test, with the side it
        takes (as 0.0), when the test alone would not send all of it there; None when it
        would (or the library has no band)."""
        z = self.m.zero_band
        if not z:
            return None
        left = goes_left(self.m, t, n, 0.0)
        th = t.threshold[n]
        if self.m.test == "<=":  # the band is (before(-z), z]
            interval = (before(-z), z)
            if (left and z <= th) or (not left and th < -z):
                return None
        else:  # [-z, after(z))
            interval = (-z, after(z))
            if (left and z < th) or (not left and th <= -z):
                return None
        return interval, left

    # ---- the leaves as boxes of the pair space ----------------------------------
    def _leaf_boxes(self, t: Tree, k: int) -> list[tuple]:
        """Every leaf input k can reach within the domain, with its box (normalised
        per column of the pair space: lo, hi and whether NaN is in it); a leaf reached
        through pieces that are not one interval has a box per piece."""
        lo0, hi0, nan0 = (list(x) for x in self._full_box())  # Python's, a leaf at a time
        out = []
        stack = [(0, {})]
        while stack:
            n, path = stack.pop()
            f = t.feature[n]
            if f < 0:
                lo, hi, nan = lo0.copy(), hi0.copy(), nan0.copy()
                for g, (a, b, g_nan) in path.items():
                    c = self.col_of[k][g]
                    na, nb = self._norm_part(g, a, b, k)
                    lo[c], hi[c], nan[c] = max(lo[c], na), min(hi[c], nb), g_nan
                if all(a < b or m for a, b, m in zip(lo, hi, nan)):
                    box = (np.array(lo, dtype=float), np.array(hi, dtype=float))
                    out.append((n, *box, np.array(nan, dtype=bool)))
                continue
            part = path.get(f, (-INF, INF, self.dom(f, k).missing))
            yes, no = self._route(t, n, part, k)
            c = self.col_of[k][f]
            for p in no:
                if self._within(f, c, p, k, lo0, hi0):
                    stack.append((t.right[n], {**path, f: p}))
            for p in yes:
                if self._within(f, c, p, k, lo0, hi0):
                    stack.append((t.left[n], {**path, f: p}))
        return out

    def _within(self, f: int, c: int, p: tuple, k: int, lo0: list, hi0: list) -> bool:
        """Whether a piece p of feature f (column c of input k) meets the domain, by the
        test a leaf's box passes in that column: a piece that does not is not walked
        down, since every piece below it lies within it (a walk within a domain of one
        value per feature follows one path, not every leaf)."""
        a, b = self._norm_part(f, p[0], p[1], k)
        return max(lo0[c], a) < min(hi0[c], b) or p[2]

    def _full_box(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The domain as a box of the pair space (normalised; computed once, each call
        given its own copy)."""
        if self._whole is None:
            self._whole = self._domain_box()
        return tuple(x.copy() for x in self._whole)

    def _domain_box(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = [], []
        for (f, _), k in zip(self.columns, self.col_input):
            codes = self.dom(f, k).codes
            a, b = (0, len(codes)) if codes is not None else self._domain_interval(f, k)
            lo.append(a)
            hi.append(b)
        return np.array(lo, dtype=float), np.array(hi, dtype=float), self.col_missing.copy()

    def _norm_part(self, f: int, lo: float, hi: float, k: int = 0) -> tuple[float, float]:
        """A box part's interval of input k, normalised (code positions stay as they are)."""
        return (lo, hi) if self.dom(f, k).codes is not None else self._norm(f, lo, hi)

    def box_ends(self, box: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A box of the proof (per column (lo, hi, nan)) as arrays, normalised."""
        ends = [
            self._norm_part(f, *box[c][:2], k)
            for c, ((f, _), k) in enumerate(zip(self.columns, self.col_input))
        ]
        lo = np.array([a for a, _ in ends], dtype=float)
        hi = np.array([b for _, b in ends], dtype=float)
        return lo, hi, np.array([part[2] for part in box], dtype=bool)

    def _boxes(self, ti: int, k: int) -> LeafBoxes:
        """``_leaf_boxes`` of tree ``ti`` for input ``k``, as arrays (kept: a box's
        three small arrays would cost about 300 bytes more a leaf)."""
        if (ti, k) not in self._leaves:
            self._leaves[ti, k] = LeafBoxes.of(self._leaf_boxes(self.m.trees[ti], k), self)
        return self._leaves[ti, k]


@dataclass(frozen=True)
class LeafBoxes:
    """The leaves one input reaches in a tree (``PairSpace._leaf_boxes``) as arrays: per
    box its leaf (``nodes``) and, per column of the pair space, its ends and whether it
    holds NaN ([boxes, columns])."""

    nodes: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    nan: np.ndarray

    @classmethod
    def of(cls, boxes: list[tuple], checker: PairSpace) -> LeafBoxes:
        if not boxes:
            lo, hi, nan, _ = no_boxes(len(checker.columns))
            return cls(np.zeros(0, dtype=np.int64), lo, hi, nan)
        nodes = np.array([b[0] for b in boxes], dtype=np.int64)
        return cls(nodes, *(np.array([b[k] for b in boxes]) for k in (1, 2, 3)))

    def valued(self, weight: list[float]) -> tuple:
        """The boxes with each leaf's ``weight`` (per node): a table's (lo, hi, nan, value)."""
        return self.lo, self.hi, self.nan, np.asarray(weight, dtype=np.float64)[self.nodes]


def _merged(pieces: list[tuple]) -> list[tuple]:
    """Pieces (lo, hi, nan) with touching intervals joined (the zero band beside the
    numbers on its side: one interval, as a plain split would give)."""
    out: list[tuple] = []
    for p in sorted(pieces):
        if out and out[-1][1] == p[0]:
            out[-1] = (out[-1][0], p[1], False)
        else:
            out.append(p)
    return out


def _minus(part: tuple[float, float], cut: tuple[float, float]) -> list[tuple[float, float]]:
    """An interval less another (both of the same test's form): up to two intervals."""
    lo, hi = part
    return [(lo, min(hi, cut[0])), (max(lo, cut[1]), hi)]


def goes_left(m: Model, t: Tree, n: int, v: float) -> bool:
    """Whether the library sends value v (a number or NaN) to node n's ``left``: NaN to
    its default side (read as 0.0 under LightGBM's missing type None), a value in
    LightGBM's zero band read as 0.0 (to the default side under missing type Zero), a
    categorical node's codes left, every other value right, else the numeric test."""
    mode = t.missing[n] if t.missing is not None else "nan"
    if math.isnan(v):
        if mode != "none":
            if t.default_left is None:
                raise ModelError("the model's NaN side was not read")
            return bool(t.default_left[n])
        v = 0.0  # LightGBM's missing type None reads NaN as 0.0
    if abs(v) <= m.zero_band:
        v = 0.0
        if mode == "zero":
            return bool(t.default_left[n])
    if t.cats is not None and t.cats[n] is not None:
        return v >= 0.0 and v == math.floor(v) and int(v) in t.cats[n]
    x = float(np.float32(v)) if m.float32 else v
    return x < t.threshold[n] if m.test == "<" else x <= t.threshold[n]


def _reads(t: Tree, varied: set[int]) -> bool:
    return any(f in varied for f in t.feature if f >= 0)


def _top(t: Tree, k: int) -> float:
    """The tree's largest |value| on output k (0 when it adds nothing to k)."""
    if t.values is not None:
        return max((abs(v[k]) for v in t.values), default=0.0)
    return max((abs(v) for v in t.value), default=0.0) if t.output == k else 0.0


def no_boxes(columns: int) -> tuple:
    z = np.zeros((0, columns))
    return z, z, z.astype(bool), np.zeros(0)
