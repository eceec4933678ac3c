"""A Lagrangian (consensus) bound on a box's pair-sum row, optimised by MPLP, compiled
(numba): imported on first use only, cached on disk where numba can write.

Over a box, the pair sum is sum_k D_k(s) over the trees k reading F. For any L with
sum_k L[k, c, r] >= 0 over the trees reading column c, at every rank r of the box, its
maximum is at most sum_k max over k's leaves meeting the box of [the leaf's value + sum_c
max of L[k, c, .] over the leaf's interval of c]; L = 0 gives the kernel's own term. MPLP's
star update of a column c (exact block-coordinate descent) sets L[k, c, r] = M(r)/n -
m_k(r), m_k the tree's max-marginal without c's L, M their sum, n the trees reading c.

m_k is constant on the tree's own segments of c (the cuts of its leaves meeting the box),
so L is kept per segment as the maximum over it (``lval``): a leaf's interval is a union of
its tree's segments, so the leaf terms are exact, and the segment maxima sum to at least the
rank-wise zero sum (still sound). M is built with difference arrays and its range maxima
read from a sparse table: a sweep's work is leaves x segments, not leaves x ranks.

A box's leaves are gathered by walking each tree of F within it (``packed`` nodes, as
gap_kernel.packed_nodes: column, rank, yes, no; a child < 0 is the leaf -1 - child).
"""

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)

NEG = -1e300
EPS = 2.0**-52


@jit
def _walk(packed, root, blo, bhi, slo, shi, sid, values, cl, ch, d, j, fill):
    """The leaves of one tree meeting [blo, bhi), their intervals clipped to it, written
    from row j of cl/ch/d when ``fill`` (else only counted). Returns the next row."""
    C = blo.shape[0]
    sid[0] = root
    slo[0, :] = blo
    shi[0, :] = bhi
    sp = 1
    while sp > 0:
        sp -= 1
        n = sid[sp]
        if n < 0:
            if fill:
                cl[j, :] = slo[sp]
                ch[j, :] = shi[sp]
                d[j] = values[-1 - n]
            j += 1
            continue
        c, r = packed[n, 0], packed[n, 1]
        a, b = slo[sp, c], shi[sp, c]
        if b <= r:
            sid[sp] = packed[n, 2]
            sp += 1
        elif a >= r:
            sid[sp] = packed[n, 3]
            sp += 1
        else:
            for i in range(C):
                slo[sp + 1, i] = slo[sp, i]
                shi[sp + 1, i] = shi[sp, i]
            sid[sp] = packed[n, 3]
            slo[sp, c] = r
            sid[sp + 1] = packed[n, 2]
            shi[sp + 1, c] = r
            sp += 2
    return j


@jit
def gather(packed, roots, values, blo, bhi, depth):
    """CSR (ptr, cl, ch, d) of the leaves meeting the box, tree by tree of ``roots``;
    ``depth``: at least the deepest tree's depth plus 2 (the walk's stack)."""
    K, C = roots.shape[0], blo.shape[0]
    slo = np.empty((depth, C), np.int32)
    shi = np.empty((depth, C), np.int32)
    sid = np.empty(depth, np.int64)
    cl = np.empty((0, C), np.int32)
    d = np.empty(0)
    ptr = np.zeros(K + 1, np.int64)
    for k in range(K):
        ptr[k + 1] = _walk(
            packed, roots[k], blo, bhi, slo, shi, sid, values, cl, cl, d, ptr[k], False
        )
    n = ptr[K]
    cl = np.empty((n, C), np.int32)
    ch = np.empty((n, C), np.int32)
    d = np.empty(n)
    for k in range(K):
        _walk(packed, roots[k], blo, bhi, slo, shi, sid, values, cl, ch, d, ptr[k], True)
    return ptr, cl, ch, d


@jit
def reads_column(cl, ch, a, b, c, lo, hi):
    """Whether a leaf of a:b has an interval on column c short of [lo, hi)."""
    for p in range(a, b):  # noqa: SIM110 - a loop numba compiles
        if cl[p, c] > lo or ch[p, c] < hi:
            return True
    return False


@jit
def mark_cuts(cl, ch, a, b, c, mark, stamp):
    """Marks the cuts of the leaves a:b on column c with ``stamp``; returns how many."""
    m = 0
    for p in range(a, b):
        for r in (cl[p, c], ch[p, c]):
            if mark[r] != stamp:
                mark[r] = stamp
                m += 1
    return m


@jit
def number_segments(mark, q, lo, hi, g, end, at, sega, segb):
    """The segments g:end of one tree and column, from the ranks of lo..hi its cuts marked
    (``mark[r] == q``): each one's first rank in ``sega``, its end in ``segb``, and each
    marked rank's segment (from g) in ``at``."""
    g0 = g
    for r in range(lo, hi + 1):
        if mark[r] == q:
            at[r] = g - g0
            if g < end:
                sega[g] = r
            if g > g0:
                segb[g - 1] = r
            g += 1


@jit
def segments(ptr, cl, ch, blo, bhi):
    """Each tree's segments of each column it reads within the box (a column it reads: a
    leaf's interval short of the box's): its leaves' cuts, marked on the column's ranks.
    Returns (segoff int64[K*C+1]: the segments of (k, c) are segoff[k*C+c]:segoff[k*C+c+1],
    none where k does not read c; sega, segb: each segment's ranks [a, b); s0, s1
    int64[C, leaves]: each leaf's segments)."""
    K, C = ptr.shape[0] - 1, blo.shape[0]
    n = cl.shape[0]
    segoff = np.zeros(K * C + 1, np.int64)
    mark = np.full(bhi.max() + 1, -1, np.int64)
    at = np.empty(bhi.max() + 1, np.int64)
    for k in range(K):
        for c in range(C):
            q = k * C + c
            segoff[q + 1] = segoff[q]
            if reads_column(cl, ch, ptr[k], ptr[k + 1], c, blo[c], bhi[c]):
                segoff[q + 1] += mark_cuts(cl, ch, ptr[k], ptr[k + 1], c, mark, q) - 1
    sega = np.empty(segoff[K * C], np.int32)
    segb = np.empty(segoff[K * C], np.int32)
    s0 = np.full((C, n), -1, np.int64)
    s1 = np.full((C, n), -1, np.int64)
    mark[:] = -1
    for k in range(K):
        for c in range(C):
            q = k * C + c
            g = segoff[q]
            if segoff[q + 1] == g:
                continue
            mark_cuts(cl, ch, ptr[k], ptr[k + 1], c, mark, q)
            number_segments(mark, q, blo[c], bhi[c], g, segoff[q + 1], at, sega, segb)
            for p in range(ptr[k], ptr[k + 1]):
                s0[c, p] = segoff[q] + at[cl[p, c]]
                s1[c, p] = segoff[q] + at[ch[p, c]]
    return segoff, sega, segb, s0, s1


@jit
def leaf_terms(ptr, d, s0, s1, lval):
    """(ml, s): each leaf's max of its tree's L over its interval, per column (0 where the
    tree does not read it), and its value plus their sum."""
    C, n = s0.shape
    ml = np.zeros((C, n))
    s = d.copy()
    for c in range(C):
        for p in range(n):
            if s0[c, p] >= 0:
                mx = NEG
                for g in range(s0[c, p], s1[c, p]):
                    if lval[g] > mx:
                        mx = lval[g]
                ml[c, p] = mx
                s[p] += mx
    return ml, s


@jit
def total_of(ptr, s):
    """sum over trees of the max over their leaves of s."""
    tot = 0.0
    for k in range(ptr.shape[0] - 1):
        best = NEG
        for p in range(ptr[k], ptr[k + 1]):
            if s[p] > best:
                best = s[p]
        tot += best
    return tot


@jit
def _sparse_max(M, w, table):
    """table[j, i]: max of M[i : i + 2**j] (i + 2**j <= w)."""
    table[0, :w] = M[:w]
    j = 1
    while (1 << j) <= w:
        h = 1 << (j - 1)
        for i in range(w - (1 << j) + 1):
            x, y = table[j - 1, i], table[j - 1, i + h]
            table[j, i] = x if x > y else y
        j += 1


@jit
def _range_max(table, a, b):
    j = 0
    while (2 << j) <= b - a:
        j += 1
    x, y = table[j, a], table[j, b - (1 << j)]
    return x if x > y else y


@jit
def update_column(
    c, ptr, segoff, sega, segb, boff, s0, s1, lval, ml, s, blo, bhi, mk, M, table, trees, tmax
):
    """MPLP's star update of column c (``trees``: those reading it): lval, ml and s changed
    in place, and each of those trees' largest s in tmax. Leaf p of tree k on column c is at
    slot boff[k * C + c] + p of s0, s1 and ml (flat: mplp's (columns, leaves) arrays,
    reshaped; the cut walk's, per tree and column read)."""
    C = blo.shape[0]
    nk = trees.shape[0]
    if nk < 2:
        return
    base, w = blo[c], bhi[c] - blo[c]
    M[: w + 1] = 0.0
    absum, terms = 0.0, 0
    for k in trees:
        q = k * C + c
        g0, g1, bq = segoff[q], segoff[q + 1], boff[q]
        mk[g0:g1] = NEG
        for p in range(ptr[k], ptr[k + 1]):
            v = s[p] - ml[bq + p]
            for g in range(s0[bq + p], s1[bq + p]):
                x = mk[g]
                mk[g] = v if v > x else x  # a select, not a branch
        for g in range(g0, g1):
            M[sega[g] - base] += mk[g]
            M[segb[g] - base] -= mk[g]
            absum += 2.0 * abs(mk[g])
        terms += 2 * (g1 - g0)
    for r in range(1, w):
        M[r] += M[r - 1]
    # the prefix sums' rounding, at most, so that the segment maxima sum to >= 0
    margin = 4.0 * (terms + w + nk) * EPS * absum
    _sparse_max(M, w, table)
    for k in trees:
        q = k * C + c
        g0, g1, bq = segoff[q], segoff[q + 1], boff[q]
        for g in range(g0, g1):
            top = _range_max(table, sega[g] - base, segb[g] - base) + margin
            lval[g] = top / nk - mk[g]
        best = NEG
        for p in range(ptr[k], ptr[k + 1]):
            mx = max_over(lval, s0[bq + p], s1[bq + p])
            s[p] += mx - ml[bq + p]
            ml[bq + p] = mx
            best = max(best, s[p])
        tmax[k] = best


@jit
def max_over(lval, a, b):
    """The largest of lval[a:b] (a < b)."""
    mx = lval[a]
    for g in range(a + 1, b):
        y = lval[g]
        mx = y if y > mx else mx
    return mx


@jit
def column_scratch(blo, bhi, segments):
    """update_column's work arrays for a box [blo, bhi) of ``segments`` segments: M over
    the widest column's ranks, its sparse table of range maxima, the segments' maxima."""
    w = 1
    for c in range(blo.shape[0]):
        w = max(w, bhi[c] - blo[c])
    levels = 1
    while (1 << levels) <= w:
        levels += 1
    return np.empty(w + 1), np.empty((levels, w)), np.empty(segments)


@jit
def mplp(ptr, d, segoff, sega, segb, s0, s1, lval, blo, bhi, sweeps, floor2):
    """At most ``sweeps`` sweeps of star updates over the columns from ``lval`` (changed in
    place), stopping once a sweep's total is at most floor2, or out of its reach. Returns the totals after each
    sweep (each sound: every column with two trees reading it was updated since ``lval``
    was given; the caller sets the others' lval to 0)."""
    C = blo.shape[0]
    ml, s = leaf_terms(ptr, d, s0, s1, lval)
    M, table, mk = column_scratch(blo, bhi, sega.shape[0])
    K, n = ptr.shape[0] - 1, d.shape[0]
    tmax = np.empty(K)
    reading = np.diff(segoff).reshape(K, C) > 0
    boff = np.empty(K * C, np.int64)  # leaf p of (k, c) at c * n + p of the flat arrays
    for q in range(K * C):
        boff[q] = (q % C) * n
    flat0, flat1, flatm = s0.reshape(C * n), s1.reshape(C * n), ml.reshape(C * n)  # views
    out = np.empty(sweeps)
    for sw in range(sweeps):
        for c in range(C):
            trees = np.flatnonzero(reading[:, c])
            args = (segoff, sega, segb, boff, flat0, flat1, lval, flatm, s, blo, bhi)
            update_column(c, ptr, *args, mk, M, table, trees, tmax)
        s[:] = d  # afresh: no drift from the in-place updates
        for c in range(C):
            for p in range(s.shape[0]):
                s[p] += ml[c, p]
        out[sw] = total_of(ptr, s)
        if out[sw] <= floor2 or (sw > 0 and _out_of_reach(out, sw, sweeps, floor2)):
            return out[: sw + 1]
    return out


@jit
def _out_of_reach(out, sw, sweeps, floor2):
    """Whether the sweeps left, each falling as much as the last did, cannot reach floor2
    (the falls shrink as MPLP converges)."""
    left = sweeps - 1 - sw
    return floor2 > NEG and (out[sw - 1] - out[sw]) * left < out[sw] - floor2


@jit
def warm_values(K, C, segoff, sega, segb, psegoff, psega, psegb, plval):
    """A child box's lval from its parent's: each segment's maximum of the parent's lval
    over the parent's segments of the same tree and column meeting it; 0 on a column fewer
    than two trees read in the child, or the tree did not read in the parent."""
    lval = np.zeros(sega.shape[0])
    for c in range(C):
        nk = 0
        for k in range(K):
            if segoff[k * C + c + 1] > segoff[k * C + c]:
                nk += 1
        if nk < 2:
            continue
        for k in range(K):
            q = k * C + c
            pg, pend = psegoff[q], psegoff[q + 1]
            if pend == pg:
                continue
            for g in range(segoff[q], segoff[q + 1]):
                while psegb[pg] <= sega[g]:
                    pg += 1
                mx = plval[pg]
                h = pg
                while h + 1 < pend and psega[h + 1] < segb[g]:
                    h += 1
                    if plval[h] > mx:
                        mx = plval[h]
                lval[g] = mx
    return lval


@jit
def lag_rows(lag, lo, hi, u, u_floor, start):
    """The box's bound u (row units), or its pair-sum row's MPLP bound from L = 0 where
    lower: run where u is within the gate of ``u_floor`` and the box is not resolved
    (``start`` < 0: its u is exact) (``lag``: pair_mplp.kernel_lag's; None: never, and
    numba prunes the call, so that the kernel compiles without it)."""
    if lag is None:
        return u
    return _lag_rows(lag, lo, hi, u, u_floor, start)


@jit
def _lag_rows(lag, lo, hi, u, u_floor, start):
    packed, roots, values, depth, sweeps, gate, threshold = lag
    if sweeps <= 0 or start < 0 or u - u_floor > gate:
        return u
    ptr, cl, ch, d = gather(packed, roots, values, lo, hi, depth)
    segoff, sega, segb, s0, s1 = segments(ptr, cl, ch, lo, hi)
    lval = np.zeros(sega.shape[0])
    out = mplp(ptr, d, segoff, sega, segb, s0, s1, lval, lo, hi, sweeps, 2.0 * u_floor + threshold)
    t = (out.min() - threshold) / 2.0
    return t if t < u else u
