"""A sub-box's Lagrangian bound on the pair-sum row from its parent box's (numba): the walk of
a recorded tree of cuts (cut_walk.py) bounds each box from the one it was cut from, rather
than from the whole space (pair_mplp.box_bound).

A box is a tuple (``Box`` below): its leaves (CSR by tree of F: ptr, d), each tree's segments
of each column it reads (its leaves' cuts: segoff, sega, segb, as pair_mplp_jit.segments),
its L per segment (lval), and per leaf and column its tree reads a slot (``boff[k * C + c] +
p``) holding the leaf's first and end segment (s0, s1) and the max of L over them (ml); ``s``
each leaf's value plus its ml. Only the whole space's box is gathered by walking F's trees.
A child differs from its parent on the cut column only, so its leaves are the parent's
whose interval there meets the child's (read off their segments); its segments are runs of
the parent's (a child's leaf's interval is a union of the parent's segments of its tree:
each run ends where one of the child's leaves does), found in the parent's numbering, not
over the column's ranks; its L on a run is the parent's maximum over it; and the ml of a leaf
on a column other than the cut one is the parent's (the same segments' maximum); a tree
that keeps every leaf keeps its segments there as they are (copied, not run through). A tree
the parent's L had on a column it no longer reads within the child (every leaf spans it)
gives up its L there, and the largest value of that L over the child's ranks is spread
evenly over the trees still reading the column, so the column's L still sums to at least 0
at every rank. Every MPLP column update leaves its column's L summing to at least 0, so the
total after any update is a sound bound: a sweep starts from the cut column and stops at
the first column whose update takes the total to the floor.
"""

import numba
import numpy as np

from . import pair_mplp_jit
from .kernel_cache import compiled_from
from .pair_mplp_jit import NEG, column_scratch, max_over, segments, total_of, update_column

compiled_from(__file__, pair_mplp_jit)

jit = numba.njit(cache=True, nogil=True)

EPS = 2.0**-52

# Box: (ptr, d, segoff, sega, segb, lval, boff, s0, s1, ml, s)


@jit
def root_box(ptr, cl, ch, d, blo, bhi):
    """The whole space's box from its gathered leaves (pair_mplp_jit.gather), L = 0."""
    K, C = ptr.shape[0] - 1, blo.shape[0]
    segoff, sega, segb, s0d, s1d = segments(ptr, cl, ch, blo, bhi)
    boff = np.zeros(K * C, np.int64)
    j = 0
    for k in range(K):
        for c in range(C):
            q = k * C + c
            if segoff[q + 1] > segoff[q]:
                boff[q] = j - ptr[k]
                j += ptr[k + 1] - ptr[k]
    s0 = np.empty(j, np.int32)
    s1 = np.empty(j, np.int32)
    for k in range(K):
        for c in range(C):
            q = k * C + c
            if segoff[q + 1] > segoff[q]:
                for p in range(ptr[k], ptr[k + 1]):
                    s0[boff[q] + p] = s0d[c, p]
                    s1[boff[q] + p] = s1d[c, p]
    lval = np.zeros(sega.shape[0])
    ml = np.zeros(j)
    return ptr, d.copy(), segoff, sega, segb, lval, boff, s0, s1, ml, d.copy()


@jit
def _leaves_meeting(ptr, d, cut, C, lo, hi, segoff, sega, segb, boff, s0, s1):
    """The parent's leaves whose interval on ``cut`` meets [lo, hi): (ptr, d, idx: each
    one's index among the parent's)."""
    K = ptr.shape[0] - 1
    ptr2 = np.zeros(K + 1, np.int64)
    idx = np.empty(d.shape[0], np.int64)
    j = 0
    for k in range(K):
        q = k * C + cut
        reads = segoff[q + 1] > segoff[q]
        bq = boff[q]
        for p in range(ptr[k], ptr[k + 1]):
            if not reads or (sega[s0[bq + p]] < hi and segb[s1[bq + p] - 1] > lo):
                idx[j] = p
                j += 1
        ptr2[k + 1] = j
    idx = idx[:j]
    d2 = np.empty(j)
    for i in range(j):
        d2[i] = d[idx[i]]
    return ptr2, d2, idx


@jit
def _runs(q, g0, g1, g, mark, at, psega, psegb, plval, sega, segb, lval):
    """The parent's segments g0:g1 of one tree and column as runs ending at the marked
    (``mark[h] == q``) segment starts, written from g (each run's L: the parent's maximum
    over it; ``at[h]``: the run a marked h starts, from g). Returns the next run's index."""
    j = g
    sega[j] = psega[g0]
    mx = plval[g0]
    at[g0] = 0
    for h in range(g0 + 1, g1):
        if mark[h] == q:
            segb[j] = psega[h]
            lval[j] = mx
            j += 1
            at[h] = j - g
            sega[j] = psega[h]
            mx = plval[h]
        elif plval[h] > mx:
            mx = plval[h]
    segb[j] = psegb[g1 - 1]
    lval[j] = mx
    at[g1] = j + 1 - g
    return j + 1


@jit
def _copied(g0, g1, i0, n, g, slot, parent, child):
    """A tree's segments g0:g1 of a column other than the cut one, and its n leaves' slots
    from the parent's i0 on, as they are in the parent (written from g and slot): the tree
    keeps every leaf, so there its segments, L and leaf terms are the parent's. Returns the
    next segment."""
    _, _, _, psega, psegb, plval, _, ps0, ps1, pml, _ = parent
    sega, segb, lval, s0, s1, ml = child
    m, shift = g1 - g0, g - g0
    sega[g : g + m] = psega[g0:g1]
    segb[g : g + m] = psegb[g0:g1]
    lval[g : g + m] = plval[g0:g1]
    for i in range(n):
        s0[slot + i] = ps0[i0 + i] + shift
        s1[slot + i] = ps1[i0 + i] + shift
        ml[slot + i] = pml[i0 + i]
    return g + m


@jit
def _child_segments(ptr, idx, cut, blo, bhi, parent):
    """The child's segments, L and slots (ml: the parent's) before the hand-over; with, per
    column, the L given up (``shift``) and the trees still reading it (``nk``)."""
    pptr, _, psegoff, psega, psegb, plval, pboff, ps0, ps1, pml, _ = parent
    K, C = ptr.shape[0] - 1, blo.shape[0]
    m0, n0 = psega.shape[0], ps0.shape[0]
    segoff = np.zeros(K * C + 1, np.int64)
    sega, segb, lval = np.empty(m0, np.int32), np.empty(m0, np.int32), np.empty(m0)
    boff = np.zeros(K * C, np.int64)
    s0, s1, ml = np.empty(n0, np.int32), np.empty(n0, np.int32), np.empty(n0)
    shift, nk = np.zeros(C), np.zeros(C, np.int64)
    mark, at = np.full(m0 + 1, -1, np.int64), np.empty(m0 + 1, np.int64)
    child = sega, segb, lval, s0, s1, ml
    slot = 0
    for k in range(K):
        a0, b0 = ptr[k], ptr[k + 1]
        kept = b0 - a0 == pptr[k + 1] - pptr[k]  # every leaf: off the cut column, as it was
        for c in range(C):
            q = k * C + c
            g0, g1, pb = psegoff[q], psegoff[q + 1], pboff[q]
            segoff[q + 1] = segoff[q]
            if g1 == g0:
                continue
            if kept and c != cut:
                nk[c] += 1
                boff[q] = slot - a0
                i0, n = pb + idx[a0], b0 - a0
                segoff[q + 1] = _copied(g0, g1, i0, n, segoff[q], slot, parent, child)
                slot += n
                continue
            if c == cut:  # the parent's segments within the child's range
                while psegb[g0] <= blo[c]:
                    g0 += 1
                while psega[g1 - 1] >= bhi[c]:
                    g1 -= 1
            inner = False  # whether a leaf ends within the child's range
            for p in range(a0, b0):
                a, b = max(ps0[pb + idx[p]], g0), min(ps1[pb + idx[p]], g1)
                inner |= a > g0 or b < g1
                mark[a] = q
                mark[b] = q
            if not inner:
                shift[c] += max_over(plval, g0, g1)
                continue
            nk[c] += 1
            g = segoff[q]
            segoff[q + 1] = _runs(q, g0, g1, g, mark, at, psega, psegb, plval, sega, segb, lval)
            boff[q] = slot - a0
            for p in range(a0, b0):
                a, b = max(ps0[pb + idx[p]], g0), min(ps1[pb + idx[p]], g1)
                s0[slot] = g + at[a]
                s1[slot] = g + at[b]
                ml[slot] = pml[pb + idx[p]]
                slot += 1
            if c == cut:
                sega[g] = max(sega[g], blo[c])
                segb[segoff[q + 1] - 1] = min(segb[segoff[q + 1] - 1], bhi[c])
    m = segoff[K * C]
    return segoff, sega[:m], segb[:m], lval[:m], boff, s0[:slot], s1[:slot], ml[:slot], shift, nk


@jit
def child_box(parent, cut, blo, bhi):
    """The box [blo, bhi) cut from ``parent`` on column ``cut``, its L the parent's."""
    pptr, pd, psegoff, psega, psegb, _, pboff, ps0, ps1, _, _ = parent
    ptr, d, idx = _leaves_meeting(
        pptr, pd, cut, blo.shape[0], blo[cut], bhi[cut], psegoff, psega, psegb, pboff, ps0, ps1
    )
    segoff, sega, segb, lval, boff, s0, s1, ml, shift, nk = _child_segments(
        ptr, idx, cut, blo, bhi, parent
    )
    K, C = ptr.shape[0] - 1, blo.shape[0]
    for c in range(C):
        add = 0.0
        if nk[c] >= 2 and shift[c] != 0.0:
            # rounded up, so that the column's L still sums to at least 0
            add = shift[c] / nk[c]
            add += abs(add) * 4.0 * EPS * (nk[c] + 2)
        if nk[c] >= 2 and add == 0.0 and c != cut:
            continue
        for k in range(K):
            q = k * C + c
            if segoff[q + 1] == segoff[q]:
                continue
            for h in range(segoff[q], segoff[q + 1]):
                lval[h] = 0.0 if nk[c] < 2 else lval[h] + add  # a zero-sum L of one tree: 0
            for p in range(boff[q] + ptr[k], boff[q] + ptr[k + 1]):
                if nk[c] < 2:
                    ml[p] = 0.0
                elif c == cut:  # the leaves' intervals were clipped here
                    ml[p] = max_over(lval, s0[p], s1[p])
                else:
                    ml[p] += add
    s = _sums(ptr, d, segoff, boff, ml, d.copy(), C)
    return ptr, d, segoff, sega, segb, lval, boff, s0, s1, ml, s


@jit
def _sums(ptr, d, segoff, boff, ml, s, C):
    """s: each leaf's value plus its ml over the columns its tree reads (afresh)."""
    s[:] = d
    for k in range(ptr.shape[0] - 1):
        for c in range(C):
            q = k * C + c
            if segoff[q + 1] > segoff[q]:
                for p in range(ptr[k], ptr[k + 1]):
                    s[p] += ml[boff[q] + p]
    return s


@jit
def _tree_max(ptr, s, tmax, trees):
    for k in trees:
        best = NEG
        for p in range(ptr[k], ptr[k + 1]):
            best = max(best, s[p])
        tmax[k] = best


@jit
def _sum(x):
    t = 0.0
    for v in x:
        t += v
    return t


@jit
def sweep_from(box, blo, bhi, sweeps, floor2, first):
    """At most ``sweeps`` MPLP sweeps over the box (lval, ml, s changed in place), columns
    from ``first`` on; stops at the first column update whose total is a margin under floor2
    (the in-place sums' rounding), after a sweep at most floor2, or once the last sweep's fall
    cannot reach it. Returns (least total, columns updated)."""
    ptr, d, segoff, sega, segb, lval, boff, s0, s1, ml, s = box
    C, K = blo.shape[0], ptr.shape[0] - 1
    M, table, mk = column_scratch(blo, bhi, sega.shape[0])
    tptr, tlist = np.zeros(C + 1, np.int64), np.empty(K * C, np.int64)  # each column's trees
    for c in range(C):
        j = tptr[c]
        for k in range(K):
            if segoff[k * C + c + 1] > segoff[k * C + c]:
                tlist[j] = k
                j += 1
        tptr[c + 1] = j
    tmax = np.empty(K)  # each tree's largest s: the total is their sum, as total_of's
    _tree_max(ptr, s, tmax, np.arange(K))
    margin = 1e-7 * (abs(floor2) + 1.0)
    best, last, cols = np.inf, np.inf, 0
    for sw in range(sweeps):
        for i in range(C):
            c = (first + i) % C
            trees = tlist[tptr[c] : tptr[c + 1]]
            if trees.shape[0] < 2:
                continue
            update_column(
                c, ptr, segoff, sega, segb, boff, s0, s1, lval, ml, s, blo, bhi, mk, M, table,
                trees, tmax,
            )  # fmt: skip
            cols += 1
            if _sum(tmax) <= floor2 - margin:
                return floor2 - margin, cols
        _sums(ptr, d, segoff, boff, ml, s, C)  # afresh: no drift from the in-place updates
        _tree_max(ptr, s, tmax, np.arange(K))
        t = _sum(tmax)
        best = min(best, t)
        if t <= floor2 or (sw > 0 and (last - t) * (sweeps - 1 - sw) < t - floor2):
            break
        last = t
    return best, cols


@jit
def box_bounds(box, blo, bhi, sweeps, floor2, gate2, first):
    """A box's pair-sum bounds: (at L = 0, with the parent's L inherited, least found,
    columns updated); sweeps (its L changed in place) run only where the bound at L = 0 is
    within gate2 of floor2 (pair-sum units), from the column ``first``."""
    ptr, d = box[0], box[1]
    plain = total_of(ptr, d)
    warm, best, cols = plain, plain, 0
    if plain > floor2:
        warm = total_of(ptr, box[10])
        best = min(plain, warm)
        if best > floor2 and plain - floor2 <= gate2 and sweeps > 0:
            t, cols = sweep_from(box, blo, bhi, sweeps, floor2, first)
            best = min(best, t)
    return plain, warm, best, cols
