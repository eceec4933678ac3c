"""Threshold intervals of one feature, and a concrete value inside each.

A feature tested at sorted thresholds t_0 < ... < t_{K-1} splits the line into K+1
intervals. With the test ``x < t``: I_0 = (-inf, t_0), I_j = [t_{j-1}, t_j),
I_K = [t_{K-1}, inf); with ``x <= t`` the closed ends swap. An interval may hold no
admissible value (outside the declared bounds, no integer in it, no float32 in it):
such intervals are *empty* and the encoding never chooses them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .decimals import readable_in
from .edges import first_no, ordered, unordered
from .ensemble import Ensemble, Feature


@dataclass(frozen=True)
class FeatureDomain:
    feature: int
    thresholds: tuple[float, ...]
    reps: tuple[float | None, ...]  # a value in each interval, or None when empty
    valid: tuple[int, ...]  # indices of non-empty intervals, ascending
    rank_at: tuple[int, ...]  # for threshold k: how many valid intervals have index <= k
    # categorical features: the category codes the encoding chooses among (one per
    # "interval"; thresholds is then empty and reps[j] == codes[j])
    codes: tuple[int, ...] | None = None

    @property
    def n_free(self) -> int:
        """Number of free predicate variables: q_1 .. q_{len(valid)-1}."""
        return max(len(self.valid) - 1, 0)

    def interval_of_rank(self, rank: int) -> int:
        return self.valid[rank]

    def edges(self, j: int) -> tuple[float, float]:
        lo = self.thresholds[j - 1] if j > 0 else -math.inf
        hi = self.thresholds[j] if j < len(self.thresholds) else math.inf
        return lo, hi


def in_interval(ens: Ensemble, domain_thresholds: Sequence[float], j: int, v: float) -> bool:
    """Does the library route ``v`` into interval j (exact library comparison)?"""
    K = len(domain_thresholds)
    if j > 0 and ens.test_holds(v, domain_thresholds[j - 1]):
        return False
    return not (j < K and not ens.test_holds(v, domain_thresholds[j]))


def _admissible(ens: Ensemble, feat: Feature, thresholds, j: int, v: float) -> bool:
    return math.isfinite(v) and feat.admits(v) and in_interval(ens, thresholds, j, v)


def candidates(lo: float, hi: float, feat: Feature) -> list[float]:
    """Values to try inside (lo, hi) clipped to bounds, the most readable first."""
    L = max(lo, feat.lb)
    H = min(hi, feat.ub)
    out: list[float] = []
    if feat.integral:
        # past 2**53 a float's next integer is the next float (c + 1 is c): a cell above
        # LightGBM's split of the numbers from NaN at 1e300 holds 1e300's next float
        if math.isfinite(L):
            c = float(math.ceil(L))
            out += [c, c + 1 if c + 1 != c else float(np.nextafter(c, math.inf))]
        if math.isfinite(H):
            c = float(math.floor(H))
            out += [c, c - 1 if c - 1 != c else float(np.nextafter(c, -math.inf))]
        if not math.isfinite(L) and not math.isfinite(H):
            out += [0.0, 1.0, -1.0]
        return [float(v) for v in out]
    if math.isfinite(L) and math.isfinite(H):
        out.append((L + H) / 2.0)
    elif math.isfinite(L):
        out.append(L + max(1.0, abs(L)))
    elif math.isfinite(H):
        out.append(H - max(1.0, abs(H)))
    else:
        out.append(0.0)
    for edge in (L, H):
        if math.isfinite(edge):
            # beyond float32's range the cast is inf, as in the libraries: not a warning
            with np.errstate(over="ignore"):
                e32 = np.float32(edge)
                out += [
                    edge,
                    float(e32),
                    float(np.nextafter(e32, np.float32(np.inf))),
                    float(np.nextafter(e32, np.float32(-np.inf))),
                    float(np.nextafter(edge, math.inf)),
                    float(np.nextafter(edge, -math.inf)),
                ]
    return out


def cell_span(
    ens: Ensemble, feat: Feature, thresholds: Sequence[float], j: int
) -> tuple[float, float] | None:
    """The smallest and largest input the library routes into interval j within the
    feature's bounds (+-inf where unbounded); None when there is none."""
    lo, hi = feat.lb, feat.ub
    if j > 0:
        lo = max(lo, first_no(ens, thresholds[j - 1]))
    if j < len(thresholds) and thresholds[j] != math.inf:  # x < inf: every number
        hi = min(hi, unordered(ordered(first_no(ens, thresholds[j])) - 1))
    return (lo, hi) if lo <= hi else None


def representative(
    ens: Ensemble, feat: Feature, thresholds: Sequence[float], j: int
) -> float | None:
    """The value a witness shows for interval j: the shortest decimal the library routes
    into it, within the bounds (an integer for an integral feature), nearest the
    interval's middle (decimals.readable_in); None when it holds no admissible value."""
    sp = cell_span(ens, feat, thresholds, j)
    if sp is None:
        return None
    v = readable_in(*sp, feat.integral)
    if v is not None and _admissible(ens, feat, thresholds, j, v):
        return v
    return any_value(ens, feat, thresholds, j)


def any_value(ens: Ensemble, feat: Feature, thresholds: Sequence[float], j: int) -> float | None:
    """An admissible value of interval j among ``candidates``, or None."""
    lo = thresholds[j - 1] if j > 0 else -math.inf
    hi = thresholds[j] if j < len(thresholds) else math.inf
    for v in candidates(lo, hi, feat):
        # the library's own value (float32) when it is within the bounds; otherwise the
        # input itself: a bound the cast rounds past (a data value just under a float32
        # threshold) still reaches the interval its float32 value falls in
        c = float(ens.cast_value(v)) if math.isfinite(v) else v
        if _admissible(ens, feat, thresholds, j, c):
            return c
        if _admissible(ens, feat, thresholds, j, v):
            return v
    return None


def build_domain(ens: Ensemble, f: int, thresholds: Sequence[float]) -> FeatureDomain:
    feat = ens.features[f]
    ths = tuple(sorted(set(float(t) for t in thresholds)))
    reps = tuple(representative(ens, feat, ths, j) for j in range(len(ths) + 1))
    valid = tuple(j for j, r in enumerate(reps) if r is not None)
    rank_at = []
    count = 0
    vi = 0
    for k in range(len(ths)):
        while vi < len(valid) and valid[vi] <= k:
            vi += 1
            count += 1
        rank_at.append(count)
    return FeatureDomain(f, ths, reps, valid, tuple(rank_at))


def build_categorical_domain(
    ens: Ensemble, f: int, split_codes: Iterable[float], thresholds: Sequence[float] = ()
) -> FeatureDomain:
    """The category codes of a categorical feature.

    Declared categories (``Feature.categories``) give codes 0..n-1; otherwise the codes
    the splits list and, inside each interval of numeric thresholds on the feature (the
    whole line where there are none), one code within the bounds that no split lists (it
    stands for every unlisted category there), or an integer of the interval. Codes
    outside the feature's bounds are dropped.
    """
    feat = ens.features[f]
    if feat.categories:
        codes = set(range(len(feat.categories)))
    else:
        listed = {int(c) for c in split_codes}
        codes = set(listed)
        ths = tuple(sorted(set(float(t) for t in thresholds)))
        ifeat = Feature(feat.name, "integer", max(feat.lb, 0.0), feat.ub)
        for j in range(len(ths) + 1):
            r = _unlisted_code(ens, ifeat, ths, j, listed)
            if r is None:
                r = any_value(ens, ifeat, ths, j)
            if r is not None and r >= 0:
                codes.add(int(r))
    codes_t = tuple(c for c in sorted(codes) if feat.lb <= c <= feat.ub)
    reps = tuple(float(c) for c in codes_t)
    return FeatureDomain(f, (), reps, tuple(range(len(codes_t))), (), codes_t)


def with_unlisted_codes(
    ens: Ensemble, f: int, dom: FeatureDomain, ranges: Iterable[tuple[float, float]]
) -> FeatureDomain:
    """Categorical feature f's domain ``dom`` (of codes, with no declared categories) with,
    inside each [lo, hi] of ``ranges`` (a query's bounds on f), a code no split lists in
    each interval of f's numeric thresholds that has one: the domain's own unlisted codes
    may lie outside those bounds, which would then leave the unlisted categories inside
    them out of the search."""
    listed, ordered_ths = _splits_on(ens, f)
    feat = ens.features[f]
    codes = set(dom.codes or ())
    for lo, hi in ranges:
        lo, hi = max(lo, feat.lb, 0.0), min(hi, feat.ub)
        if lo > hi:
            continue
        ifeat = Feature(feat.name, "integer", lo, hi)
        for j in range(len(ordered_ths) + 1):
            c = _unlisted_code(ens, ifeat, ordered_ths, j, listed)
            if c is not None:
                codes.add(int(c))
    return _with_codes(f, dom, codes)


def with_order_codes(
    ens: Ensemble, f: int, dom: FeatureDomain, ranges: Iterable[tuple[float, float]]
) -> FeatureDomain:
    """Categorical feature f's domain ``dom`` (of codes, with no declared categories) with
    the codes a relation between the inputs (``x1.f < x2.f``, ``!=``, ``<=``) needs: the
    unlisted categories are cut into runs of whole numbers by the codes the splits list,
    f's numeric thresholds and the ends of each [lo, hi] of ``ranges`` (the query's
    bounds on f), and each run holds its first two codes. Every code of a run is routed
    alike and lies in the same bounds, and runs keep their order, so any two categories
    compare as two of these codes do: the one unlisted code per interval of
    ``with_unlisted_codes`` would stand for categories below and above a listed code (a
    pair x1 = 5 listed, x2 = 8 unlisted meeting ``<=`` read as 5 <= 0), and for two
    different categories routed alike (``!=``) as one code."""
    listed, ordered_ths = _splits_on(ens, f)
    feat = ens.features[f]
    lo0, hi0 = max(feat.lb, 0.0), feat.ub
    starts = {lo0} | {c + 1.0 for c in listed}
    for lo, hi in ranges:
        starts |= {lo, math.floor(hi) + 1.0 if math.isfinite(hi) else hi}
    ifeat = Feature(feat.name, "integer", lo0, hi0)
    for j in range(len(ordered_ths) + 1):
        sp = cell_span(ens, ifeat, ordered_ths, j)
        if sp is not None:
            starts.add(sp[0])
    codes = set(dom.codes or ())
    for s in starts:
        if not math.isfinite(s):
            continue
        first = max(math.ceil(s), math.ceil(lo0))
        for c in (first, first + 1):
            if c <= hi0 and c not in listed:
                codes.add(int(c))
    return _with_codes(f, dom, codes)


def _with_codes(f: int, dom: FeatureDomain, codes: set[int]) -> FeatureDomain:
    """``dom`` where it holds exactly ``codes``, else feature f's domain of those codes."""
    if codes == set(dom.codes or ()):
        return dom
    codes_t = tuple(sorted(codes))
    reps = tuple(float(c) for c in codes_t)
    return FeatureDomain(f, (), reps, tuple(range(len(codes_t))), (), codes_t)


def _splits_on(ens: Ensemble, f: int) -> tuple[set[int], tuple[float, ...]]:
    """The codes f's categorical splits list, and its numeric thresholds in order."""
    listed: set[int] = set()
    ths: set[float] = set()
    for t in ens.trees:
        for n in np.flatnonzero(t.feature == f).tolist():
            if t.is_categorical(n):
                listed |= set(t.categories[n])
            else:
                ths.add(float(t.threshold[n]))
    return listed, tuple(sorted(ths))


def _unlisted_code(
    ens: Ensemble, feat: Feature, thresholds: Sequence[float], j: int, listed: set[int]
) -> float | None:
    """The smallest whole number of interval j within ``feat``'s bounds that no split
    lists, or None. Every unlisted code of the interval is routed as it is: with bounds
    that leave out 0 (``c in [3, 9]``), the smallest unlisted code overall would lie
    outside them, and the unlisted categories inside them would go unsearched."""
    sp = cell_span(ens, feat, thresholds, j)
    if sp is None:
        return None
    lo, hi = sp
    c = float(max(math.ceil(lo), 0)) if math.isfinite(lo) else 0.0
    for _ in range(len(listed) + 1):
        if c > hi:
            return None
        if int(c) not in listed and _admissible(ens, feat, thresholds, j, c):
            return c
        c += 1.0
    return None


def code_routes(ens: Ensemble, f: int, x: float) -> tuple[bool, ...]:
    """Where each split on feature f sends the value x ("yes" or not), tree by tree: two
    values with the same routes reach the same leaves wherever the rest agrees."""
    out = []
    for t in ens.trees:
        for n in np.flatnonzero(t.feature == f).tolist():
            if t.is_categorical(n):
                out.append(int(x) in t.categories[n])
            else:
                out.append(ens.test_holds(x, t.threshold[n]))
    return tuple(out)


def fitting_values(
    ens: Ensemble, feat: Feature, dom: FeatureDomain, j: int, prefer: Iterable[float] | None
) -> Iterator[float]:
    """The values of ``prefer``, in its order, that :func:`choose_value` may take in
    interval j (a category code's: those the model routes as it, within the bounds)."""
    if dom.codes is not None:
        routes = code_routes(ens, dom.feature, float(dom.codes[j]))
        for v in prefer if prefer is not None else ():
            v = float(v)
            if v.is_integer() and feat.admits(v) and code_routes(ens, dom.feature, v) == routes:
                yield v
        return
    for v in prefer if prefer is not None else ():
        if _admissible(ens, feat, dom.thresholds, j, float(v)):
            yield float(v)


def choose_value(
    ens: Ensemble, feat: Feature, dom: FeatureDomain, j: int, prefer: Iterable[float] | None = None
) -> float:
    """A value in interval j: one of ``prefer`` (e.g. data values) when possible. For a
    category code, a preferred code the model routes as it (every code, for a feature no
    split tests; every unlisted one, for the code standing for them) within the bounds."""
    fit = next(fitting_values(ens, feat, dom, j, prefer), None)
    if fit is not None:
        return fit
    if dom.codes is not None:
        return float(dom.codes[j])
    rep = dom.reps[j]
    if rep is None:
        raise ValueError(f"interval {j} of feature {feat.name!r} is empty")
    return rep
