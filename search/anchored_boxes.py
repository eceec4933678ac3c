"""The pair tables of an anchored question (compiler/kinds.py): x1 is a given row, x2
equal to it outside F.

Every column of the pair space but x2's columns of F holds one rank: the rank of the
row's value (its threshold interval, its category code, or the NaN rank of a feature that
may be missing). The tables are walked from that root box (pair_boxes.py renumbers its
columns from it), so that a tree that reads no feature of F has one leaf, the row's, and
a tree that reads F has one leaf per cell of F x2 can reach with the rest of the row
fixed: the box search then walks each tree once per candidate cell of F, the rest being
the row's, and its proof or its pair is exact (a pair replayed as any other).

The row's values are read as they are (no bounds in the query narrow the model), so a
row with a missing value takes part: NaN is a rank of its own. A value that is not
admissible (outside its feature's declared bounds, not whole for an integer feature, a
category code the model's domain does not list, NaN where the feature may not be
missing) leaves the question to the solvers' encoding, which reports it.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from ..compiler.encode import Encoding, ensemble_structure
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.kinds import resolve_condition
from ..compiler.query import ANY, DOWN, EITHER, UP, Query
from .ranked_trees import ranked_tree

ANCHORED = "anchored"  # the kind's name (compiler/kinds.py, AnchoredQuestion)
# per model, its trees in rank space as the compiled walk reads them, kept for the next
# row: an audit asks one anchored question per row of one model (about 8 MB for 1,000
# trees of depth 8; ranking a tree took as long as walking it for a row)
_RANKED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# per model, its trees in rank space as the pair tables' builder reads them when it
# records boxes (a row's certificate: questions/audit_certificates.py), kept for the next
# row as _RANKED is for the compiled walk
_RANKED_NODES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_anchored(q: Query) -> bool:
    """Whether ``q`` is an anchored question (x1 the row its ``anchor`` parameter gives)."""
    return q.kind_name == ANCHORED


def anchor_of(q: Query) -> np.ndarray:
    """The row an anchored question pins x1 to (NaN where a value is missing)."""
    return np.array([float(v) for v in q.param("anchor")], dtype=np.float64)


def anchor_ranks(enc: Encoding) -> dict[int, int] | None:
    """Feature -> the rank of the anchor row's value in the feature's domain (the NaN
    rank, after the valid intervals, for a missing value), or None when some value has
    none (``value_rank``)."""
    ens = enc.ensemble
    row = anchor_of(enc.query)
    if len(row) != ens.n_features:
        return None
    out = {}
    for f, v in enumerate(row.tolist()):
        r = value_rank(ens, f, v)
        if r is None:
            return None
        out[f] = r
    return out


def value_rank(ens: Ensemble, f: int, v: float) -> int | None:
    """The rank of value ``v`` of feature ``f`` in its domain, as the pair tables number
    them (pair_boxes.n_ranks): the index of its valid interval (by the library's own
    comparison) or of its category code; after them the NaN rank of a feature that may
    be missing and that a tree reads (a missing value of a feature no tree reads: rank 0,
    its one). None when ``v`` is not admissible: outside the declared bounds, not whole
    for an integer feature, a code the domain does not list, NaN where the feature may
    not be missing."""
    st = ensemble_structure(ens)
    feat, dom = ens.features[f], st.domains[f]
    if math.isnan(v):
        if not feat.may_be_missing:
            return None
        return len(dom.valid) if f in st.used else 0
    if not feat.admits(v):
        return None
    if dom.codes is not None:
        code = int(v) if float(v).is_integer() else None
        return dom.codes.index(code) if code in dom.codes else None
    j = sum(1 for t in dom.thresholds if not ens.test_holds(v, t))
    return dom.valid.index(j) if j in dom.valid else None


def anchored_encodings(enc: Encoding) -> list[Encoding]:
    """An anchored question as questions without a choice on x2, each of which the pair
    tables describe: a multiclass row's x2 of "any" other class, one per class other
    than the row's (``decision``); a regressor's change either way, up and down (a side
    the link cannot reach left out). x2 meets the question if and only if it meets one."""
    ens, q = enc.ensemble, enc.query
    if not any(enc.condition.alternatives or ()):
        return [enc]
    if ens.is_regressor and q.direction == EITHER:
        asked = [q.with_(direction=way) for way in (UP, DOWN)]
    elif ens.n_outputs > 1 and q.classes and q.classes[1] == ANY:
        d = int(q.param("decision"))
        asked = [q.with_(classes=(d, c)) for c in range(ens.n_classes) if c != d]
    else:
        return [enc]
    out = []
    for a in asked:
        try:
            cond = resolve_condition(ens, a)
        except InputError:  # a side the link cannot reach (kinds._moved_condition)
            continue
        out.append(Encoding(ens, a, cond, enc.varying, enc.domains, ({}, {}), ((), ()), enc.relax))
    return out or [enc]


def anchored_root(enc: Encoding, columns, sizes: np.ndarray):
    """The root box (lo, hi per column) of an anchored question's tables: every column
    held to the row's rank but x2's columns of F, whole; None when a value of the row
    has no rank (``anchor_ranks``)."""
    ranks = anchor_ranks(enc)
    if ranks is None:
        return None
    lo, hi = np.zeros(len(columns), dtype=np.int32), sizes.astype(np.int32)
    for j, (f, copy) in enumerate(columns):
        if copy != 1:
            lo[j], hi[j] = ranks[f], ranks[f] + 1
    return lo, hi


def anchored_corner(enc: Encoding, tab, lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A resolved box's pair: x1 the row itself, x2 the row with each feature of F at
    its rank's value in the box (the row's own value where x2's rank is the row's, else
    the domain's value of the rank, NaN at the NaN rank)."""
    ens = enc.ensemble
    x1 = anchor_of(enc.query)
    x2 = x1.copy()
    ranks = anchor_ranks(enc) or {}
    st = ensemble_structure(ens)
    for j, (f, copy) in enumerate(tab.columns):
        if copy != 1:
            continue
        rank = tab.domain_rank(j, int(lo[j]))
        if rank == ranks.get(f):
            continue
        dom = st.domains[f]
        x2[f] = math.nan if rank >= len(dom.valid) else float(dom.reps[dom.valid[rank]])
    return x1, x2


def ranked_tree_of(ens: Ensemble, ti: int):
    """Tree ``ti`` of ``ens`` in rank space (ranked_trees.ranked_tree), made once per
    model and tree (``_RANKED_NODES``)."""
    trees = _RANKED_NODES.setdefault(ens, [None] * len(ens.trees))
    if trees[ti] is None:
        trees[ti] = ranked_tree(ens, ensemble_structure(ens), ens.trees[ti])
    return trees[ti]


def ranked_arrays_of(ens: Ensemble, ti: int) -> tuple[np.ndarray, frozenset[int]]:
    """Tree ``ti`` of ``ens`` in rank space as pair_walk_jit's arrays, and the features
    it reads; made once per model and tree (``_RANKED``)."""
    from .pair_walk_jit import ranked_arrays  # noqa: PLC0415 - numba only when building

    trees = _RANKED.setdefault(ens, [None] * len(ens.trees))
    if trees[ti] is None:
        nodes = ranked_tree(ens, ensemble_structure(ens), ens.trees[ti])
        reads = frozenset(f for f, *_ in nodes.values() if f >= 0)
        trees[ti] = (ranked_arrays(nodes), reads)
    return trees[ti]
