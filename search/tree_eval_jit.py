"""The heuristic's tree walks (heuristic._TreeEval), compiled (numba): imported on first
use only, by a search long enough to repay the load (heuristic.COMPILED_AFTER_WORK) or on
a model deeper than heuristic.DEEP_LEVELS; cached on disk where numba can write.

``leaves`` reaches the same leaf as the numpy walk, row for row (the same comparison on
the same float64 values); ``add_in_order`` sums the trees' changes one tree after the
other as the numpy loop does, so the sums round as before and the ascent finds the same
pairs. The numpy walk steps every row as deep as the deepest tree (55 levels on the
255-leaf LightGBM churn model): compiled, each row stops at its own leaf.

A row's walk down a tree is a chain of reads each waiting on the one before (which node
next), and the 255-leaf churn model's node arrays (about 10 MB) lie beyond the core's own
caches: the walks step TREES_AT_ONCE trees in turn, whose reads do not wait on each
other, so the core overlaps them (``leaves``: 2.1x faster on that model's single rows).
"""

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)

TREES_AT_ONCE = 8  # 4 and 16 were slower


@jit
def leaves(root, feature, threshold, left, right, trees, X, lt):
    """The leaf (a joint node id) each row of ``X`` reaches in each of ``trees``:
    int64[trees, rows]. ``lt``: a node sends x to ``left`` when x < threshold (else when
    x <= threshold); a leaf's feature is negative."""
    out = np.empty((trees.shape[0], X.shape[0]), dtype=np.int64)
    at = np.empty(TREES_AT_ONCE, dtype=np.int64)
    for first in range(0, trees.shape[0], TREES_AT_ONCE):
        m = min(TREES_AT_ONCE, trees.shape[0] - first)
        for j in range(X.shape[0]):
            for w in range(m):
                at[w] = root[trees[first + w]]
            stepping = True
            while stepping:  # a step of each tree in turn until all are at their leaves
                stepping = False
                for w in range(m):
                    k = at[w]
                    g = feature[k]
                    if g >= 0:
                        v = X[j, g]
                        yes = v < threshold[k] if lt else v <= threshold[k]
                        at[w] = left[k] if yes else right[k]
                        stepping = True
            for w in range(m):
                out[first + w, j] = at[w]
    return out


@jit
def add_in_order(total, change):
    """total[r, o] += change[t, r, o], tree t after tree t (in place)."""
    for t in range(change.shape[0]):
        for r in range(change.shape[1]):
            for o in range(change.shape[2]):
                total[r, o] += change[t, r, o]


@jit
def add_varying(
    root,
    feature,
    threshold,
    left,
    right,
    reads,
    levels,
    trees,
    x,
    f,
    vals,
    order,
    lt,
    contrib,
    c,
    total,
):
    """total[j] += contrib[leaf] - c[t] for each of ``trees`` (t: its place in ``trees``) in
    order, where leaf is the one row ``x`` with feature ``f`` set to vals[order[j']] reaches,
    j = order[j'] (``vals`` sorted ascending, NaN last; ``order`` their places in the rows):
    the sums ``leaves`` and ``add_in_order`` give on those rows, bit for bit, with each
    tree walked once over all the values. A node on ``f`` sends a prefix of the sorted
    values (those it reads as "yes") to ``left`` and the rest to ``right``; the other
    side waits on a stack, at most one per level (``levels``: the deepest leaf's depth).
    c[t] must be the leaf value x itself reaches in tree t: a walk stops at a node x passes
    through under which no node reads ``f`` (``reads``: each node's features read at or
    under it, bit min(f, 63)), where every value reaches x's leaf and adds nothing (x + 0.0
    is x)."""
    stack = np.empty((levels + 1, 4), dtype=np.int64)
    xf = x[f]
    n, outs, fb = vals.shape[0], total.shape[1], min(f, 63)
    sums = np.empty((n, outs))  # total in the values' sorted order
    for jj in range(n):
        for o in range(outs):
            sums[jj, o] = total[order[jj], o]
    for i in range(trees.shape[0]):
        sp = 0
        k, a, b, onx = root[trees[i]], 0, n, 1  # onx: x itself passes through k
        while True:
            moved = True  # whether the values at k may reach a leaf other than x's
            while feature[k] >= 0:
                if onx and not (reads[k] >> fb) & 1:  # nothing under k reads f: x's leaf
                    moved = False
                    break
                g = feature[k]
                th = threshold[k]
                if g != f:
                    v = x[g]
                    yes = v < th if lt else v <= th
                    k = left[k] if yes else right[k]
                    continue
                lo, hi = a, b
                while lo < hi:  # the first value the node reads as "no"
                    mid = (lo + hi) >> 1
                    v = vals[mid]
                    if (v < th) if lt else (v <= th):
                        lo = mid + 1
                    else:
                        hi = mid
                xy = 1 if ((xf < th) if lt else (xf <= th)) else 0
                if lo == a:
                    k, onx = right[k], onx & (1 - xy)
                elif lo == b:
                    k, onx = left[k], onx & xy
                else:
                    stack[sp, 0], stack[sp, 1], stack[sp, 2] = right[k], lo, b
                    stack[sp, 3] = onx & (1 - xy)
                    sp += 1
                    k, b, onx = left[k], lo, onx & xy
            for o in range(outs if moved else 0):
                d = contrib[k, o] - c[i, o]
                if d != 0.0:  # x + 0.0 is x (a total of -0.0 aside, equal to it)
                    for jj in range(a, b):
                        sums[jj, o] += d
            if sp == 0:
                break
            sp -= 1
            k, a, b, onx = stack[sp, 0], stack[sp, 1], stack[sp, 2], stack[sp, 3]
    for jj in range(n):
        for o in range(outs):
            total[order[jj], o] = sums[jj, o]
    return total
