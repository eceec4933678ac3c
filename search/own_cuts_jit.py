"""Where the walk of its own cuts (cut_walk.walk_own) cuts a box not closed (numba): the
kernel's rule (gap_kernel_jit.gain: the worse child's fall of the bound at L = 0, then
SPLIT_TIE times the better child's), over every rank of every column that cuts a leaf of
the box, each child's bound read off the box's leaves at once rather than walked.

A cut of column c at rank r leaves the yes side ranks < r: its bound at L = 0 is the sum over
the trees of each one's largest leaf value on that side, a tree's prefix maxima over its
segments of c (cut_walk_jit's Box); the no side's, its suffix maxima. Summed over
the trees as differences, a column's every cut costs its trees' segments.
"""

import numba
import numpy as np

from . import gap_kernel
from .gap_kernel import SPLIT_TIE
from .kernel_cache import compiled_from

compiled_from(__file__, gap_kernel)

jit = numba.njit(cache=True, nogil=True)

NEG = -1e300


@jit
def _tree_sides(mk, sega, segb, g0, g1, lo, rises_yes, rises_no):
    """One tree's largest value on each side of every cut, as rises: the yes side's (ranks
    < lo + r) at rises_yes[r] as r grows, the no side's (ranks >= lo + r) at rises_no[r] as
    r falls."""
    top = NEG
    for g in range(g0, g1):
        if mk[g] > top:
            rises_yes[sega[g] - lo + 1] += mk[g] - (top if top > NEG else 0.0)
            top = mk[g]
    top = NEG
    for g in range(g1 - 1, g0 - 1, -1):
        if mk[g] > top:
            rises_no[segb[g] - lo - 1] += mk[g] - (top if top > NEG else 0.0)
            top = mk[g]


@jit
def side_bounds(box, blo, bhi):
    """For a cut of column c at rank blo[c] + r (0 < r < the box's width on c) of ``box``
    (cut_walk_jit's Box): the bounds at L = 0 of its yes side (yes[c, r]) and no side
    (no[c, r]); cuts[c, r]: the rank cuts a leaf of the box (a tree's segment of c starts
    there)."""
    ptr, d, segoff, sega, segb, _, boff, s0, s1, _, _ = box
    K, C = ptr.shape[0] - 1, blo.shape[0]
    w = 1
    for c in range(C):
        w = max(w, bhi[c] - blo[c])
    yes, no = np.zeros((C, w)), np.zeros((C, w))
    cuts = np.zeros((C, w), np.bool_)
    tops = np.full(K, NEG)
    for k in range(K):
        for p in range(ptr[k], ptr[k + 1]):
            tops[k] = max(tops[k], d[p])
    mk = np.empty(sega.shape[0])
    rises_yes, rises_no = np.empty(w + 1), np.empty(w + 1)
    for c in range(C):
        lo, width, rest = blo[c], bhi[c] - blo[c], tops.sum()
        rises_yes[:] = 0.0
        rises_no[:] = 0.0
        for k in range(K):
            q = k * C + c
            g0, g1, bq = segoff[q], segoff[q + 1], boff[q]
            if g1 == g0:
                continue  # k does not read c here: its top is on both sides
            rest -= tops[k]
            mk[g0:g1] = NEG
            for p in range(ptr[k], ptr[k + 1]):
                for g in range(s0[bq + p], s1[bq + p]):
                    mk[g] = max(mk[g], d[p])
            _tree_sides(mk, sega, segb, g0, g1, lo, rises_yes, rises_no)
            for g in range(g0 + 1, g1):
                cuts[c, sega[g] - lo] = True
        y = rest
        for r in range(1, width):
            y += rises_yes[r]
            yes[c, r] = y
        n = rest
        for r in range(width - 1, 0, -1):
            n += rises_no[r]
            no[c, r] = n
    return yes, no, cuts


@jit
def kernel_cut(yes, no, cuts, blo, bhi, u):
    """The cut of the largest gain from the box's bound u (at L = 0): (column, rank), or
    (-1, 0) where no rank cuts a leaf (every tree of F has one leaf in the box)."""
    best_c, best_r, best = -1, 0, -np.inf
    for c in range(blo.shape[0]):
        for r in range(1, bhi[c] - blo[c]):
            if cuts[c, r]:
                y, n = yes[c, r], no[c, r]
                g = (u - max(y, n)) + SPLIT_TIE * (u - min(y, n))
                if g > best:
                    best_c, best_r, best = c, r, g
    return best_c, blo[best_c] + best_r if best_c >= 0 else 0
