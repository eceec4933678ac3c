"""A sub-box's Lagrangian bound on the pair-sum row from its parent box's (numba): the walk of
a recorded tree of cuts (cut_walk.py) bounds each box from the one it was cut from, rather
than from the whole space (pair_mplp.box_bound).

Leaves are kept column-major (``clT``, ``chT``: int32[columns, leaves]) and filtered from the
parent's, not gathered again by walking F's trees. A tree reads no column within the child that
it did not read within the parent, so only those are marked. The parent's L is inherited
(each child segment's maximum of the parent's L over it) and, unlike pair_mplp_jit.warm_values,
kept sound before any sweep: a tree the parent's L had on a column it no longer reads within
the child gives up its L there, and the largest value of that L over the child's ranks is
spread evenly over the trees still reading the column, so the column's L still sums to at
least 0 at every rank. Every MPLP column update leaves its column's L summing to at least 0,
so the total after any update is a sound bound: a sweep starts from the cut column and stops
at the first column whose update takes the total to the floor.
"""

import numba
import numpy as np

from . import pair_mplp_jit
from .kernel_cache import compiled_from
from .pair_mplp_jit import (
    leaf_terms,
    mark_cuts,
    number_segments,
    reads_column,
    total_of,
    update_column,
)

compiled_from(__file__, pair_mplp_jit)

jit = numba.njit(cache=True, nogil=True)

EPS = 2.0**-52


@jit
def leaves_within(ptr, clT, chT, d, blo, bhi):
    """The leaves (CSR by tree: ptr, clT, chT, d) meeting [blo, bhi), clipped to it."""
    K, C = ptr.shape[0] - 1, blo.shape[0]
    n0 = d.shape[0]
    keep = np.ones(n0, np.bool_)
    for c in range(C):
        a, b = blo[c], bhi[c]
        for p in range(n0):
            if clT[c, p] >= b or chT[c, p] <= a:
                keep[p] = False
    ptr2 = np.zeros(K + 1, np.int64)
    idx = np.empty(n0, np.int64)
    j = 0
    for k in range(K):
        for p in range(ptr[k], ptr[k + 1]):
            if keep[p]:
                idx[j] = p
                j += 1
        ptr2[k + 1] = j
    cl2 = np.empty((C, j), np.int32)
    ch2 = np.empty((C, j), np.int32)
    d2 = np.empty(j)
    for i in range(j):
        d2[i] = d[idx[i]]
    for c in range(C):
        a, b = blo[c], bhi[c]
        for i in range(j):
            x, y = clT[c, idx[i]], chT[c, idx[i]]
            cl2[c, i] = x if x > a else a
            ch2[c, i] = y if y < b else b
    return ptr2, cl2, ch2, d2


@jit
def _count(clT, chT, a0, b0, c, lo, hi, mark, q):
    """The segments of tree (leaves a0:b0) on column c within [lo, hi): 0 where it does not
    read c there (every leaf spans it), else its leaves' distinct cuts less one (the
    leaves column-major here, so pair_mplp_jit's helpers read their transposes)."""
    cl, ch = clT.T, chT.T
    if not reads_column(cl, ch, a0, b0, c, lo, hi):
        return 0
    return mark_cuts(cl, ch, a0, b0, c, mark, q) - 1


@jit
def segments_within(ptr, clT, chT, blo, bhi, psegoff):
    """pair_mplp_jit.segments over column-major leaves, on the columns each tree read in the
    parent only (``psegoff``, the parent's segoff; empty: every column)."""
    K, C = ptr.shape[0] - 1, blo.shape[0]
    n = clT.shape[1]
    had = psegoff.shape[0] > 0
    segoff = np.zeros(K * C + 1, np.int64)
    mark = np.full(bhi.max() + 1, -1, np.int64)
    at = np.empty(bhi.max() + 1, np.int64)
    for k in range(K):
        for c in range(C):
            q = k * C + c
            segoff[q + 1] = segoff[q]
            if not had or psegoff[q + 1] > psegoff[q]:
                segoff[q + 1] += _count(clT, chT, ptr[k], ptr[k + 1], c, blo[c], bhi[c], mark, q)
    sega = np.empty(segoff[K * C], np.int32)
    segb = np.empty(segoff[K * C], np.int32)
    s0 = np.full((C, n), -1, np.int64)
    s1 = np.full((C, n), -1, np.int64)
    mark[:] = -1
    for k in range(K):
        a0, b0 = ptr[k], ptr[k + 1]
        for c in range(C):
            q = k * C + c
            g = segoff[q]
            if segoff[q + 1] == g:
                continue
            for p in range(a0, b0):
                mark[clT[c, p]] = q
                mark[chT[c, p]] = q
            number_segments(mark, q, blo[c], bhi[c], g, segoff[q + 1], at, sega, segb)
            for p in range(a0, b0):
                s0[c, p] = segoff[q] + at[clT[c, p]]
                s1[c, p] = segoff[q] + at[chT[c, p]]
    return segoff, sega, segb, s0, s1


@jit
def _max_over(psega, psegb, plval, pg, pend, a, b):
    """The largest of the parent's L over its segments pg:pend meeting [a, b), and the
    first of them (where the next, later range's search starts)."""
    while psegb[pg] <= a:
        pg += 1
    mx = plval[pg]
    h = pg
    while h + 1 < pend and psega[h + 1] < b:
        h += 1
        if plval[h] > mx:
            mx = plval[h]
    return mx, pg


@jit
def inherited(blo, bhi, segoff, sega, segb, psegoff, psega, psegb, plval):
    """The child's L from its parent's: each segment's maximum of the parent's L over it; the
    L of a tree that stopped reading a column spread over the trees still reading it; 0 on
    a column fewer than two trees read (a zero-sum L there is 0)."""
    C = blo.shape[0]
    K = (segoff.shape[0] - 1) // C
    lval = np.zeros(sega.shape[0])
    for c in range(C):
        nk = 0
        for k in range(K):
            nk += segoff[k * C + c + 1] > segoff[k * C + c]
        if nk < 2:
            continue
        shift = 0.0
        for k in range(K):
            q = k * C + c
            pg, pend = psegoff[q], psegoff[q + 1]
            if pend == pg:
                continue
            if segoff[q + 1] == segoff[q]:
                shift += _max_over(psega, psegb, plval, pg, pend, blo[c], bhi[c])[0]
                continue
            for g in range(segoff[q], segoff[q + 1]):
                lval[g], pg = _max_over(psega, psegb, plval, pg, pend, sega[g], segb[g])
        if shift != 0.0:
            # rounded up, so that the column's L still sums to at least 0
            add = shift / nk
            add += abs(add) * 4.0 * EPS * (nk + 2)
            for k in range(K):
                for g in range(segoff[k * C + c], segoff[k * C + c + 1]):
                    lval[g] += add
    return lval


@jit
def sweep_from(ptr, d, segoff, sega, segb, s0, s1, lval, ml, s, blo, bhi, sweeps, floor2, first):
    """At most ``sweeps`` MPLP sweeps from ``lval`` (ml, s: its leaf terms; all changed in
    place), columns from ``first`` on; stops at the first column update whose total is a
    margin under floor2 (the in-place sums' rounding), after a sweep at most floor2, or once
    the last sweep's fall cannot reach it. Returns (least total, columns updated)."""
    C, K = blo.shape[0], ptr.shape[0] - 1
    w = 1
    for c in range(C):
        w = max(w, bhi[c] - blo[c])
    levels = 1
    while (1 << levels) <= w:
        levels += 1
    M, table, mk = np.empty(w + 1), np.empty((levels, w)), np.empty(sega.shape[0])
    reading = np.diff(segoff).reshape(K, C) > 0
    margin = 1e-7 * (abs(floor2) + 1.0)
    best, last, cols = np.inf, np.inf, 0
    for sw in range(sweeps):
        for i in range(C):
            c = (first + i) % C
            trees = np.flatnonzero(reading[:, c])
            if trees.shape[0] < 2:
                continue
            update_column(
                c, ptr, segoff, sega, segb, s0, s1, lval, ml, s, blo, bhi, mk, M, table, trees
            )
            cols += 1
            if total_of(ptr, s) <= floor2 - margin:
                return floor2 - margin, cols
        s[:] = d  # afresh: no drift from the in-place updates
        for c in range(C):
            for p in range(s.shape[0]):
                s[p] += ml[c, p]
        t = total_of(ptr, s)
        best = min(best, t)
        if t <= floor2 or (sw > 0 and (last - t) * (sweeps - 1 - sw) < t - floor2):
            break
        last = t
    return best, cols


@jit
def child_bound(ptr, clT, chT, d, blo, bhi, parent, sweeps, floor2, gate2, first):
    """A box's pair-sum bounds: (at L = 0, with the parent's L inherited, least found,
    columns updated, its state (segoff, sega, segb, lval)); ``parent``: the parent's state
    (empty arrays: none, L = 0); sweeps run only where the bound at L = 0 is within gate2 of
    floor2 (pair-sum units), from the column ``first``."""
    out = bound_and_segments(ptr, clT, chT, d, blo, bhi, parent, sweeps, floor2, gate2, first)
    return out[0], out[1], out[2], out[3], out[4]


@jit
def bound_and_segments(ptr, clT, chT, d, blo, bhi, parent, sweeps, floor2, gate2, first):
    """child_bound's, and each leaf's segments of each column (s0, s1: segments_within's)."""
    psegoff, psega, psegb, plval = parent
    plain = total_of(ptr, d)
    segoff, sega, segb, s0, s1 = segments_within(ptr, clT, chT, blo, bhi, psegoff)
    if psegoff.shape[0] > 0:
        lval = inherited(blo, bhi, segoff, sega, segb, psegoff, psega, psegb, plval)
    else:
        lval = np.zeros(sega.shape[0])
    warm, best, cols = plain, plain, 0
    if plain > floor2:
        ml, s = leaf_terms(ptr, d, s0, s1, lval)
        warm = total_of(ptr, s)
        best = min(plain, warm)
        if best > floor2 and plain - floor2 <= gate2 and sweeps > 0:
            t, cols = sweep_from(
                ptr, d, segoff, sega, segb, s0, s1, lval, ml, s, blo, bhi, sweeps, floor2, first
            )
            best = min(best, t)
    return plain, warm, best, cols, (segoff, sega, segb, lval), s0, s1
