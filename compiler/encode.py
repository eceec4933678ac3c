"""Kantchelian's MILP encoding of a tree ensemble, twice, for a sensitivity query.

Two copies of the encoding describe x1 and x2. Predicates of features outside the
varied set F are *shared* variables (the paper's Eq. same, applied by construction);
predicates of varied features exist once per copy.

Per feature, predicate q_r means "x lies in one of the first r non-empty threshold
intervals" (see ``domain.py``); a split node at threshold t_k tests q_{rank_at[k]}, where
q_0 is constant false and q_last constant true. Consistency between a feature's
predicates (q_r <= q_{r+1}) is *not* added here: the PredicateOrdering pass (or its
pairwise fallback) adds it, so the pipeline must always run one of the two.

Per tree and copy: one boolean per leaf, exactly one leaf is chosen, and each split
node links its leaves to its predicate (Eq. root_const / non_root_const). The gap
constraints (Gap-bin / Gap-multi) are added, relaxed by ``relax`` so that an
"insensitive" proof also covers the library's float32 arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .domain import FeatureDomain, build_domain
from .ensemble import Ensemble
from .errors import InputError, closest
from .ir import ExactlyOne, Implication, Linear, Problem, ProblemBuilder
from .query import Condition, Query, resolve_condition

TRUE, FALSE = "T", "F"  # constant predicates


@dataclass(frozen=True, eq=False)
class Encoding:
    """What passes, invert and replay need to know about an encoded query."""

    ensemble: Ensemble
    query: Query
    condition: Condition
    varying: frozenset[int]
    domains: dict[int, FeatureDomain]
    # pred[c][f] = tuple of variable indices q_1..q_{n_free} for copy c (0 or 1)
    pred: tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]
    # leaves[c][t] = dict leaf node -> variable index
    leaves: tuple[tuple[dict[int, int], ...], tuple[dict[int, int], ...]]
    unaffected: tuple[frozenset[int], ...]  # per tree: leaves with no varied ancestor
    # the two gap rows whose sum the Aff/Obj passes use, as per-leaf coefficients:
    # pair[c][t][leaf] = coefficient, plus a constant and the (relaxed) right-hand side.
    pair: tuple[tuple[dict[int, float], ...], tuple[dict[int, float], ...]] | None
    pair_const: float
    pair_rhs: float
    relax: float  # by how much each gap row was relaxed
    stats: dict = field(default_factory=dict)

    def predicate(self, copy: int, f: int, rank: int):
        """Variable index of q_rank for copy (0/1), or the constants TRUE / FALSE."""
        dom = self.domains[f]
        if rank <= 0:
            return FALSE
        if rank >= len(dom.valid):
            return TRUE
        return self.pred[copy][f][rank - 1]


def resolve_features(ens: Ensemble, names) -> frozenset[int]:
    out = set()
    for n in names:
        if isinstance(n, int) or (isinstance(n, str) and n.isdigit() and n not in ens.feature_names):
            i = int(n)
            if not 0 <= i < ens.n_features:
                raise InputError(f"feature index {i} out of range 0..{ens.n_features - 1}")
            out.add(i)
            continue
        try:
            out.add(ens.feature_index(n))
        except KeyError:
            raise InputError(f"unknown feature {n!r}{closest(n, ens.feature_names)}") from None
    if not out:
        raise InputError("no feature to vary: give at least one (--vary NAME)")
    return frozenset(out)


def gap_relaxation(ens: Ensemble) -> float:
    """A bound on how far the library's float32 raw score can be from the exact sum."""
    total = sum(float(np.abs(t.value).max()) if t.value.size else 0.0 for t in ens.trees)
    total = total * abs(ens.scale) + max((abs(b) for b in ens.intercept), default=0.0)
    return 2.0**-20 * total + 1e-7


def encode(ens: Ensemble, q: Query) -> tuple[Problem, Encoding]:
    varying = resolve_features(ens, q.vary)
    condition = resolve_condition(ens, q)
    for ti, t in enumerate(ens.trees):
        if t.categories is not None and any(c is not None for c in t.categories):
            raise InputError(f"tree {ti} has a categorical split; categorical encoding is not supported yet")

    # --- thresholds and domains per feature -----------------------------------------
    ths: dict[int, set] = {f: set() for f in range(ens.n_features)}
    for t in ens.trees:
        internal = t.feature >= 0
        for f, th in zip(t.feature[internal].tolist(), t.threshold[internal].tolist()):
            ths[f].add(th)
    domains: dict[int, FeatureDomain] = {}
    for f in range(ens.n_features):
        dom = build_domain(ens, f, ths[f])
        if not dom.valid:
            feat = ens.features[f]
            raise InputError(
                f"feature {feat.name!r} has no admissible value "
                f"(kind {feat.kind}, bounds [{feat.lb:g}, {feat.ub:g}])"
            )
        domains[f] = dom

    b = ProblemBuilder()
    names = ens.feature_names
    pred0: dict[int, tuple[int, ...]] = {}
    pred1: dict[int, tuple[int, ...]] = {}
    for f, dom in domains.items():
        if dom.n_free == 0:
            pred0[f] = pred1[f] = ()
            continue
        th = dom.thresholds

        def label(r: int, dom=dom, th=th) -> str:
            # q_r holds iff x is below the lower edge of the r-th valid interval
            j = dom.valid[r]
            return f"{ens.op}{th[j - 1]:.9g}" if j > 0 else f"#{r}"

        if f in varying:
            pred0[f] = tuple(b.var(f"p1[{names[f]}{label(r)}]") for r in range(1, dom.n_free + 1))
            pred1[f] = tuple(b.var(f"p2[{names[f]}{label(r)}]") for r in range(1, dom.n_free + 1))
        else:
            shared = tuple(b.var(f"p[{names[f]}{label(r)}]") for r in range(1, dom.n_free + 1))
            pred0[f] = pred1[f] = shared

    # --- trees ----------------------------------------------------------------------
    leaves0: list[dict[int, int]] = []
    leaves1: list[dict[int, int]] = []
    unaffected: list[frozenset[int]] = []
    # rank of each node's threshold, computed once per tree
    for ti, t in enumerate(ens.trees):
        leaf_ids = t.leaves()
        under = _leaves_under(t)
        aff_leaves = _affected_leaves(t, varying)
        unaffected.append(frozenset(leaf_ids) - aff_leaves)
        for copy, (store, pred) in enumerate(((leaves0, pred0), (leaves1, pred1))):
            lv = {n: b.var(f"l{copy + 1}[t{ti}.n{n}]") for n in leaf_ids}
            store.append(lv)
            b.add(ExactlyOne(tuple(lv.values()), ("tree", copy, ti)))
            internal = np.flatnonzero(t.feature >= 0)
            for n in internal.tolist():
                f = int(t.feature[n])
                dom = domains[f]
                k = _threshold_index(dom.thresholds, float(t.threshold[n]))
                rank = dom.rank_at[k]
                if rank <= 0:
                    p = FALSE
                elif rank >= len(dom.valid):
                    p = TRUE
                else:
                    p = pred[f][rank - 1]
                yes = [lv[x] for x in under[int(t.left[n])]]
                no = [lv[x] for x in under[int(t.right[n])]]
                tag = ("node", copy, ti, n)
                if n == 0:
                    _link(b, yes, p, "==", tag)
                else:
                    _link(b, yes, p, "<=", tag)
                    _link_no(b, no, p, tag)

    # --- gap rows -------------------------------------------------------------------
    relax = gap_relaxation(ens)
    leaves = (tuple(leaves0), tuple(leaves1))

    def row_terms(copy: int, coefs) -> tuple[dict[int, dict[int, float]], float]:
        const = sum(c * ens.intercept[k] for k, c in enumerate(coefs))
        per_tree: dict[int, dict[int, float]] = {}
        for ti, t in enumerate(ens.trees):
            w = [coefs[o] for o in t.outputs]
            if not any(w):
                continue
            vals = t.value @ np.asarray(w, dtype=np.float64) * ens.scale
            per_tree[ti] = {n: float(vals[n]) for n in leaves[copy][ti]}
        return per_tree, const

    def add_row(copy: int, coefs, rhs: float, tag: tuple, when: int | None = None) -> None:
        per_tree, const = row_terms(copy, coefs)
        vs, cs = [], []
        for ti, d in per_tree.items():
            for n, c in d.items():
                if c != 0.0:
                    vs.append(leaves[copy][ti][n])
                    cs.append(c)
        scale_rel = sum(abs(c) for c in coefs)
        lin = Linear(tuple(vs), tuple(cs), ">=", rhs - const - relax * scale_rel, tag)
        b.add(lin if when is None else Implication(when, True, lin, tag))

    for copy in (0, 1):
        for i, (coefs, rhs) in enumerate(condition.rows[copy]):
            add_row(copy, coefs, rhs, ("gap", copy, i))
        alts = condition.alternatives[copy] if condition.alternatives else ()
        if alts:
            zs = [b.var(f"class{copy + 1}[alt{a}]") for a in range(len(alts))]
            b.linear(zs, [1.0] * len(zs), ">=", 1.0, ("gap-any", copy))
            for a, group in enumerate(alts):
                for i, (coefs, rhs) in enumerate(group):
                    add_row(copy, coefs, rhs, ("gap-alt", copy, a, i), when=zs[a])

    pair = None
    pair_const = 0.0
    pair_rhs = 0.0
    if condition.pair_sum is not None:
        a, bb, rhs = condition.pair_sum
        t0, c0 = row_terms(0, a)
        t1, c1 = row_terms(1, bb)
        pair = (
            tuple(t0.get(ti, {}) for ti in range(len(ens.trees))),
            tuple(t1.get(ti, {}) for ti in range(len(ens.trees))),
        )
        pair_const = c0 + c1
        pair_rhs = rhs - relax * (sum(abs(x) for x in a) + sum(abs(x) for x in bb))

    problem = b.build()
    enc = Encoding(
        ensemble=ens,
        query=q,
        condition=condition,
        varying=varying,
        domains=domains,
        pred=(pred0, pred1),
        leaves=leaves,
        unaffected=tuple(unaffected),
        pair=pair,
        pair_const=pair_const,
        pair_rhs=pair_rhs,
        relax=relax,
        stats={
            "trees": len(ens.trees),
            "leaves": ens.n_leaves(),
            "unaffected_leaves": sum(len(u) for u in unaffected),
        },
    )
    return problem.with_note("relax", relax), enc


def _threshold_index(ths: tuple[float, ...], th: float) -> int:
    import bisect

    k = bisect.bisect_left(ths, th)
    assert ths[k] == th
    return k


def _link(b: ProblemBuilder, leaves: list[int], p, sense: str, tag: tuple) -> None:
    """sum(leaves) <sense> p, where p is a variable or a constant."""
    if p == TRUE or p == FALSE:
        rhs = 1.0 if p == TRUE else 0.0
        if sense == "<=" and rhs >= 1.0:
            return  # implied by exactly-one
        b.linear(leaves, [1.0] * len(leaves), sense, rhs, tag + ("yes",))
    else:
        b.linear(leaves + [p], [1.0] * len(leaves) + [-1.0], sense, 0.0, tag + ("yes",))


def _link_no(b: ProblemBuilder, leaves: list[int], p, tag: tuple) -> None:
    """sum(leaves) <= 1 - p."""
    if p == TRUE:
        b.linear(leaves, [1.0] * len(leaves), "<=", 0.0, tag + ("no",))
    elif p == FALSE:
        return
    else:
        b.linear(leaves + [p], [1.0] * (len(leaves) + 1), "<=", 1.0, tag + ("no",))


def _leaves_under(t) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    order = []
    stack = [0]
    while stack:
        n = stack.pop()
        order.append(n)
        if t.feature[n] >= 0:
            stack.append(int(t.left[n]))
            stack.append(int(t.right[n]))
    for n in reversed(order):
        if t.feature[n] < 0:
            out[n] = [n]
        else:
            out[n] = out[int(t.left[n])] + out[int(t.right[n])]
    return out


def _affected_leaves(t, varying: frozenset[int]) -> set[int]:
    """Leaves with at least one ancestor that tests a varied feature."""
    out = set()
    stack = [(0, False)]
    while stack:
        n, hit = stack.pop()
        if t.feature[n] < 0:
            if hit:
                out.add(n)
            continue
        h = hit or int(t.feature[n]) in varying
        stack.append((int(t.left[n]), h))
        stack.append((int(t.right[n]), h))
    return out
