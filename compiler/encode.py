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

import bisect
import math
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Protocol

import numpy as np

from .affected import unaffected_leaves
from .domain import (
    FeatureDomain,
    build_categorical_domain,
    build_domain,
    with_order_codes,
    with_unlisted_codes,
)
from .ensemble import MISSING_NAN, MISSING_NONE, MISSING_ZERO, ZERO_BAND, Ensemble, Tree
from .errors import FEATURES, InputError, closest, spelled
from .feature_names import positional_hint
from .ir import EQ, GE, LE, ExactlyOne, Implication, Linear, Problem, ProblemBuilder
from .kinds import prepared, resolve_condition
from .query import (
    Condition,
    Query,
    bounds_by_copy,
    held_by_data,
    one_value,
    relations_by_feature,
)
from .rounding import gap_relaxation

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
    relax: float  # by how much each gap row was relaxed, per unit of |coefficient|
    stats: dict = field(default_factory=dict)
    # categorical features: onehot[c][f] = one variable per code of domains[f].codes
    # (exactly one of them, or the NaN variable, is 1); pred[c][f] is then ()
    onehot: tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]] = ({}, {})
    # features declared may_be_missing: nan[c][f] = the variable "x_c.f is NaN"
    nan: tuple[dict[int, int], dict[int, int]] = ({}, {})
    # a change through a nonlinear link: per direction, the variable choosing it (None:
    # one direction, no choice); the near-miss cuts of a direction hold under it
    pair_choice: tuple[int | None, ...] = ()

    def predicate(self, copy: int, f: int, rank: int) -> int | bool:
        """Variable index of q_rank for copy (0/1), or the constants TRUE / FALSE."""
        dom = self.domains[f]
        if rank <= 0:
            return FALSE
        if rank >= len(dom.valid):
            return TRUE
        return self.pred[copy][f][rank - 1]


def resolve_features(ens: Ensemble, names: Iterable[str | int]) -> frozenset[int]:
    out = set()
    for n in names:
        if isinstance(n, int) or (
            isinstance(n, str) and n.isdigit() and n not in ens.feature_names
        ):
            i = int(n)
            if not 0 <= i < ens.n_features:
                raise InputError(f"feature index {i} out of range 0..{ens.n_features - 1}")
            out.add(i)
            continue
        try:
            out.add(ens.feature_index(n))
        except KeyError:
            raise InputError(
                f"unknown feature {n!r}{closest(n, ens.feature_names, listing=FEATURES)}"
                f"{positional_hint(ens.feature_names, n)}"
            ) from None
    if not out:
        raise InputError(
            f"no feature to vary: give at least one ({spelled('vary=[NAME]', '--vary NAME')})"
        )
    return frozenset(out)


def held_to_one_value(ens: Ensemble, f: int) -> float | None:
    """The one value feature f's bounds leave it (never missing), else None."""
    feat = ens.features[f]
    return None if feat.may_be_missing else one_value(feat, feat.lb, feat.ub)


def varied_features(ens: Ensemble, names: Iterable[str | int]) -> frozenset[int]:
    """``resolve_features`` of a pair query's varied features, refusing features whose
    bounds (declared, or the data's range) hold every one of them to a single value: x1
    and x2 could not differ, and any answer would be vacuous (data of one sex only and
    ``vary sex`` proved "insensitive")."""
    varying = resolve_features(ens, names)
    held = [held_to_one_value(ens, f) for f in sorted(varying)]
    if any(v is None for v in held):
        return varying
    by_data = held_by_data(ens, varying)
    if by_data is not None:
        raise by_data
    held = [f"{ens.features[f].name} = {v:g}" for f, v in zip(sorted(varying), held)]
    # bounds from the data's range are held_by_data's error: these were declared
    raise InputError(
        f"x1 and x2 cannot differ: the features' bounds hold every varied feature to one "
        f"value ({', '.join(held)}), so any answer would be vacuous: declare wider bounds "
        f"({spelled('details=', '--details')})"
    )


@dataclass(frozen=True, eq=False)
class _Structure:
    """What encoding needs of an ensemble whatever the query: computed once per model,
    so a sweep re-encodes only what depends on the varied features."""

    domains: dict[int, FeatureDomain]
    used: frozenset[int]
    zero_mode: frozenset[int]
    trees: tuple[Tree, ...] = field(repr=False)

    @cached_property
    def leaves(self) -> tuple[list[int], ...]:
        """Per tree, its leaves: the solver's encoding and the gap rows read them (a check
        the heuristic answers does not: computed when first read)."""
        return tuple(t.leaves() for t in self.trees)

    @cached_property
    def under(self) -> tuple[dict[int, list[int]], ...]:
        """Per tree, the leaves below each node: the solver's encoding reads them (the
        heuristic and the box search do not: computed when first read)."""
        return tuple(_leaves_under(t) for t in self.trees)


_STRUCTURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class StructureStore(Protocol):
    """Where the query-independent part of a model's encoding outlives the process (the
    command line's, readers/structure_cache.py): ``load`` returns what ``save`` was given
    for an ensemble of the same fingerprint, or None."""

    def load(self, ens: Ensemble) -> StructureParts | None: ...

    def save(self, ens: Ensemble, parts: StructureParts) -> None: ...


# (domains, used, zero_mode) as _Structure holds them
StructureParts = tuple[dict[int, FeatureDomain], frozenset[int], frozenset[int]]
_STORE: list[StructureStore] = []  # none unless a command keeps structures (keep_structures_in)


def keep_structures_in(store: StructureStore | None) -> None:
    """Keep ensembles' structures in ``store`` too (None: in this process only)."""
    _STORE[:] = [] if store is None else [store]


def ensemble_structure(ens: Ensemble) -> _Structure:
    cached = _STRUCTURES.get(ens)
    if cached is not None:
        return cached
    kept = _STORE[0].load(ens) if _STORE else None
    if kept is not None:
        st = _Structure(*kept, ens.trees)
        _STRUCTURES[ens] = st
        return st
    ths: dict[int, set] = {f: set() for f in range(ens.n_features)}
    split_codes: dict[int, set] = {}
    zero_mode: set[int] = set()
    used: set[int] = set()
    for t in ens.trees:
        internal = t.feature >= 0
        used.update(t.feature[internal].tolist())
        if t.missing is not None:
            zero_mode.update(t.feature[internal & (t.missing == MISSING_ZERO)].tolist())
        if t.categories is None:
            for f, th in zip(t.feature[internal].tolist(), t.threshold[internal].tolist()):
                ths[f].add(th)
            continue
        for n in np.flatnonzero(internal).tolist():
            f = int(t.feature[n])
            if t.is_categorical(n):
                split_codes.setdefault(f, set()).update(t.categories[n])
            else:
                ths[f].add(float(t.threshold[n]))
    onehot_f = {f for f in range(ens.n_features) if ens.features[f].kind == "categorical"} | set(
        split_codes
    )
    domains: dict[int, FeatureDomain] = {}
    for f in range(ens.n_features):
        if f in onehot_f:
            dom = build_categorical_domain(ens, f, split_codes.get(f, ()), ths[f])
        else:
            extra = set()
            if f in zero_mode:  # make LightGBM's zero band [-z, z] an interval of its own
                lo, hi = -ZERO_BAND, ZERO_BAND
                extra = (
                    {float(np.nextafter(lo, -np.inf)), hi}
                    if ens.op == "<="
                    else {lo, float(np.nextafter(hi, np.inf))}
                )
            dom = build_domain(ens, f, ths[f] | extra)
        if not dom.valid:
            feat = ens.features[f]
            raise InputError(
                f"feature {feat.name!r} has no admissible value "
                f"(kind {feat.kind}, bounds [{feat.lb:g}, {feat.ub:g}])"
            )
        domains[f] = dom

    st = _Structure(
        domains,
        frozenset(used),
        frozenset(zero_mode),
        ens.trees,
    )
    _STRUCTURES[ens] = st
    if _STORE:
        _STORE[0].save(ens, (st.domains, st.used, st.zero_mode))
    return st


def gap_row_terms(
    ens: Ensemble, coefs: Sequence[float]
) -> tuple[dict[int, dict[int, float]], float]:
    """A gap row ``sum_k coefs[k] * raw_k(x)`` over leaves: per tree (only those with a
    nonzero weight), each leaf's coefficient, in the tree's leaf order; and the constant
    the intercepts contribute."""
    st = ensemble_structure(ens)
    const = sum(c * ens.intercept[k] for k, c in enumerate(coefs))
    per_tree: dict[int, dict[int, float]] = {}
    for ti in range(len(ens.trees)):
        terms = tree_row_terms(ens, ti, coefs, st)
        if terms is not None:
            per_tree[ti] = terms
    return per_tree, const


def tree_row_terms(
    ens: Ensemble, ti: int, coefs: Sequence[float], st: _Structure | None = None
) -> dict[int, float] | None:
    """Tree ti's part of ``gap_row_terms``: each leaf's coefficient in the row (None: the
    row gives the tree no weight)."""
    t = ens.trees[ti]
    w = [coefs[o] for o in t.outputs]
    if not any(w):
        return None
    vals = t.value @ np.asarray(w, dtype=np.float64) * ens.scale
    leaves = (st or ensemble_structure(ens)).leaves[ti]
    return {n: float(vals[n]) for n in leaves}


PerCopy = tuple[dict[int, tuple[int, ...]], dict[int, tuple[int, ...]]]


def _with_bounded_codes(ens: Ensemble, st: _Structure, q: Query, varying) -> _Structure:
    """``st`` with the domains of ``coded_domains``."""
    domains = coded_domains(ens, st, q, varying)
    if domains is st.domains:
        return st
    out = _Structure(domains, st.used, st.zero_mode, st.trees)
    out.__dict__.update({k: v for k, v in st.__dict__.items() if k in ("leaves", "under")})
    return out


def coded_domains(ens: Ensemble, st: _Structure, q: Query, varying) -> dict[int, FeatureDomain]:
    """``st``'s domains (the same dict where nothing changes) with each categorical
    feature of undeclared categories holding a code no split lists inside every bound
    the query puts on it (domain.with_unlisted_codes: the bound keeps the codes inside
    it, and the unlisted categories there need one), and, under a relation between the
    inputs on it, the codes that keep every two categories' order (domain.with_order_codes:
    one code standing for every unlisted category would meet ``!=`` only where a listed
    code takes part, and stand below and above listed codes at once)."""
    if not (q.bounds or q.relations):
        return st.domains
    by_copy = bounds_by_copy(ens, q, varying) if q.bounds else {}
    related = {f for f in relations_by_feature(ens, q) if f in varying}
    domains = dict(st.domains)
    for f in {f for f, _ in by_copy} | related:
        dom = domains.get(f)
        if dom is None or dom.codes is None or ens.features[f].categories:
            continue
        ranges = {r for (g, _), r in by_copy.items() if g == f}
        dom = with_unlisted_codes(ens, f, dom, ranges)
        domains[f] = with_order_codes(ens, f, dom, ranges) if f in related else dom
    if all(domains[f] is st.domains[f] for f in domains):
        return st.domains
    return domains


def relation_coded(ens: Ensemble, q: Query) -> Ensemble:
    """``ens``, or where ``q``'s relations need codes its domains lack
    (``coded_domains``), a copy of it whose domains hold them: the box search, its
    pair tables and a certificate read a model's domains (``ensemble_structure``)."""
    if not q.relations:
        return ens
    st = ensemble_structure(ens)
    domains = coded_domains(ens, st, q, varied_features(ens, q.vary))
    if domains is st.domains:
        return ens
    twin = replace(ens)
    _STRUCTURES[twin] = _Structure(domains, st.used, st.zero_mode, st.trees)
    return twin


def encode(ens: Ensemble, q: Query) -> tuple[Problem, Encoding]:
    """The query's Problem (variables for predicates and leaves of both copies, tree
    and gap constraints) and the Encoding that maps its variables back."""
    q = prepared(ens, q)
    varying = varied_features(ens, q.vary)
    condition = resolve_condition(ens, q)
    st = _with_bounded_codes(ens, ensemble_structure(ens), q, varying)
    b = ProblemBuilder()
    pred, onehot, nanv = _encode_features(b, ens, st, varying)
    leaves = _encode_trees(b, ens, st, pred, onehot, nanv)
    relax = gap_relaxation(ens)
    _encode_gap(b, ens, condition, leaves, relax)
    choice = _encode_link_change(b, ens, condition, leaves, relax)
    enc = Encoding(
        ensemble=ens,
        query=q,
        condition=condition,
        varying=varying,
        domains=st.domains,
        pred=pred,
        leaves=leaves,
        relax=relax,
        stats={
            "trees": len(ens.trees),
            "leaves": ens.n_leaves(),
            "unaffected_leaves": sum(len(u) for u in unaffected_leaves(ens, varying)),
        },
        onehot=onehot,
        nan=nanv,
        pair_choice=choice,
    )
    return b.build().with_notes(relax=relax), enc


def _encode_features(
    b: ProblemBuilder, ens: Ensemble, st: _Structure, varying: frozenset[int]
) -> tuple[PerCopy, PerCopy, tuple[dict[int, int], dict[int, int]]]:
    """Per feature: its predicates q_1..q_{n_free} (or one-hots for a categorical one)
    and its NaN variable, once for both copies or, for a varied feature, per copy."""
    names = ens.feature_names
    pred: PerCopy = ({}, {})
    onehot: PerCopy = ({}, {})
    nanv: tuple[dict[int, int], dict[int, int]] = ({}, {})
    for f, dom in st.domains.items():
        missing = ens.features[f].may_be_missing and f in st.used
        copies = ((0, "p1"), (1, "p2")) if f in varying else ((None, "p"),)
        if dom.codes is not None:
            pred[0][f] = pred[1][f] = ()
            if f not in st.used or len(dom.codes) + missing <= 1:
                continue
            for copy, pre in copies:
                vs = tuple(b.var(f"{pre}[{names[f]}={c}]") for c in dom.codes)
                m = b.var(f"{pre}[{names[f]}=NaN]") if missing else None
                b.add(ExactlyOne(vs + ((m,) if m is not None else ()), ("category", copy, f)))
                for c in (0, 1) if copy is None else (copy,):
                    onehot[c][f] = vs
                    if m is not None:
                        nanv[c][f] = m
            continue
        if dom.n_free == 0 and not missing:
            pred[0][f] = pred[1][f] = ()
            continue
        th = dom.thresholds

        def label(r: int, dom=dom, th=th) -> str:
            # q_r holds iff x is below the lower edge of the r-th valid interval
            j = dom.valid[r]
            return f"{ens.op}{th[j - 1]:.9g}" if j > 0 else f"#{r}"

        for copy, pre in copies:
            qs = tuple(b.var(f"{pre}[{names[f]}{label(r)}]") for r in range(1, dom.n_free + 1))
            for c in (0, 1) if copy is None else (copy,):
                pred[c][f] = qs
            if missing:
                m = b.var(f"{pre}[{names[f]}=NaN]")
                for c in (0, 1) if copy is None else (copy,):
                    nanv[c][f] = m
                if qs:  # NaN is no number: every q_r is 0 (q_r <= q_last by ordering)
                    b.linear([qs[-1], m], [1.0, 1.0], LE, 1.0, ("nan", copy, f))
    return pred, onehot, nanv


def _encode_trees(
    b: ProblemBuilder,
    ens: Ensemble,
    st: _Structure,
    pred: PerCopy,
    onehot: PerCopy,
    nanv: tuple[dict[int, int], dict[int, int]],
) -> tuple[tuple[dict[int, int], ...], tuple[dict[int, int], ...]]:
    """Per tree and copy: one variable per leaf, exactly one chosen, and each split node
    linking the leaves below it to its test (Eq. root_const / non_root_const)."""
    domains = st.domains
    band = {
        f: np.array([abs(domains[f].reps[j]) <= ZERO_BAND for j in domains[f].valid], dtype=bool)
        for f in st.zero_mode
        if domains[f].codes is None
    }
    leaves: tuple[list[dict[int, int]], list[dict[int, int]]] = ([], [])
    for ti, t in enumerate(ens.trees):
        under = st.under[ti]
        internal = np.flatnonzero(t.feature >= 0).tolist()
        for copy in (0, 1):
            lv = {n: b.var(f"l{copy + 1}[t{ti}.n{n}]") for n in st.leaves[ti]}
            leaves[copy].append(lv)
            b.add(ExactlyOne(tuple(lv.values()), ("tree", copy, ti)))
            for n in internal:
                f = int(t.feature[n])
                dom = domains[f]
                yes = [lv[x] for x in under[int(t.left[n])]]
                no = [lv[x] for x in under[int(t.right[n])]]
                tag = ("node", copy, ti, n)
                plain = (
                    dom.codes is None
                    and f not in nanv[copy]
                    and (t.missing is None or t.missing[n] != MISSING_ZERO)
                )
                if not plain:
                    hots, m = onehot[copy].get(f), nanv[copy].get(f)
                    const, terms = _node_expr(ens, t, n, dom, pred[copy][f], hots, m, band.get(f))
                    _link_expr(b, yes, no, const, terms, n == 0, tag)
                    continue
                rank = split_rank(dom, float(t.threshold[n]))
                if rank <= 0:
                    p = FALSE
                elif rank >= len(dom.valid):
                    p = TRUE
                else:
                    p = pred[copy][f][rank - 1]
                if n == 0:
                    _link(b, yes, p, EQ, tag)
                else:
                    _link(b, yes, p, LE, tag)
                    _link_no(b, no, p, tag)
    return tuple(leaves[0]), tuple(leaves[1])


def _encode_gap(
    b: ProblemBuilder,
    ens: Ensemble,
    condition: Condition,
    leaves: tuple[tuple[dict[int, int], ...], tuple[dict[int, int], ...]],
    relax: float,
) -> None:
    """The gap constraints (Gap-bin / Gap-multi, and the class alternatives of
    ``c = any``), each relaxed by ``relax`` per unit of |coefficient|."""

    def add_row(copy: int, coefs, rhs: float, tag: tuple, when: int | None = None) -> None:
        per_tree, const = gap_row_terms(ens, coefs)
        vs, cs = [], []
        for ti, d in per_tree.items():
            for n, c in d.items():
                if c != 0.0:
                    vs.append(leaves[copy][ti][n])
                    cs.append(c)
        scale_rel = sum(abs(c) for c in coefs)
        lin = Linear(tuple(vs), tuple(cs), GE, rhs - const - relax * scale_rel, tag)
        b.add(lin if when is None else Implication(when, True, lin, tag))

    alt_vars: list[list[int]] = []
    for copy in (0, 1):
        for i, (coefs, rhs) in enumerate(condition.rows[copy]):
            add_row(copy, coefs, rhs, ("gap", copy, i))
        alts = condition.alternatives[copy] if condition.alternatives else ()
        if alts:
            zs = [b.var(f"class{copy + 1}[alt{a}]") for a in range(len(alts))]
            alt_vars.append(zs)
            b.linear(zs, [1.0] * len(zs), GE, 1.0, ("gap-any", copy))
            for a, group in enumerate(alts):
                for i, (coefs, rhs) in enumerate(group):
                    add_row(copy, coefs, rhs, ("gap-alt", copy, a, i), when=zs[a])
    _encode_pair_rows(b, ens, condition, leaves, relax)
    if condition.distinct and len(alt_vars) == 2:
        # c1 = any, c2 = any: the two inputs' classes differ (alternative a is class a on both sides)
        for a, (z1, z2) in enumerate(zip(*alt_vars)):
            b.linear([z1, z2], [1.0, 1.0], LE, 1.0, ("gap-distinct", a))


def _encode_pair_rows(b: ProblemBuilder, ens: Ensemble, condition: Condition, leaves, relax):
    """The rows over both inputs (a regressor's change): the one row, or with two, a
    choice of which holds."""
    rows = condition.pair_rows
    zs = [b.var(f"pair[alt{a}]") for a in range(len(rows))] if len(rows) > 1 else [None]
    if len(rows) > 1:
        b.linear(zs, [1.0] * len(zs), GE, 1.0, ("pair-any",))
    for i, (row, z) in enumerate(zip(rows, zs)):
        b.add(pair_constraint(ens, leaves, row, relax, ("pair", i), z))


def _encode_link_change(
    b: ProblemBuilder, ens: Ensemble, condition: Condition, leaves, relax
) -> tuple[int | None, ...]:
    """A change through a nonlinear link: each direction's rows (all of them), under
    the variable choosing that direction when there are two. Returns those variables."""
    lc = condition.link_change
    if lc is None:
        return ()
    many = len(lc.rows) > 1
    zs = [b.var(f"change[{d}]") if many else None for d in lc.directions]
    if many:
        b.linear(zs, [1.0] * len(zs), GE, 1.0, ("change-any",))
    for di, (rows, z) in enumerate(zip(lc.rows, zs)):
        for i, row in enumerate(rows):
            b.add(pair_constraint(ens, leaves, row, relax, ("change", di, i), z))
    return tuple(zs)


def pair_constraint(ens: Ensemble, leaves, row, relax: float, tag: tuple, when: int | None):
    """A row over both inputs, (coefs of x1, coefs of x2, rhs), over their leaves,
    relaxed by ``relax`` per unit of |coefficient| (under ``when`` if given). A leaf
    variable both inputs share weighs in once, summed."""
    a, c, rhs = row
    acc: dict[int, float] = {}
    const = 0.0
    for copy, coefs in ((0, a), (1, c)):
        per_tree, k = gap_row_terms(ens, coefs)
        const += k
        for ti, d in per_tree.items():
            for n, w in d.items():
                v = leaves[copy][ti][n]
                acc[v] = acc.get(v, 0.0) + w
    items = [(v, w) for v, w in acc.items() if w != 0.0]
    scale_rel = sum(abs(x) for x in a) + sum(abs(x) for x in c)
    lin = Linear(
        tuple(v for v, _ in items),
        tuple(w for _, w in items),
        GE,
        rhs - const - relax * scale_rel,
        tag,
    )
    return lin if when is None else Implication(when, True, lin, tag)


def node_yes(ens: Ensemble, t: Tree, n: int, v: float) -> bool:
    """Does value ``v`` (a number or NaN) take the "yes" branch of node n? As ``Ensemble.leaf_indices``."""
    mode = int(t.missing[n]) if t.missing is not None else MISSING_NAN
    th = float(t.threshold[n])
    if math.isnan(v):
        if mode == MISSING_NONE:
            return bool(th > 0.0) if ens.op == "<" else bool(th >= 0.0)
        return bool(t.default_left[n])
    vc = float(ens.cast_value(v))
    if mode == MISSING_ZERO and abs(vc) <= ZERO_BAND:
        return bool(t.default_left[n])
    if t.is_categorical(n):
        return vc.is_integer() and int(vc) in t.categories[n]
    return ens.test_holds(v, th)


def _node_expr(ens: Ensemble, t, n: int, dom: FeatureDomain, qs, hots, m, band):
    """The node's test as a 0/1 linear expression: (constant, {var: coefficient}).

    Ordered features: with s_r = "valid interval r goes yes" and q_0 = 0,
    q_last = 1 - m (or 1), the test is sum_r s_r (q_{r+1} - q_r) + [NaN goes yes] m.
    Categorical features: the sum of the one-hots of the codes that go yes.
    """
    nan_yes = node_yes(ens, t, n, math.nan)
    terms: dict[int, float] = {}
    if dom.codes is not None:
        s = [node_yes(ens, t, n, float(c)) for c in dom.codes]
        if hots is None:  # a single choice: a constant
            return (1.0 if (s[0] if m is None else nan_yes) else 0.0), {}
        all_yes = all(s) and (m is None or nan_yes)
        none_yes = not any(s) and (m is None or not nan_yes)
        if all_yes or none_yes:
            return (1.0 if all_yes else 0.0), {}
        n_yes = sum(s) + (m is not None and nan_yes)
        if 2 * n_yes <= len(s) + (m is not None):
            for v, y in zip(hots, s):
                if y:
                    terms[v] = 1.0
            if m is not None and nan_yes:
                terms[m] = 1.0
            return 0.0, terms
        for v, y in zip(hots, s):
            if not y:
                terms[v] = -1.0
        if m is not None and not nan_yes:
            terms[m] = -1.0
        return 1.0, terms
    nv = len(dom.valid)
    s = np.arange(nv) < split_rank(dom, float(t.threshold[n]))
    if band is not None and t.missing is not None and t.missing[n] == MISSING_ZERO:
        s = np.where(band, bool(t.default_left[n]), s)
    s = s.astype(float)
    for r in range(1, nv):
        c = s[r - 1] - s[r]
        if c != 0.0:
            terms[qs[r - 1]] = c
    const = float(s[nv - 1])
    if m is not None:
        c = float(nan_yes) - const
        if c != 0.0:
            terms[m] = c
    return const, terms


def _link_expr(
    b: ProblemBuilder,
    yes: list[int],
    no: list[int],
    const: float,
    terms: dict,
    root: bool,
    tag: tuple,
) -> None:
    """Leaves under "yes" <= E and leaves under "no" <= 1 - E (root: "yes" == E)."""
    if not terms:
        p = TRUE if const >= 0.5 else FALSE
        if root:
            _link(b, yes, p, EQ, tag)
        else:
            _link(b, yes, p, LE, tag)
            _link_no(b, no, p, tag)
        return
    tv, tc = list(terms), [-c for c in terms.values()]
    b.linear(yes + tv, [1.0] * len(yes) + tc, EQ if root else LE, const, tag + ("yes",))
    if not root:
        b.linear(no + tv, [1.0] * len(no) + [-c for c in tc], LE, 1.0 - const, tag + ("no",))


def split_rank(dom: FeatureDomain, threshold: float) -> int:
    """The rank R of a split at ``threshold``: the test is "the value's interval < R"."""
    k = bisect.bisect_left(dom.thresholds, threshold)
    assert dom.thresholds[k] == threshold
    return dom.rank_at[k]


def _link(b: ProblemBuilder, leaves: list[int], p, sense: str, tag: tuple) -> None:
    """sum(leaves) <sense> p, where p is a variable or a constant."""
    if p in (TRUE, FALSE):
        rhs = 1.0 if p == TRUE else 0.0
        if sense == LE and rhs >= 1.0:
            return  # implied by exactly-one
        b.linear(leaves, [1.0] * len(leaves), sense, rhs, tag + ("yes",))
    else:
        b.linear(leaves + [p], [1.0] * len(leaves) + [-1.0], sense, 0.0, tag + ("yes",))


def _link_no(b: ProblemBuilder, leaves: list[int], p, tag: tuple) -> None:
    """sum(leaves) <= 1 - p."""
    if p == TRUE:
        b.linear(leaves, [1.0] * len(leaves), LE, 0.0, tag + ("no",))
    elif p == FALSE:
        return
    else:
        b.linear(leaves + [p], [1.0] * (len(leaves) + 1), LE, 1.0, tag + ("no",))


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
