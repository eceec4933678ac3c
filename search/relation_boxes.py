"""Relations between the two inputs (``where x1.age <= x2.age``) in the box search.

In rank space a relation on a varied feature f is a condition on the ranks of f's two
columns of the pair tables (pair_boxes.py), read as the solvers' encoding reads it
(compiler/passes/feature_constraints.py): NaN never meets a relation; two values in
different threshold intervals are ordered as the intervals are, so ``<=`` and ``<`` hold
at ranks ra < rb, never at ra > rb, and at ra == rb where that interval holds two
admissible values in that order within each input's bounds (``same_cell_possible``: one
value for ``<=``, two distinct ones for ``<``, none in a one-value interval); ``==`` needs
one rank and a value both inputs may take there. A categorical feature's ranks are its
category codes in ascending order, one code each: ``<=``, ``<``, ``==`` compare the codes,
``!=`` needs two ranks. A relation on a feature outside vary holds (both inputs share the
value; ``<`` and ``!=`` there are input errors).

A box of the search is a product of rank intervals, one per column, and the relations
are one per feature on columns of their own, so a box holds a pair meeting every
relation exactly when, for each relation, its two columns' intervals hold ranks ra, rb
that meet it (``meets_arrays``): a box without one is dropped, never bounded, and a
resolved box's pair is taken at such ranks (``relation_ranks``), its values then chosen
in order inside their intervals (feature_constraints.choose_constrained).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..compiler.encode import Encoding, coded_domains, ensemble_structure
from ..compiler.errors import InputError
from ..compiler.passes.feature_constraints import (
    bounds_by_copy,
    check_relation_kinds,
    check_relations_within_bounds,
    relations_of,
    same_cell_possible,
    span,
)
from ..compiler.query import EQ, NE

# a relation's kind as the kernel reads it: ranks ra < rb meet it, or ra == rb where the
# interval allows (<=, <); ra == rb where it allows (==); ra != rb (categorical !=)
ORDERED, EQUAL, DIFFERENT = 0, 1, 2
# a row of RankRelations.table: the columns of copy a and copy b, their offsets (the
# domain rank of the column's rank 0), the feature's valid ranks (those past it: NaN),
# the kind
COL_A, COL_B, OFF_A, OFF_B, N_VALID, KIND = range(6)


@dataclass(frozen=True)
class RankRelations:
    """The relations of a query on its varied features, over the pair tables' columns."""

    table: np.ndarray  # int64[relations, 6]: the rows above
    # int64[relations, ranks + 1]: per relation, how many of the first r domain ranks
    # hold, in that one interval (or code), values of both inputs that meet it
    same: np.ndarray
    features: tuple[int, ...]  # each relation's feature
    kinds: tuple[tuple[int, int, str], ...]  # each relation as (copy a, copy b, kind)

    def event(self, k: int) -> tuple:
        """The proof's step of a box relation k drops: ``("relation", feature, op)``, op
        as "x1 op x2" reads it (a certificate's ``relation`` step, verify/relations.py)."""
        return ("relation", self.features[k], x1_op(*self.kinds[k]))


def covered(enc: Encoding) -> bool:
    """Whether the box search reads the query's relations exactly: each on a feature the
    model's domains give ranks, a categorical one of undeclared categories with the codes
    that keep every two categories' order (encode.coded_domains; else one code stands for
    categories a relation tells apart: pair_scope.class_pair_encodings gives them)."""
    st = ensemble_structure(enc.ensemble)
    if any(st.domains.get(f) is None for f in relations_of(enc)):
        return False
    return coded_domains(enc.ensemble, st, enc.query, enc.varying) is st.domains


def rank_relations(enc: Encoding, tab) -> RankRelations | None:
    """The query's relations on its varied features over ``tab``'s columns (None: none).
    Raises InputError where the solvers' encoding does: a relation of a kind the feature
    cannot take, one the bounds rule out, one no pair of ranks meets."""
    q = enc.query
    if not q.relations:
        return None
    ens = enc.ensemble
    rels = relations_of(enc)
    bnds = bounds_by_copy(enc)
    for f, items in sorted(rels.items()):
        check_relation_kinds(enc, f, items)
    check_relations_within_bounds(enc, rels, bnds)
    column = {key: j for j, key in enumerate(tab.columns)}
    rows, sames, feats, kinds = [], [], [], []
    for f, items in sorted(rels.items()):
        if f not in enc.varying:
            continue
        dom = ensemble_structure(ens).domains[f]
        for a, b, kind in items:
            ca, cb = column[(f, a)], column[(f, b)]
            offs = (0, 0) if tab.offsets is None else (int(tab.offsets[ca]), int(tab.offsets[cb]))
            code = DIFFERENT if kind == NE else EQUAL if kind == EQ else ORDERED
            rows.append((ca, cb, *offs, len(dom.valid), code))
            sames.append(_same_ranks(enc, f, a, b, kind, bnds))
            feats.append(f)
            kinds.append((a, b, kind))
    if not rows:
        return None
    width = max(len(s) for s in sames) + 1
    same = np.zeros((len(rows), width), dtype=np.int64)
    for k, s in enumerate(sames):
        c = np.cumsum(s, dtype=np.int64)
        same[k, 1 : len(s) + 1] = c
        same[k, len(s) + 1 :] = c[-1] if len(c) else 0
    out = RankRelations(np.array(rows, dtype=np.int64), same, tuple(feats), tuple(kinds))
    lo, hi = np.zeros(len(tab.sizes), dtype=np.int64), tab.sizes.astype(np.int64)
    for k in range(len(rows)):
        if not meets_arrays(out.table[k : k + 1], out.same[k : k + 1], lo, hi):
            a, b, kind = kinds[k]
            name = ens.feature_names[feats[k]]
            raise InputError(
                f"x{a + 1}.{name} {kind} x{b + 1}.{name} cannot hold: no values of "
                f"{name!r} within the bounds route the two inputs so"
            )
    return out


def _same_ranks(enc: Encoding, f: int, a: int, b: int, kind: str, bnds) -> np.ndarray:
    """Per domain rank of f, whether both inputs may take values there meeting the
    relation (``same_cell_possible`` within each input's bounds; a code: in both inputs'
    bounds, and the relation ``<=`` or ``==``)."""
    ens = enc.ensemble
    feat, dom = ens.features[f], ensemble_structure(ens).domains[f]
    full = (-math.inf, math.inf)
    ba, bb = bnds.get((f, a), full), bnds.get((f, b), full)
    if kind == NE:
        return np.zeros(len(dom.valid), dtype=bool)
    if dom.codes is not None:
        lo, hi = max(ba[0], bb[0], feat.lb), min(ba[1], bb[1], feat.ub)
        return np.array([kind != "<" and lo <= c <= hi for c in dom.codes], dtype=bool)
    out = [
        same_cell_possible(kind, span(ens, feat, dom, j, *ba), span(ens, feat, dom, j, *bb))
        for j in dom.valid
    ]
    return np.array(out, dtype=bool)


def meets_arrays(table, same, lo, hi) -> bool:
    """Whether the box lo <= rank < hi (per column) holds, for every relation of
    ``table``, ranks of its two columns that meet it. Plain loops: the compiled search
    runs this same function (relation_jit.py)."""
    for k in range(table.shape[0]):
        ca, cb = table[k, COL_A], table[k, COL_B]
        nv = table[k, N_VALID]
        a0, a1 = lo[ca] + table[k, OFF_A], min(hi[ca] + table[k, OFF_A], nv)
        b0, b1 = lo[cb] + table[k, OFF_B], min(hi[cb] + table[k, OFF_B], nv)
        if a0 >= a1 or b0 >= b1:  # one input NaN only
            return False
        kind = table[k, KIND]
        if kind == DIFFERENT:
            if a1 - a0 == 1 and b1 - b0 == 1 and a0 == b0:
                return False
            continue
        if kind == ORDERED and a0 < b1 - 1:
            continue
        s, e = max(a0, b0), min(a1, b1)
        if s >= e or same[k, e] - same[k, s] == 0:
            return False
    return True


def box_meets(rel: RankRelations | None, lo, hi) -> bool:
    """``meets_arrays`` of ``rel`` (None: no relation, every box)."""
    return rel is None or meets_arrays(rel.table, rel.same, lo, hi)


def meeting_boxes(rel: RankRelations | None, boxes: np.ndarray) -> np.ndarray:
    """Of boxes (rows lo | hi), those holding a pair of ranks that meets every relation
    (None: no relation, every box)."""
    if rel is None or not len(boxes):
        return boxes
    cols = boxes.shape[1] // 2
    return boxes[_meet_each(rel, boxes[:, :cols], boxes[:, cols:])]


def dropped_by(rel: RankRelations | None, lo, hi) -> tuple | None:
    """The step of the first relation no pair of ranks of the box meets (``event``), or
    None where every one is met."""
    if rel is None:
        return None
    for k in range(rel.table.shape[0]):
        if not meets_arrays(rel.table[k : k + 1], rel.same[k : k + 1], lo, hi):
            return rel.event(k)
    return None


def relation_events(rel: RankRelations | None, boxes: np.ndarray | None) -> dict[int, tuple]:
    """Of recorded boxes (rows lo | hi, compiled_check.py's record), those a relation
    drops: box index -> its step (``dropped_by``)."""
    if rel is None or boxes is None or not len(boxes):
        return {}
    cols = boxes.shape[1] // 2
    out = {}
    for i in np.flatnonzero(~_meet_each(rel, boxes[:, :cols], boxes[:, cols:])).tolist():
        out[i] = dropped_by(rel, boxes[i, :cols], boxes[i, cols:])
    return out


def _meet_each(rel: RankRelations, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``meets_arrays`` of every box (rows of lo and hi) at once."""
    ok = np.ones(len(lo), dtype=bool)
    for k in range(rel.table.shape[0]):
        ca, cb, oa, ob, nv, kind = (int(x) for x in rel.table[k])
        a0, a1 = lo[:, ca] + oa, np.minimum(hi[:, ca] + oa, nv)
        b0, b1 = lo[:, cb] + ob, np.minimum(hi[:, cb] + ob, nv)
        some = (a0 < a1) & (b0 < b1)
        if kind == DIFFERENT:
            ok &= some & ~((a1 - a0 == 1) & (b1 - b0 == 1) & (a0 == b0))
            continue
        s, e = np.maximum(a0, b0), np.minimum(a1, b1)
        same = (s < e) & (rel.same[k, np.clip(e, 0, None)] > rel.same[k, np.clip(s, 0, None)])
        ordered = (a0 < b1 - 1) if kind == ORDERED else np.zeros(len(lo), dtype=bool)
        ok &= some & (ordered | same)
    return ok


def x1_op(a: int, b: int, kind: str) -> str:
    """A relation x_a kind x_b (relations_by_feature's) as "x1 op x2" reads it."""
    return kind if a == 0 else {"<=": ">=", "<": ">"}.get(kind, kind)


def stated_relations(enc: Encoding) -> list[list]:
    """The query's relations on its varied features as a certificate's claim states
    them: ``[feature name, op]``, op read as "x1 op x2"."""
    names = enc.ensemble.feature_names
    rels = relations_of(enc)
    return [
        [names[f], x1_op(*item)]
        for f, items in sorted(rels.items())
        if f in enc.varying
        for item in items
    ]


def relation_ranks(rel: RankRelations | None, lo, hi) -> np.ndarray:
    """A rank per column in the box lo <= rank < hi (its lower corner) that meets every
    relation: the box must hold one (``box_meets``)."""
    ranks = np.array(lo, dtype=np.int64)
    if rel is None:
        return ranks
    for k in range(rel.table.shape[0]):
        ca, cb, oa, ob, nv, kind = (int(x) for x in rel.table[k])
        a0, a1 = int(lo[ca]) + oa, min(int(hi[ca]) + oa, nv)
        b0, b1 = int(lo[cb]) + ob, min(int(hi[cb]) + ob, nv)
        if kind == DIFFERENT:
            ra, rb = (a0, b0) if a0 != b0 else (a0, b0 + 1) if b1 - b0 > 1 else (a0 + 1, b0)
        elif kind == ORDERED and a0 < b1 - 1:
            ra, rb = a0, b1 - 1
        else:
            s, e = max(a0, b0), min(a1, b1)
            r = s + int(np.argmax(np.diff(rel.same[k, s : e + 1]) > 0))
            ra = rb = r
        ranks[ca], ranks[cb] = ra - oa, rb - ob
    return ranks
