"""walk.py's two steps per box of a large proof, compiled (numba): the live boxes that
meet each side of a split in its column, and per tree the largest value among the live
boxes. Each computes what ``LiveTable.split`` and ``LiveTable.bound`` compute with
numpy, in one pass without temporaries; walk.py imports this module only for a proof
of ``COMPILED_FROM`` steps or more, and only where numba is installed (importing it and
loading the compiled code take about a second), else it walks with numpy.
"""

from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)


@numba.njit(cache=True, nogil=True, inline="always")
def meets(a, b, lo, hi):
    """Whether an interval (a, b) meets (lo, hi): max(a, lo) < min(b, hi), NaN
    propagating through max and min as numpy's do (an a or b that is NaN meets none)."""
    if lo > a:  # a NaN a stays NaN
        a = lo
    if hi < b:
        b = hi
    return a < b


@jit
def split(live, ends_c, nan_c, y_lo, y_hi, y_nan, n_lo, n_hi, n_nan):
    """The boxes of ``live`` that meet each side of a split of column c, "yes" (y_lo,
    y_hi, and NaN: y_nan) and "no" (n_...), in one pass: ``ends_c[i]`` is box i's
    interval in column c (its two ends side by side: one memory read), ``nan_c[i]``
    whether it holds NaN there (read only for a side that does). A box meets a side
    when their intervals meet or both hold NaN. The sides' ends are numbers (the caller
    gives a side with a NaN end as the empty interval, which numpy's max or min would
    make it)."""
    out_yes = np.empty(live.size, dtype=live.dtype)
    out_no = np.empty(live.size, dtype=live.dtype)
    n_yes = n_no = 0
    for j in range(live.size):
        i = live[j]
        a, b = ends_c[i, 0], ends_c[i, 1]
        if meets(a, b, y_lo, y_hi) or (y_nan and nan_c[i]):
            out_yes[n_yes] = i
            n_yes += 1
        if meets(a, b, n_lo, n_hi) or (n_nan and nan_c[i]):
            out_no[n_no] = i
            n_no += 1
    return out_yes[:n_yes], out_no[:n_no]


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
