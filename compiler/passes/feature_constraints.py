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
* a feature that may be missing: a bound or relation means "not NaN".

Soundness: a constraint never excludes a case that holds a valid pair. Whether an
interval can hold a value in [lo, hi] is decided on a hull of the interval widened by
two float32 steps (the library's rounding), so nothing feasible is cut; the rare
knife-edge case where the hull is non-empty but no routed value fits is caught by
``choose_constrained`` (no value found) and the witness check, never reported as an
answer. Which values go into the witness is ``choose_constrained`` (called by invert).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..domain import candidates, in_interval
from ..errors import InputError, closest
from ..ir import Linear
from .base import Compiled, Pass

LE, LT, EQ = "<=", "<", "=="
_FLIP = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "==": "=="}


def _index(ens, name) -> int:
    if isinstance(name, int):
        return name
    try:
        return ens.feature_index(name)
    except KeyError:
        if isinstance(name, str) and name.isdigit() and 0 <= int(name) < ens.n_features:
            return int(name)
        raise InputError(f"unknown feature {name!r}{closest(str(name), ens.feature_names)}") from None


def bounds_by_copy(enc) -> dict[tuple[int, int], tuple[float, float]]:
    """(feature, copy 0/1) -> (lo, hi): the intersection of the query's bounds and the
    feature's declared bounds. A feature outside the varied set has one value for both
    inputs, so its bounds on either copy apply to both."""
    ens, q = enc.ensemble, enc.query
    out: dict[tuple[int, int], tuple[float, float]] = {}
    for b in q.bounds:
        f = _index(ens, b.feature)
        copies = {c - 1 for c in b.copies}
        if any(c not in (0, 1) for c in copies):
            raise InputError(f"bound on {b.feature!r}: copies are 1 and 2, got {b.copies}")
        if f not in enc.varying:
            copies = {0, 1}
        for c in copies:
            lo, hi = out.get((f, c), (-math.inf, math.inf))
            out[(f, c)] = (max(lo, float(b.lo)), min(hi, float(b.hi)))
    for (f, c), (lo, hi) in list(out.items()):
        feat = ens.features[f]
        out[(f, c)] = (max(lo, feat.lb), min(hi, feat.ub))
    return out


def relations_of(enc) -> dict[int, list[tuple[int, int, str]]]:
    """feature -> [(L, R, kind)]: x_L.f kind x_R.f with kind in <=, <, == (copies 0/1)."""
    ens, q = enc.ensemble, enc.query
    out: dict[int, list[tuple[int, int, str]]] = {}
    for r in q.relations:
        f = _index(ens, r.feature)
        a, b, op = r.left - 1, r.right - 1, r.op
        if {a, b} != {0, 1}:
            raise InputError(f"relation on {r.feature!r} must compare x1 with x2 (got x{r.left} and x{r.right})")
        if op not in _FLIP:
            raise InputError(f"unknown comparison {op!r} (use <=, <, >=, >, ==)")
        if op in (">=", ">"):
            a, b, op = b, a, _FLIP[op]
        out.setdefault(f, []).append((a, b, op))
    return out


def _hull(ens, feat, dom, j: int, lo: float, hi: float) -> tuple[float, float] | None:
    """An interval containing every admissible value of interval j within [lo, hi]
    (None when certainly empty)."""
    if dom.codes is not None:
        codes = [c for c in dom.codes if lo <= c <= hi]
        return (float(min(codes)), float(max(codes))) if codes else None
    a, b = dom.edges(j)
    if ens.cast == "float32":
        if math.isfinite(a):
            a32 = np.float32(a)
            a = float(np.nextafter(np.nextafter(a32, np.float32(-np.inf)), np.float32(-np.inf)))
        if math.isfinite(b):
            b32 = np.float32(b)
            b = float(np.nextafter(np.nextafter(b32, np.float32(np.inf)), np.float32(np.inf)))
    L, H = max(a, lo, feat.lb), min(b, hi, feat.ub)
    if feat.integral:
        if math.isfinite(L):
            L = float(math.ceil(L))
        if math.isfinite(H):
            H = float(math.floor(H))
    if L > H:
        return None
    return (L, H)


def _same_cell_possible(kind: str, hl, hr) -> bool:
    if hl is None or hr is None:
        return False
    if kind == LE:
        return hl[0] <= hr[1]
    if kind == LT:
        return hl[0] < hr[1]
    return max(hl[0], hr[0]) <= min(hl[1], hr[1])


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


def _name(ens, f: int) -> str:
    return ens.feature_names[f]


def build_constraints(enc) -> list[Linear]:
    ens = enc.ensemble
    nan = getattr(enc, "nan", ({}, {}))
    onehot = getattr(enc, "onehot", ({}, {}))
    out: list[Linear] = []
    bnds = bounds_by_copy(enc)
    rels = relations_of(enc)

    def not_nan(f: int, c: int) -> None:
        m = nan[c].get(f)
        if m is not None:
            out.append(Linear((m,), (1.0,), "==", 0.0, ("fc-notnan", c, f)))

    # ---- bounds ----
    for (f, c), (lo, hi) in sorted(bnds.items()):
        feat, dom = ens.features[f], enc.domains[f]
        who = f"x{c + 1}.{_name(ens, f)}" if f in enc.varying else _name(ens, f)
        if lo > hi:
            raise InputError(f"the bounds on {who} leave no value (declared [{feat.lb:g}, {feat.ub:g}], "
                             f"asked [{lo:g}, {hi:g}])")
        not_nan(f, c)
        hots = onehot[c].get(f)
        if dom.codes is not None:
            ok = [lo <= code <= hi for code in dom.codes]
            if not any(ok):
                raise InputError(f"no category code of {who} lies in [{lo:g}, {hi:g}]")
            if hots is not None:
                for code_ok, var in zip(ok, hots):
                    if not code_ok:
                        out.append(Linear((var,), (1.0,), "==", 0.0, ("fc-bound", c, f)))
            continue
        allowed = [r for r, j in enumerate(dom.valid) if _hull(ens, feat, dom, j, lo, hi) is not None]
        if not allowed:
            raise InputError(f"no admissible value of {who} lies in [{lo:g}, {hi:g}] "
                             f"({feat.kind}, declared [{feat.lb:g}, {feat.ub:g}])")
        qs = enc.pred[c][f]
        n_valid = len(dom.valid)
        if not qs:
            continue
        rlo, rhi = allowed[0], allowed[-1]
        for r in range(1, rlo + 1):  # rank >= rlo: q_1..q_rlo false
            out.append(Linear((qs[r - 1],), (1.0,), "==", 0.0, ("fc-bound", c, f, "lo", r)))
        for r in range(rhi + 1, n_valid):  # rank <= rhi: q_{rhi+1}.. true
            out.append(Linear((qs[r - 1],), (1.0,), "==", 1.0, ("fc-bound", c, f, "hi", r)))
        for r in set(range(rlo, rhi + 1)) - set(allowed):  # a gap: rank != r
            vs, cs, const = _rank_is(qs, r, n_valid)
            out.append(Linear(tuple(vs), tuple(cs), "<=", 1.0 - const, ("fc-bound", c, f, "ne", r)))

    # ---- relations ----
    for f, items in sorted(rels.items()):
        feat, dom = ens.features[f], enc.domains[f]
        name = _name(ens, f)
        if f not in enc.varying:
            for a, b, kind in items:
                if kind == LT:
                    raise InputError(f"x{a + 1}.{name} < x{b + 1}.{name} cannot hold: {name!r} is not varied, "
                                     "so both inputs share its value")
            continue
        for c in (0, 1):
            not_nan(f, c)
        full = (-math.inf, math.inf)
        for a, b, kind in items:
            tag = ("fc-rel", f, a, b, kind)
            if dom.codes is not None:
                ha, hb = onehot[a].get(f), onehot[b].get(f)
                if ha is None or hb is None:
                    continue  # no tree tests it: the values are chosen freely (choose_constrained)
                if kind == EQ:
                    for va, vb in zip(ha, hb):
                        out.append(Linear((va, vb), (1.0, -1.0), "==", 0.0, tag))
                else:
                    codes = [float(x) for x in dom.codes]
                    out.append(Linear(tuple(ha) + tuple(hb), tuple(codes) + tuple(-x for x in codes), "<=",
                                      -1.0 if kind == LT else 0.0, tag))
                continue
            qa, qb = enc.pred[a][f], enc.pred[b][f]
            n_valid = len(dom.valid)
            for r in range(1, n_valid):
                if kind == EQ:
                    out.append(Linear((qa[r - 1], qb[r - 1]), (1.0, -1.0), "==", 0.0, tag + (r,)))
                else:  # rank_a <= rank_b  <=>  q^b_r implies q^a_r
                    out.append(Linear((qb[r - 1], qa[r - 1]), (1.0, -1.0), "<=", 0.0, tag + (r,)))
            lo_a, hi_a = bnds.get((f, a), full)
            lo_b, hi_b = bnds.get((f, b), full)
            possible_any = False
            for r, j in enumerate(dom.valid):
                ha = _hull(ens, feat, dom, j, lo_a, hi_a)
                hb = _hull(ens, feat, dom, j, lo_b, hi_b)
                if ha is None or hb is None:
                    continue  # the bounds already exclude this interval for one copy
                if _same_cell_possible(kind, ha, hb):
                    possible_any = True
                    continue
                if n_valid == 1:
                    continue
                va, ca, ka = _rank_is(qa, r, n_valid)
                vb, cb, kb = _rank_is(qb, r, n_valid)
                out.append(Linear(tuple(va + vb), tuple(ca + cb), "<=", 3.0 - ka - kb, tag + ("cell", r)))
            if n_valid == 1 and not possible_any:
                raise InputError(f"x{a + 1}.{name} {kind} x{b + 1}.{name} cannot hold: every value of "
                                 f"{name!r} routes the same way and the bounds leave no such pair")
    return out


class FeatureConstraints(Pass):
    """Bounds and relations of the query on its inputs (see the module docstring)."""

    name = "feature-constraints"

    def accepts(self, compiled: Compiled) -> bool:
        q = compiled.encoding.query
        return bool(q.bounds or q.relations)

    def apply(self, compiled: Compiled):
        cons = build_constraints(compiled.encoding)
        problem = compiled.problem.with_constraints(cons).with_note("feature_constraints", len(cons))
        return compiled.with_problem(problem), None


# ---------------------------------------------------------------------------------------
# the witness side: values inside the bounds that meet the relations
# ---------------------------------------------------------------------------------------


def _cell_values(enc, f: int, c: int, j: int, lo: float, hi: float, extra=()) -> list[float]:
    """Admissible values of feature f for copy c in its chosen cell j, within [lo, hi]."""
    ens = enc.ensemble
    feat, dom = ens.features[f], enc.domains[f]
    if j is None or j < 0:
        return []
    onehot = getattr(enc, "onehot", ({}, {}))
    if dom.codes is not None:
        if onehot[c].get(f) is not None or len(dom.codes) <= 1:
            vals = [float(dom.codes[j])] if j < len(dom.codes) else []
        else:
            vals = [float(x) for x in dom.codes]
        return [v for v in vals if lo <= v <= hi]
    L, H = max(lo, feat.lb), min(hi, feat.ub)
    if L > H:
        return []
    try:
        fb = replace(feat, lb=L, ub=H)
    except ValueError:
        return []
    a, b = dom.edges(j)
    raw = list(extra) + candidates(a, b, fb)
    if math.isfinite(L) and math.isfinite(H):
        raw += [L, H, (L + H) / 2, L + (H - L) / 4, H - (H - L) / 4]
    out, seen = [], set()
    for v in raw:
        for w in (v, float(ens.cast_value(v)) if math.isfinite(v) else v):
            w = float(w)
            if w in seen or not math.isfinite(w):
                continue
            seen.add(w)
            if not (L <= w <= H) or (feat.integral and w != math.floor(w)):
                continue
            if in_interval(ens, dom.thresholds, j, w):
                out.append(w)
    return out


def _holds(kind: str, u: float, v: float) -> bool:
    return u <= v if kind == LE else (u < v if kind == LT else u == v)


def choose_constrained(enc, xs, intervals, prefer=None) -> None:
    """Adjust x1, x2 (in place) so that every bound and relation holds, keeping each value
    in its chosen cell (so the pair still reaches the same leaves). Leaves a value as it is
    when no fitting one is found; the witness check then reports the problem."""
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
        pf = list(prefer.get(f, ())) if prefer else []

        def ok(u: float, v: float) -> bool:
            return (b0[0] <= u <= b0[1] and b1[0] <= v <= b1[1]
                    and all(_holds(k, (u, v)[a], (u, v)[b]) for a, b, k in items))

        if ok(*cur):
            continue
        j0, j1 = intervals[0].get(f), intervals[1].get(f)
        if f not in enc.varying:
            lo, hi = max(b0[0], b1[0]), min(b0[1], b1[1])
            vals = _cell_values(enc, f, 0, j0, lo, hi, pf + [cur[0]])
            if vals:
                xs[0][f] = xs[1][f] = vals[0]
            continue
        v0 = _cell_values(enc, f, 0, j0, *b0, pf + [cur[0]])
        v1 = _cell_values(enc, f, 1, j1, *b1, pf + [cur[1]])
        if j0 == j1:  # values both copies may take, for == and <= in one cell
            both = _cell_values(enc, f, 0, j0, max(b0[0], b1[0]), min(b0[1], b1[1]), pf)
            v0, v1 = v0 + both, v1 + both
        pair = next(((u, v) for u in v0 for v in v1 if ok(u, v)), None)
        if pair is not None:
            xs[0][f], xs[1][f] = pair


def constraint_violations(ens, q, x1, x2) -> list[str]:
    """Which bounds and relations of the query a concrete pair breaks (empty: none)."""
    out = []
    xs = (x1, x2)
    for b in q.bounds:
        f = _index(ens, b.feature)
        for c in b.copies:
            v = float(xs[c - 1][f])
            if not (b.lo <= v <= b.hi):
                out.append(f"x{c}.{b.feature} = {v:g} is outside [{b.lo:g}, {b.hi:g}]")
    for r in q.relations:
        f = _index(ens, r.feature)
        u, v = float(xs[r.left - 1][f]), float(xs[r.right - 1][f])
        holds = {"<=": u <= v, "<": u < v, ">=": u >= v, ">": u > v, "==": u == v}.get(r.op, False)
        if not holds:
            out.append(f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature} fails ({u:g} vs {v:g})")
    return out
