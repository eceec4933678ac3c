"""The children a max gap's dives keep (numba; gap_kernel.DIVE_FRAMES): a dive keeps the
child it does not enter, with its per-tree arrays, in a frame rather than on the heap,
and goes on from the last frame once its box is dropped (gap_kernel_jit.run), so a
child's trees are not walked again as a box popped from the heap has them. Imported on
first use only, as gap_kernel_jit.py is."""

import numpy as np

from . import gap_heap_jit
from .gap_heap_jit import jit, part, push
from .kernel_cache import compiled_from

compiled_from(__file__, gap_heap_jit)

_NEG = -1e300


@jit
def save_frame(frames, u, lo, hi, c, rr, on_yes, top, low, opn, scratch, nw):
    """Keep the child of the box lo, hi split on column c at rank rr that the dive does
    not enter (the no side when ``on_yes``) as the next frame of ``frames``
    (dive_frames'): its box, its bound u, and its per-tree arrays, the parent's with the
    trees the split walked at the child's rows (what enter() would make of them)."""
    fu, fbox, fstate, fopn, fentry, fstale, flazy, depth = frames
    ytop, ylow, ntop, nlow, yopn, nopn = scratch[:6]
    entry, walked, lazy, stale = scratch[8], scratch[9], scratch[11], scratch[12]
    d = depth[0]
    cols = lo.shape[0]
    fu[d] = u
    for k in range(cols):
        fbox[d, k] = lo[k]
        fbox[d, cols + k] = hi[k]
    if on_yes:
        fbox[d, c] = rr
    else:
        fbox[d, cols + c] = rr
    for t in range(top.shape[0]):
        for r in range(top.shape[1]):
            fstate[d, 0, t, r] = top[t, r]
            fstate[d, 1, t, r] = low[t, r]
        for k in range(opn.shape[1]):
            fopn[d, t, k] = opn[t, k]
        fentry[d, t] = entry[t]
        fstale[d, t] = stale[t]
    for i in range(nw):
        t = walked[i]
        for r in range(top.shape[1]):
            fstate[d, 0, t, r] = ntop[t, r] if on_yes else ytop[t, r]
            fstate[d, 1, t, r] = nlow[t, r] if on_yes else ylow[t, r]
        for k in range(opn.shape[1]):
            fopn[d, t, k] = nopn[t, k] if on_yes else yopn[t, k]
    flazy[d] = lazy[1]
    depth[0] = d + 1


@jit
def load_frame(frames, lo, hi, top, low, opn, scratch):
    """The last frame of ``frames`` (save_frame's) made the dive's box and arrays, and
    taken off; returns its bound."""
    fu, fbox, fstate, fopn, fentry, fstale, flazy, depth = frames
    entry, lazy, stale = scratch[8], scratch[11], scratch[12]
    d = depth[0] - 1
    depth[0] = d
    cols = lo.shape[0]
    for k in range(cols):
        lo[k] = fbox[d, k]
        hi[k] = fbox[d, cols + k]
    for t in range(top.shape[0]):
        for r in range(top.shape[1]):
            top[t, r] = fstate[d, 0, t, r]
            low[t, r] = fstate[d, 1, t, r]
        for k in range(opn.shape[1]):
            opn[t, k] = fopn[d, t, k]
        entry[t] = fentry[d, t]
        stale[t] = fstale[d, t]
    lazy[1] = flazy[d]
    return fu[d]


@jit
def flush_frames(frames, hb, hx, hn, max_rows, u_floor, lost):
    """Every child kept pushed on the heap with its bound (its arrays let go: a pop walks
    it again). Returns (hb, hx, hn)."""
    fu, fbox, depth = frames[0], frames[1], frames[7]
    cols = fbox.shape[1] // 2
    lo, hi = np.empty(cols, dtype=np.int32), np.empty(cols, dtype=np.int32)
    for d in range(depth[0]):
        for k in range(cols):
            lo[k] = fbox[d, k]
            hi[k] = fbox[d, cols + k]
        hb, hx, hn = push(hb, hx, hn, fu[d], lo, hi, max_rows, u_floor, lost)
    depth[0] = 0
    return hb, hx, hn


@part
def below_line(frames, u, hb, hn, u_floor):
    """Whether a child of bound u is low enough to be kept: at most the line frames[7][2]
    thousandths of the way from the floor ``u_floor`` to the heap's best bound (any
    child where the heap is empty or there is no floor). A child above it goes on the
    heap, best first, so the children kept never hold the upper bound above the heap's."""
    if hn == 0 or u_floor < -1e200:
        return True
    return u <= u_floor + frames[7][2] * 0.001 * (hb[0] - u_floor)


@part
def best_elsewhere(hb, hn, frames):
    """The largest bound on the heap or of a child kept (-1e300: none)."""
    out = hb[0] if hn > 0 else _NEG
    for d in range(frames[7][0]):
        out = max(out, frames[0][d])
    return out


def dive_frames(depth, trees, rows, cols, check, line=1.0):
    """save_frame's frames: ``depth`` of them (0: dives push every child they do not
    enter on the heap), and (how many are in use, the dive steps between two looks at
    the best box open elsewhere, below_line's ``line`` in thousandths)."""
    return (
        np.zeros(depth),
        np.zeros((depth, 2 * cols), dtype=np.int32),
        np.zeros((depth, 2, trees, rows)),
        np.zeros((depth, trees, cols), dtype=np.bool_),
        np.zeros((depth, trees), dtype=np.int64),
        np.zeros((depth, trees), dtype=np.bool_),
        np.zeros(depth, dtype=np.int64),
        np.array([0, max(1, check), round(1000 * line)], dtype=np.int64),
    )
