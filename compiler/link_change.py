"""A regressor's change by at least D through a nonlinear link: an outer approximation
of the exact condition, refined by cuts.

With the increasing link g (exp, sigmoid) and the pair's raw scores s1, s2, the change
up, f(x2) - f(x1) >= D, is s2 >= h(s1), h(s) = g^-1(g(s) + D) (+inf where g(s) + D leaves
g's range: a sigmoid prediction cannot pass 1). For exp, h(s) = log(e^s + D); for the
sigmoid, h(s) = logit(sigmoid(s) + D). Both are increasing and convex (h' = g'(s) /
g'(h(s)) increases), so the pairs meeting the condition form a convex set in (s1, s2)
and every tangent s2 >= h(a) + h'(a) (s1 - a) is a valid linear row. The encoding
states a few (and the asymptotes); a solution the library's predict rejects lies below
the curve, and the tangent at its s1 (and at the s1 whose h is its s2) cuts it off.
Direction down is the mirror (s1 >= h(s2)); either is a choice of the two.

The library's own rounding is covered before any row is written: its raw sums by the
encoding's float32 relaxation (per unit of coefficient, as every gap row), and its
float32 link by ``LINK_ROUNDING``: a relative error of the exp prediction is a shift of
the raw score (``margin``), an absolute error of the sigmoid's a smaller D.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .ensemble import EXP, SIGMOID, Ensemble
from .rounding import gap_relaxation

# a bound on the relative error of a library's float32 exp or sigmoid (a few ulps)
LINK_ROUNDING = 2.0**-20
# the smallest change asked of a sigmoid regressor: below it, the float32 rounding of
# its predictions decides
MIN_SIGMOID_DELTA = 2.0**-18
INITIAL_TANGENTS = 8  # tangent points per direction, spread over the raw scores' range
MAX_SLOPE = 1e6  # steeper tangents are left out (they strain the solvers' arithmetic)
NONLINEAR_LINKS = (EXP, SIGMOID)

# a row over both inputs: (coefficients of x1's raw scores, of x2's, right-hand side)
PairRow = tuple[tuple[float, ...], tuple[float, ...], float]


def raw_range(ens: Ensemble) -> tuple[float, float]:
    """The smallest and largest raw score any input gets (the leaf values' sums)."""
    lo = hi = 0.0
    for t in ens.trees:
        vals = np.asarray(t.value)[t.leaves(), 0]
        if vals.size:
            lo += float(vals.min())
            hi += float(vals.max())
    s, b = ens.scale, ens.intercept[0]
    ends = (b + s * lo, b + s * hi)
    return min(ends), max(ends)


@dataclass(frozen=True)
class LinkChange:
    """The change by at least ``delta`` in prediction space through the link ``link``:
    per direction (up: x2 the higher, down: x1; two: a choice), its initial ``rows``,
    and the curve h that the cuts are tangents of."""

    link: str
    delta: float  # the D the rows state: the asked one, less the sigmoid's rounding
    margin: float  # raw-score slack per unit of coefficient for the link's rounding
    directions: tuple[str, ...]
    rows: tuple[tuple[PairRow, ...], ...]  # per direction: the initial rows

    def h(self, s: float) -> float:
        """The smallest raw score of the higher input given the lower one's, s."""
        d = self.delta
        if d <= 0.0:  # (the search's start, delta 0: the raw scores ordered)
            return s
        if self.link == EXP:
            return float(np.logaddexp(s, math.log(d)))
        p, rest = _expit(s), _expit(-s) - d  # sigmoid(s) + D, and 1 minus it
        if rest <= 0.0:
            return math.inf
        return math.log(p + d) - math.log(rest)

    def slope(self, s: float) -> float:
        d = self.delta
        if d <= 0.0:
            return 1.0
        if self.link == EXP:
            return _expit(s - math.log(d))
        p, q = _expit(s), _expit(s) + d
        rest = _expit(-s) - d
        if rest <= 0.0:
            return math.inf
        return p * _expit(-s) / (q * rest)

    def below(self, t: float) -> float:
        """h's inverse: the lower input's raw score whose h is t (-inf: none)."""
        d = self.delta
        if self.link == EXP:
            e = -d * math.exp(-t) if t > -700 else -math.inf
            return t + math.log1p(e) if e > -1.0 else -math.inf
        p = _expit(t) - d
        return math.log(p) - math.log(_expit(-t) + d) if p > 0.0 else -math.inf

    def slack(self, up: float, down: float) -> float:
        """How far the higher raw score ``up`` is above h(``down``) (unrelaxed)."""
        return up - self.h(down)

    def pair_slack(self, s1: float, s2: float) -> float:
        """The largest slack of the directions asked, on the pair's raw scores."""
        return max(self.slack(*_ordered(d, s1, s2)) for d in self.directions)

    def least_library_change(self, s1: float, s2: float, shift: float) -> float:
        """The largest, over the directions asked, of the least change the library may
        compute for a pair with exact raw scores (s1, s2): each of its raw sums ``shift``
        off against the change and each prediction rounded by ``LINK_ROUNDING`` against
        it (exp: relatively, sigmoid: absolutely). A pair the library rejects is within
        its rounding only if this is below the change asked."""
        eta = LINK_ROUNDING
        least = -math.inf
        for d in self.directions:
            up, down = _ordered(d, s1, s2)
            if self.link == EXP:
                top = math.exp(min(up - shift, 700.0)) * (1.0 - eta)
                low = math.exp(min(down + shift, 700.0)) * (1.0 + eta)
            else:
                top, low = _expit(up - shift) - eta, _expit(down + shift) + eta
            least = max(least, top - low)
        return least

    def tangent(self, a: float, direction: str) -> PairRow | None:
        """The tangent at the lower score a, as a row of ``direction`` (None: too steep
        or no tangent there)."""
        ha, k = self.h(a), self.slope(a)
        if not (math.isfinite(ha) and math.isfinite(k)) or k > MAX_SLOPE:
            return None
        rhs = ha - k * a - self.margin * (1.0 + k)
        return _row(direction, 1.0, -k, rhs)

    def cuts(self, s1: float, s2: float) -> tuple[tuple[PairRow, ...], ...]:
        """Per direction, the tangents that cut off a pair with raw scores (s1, s2) that
        does not meet it: at the lower score, and where h reaches the higher one."""
        out = []
        for d in self.directions:
            up, down = _ordered(d, s1, s2)
            rows = [self.tangent(a, d) for a in (down, self.below(up)) if math.isfinite(a)]
            out.append(tuple(r for r in rows if r is not None))
        return tuple(out)


def link_change(ens: Ensemble, delta: float, directions: tuple[str, ...]) -> LinkChange:
    """The change by at least ``delta`` of a regressor with a nonlinear link, with its
    initial rows (``_initial_rows``) over the raw scores the library can compute: the
    leaf values' range widened by the encoding's float32 relaxation."""
    sigmoid = ens.link == SIGMOID
    d = max(delta - 2.0 * LINK_ROUNDING, 0.0) if sigmoid else delta
    margin = 0.0 if sigmoid else -math.log1p(-LINK_ROUNDING)
    shape = LinkChange(ens.link, d, margin, directions, ())
    lo, hi = raw_range(ens)
    relax = gap_relaxation(ens)
    rows = tuple(_initial_rows(shape, d_, lo - relax, hi + relax) for d_ in directions)
    return LinkChange(ens.link, d, margin, directions, rows)


def change_bound(link: str, lo: float, hi: float, width: float) -> float:
    """A bound on g(s1) - g(s2) for raw scores s2 >= lo, s1 <= hi, s1 - s2 <= width,
    through the increasing link g (exp: largest at s1 = hi; sigmoid: with s2 + width / 2
    nearest 0), widened by the library's float32 rounding of its predictions."""
    if min(lo, hi, width) < -1e299 or max(lo, hi, width) > 1e299:  # an empty box
        return -math.inf
    if link == EXP:
        top = min(hi, 700.0)
        low = min(max(lo, top - width), 700.0)
        eta = LINK_ROUNDING
        return math.exp(top) * (1.0 + eta) - math.exp(low) * (1.0 - eta)
    if link == SIGMOID:
        c = min(max(-width / 2.0, lo), max(lo, hi - width))
        return min(1.0, _expit(min(hi, c + width)) - _expit(c) + 2.0 * LINK_ROUNDING)
    raise ValueError(f"no change bound through the link {link!r}")


def rounding_band(ens: Ensemble) -> float:
    """The smallest change worth asking of the regressor: a few times what the library's
    rounding alone (its sums, its link) can move a prediction. Below it, pairs a cut
    cannot separate from the curve fill the search (sigmoid: at least its smallest)."""
    relax = gap_relaxation(ens)
    top = min(raw_range(ens)[1] + relax, 700.0)
    if ens.link == EXP:
        w = 2.0 * (relax - math.log1p(-LINK_ROUNDING))
        band = math.exp(top) * (1.0 + LINK_ROUNDING) - math.exp(top - w) * (1.0 - LINK_ROUNDING)
        return 4.0 * band
    return max(4.0 * (relax / 2.0 + 2.0 * LINK_ROUNDING), MIN_SIGMOID_DELTA)


def _initial_rows(lc: LinkChange, direction: str, lo: float, hi: float) -> tuple[PairRow, ...]:
    """One direction's rows, for library raw scores in [lo, hi]: first the difference
    of the two (slope 1; the pair sum the passes read), then the higher score's floor,
    the lower score's ceiling, and tangents spread between.

    With the link's rounding as a shift t1 = s1 + m, t2 = s2 - m of the library's raw
    scores (here s1 the higher score, s2 the lower, whichever input has it), a pair
    meeting the change has t1 >= h(t2), t1 <= hi + m, so t2 <= b = h^-1(hi + m);
    t2 >= lo - m, so t1 >= h(lo - m); and t1 - t2 >= h(t2) - t2, which is convex in t2
    (h is), at least its least value on [lo - m, b]."""
    m = lc.margin
    b = lc.below(hi + m)
    floor = lc.h(lo - m)
    if not (math.isfinite(b) and math.isfinite(floor)) or b < lo - m:
        # no pair reaches the change within these raw scores: a row none meets
        return (_row(direction, 1.0, 0.0, hi + 1.0),)
    # h(s) - s is least where h' = 1: nowhere for exp (h' < 1: at the top), at
    # sigmoid(s) = (1 - D) / 2 for the sigmoid
    if lc.link == SIGMOID and 0.0 < lc.delta < 1.0:
        least = math.log1p(-lc.delta) - math.log1p(lc.delta)
    else:
        least = math.inf
    c = min(max(least, lo - m), b)
    out = [
        _row(direction, 1.0, -1.0, lc.h(c) - c - 2.0 * m),
        _row(direction, 1.0, 0.0, floor - m),
        _row(direction, 0.0, -1.0, -(b + m)),
    ]
    if b >= lo:
        for a in np.linspace(lo, b, INITIAL_TANGENTS):
            row = lc.tangent(float(a), direction)
            if row is not None:
                out.append(row)
    return tuple(out)


def _row(direction: str, k_up: float, k_down: float, rhs: float) -> PairRow:
    """k_up * (higher raw score) + k_down * (lower) >= rhs, as a row over x1, x2 (up:
    x2 the higher)."""
    if direction == "up":
        return (k_down,), (k_up,), rhs
    return (k_up,), (k_down,), rhs


def _ordered(direction: str, s1: float, s2: float) -> tuple[float, float]:
    """(the score that must be higher, the lower one) in ``direction``."""
    return (s2, s1) if direction == "up" else (s1, s2)


def _expit(s: float) -> float:
    if s >= 0:
        return 1.0 / (1.0 + math.exp(-s))
    e = math.exp(s) if s > -745 else 0.0
    return e / (1.0 + e)
