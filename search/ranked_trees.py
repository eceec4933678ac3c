"""The model's trees in rank space (pair_boxes.py): each node a test "rank < R" on its
feature's column, where a rank is the index of a valid threshold interval or category
code, and one more, the last, NaN's when the feature may be missing. A node whose "yes"
ranks are no prefix (a categorical split, a NaN routed left, LightGBM's zero band routed
to its default side) becomes a small tree of such tests over the runs of that set."""

from __future__ import annotations

import math

import numpy as np

from ..compiler.encode import ensemble_structure, node_yes, split_rank
from ..compiler.ensemble import MISSING_ZERO, ZERO_BAND, Ensemble

# a tree in rank space: node -> (feature, R, yes, no), or (-1, leaf node, 0, 0) on a leaf
RankedTree = dict[int, tuple[int, int, int, int]]


def has_nan_rank(ens: Ensemble, f: int) -> bool:
    """Whether feature f's last rank stands for NaN: it may be missing and a node reads
    it."""
    return ens.features[f].may_be_missing and f in ensemble_structure(ens).used


def n_ranks(ens: Ensemble, f: int) -> int:
    """How many ranks feature f's column has: its valid intervals (or codes), and NaN."""
    return len(ensemble_structure(ens).domains[f].valid) + has_nan_rank(ens, f)


def rank_value(ens: Ensemble, f: int, rank: int) -> float:
    """The input value a rank of feature f stands for: its domain's value, or NaN."""
    dom = ensemble_structure(ens).domains[f]
    return math.nan if rank >= len(dom.valid) else float(dom.reps[dom.valid[rank]])


def ranked_tree(ens: Ensemble, st, t) -> RankedTree:
    """Tree ``t`` of ``ens`` in rank space (``st``: its ensemble_structure)."""
    out: RankedTree = {}
    fresh = [len(t.feature)]  # the next node index of a node the runs add
    for n in range(len(t.feature)):
        f = int(t.feature[n])
        if f < 0:
            out[n] = (-1, n, 0, 0)
            continue
        dom = st.domains[f]
        plain = (
            dom.codes is None
            and not has_nan_rank(ens, f)
            and (t.missing is None or t.missing[n] != MISSING_ZERO)
        )
        yes, no = int(t.left[n]), int(t.right[n])
        if plain:
            out[n] = (f, split_rank(dom, float(t.threshold[n])), yes, no)
            continue
        runs = _runs(yes_ranks(ens, st, t, n))
        _run_tree(out, n, f, runs, yes, no, fresh)
    return out


def yes_ranks(ens: Ensemble, st, t, n: int) -> np.ndarray:
    """Per rank of node n's feature, whether the library sends it to "yes" (as
    encode.node_yes; the last rank NaN when the feature has one)."""
    f = int(t.feature[n])
    dom = st.domains[f]
    if dom.codes is not None:
        s = np.array([node_yes(ens, t, n, float(dom.reps[j])) for j in dom.valid], dtype=bool)
    else:
        s = np.arange(len(dom.valid)) < split_rank(dom, float(t.threshold[n]))
        if t.missing is not None and t.missing[n] == MISSING_ZERO:
            band = [r for r, j in enumerate(dom.valid) if abs(dom.reps[j]) <= ZERO_BAND]
            s[band] = bool(t.default_left[n])
    if has_nan_rank(ens, f):
        s = np.append(s, node_yes(ens, t, n, math.nan))
    return s


def _runs(s: np.ndarray) -> list[tuple[int, bool]]:
    """The maximal runs of equal values of ``s``: (end rank, value) each, in order."""
    cuts = np.flatnonzero(s[1:] != s[:-1]) + 1
    ends = [*cuts.tolist(), len(s)]
    return [(e, bool(s[e - 1])) for e in ends]


def _run_tree(out: RankedTree, at: int, f: int, runs, yes: int, no: int, fresh) -> None:
    """Node ``at`` as a balanced tree of tests "rank < end of a run" whose leaves are
    the runs, each the node's ``yes`` or ``no`` child. One run: a test every rank
    passes (R past the last rank) or fails (R = 0); the walk follows it without a
    split."""
    if len(runs) == 1:
        out[at] = (f, runs[0][0] if runs[0][1] else 0, yes, no)
        return
    k = len(runs) // 2

    def side(part) -> int:
        if len(part) == 1:
            return yes if part[0][1] else no
        node = fresh[0]
        fresh[0] += 1
        _run_tree(out, node, f, part, yes, no, fresh)
        return node

    out[at] = (f, runs[k - 1][0], side(runs[:k]), side(runs[k:]))
