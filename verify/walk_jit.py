"""walk.py's two steps per box of a large proof, compiled (numba): the live boxes that
meet a box's interval in one column, and per tree the largest value among the live
boxes. Each computes what ``LiveTable.narrow`` and ``LiveTable.bound`` compute with
numpy, in one pass without temporaries; walk.py imports this module only for a proof
of ``COMPILED_FROM`` steps or more, and only where numba is installed (importing it and
loading the compiled code take about a second), else it walks with numpy.
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@jit
def narrow(live, lo_c, hi_c, nan_c, lo, hi, nan):
    """The boxes of ``live`` whose interval (lo_c, hi_c) meets (lo, hi), or that hold
    NaN (nan_c) where the box does (nan): max(lo_c, lo) < min(hi_c, hi), NaN propagating
    through max and min as numpy's do (no box then meets). ``lo`` and ``hi`` are
    numbers (the caller gives an interval with a NaN end as the empty one)."""
    out = np.empty(live.size, dtype=live.dtype)
    n = 0
    for j in range(live.size):
        i = live[j]
        a = lo_c[i]
        b = hi_c[i]
        if lo > a:  # a NaN a stays NaN: it meets nothing, as numpy's maximum gives
            a = lo
        if hi < b:
            b = hi
        if a < b or (nan and nan_c[i]):
            out[n] = i
            n += 1
    return out[:n]


@jit
def tops(live, value, starts):
    """Per tree (its boxes from ``starts``), the largest value of its boxes in ``live``
    (sorted), NaN propagating as numpy's maximum does; and whether every tree has one."""
    n_trees = starts.size
    top = np.empty(n_trees)
    seen = np.zeros(n_trees, dtype=np.bool_)
    t = 0
    for j in range(live.size):
        i = live[j]
        while t + 1 < n_trees and i >= starts[t + 1]:
            t += 1
        v = value[i]
        if not seen[t]:
            top[t] = v
            seen[t] = True
        elif top[t] == top[t] and (v > top[t] or v != v):  # a NaN top stays NaN
            top[t] = v
    return top, bool(seen.all())
