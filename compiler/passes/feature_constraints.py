"""Extra constraints of a query on its inputs: bounds ``lo <= x_c.f <= hi`` and relations
``x1.f <op> x2.f`` (``Query.bounds`` / ``Query.relations``).

They are part of the question, not an optimisation: the chain always runs this pass
when a query has any (``accepts``). They are written over the encoding's per-feature
variables, so they stay exact at the level the encoding reasons at (threshold intervals):

* numeric feature f, copy c: ``rank`` is the index of the chosen valid interval, and
  ``q_r`` ("rank < r") is its r-th predicate. A bound keeps the ranks whose interval can
  hold a value in [lo, hi]: ``q_r = 0`` below the first such rank, ``q_r = 1`` above the
  last, and "rank != r" for any gap in between.
* a relation ``x_L.f <= x_R.f`` needs ``rank_L <= rank_R`` (two values in different
  intervals are ordered like the intervals), i.e. ``q^R_r <= q^L_r`` for every r (this
  implies the sum form ``sum_r q^L_r >= sum_r q^R_r`` and is tighter). When both land
  in the SAME interval, the relation also needs two values inside it: for ``<`` two
  distinct ones (impossible in a one-value interval, e.g. a binary feature), and with
  per-copy bounds the bounds must allow it; those (interval) cases are excluded with
  ``not (rank_L == r and rank_R == r)``. ``==`` is ``q^L_r = q^R_r`` (plus a common value).
* categorical features (one-hot over codes): a bound zeroes the codes outside it; a
  relation compares the chosen codes (``sum code*o^L - sum code*o^R <= 0``, ``<= -1``
  for ``<``, equal one-hots for ``==``).
* a feature that may be missing: a bound, or a relation on a varied feature, means "not
  NaN". A relation on a feature outside vary (``<=``, ``>=``, ``==``; ``<``, ``>``, ``!=``
  are input errors) always holds, the two inputs sharing its value, missing or not
  (docs/language.md).

Exactness: whether interval j holds an admissible value in [lo, hi] is decided exactly
(``span``): the inputs the library routes into an interval form a range of float64
values whose ends ``first_no`` finds by binary search over consecutive floats with the
library's own comparison (float32 rounding included); integral features round the ends
inward. So a bound or relation never cuts a feasible case nor keeps an infeasible one
(up to the domain's own choice of which intervals are empty). ``choose_constrained``
(called by invert) then picks values inside the chosen intervals that meet the bounds
and relations, and the pipeline re-checks every witness against them
(``constraint_violations``) before reporting it. Tested against brute force in
tests/compiler/test_feature_constraints.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..domain import FeatureDomain, candidates
from ..edges import first_no
from ..edges import ordered as _ord
from ..edges import unordered as _unord
from ..encode import Encoding, resolve_features
from ..ensemble import Ensemble, Feature
from ..errors import InputError
from ..ir import Linear, Sense
from ..query import EQ, LE, LT, NE, Query, feature_index, relations_by_feature
from ..query import bounds_by_copy as query_bounds_by_copy
from ..query import check_relations_within_bounds as query_check_relations_within_bounds
from .base import Compiled, Pass


def bounds_by_copy(enc: Encoding) -> dict[tuple[int, int], tuple[float, float]]:
    """``query.bounds_by_copy`` of an encoding's query."""
    return query_bounds_by_copy(enc.ensemble, enc.query, enc.varying)


def relations_of(enc: Encoding) -> dict[int, list[tuple[int, int, str]]]:
    """``query.relations_by_feature`` of an encoding's query."""
    return relations_by_feature(enc.ensemble, enc.query)


def span(
    ens: Ensemble, feat: Feature, dom: FeatureDomain, j: int, lo: float, hi: float
) -> tuple[float, float] | None:
    """The smallest and largest admissible input in interval j (categorical: code j)
    that also lies in [lo, hi]; None when there is none. Exact: the inputs the library
    routes into an interval form a range of float64 values, computed by ``first_no``."""
    L, H = max(lo, feat.lb), min(hi, feat.ub)
    if dom.codes is not None:
        codes = [c for c in dom.codes if L <= c <= H]
        return (float(min(codes)), float(max(codes))) if codes else None
    K = len(dom.thresholds)
    if j > 0:
        L = max(L, first_no(ens, dom.thresholds[j - 1]))
    if j < K:
        H = min(H, _unord(_ord(first_no(ens, dom.thresholds[j])) - 1))
    if feat.integral:
        if math.isfinite(L):
            L = float(math.ceil(L))
        if math.isfinite(H):
            H = float(math.floor(H))
    if not L <= H or (L > 0 and math.isinf(L)) or (H < 0 and math.isinf(H)):  # inputs are finite
        return None
    return (L, H)


def same_cell_possible(kind: str, sa, sb) -> bool:
    """Whether spans ``sa`` (copy a's values in one interval) and ``sb`` (copy b's in the
    same) hold u, v with ``u kind v`` (kind <=, < or ==)."""
    if sa is None or sb is None:
        return False
    if kind == LE:
        return sa[0] <= sb[1]
    if kind == LT:
        return sa[0] < sb[1]
    return max(sa[0], sb[0]) <= min(sa[1], sb[1])


def _rank_is(qs: tuple[int, ...], r: int, n_valid: int):
    """(vars, coefs, const) of (1 - q_r) + q_{r+1}: equals 2 exactly when rank == r."""
    vs, cs, const = [], [], 0.0
    # q_r: constant false when r == 0
    if r >= 1:
        vs.append(qs[r - 1])
        cs.append(-1.0)
    const += 1.0
    # q_{r+1}: constant true when r + 1 == n_valid
    if r + 1 >= n_valid:
        const += 1.0
    else:
        vs.append(qs[r])
        cs.append(1.0)
    return vs, cs, const


def check_relations_within_bounds(
    enc: Encoding,
    rels: dict[int, list[tuple[int, int, str]]] | None = None,
    bnds: dict[tuple[int, int], tuple[float, float]] | None = None,
) -> None:
    """``query.check_relations_within_bounds`` of an encoding's query."""
    rels = relations_of(enc) if rels is None else rels
    bnds = bounds_by_copy(enc) if bnds is None else bnds
    query_check_relations_within_bounds(enc.ensemble, enc.varying, rels, bnds)


# per copy: feature -> its "is missing" variable / its one-hot variables
NanVars = tuple[dict[int, int], dict[int, int]]
OneHotVars = tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]
Bounds = dict[tuple[int, int], tuple[float, float]]


def build_constraints(enc: Encoding) -> list[Linear]:
    """The linear constraints of the query's bounds, then of its relations."""
    nan = getattr(enc, "nan", ({}, {}))
    onehot = getattr(enc, "onehot", ({}, {}))
    out: list[Linear] = []
    bnds = bounds_by_copy(enc)
    rels = relations_of(enc)
    for (f, c), (lo, hi) in sorted(bnds.items()):
        out += _bound_constraints(enc, f, c, lo, hi, nan, onehot)
    check_relations_within_bounds(enc, rels, bnds)
    for f, items in sorted(rels.items()):
        out += _relation_constraints(enc, f, items, bnds, nan, onehot)
    return out


def _not_nan(nan: NanVars, f: int, c: int) -> list[Linear]:
    """Copy ``c``'s feature ``f`` is not missing (when it may be)."""
    m = nan[c].get(f)
    return [] if m is None else [Linear((m,), (1.0,), Sense.EQ, 0.0, ("fc-notnan", c, f))]


def admissible_ranks(
    enc: Encoding, f: int, c: int, lo: float, hi: float, dom: FeatureDomain
) -> list[int]:
    """The ranks of ``dom`` (f's domain: its category codes, or its valid intervals) that
    hold an admissible value of copy ``c``'s feature ``f`` within [lo, hi]. Raises
    InputError when there is none: the bound leaves that input no value, whichever
    backend is asked (the box search reads it alike, search/pair_boxes.py)."""
    ens = enc.ensemble
    feat = ens.features[f]
    who = f"x{c + 1}.{ens.feature_names[f]}" if f in enc.varying else ens.feature_names[f]
    if lo > hi:
        raise InputError(
            f"the bounds on {who} leave no value (declared [{feat.lb:g}, {feat.ub:g}], "
            f"asked [{lo:g}, {hi:g}])"
        )
    if dom.codes is not None:
        out = [r for r, code in enumerate(dom.codes) if lo <= code <= hi]
        if not out:
            raise InputError(f"no category code of {who} lies in [{lo:g}, {hi:g}]")
        return out
    out = [r for r, j in enumerate(dom.valid) if span(ens, feat, dom, j, lo, hi) is not None]
    if not out:
        raise InputError(
            f"no admissible value of {who} lies in [{lo:g}, {hi:g}] "
            f"({feat.kind}, declared [{feat.lb:g}, {feat.ub:g}])"
        )
    return out


def _bound_constraints(
    enc: Encoding, f: int, c: int, lo: float, hi: float, nan: NanVars, onehot: OneHotVars
) -> list[Linear]:
    """Copy ``c``'s feature ``f`` lies in [lo, hi]."""
    dom = enc.domains[f]
    allowed = admissible_ranks(enc, f, c, lo, hi, dom)
    out = _not_nan(nan, f, c)
    hots = onehot[c].get(f)
    if dom.codes is not None:
        ok = [lo <= code <= hi for code in dom.codes]
        if hots is not None:
            for code_ok, var in zip(ok, hots):
                if not code_ok:
                    out.append(Linear((var,), (1.0,), Sense.EQ, 0.0, ("fc-bound", c, f)))
        return out
    qs = enc.pred[c][f]
    n_valid = len(dom.valid)
    if not qs:
        return out
    rlo, rhi = allowed[0], allowed[-1]
    for r in range(1, rlo + 1):  # rank >= rlo: q_1..q_rlo false
        out.append(Linear((qs[r - 1],), (1.0,), Sense.EQ, 0.0, ("fc-bound", c, f, "lo", r)))
    for r in range(rhi + 1, n_valid):  # rank <= rhi: q_{rhi+1}.. true
        out.append(Linear((qs[r - 1],), (1.0,), Sense.EQ, 1.0, ("fc-bound", c, f, "hi", r)))
    for r in set(range(rlo, rhi + 1)) - set(allowed):  # a gap: rank != r
        vs, cs, const = _rank_is(qs, r, n_valid)
        out.append(Linear(tuple(vs), tuple(cs), Sense.LE, 1.0 - const, ("fc-bound", c, f, "ne", r)))
    return out


def _relation_constraints(
    enc: Encoding,
    f: int,
    items: list[tuple[int, int, str]],
    bnds: Bounds,
    nan: NanVars,
    onehot: OneHotVars,
) -> list[Linear]:
    """The relations ``items`` (copy a, copy b, kind) between the two copies of ``f``."""
    check_relation_kinds(enc, f, items)
    if f not in enc.varying:
        return []
    out = _not_nan(nan, f, 0) + _not_nan(nan, f, 1)
    for a, b, kind in items:
        tag = ("fc-rel", f, a, b, kind)
        if enc.domains[f].codes is not None:
            ha, hb = onehot[a].get(f), onehot[b].get(f)
            if ha is not None and hb is not None:  # else no tree tests it: chosen freely
                out += _categorical_relation(enc.domains[f].codes, ha, hb, kind, tag)
            continue
        out += _ordered_relation(enc, f, a, b, kind, bnds, tag)
    return out


def check_relation_kinds(enc: Encoding, f: int, items: list[tuple[int, int, str]]) -> None:
    """The input errors of relations ``items`` on feature f whatever the bounds: ``!=``
    on a feature that is not categorical, ``<``, ``>`` or ``!=`` on a feature outside
    vary (both inputs share its value)."""
    name = enc.ensemble.feature_names[f]
    for _, _, kind in items:
        if kind == NE and enc.domains[f].codes is None:
            raise InputError(f"x1.{name} != x2.{name}: '!=' compares categorical features only")
    if f not in enc.varying:
        for a, b, kind in items:
            if kind in (LT, NE):
                raise InputError(
                    f"x{a + 1}.{name} {kind} x{b + 1}.{name} cannot hold: {name!r} is not "
                    "varied, so both inputs share its value"
                )


def _categorical_relation(
    codes: Sequence[float], ha: Sequence[int], hb: Sequence[int], kind: str, tag: tuple
) -> list[Linear]:
    """A relation between two one-hot encoded copies of a categorical feature."""
    if kind == EQ:
        return [Linear((va, vb), (1.0, -1.0), Sense.EQ, 0.0, tag) for va, vb in zip(ha, hb)]
    if kind == NE:  # never the same code in both copies
        return [Linear((va, vb), (1.0, 1.0), Sense.LE, 1.0, tag) for va, vb in zip(ha, hb)]
    cs = [float(x) for x in codes]
    rhs = -1.0 if kind == LT else 0.0
    return [Linear(tuple(ha) + tuple(hb), tuple(cs) + tuple(-x for x in cs), Sense.LE, rhs, tag)]


def _ordered_relation(
    enc: Encoding, f: int, a: int, b: int, kind: str, bnds: Bounds, tag: tuple
) -> list[Linear]:
    """A relation between copies a and b of an ordered feature, on their interval ranks;
    within one interval, a cell the relation cannot hold in is excluded."""
    ens = enc.ensemble
    feat, dom = ens.features[f], enc.domains[f]
    qa, qb = enc.pred[a][f], enc.pred[b][f]
    n_valid = len(dom.valid)
    out: list[Linear] = []
    for r in range(1, n_valid):
        if kind == EQ:
            out.append(Linear((qa[r - 1], qb[r - 1]), (1.0, -1.0), Sense.EQ, 0.0, tag + (r,)))
        else:  # rank_a <= rank_b  <=>  q^b_r implies q^a_r
            out.append(Linear((qb[r - 1], qa[r - 1]), (1.0, -1.0), Sense.LE, 0.0, tag + (r,)))
    full = (-math.inf, math.inf)
    lo_a, hi_a = bnds.get((f, a), full)
    lo_b, hi_b = bnds.get((f, b), full)
    possible_any = False
    for r, j in enumerate(dom.valid):
        ha = span(ens, feat, dom, j, lo_a, hi_a)
        hb = span(ens, feat, dom, j, lo_b, hi_b)
        if ha is None or hb is None:
            continue  # the bounds already exclude this interval for one copy
        if same_cell_possible(kind, ha, hb):
            possible_any = True
            continue
        if n_valid == 1:
            continue
        va, ca, ka = _rank_is(qa, r, n_valid)
        vb, cb, kb = _rank_is(qb, r, n_valid)
        out.append(
            Linear(tuple(va + vb), tuple(ca + cb), Sense.LE, 3.0 - ka - kb, tag + ("cell", r))
        )
    if n_valid == 1 and not possible_any:
        name = ens.feature_names[f]
        raise InputError(
            f"x{a + 1}.{name} {kind} x{b + 1}.{name} cannot hold: every value of "
            f"{name!r} routes the same way and the bounds leave no such pair"
        )
    return out


class FeatureConstraints(Pass):
    """Bounds and relations of the query on its inputs (see the module docstring)."""

    name = "feature-constraints"

    def accepts(self, compiled: Compiled) -> bool:
        q = compiled.encoding.query
        return bool(q.bounds or q.relations)

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        cons = build_constraints(compiled.encoding)
        problem = compiled.problem.with_constraints(cons).with_notes(feature_constraints=len(cons))
        return compiled.with_problem(problem), None


# ---------------------------------------------------------------------------------------
# the witness side: values inside the bounds that meet the relations
# ---------------------------------------------------------------------------------------


def _cell_span(enc, f: int, c: int, j, lo: float, hi: float):
    """The span of admissible values of feature f for copy c in its chosen cell j."""
    ens = enc.ensemble
    feat, dom = ens.features[f], enc.domains[f]
    if j is None or j < 0:
        return None  # NaN
    if dom.codes is not None:
        onehot = getattr(enc, "onehot", ({}, {}))
        if onehot[c].get(f) is not None or len(dom.codes) <= 1:  # the chosen code only
            code = float(dom.codes[j]) if j < len(dom.codes) else math.nan
            return (code, code) if max(lo, feat.lb) <= code <= min(hi, feat.ub) else None
        return span(ens, feat, dom, j, lo, hi)  # no tree tests it: any code
    return span(ens, feat, dom, j, lo, hi)


def _nice_values(enc, f: int, sp, extra=()) -> list[float]:
    """Values in the span, readable ones first (then the exact ends)."""
    if sp is None:
        return []
    L, H = sp
    feat = enc.ensemble.features[f]
    try:
        fb = replace(feat, lb=L, ub=H)
    except ValueError:
        return []
    dom = enc.domains[f]
    raw = list(extra)
    if dom.codes is not None:
        raw += [float(c) for c in dom.codes]
    raw += candidates(L, H, fb) if math.isfinite(L) or math.isfinite(H) else [0.0]
    raw += [L, H]
    out, seen = [], set()
    for v in raw:
        v = float(v)
        if (
            v in seen
            or not math.isfinite(v)
            or not (L <= v <= H)
            or (feat.integral and v != math.floor(v))
        ):
            continue
        seen.add(v)
        out.append(v)
    return out


def _holds(kind: str, u: float, v: float) -> bool:
    return {LE: u <= v, LT: u < v, EQ: u == v, NE: u != v}[kind]


def choose_constrained(
    enc: Encoding,
    xs: Sequence[np.ndarray],
    intervals: Sequence[dict[int, int]],
    prefer: Mapping[int, Sequence[float]] | None = None,
) -> None:
    """Adjust x1, x2 (in place) so that every bound and relation holds, keeping each value
    in its chosen cell (so the pair still reaches the same leaves). Leaves a value as it is
    when no fitting one exists (the pass makes that impossible); the witness check would
    then report the problem."""
    q = enc.query
    if not (q.bounds or q.relations):
        return
    bnds = bounds_by_copy(enc)
    rels = relations_of(enc)
    full = (-math.inf, math.inf)
    for f in sorted({f for f, _ in bnds} | set(rels)):
        items = rels.get(f, [])
        cur = (float(xs[0][f]), float(xs[1][f]))
        b0, b1 = bnds.get((f, 0), full), bnds.get((f, 1), full)
        pf = [float(v) for v in prefer.get(f, ())] if prefer else []
        j0, j1 = intervals[0].get(f), intervals[1].get(f)

        def ok(u: float, v: float, b0=b0, b1=b1, items=items) -> bool:
            return (
                math.isfinite(u)
                and math.isfinite(v)
                and b0[0] <= u <= b0[1]
                and b1[0] <= v <= b1[1]
                and all(_holds(k, (u, v)[a], (u, v)[b]) for a, b, k in items)
            )

        if ok(*cur):
            continue
        if f in enc.varying and (j0 == -1 or j1 == -1):
            _fit_the_present_copy(enc, f, xs, (j0, j1), (b0, b1), pf)
            continue
        if f not in enc.varying:
            sp = _cell_span(enc, f, 0, j0, max(b0[0], b1[0]), min(b0[1], b1[1]))
            vals = _nice_values(enc, f, sp, pf + [cur[0]])
            if vals:
                xs[0][f] = xs[1][f] = vals[0]
            continue
        s0, s1 = _cell_span(enc, f, 0, j0, *b0), _cell_span(enc, f, 1, j1, *b1)
        v0 = _nice_values(enc, f, s0, pf + [cur[0]])
        v1 = _nice_values(enc, f, s1, pf + [cur[1]])
        if s0 is not None and s1 is not None:  # a value both may take (for ==)
            common = max(s0[0], s1[0])
            if common <= min(s0[1], s1[1]):
                v0.append(common)
                v1.append(common)
        pair = next(((u, v) for u in v0 for v in v1 if ok(u, v)), None)
        if pair is None and s0 is not None and s1 is not None:
            pair = _exact_pair(items, s0, s1, enc.ensemble.features[f].integral)
        if pair is not None and ok(*pair):
            xs[0][f], xs[1][f] = pair


def _fit_the_present_copy(enc, f: int, xs, cells, bounds, pf: list[float]) -> None:
    """A varied feature one copy of which is missing (cell -1): that copy has no bound and
    no relation on f (the pass asks "not missing" of both), so the other copy's value is
    chosen alone, inside its bounds and its cell."""
    for c in (0, 1):
        j, (lo, hi) = cells[c], bounds[c]
        if j == -1 or lo <= float(xs[c][f]) <= hi:
            continue
        vals = _nice_values(enc, f, _cell_span(enc, f, c, j, lo, hi), pf + [float(xs[c][f])])
        if vals:
            xs[c][f] = vals[0]


def _exact_pair(items, s0, s1, integral: bool):
    """A pair (x1, x2) in the spans meeting the feature's (single, normalised) relation,
    built from the span ends; infinite ends are first replaced by far finite values."""
    ends = [abs(x) for sp in (s0, s1) for x in sp if math.isfinite(x)]
    M = float(math.ceil(1.0 + max(ends, default=0.0)))
    spans = [
        tuple(-2 * M if x == -math.inf else (2 * M if x == math.inf else x) for x in sp)
        for sp in (s0, s1)
    ]
    if not items:
        return spans[0][0], spans[1][0]
    a, b, kind = items[0]
    (La, Ha), (Lb, Hb) = spans[a], spans[b]
    up = (lambda x: x + 1.0) if integral else (lambda x: math.nextafter(x, math.inf))
    down = (lambda x: x - 1.0) if integral else (lambda x: math.nextafter(x, -math.inf))
    if kind == EQ:
        c = max(La, Lb)
        if c > min(Ha, Hb):
            return None
        u = v = c
    elif kind == LE:
        if La > Hb:
            return None
        v = max(Lb, La)
        u = min(Ha, v)
    else:
        if not La < Hb:
            return None
        v = max(Lb, up(La))
        u = min(Ha, down(v))
    out = [0.0, 0.0]
    out[a], out[b] = u, v
    return tuple(out)


def constraint_violations(ens: Ensemble, q: Query, x1: np.ndarray, x2: np.ndarray) -> list[str]:
    """Which bounds and relations of the query a concrete pair breaks (empty: none)."""
    out = []
    xs = (x1, x2)
    varied = resolve_features(ens, q.vary)
    for b in q.bounds:
        f = feature_index(ens, b.feature)
        for c in b.copies:
            v = float(xs[c - 1][f])
            if not (b.lo <= v <= b.hi):
                out.append(f"x{c}.{b.feature} = {v:g} is outside [{b.lo:g}, {b.hi:g}]")
    for r in q.relations:
        f = feature_index(ens, r.feature)
        if f not in varied:  # both inputs share its value: <=, >=, == hold, missing too
            if r.op in ("<", ">", "!="):  # and these never do (an input error where asked)
                out.append(f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature} fails (shared)")
            continue
        u, v = float(xs[r.left - 1][f]), float(xs[r.right - 1][f])
        holds = {
            "<=": u <= v,
            "<": u < v,
            ">=": u >= v,
            ">": u > v,
            "==": u == v,
            "!=": u != v,
        }.get(r.op, False)
        if not holds:
            out.append(
                f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature} fails ({u:g} vs {v:g})"
            )
    return out
