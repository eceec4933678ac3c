"""The heuristic's tree walks (heuristic._TreeEval), compiled (numba): imported on first
use only, by a search long enough to repay the load (heuristic.COMPILED_AFTER_WORK) or on
a model deeper than heuristic.DEEP_LEVELS; cached on disk where numba can write.

``leaves`` reaches the same leaf as the numpy walk, row for row (the same comparison on
the same float64 values); ``add_in_order`` sums the trees' changes one tree after the
other as the numpy loop does, so the sums round as before and the ascent finds the same
pairs. The numpy walk steps every row as deep as the deepest tree (55 levels on the
255-leaf LightGBM churn model): compiled, each row stops at its own leaf.
"""

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@jit
def leaves(root, feature, threshold, left, right, trees, X, lt):
    """The leaf (a joint node id) each row of ``X`` reaches in each of ``trees``:
    int64[trees, rows]. ``lt``: a node sends x to ``left`` when x < threshold (else when
    x <= threshold); a leaf's feature is negative."""
    out = np.empty((trees.shape[0], X.shape[0]), dtype=np.int64)
    for i in range(trees.shape[0]):
        start = root[trees[i]]
        for j in range(X.shape[0]):
            k = start
            while feature[k] >= 0:
                v = X[j, feature[k]]
                yes = v < threshold[k] if lt else v <= threshold[k]
                k = left[k] if yes else right[k]
            out[i, j] = k
    return out


@jit
def add_in_order(total, change):
    """total[r, o] += change[t, r, o], tree t after tree t (in place)."""
    for t in range(change.shape[0]):
        for r in range(change.shape[1]):
            for o in range(change.shape[2]):
                total[r, o] += change[t, r, o]
