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
def take_frame(frames, m, lo, hi, top, low, opn, scratch):
    """Frame m of ``frames`` (save_frame's) made the dive's box and arrays, and taken
    off (the last frame moved into its place); returns its bound."""
    fu, fbox, fstate, fopn, fentry, fstale, flazy, depth = frames
    entry, lazy, stale = scratch[8], scratch[11], scratch[12]
    scratch[14][0] = -1  # another box's arrays: choose_split lists its open trees anew
    cols = lo.shape[0]
    u = fu[m]
    for k in range(cols):
        lo[k] = fbox[m, k]
        hi[k] = fbox[m, cols + k]
    for t in range(top.shape[0]):
        for r in range(top.shape[1]):
            top[t, r] = fstate[m, 0, t, r]
            low[t, r] = fstate[m, 1, t, r]
        for k in range(opn.shape[1]):
            opn[t, k] = fopn[m, t, k]
        entry[t] = fentry[m, t]
        stale[t] = fstale[m, t]
    lazy[1] = flazy[m]
    drop_frame(frames, m)
    return u


@jit
def drop_frame(frames, m):
    """Frame m of ``frames`` let go: the last frame moved into its place."""
    fu, fbox, fstate, fopn, fentry, fstale, flazy, depth = frames
    d = depth[0] - 1
    depth[0] = d
    if m == d:
        return
    fu[m] = fu[d]
    flazy[m] = flazy[d]
    for k in range(fbox.shape[1]):
        fbox[m, k] = fbox[d, k]
    for t in range(fstate.shape[2]):
        for r in range(fstate.shape[3]):
            fstate[m, 0, t, r] = fstate[d, 0, t, r]
            fstate[m, 1, t, r] = fstate[d, 1, t, r]
        for k in range(fopn.shape[2]):
            fopn[m, t, k] = fopn[d, t, k]
        fentry[m, t] = fentry[d, t]
        fstale[m, t] = fstale[d, t]


@jit
def flush_frames(frames, hb, hx, hn, max_rows, u_floor, lost):
    """Every child kept in ``frames`` pushed on the heap (hb, hx, hn; push's max_rows,
    u_floor, lost), its arrays let go: the search goes on from the heap, best first.
    Returns (hb, hx, hn)."""
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
def frame_at(frames, highest):
    """The frame of largest bound (``highest``) or of smallest, and its bound (-1 and
    -1e300 or 1e300: none)."""
    fu, n = frames[0], frames[7][0]
    best, best_u = -1, _NEG if highest else -_NEG
    for d in range(n):
        if (fu[d] > best_u) if highest else (fu[d] < best_u):
            best, best_u = d, fu[d]
    return best, best_u


@part
def frame_first(frames, hb, hn):
    """The frame a search goes on from rather than pop the heap (-1: none, the heap's
    best first): once frames[7][1] boxes went by since it last went on from the best box
    open (frames[7][3]), the frame of largest bound where it is at least the heap's best;
    else the last kept (depth first under the box popped)."""
    n = frames[7][0]
    if frames[7][3] >= frames[7][1]:
        frames[7][3] = 0
        m, u = frame_at(frames, True)
        return m if m >= 0 and (hn == 0 or u >= hb[0]) else -1
    return n - 1


@jit
def room_for(frames, u, hb, hx, hn, max_rows, u_floor, lost):
    """Whether a box of bound u may take a frame: one is free, or the frame of smallest
    bound is below u and goes on the heap to make room (its arrays let go: a pop walks
    it again). Returns (room?, hb, hx, hn)."""
    if frames[0].shape[0] == 0:
        return False, hb, hx, hn
    if frames[7][0] < frames[0].shape[0]:
        return True, hb, hx, hn
    m, least = frame_at(frames, False)
    if least >= u:
        return False, hb, hx, hn
    fbox = frames[1]
    cols = fbox.shape[1] // 2
    lo, hi = np.empty(cols, dtype=np.int32), np.empty(cols, dtype=np.int32)
    for k in range(cols):
        lo[k] = fbox[m, k]
        hi[k] = fbox[m, cols + k]
    hb, hx, hn = push(hb, hx, hn, least, lo, hi, max_rows, u_floor, lost)
    drop_frame(frames, m)
    return True, hb, hx, hn


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
def leave_for_best(hb, hn, frames, u):
    """Whether a dive at a box of bound u leaves it for the best box open (heap or
    frames): once frames[7][1] boxes went by since the search last went on from the best
    box open (counted in frames[7][3]; the dive's box, where it is the best, counts as
    gone on from)."""
    frames[7][3] += 1
    if frames[7][3] < frames[7][1]:
        return False
    if best_elsewhere(hb, hn, frames) > u + 1e-12:
        return True
    frames[7][3] = 0
    return False


@part
def best_elsewhere(hb, hn, frames):
    """The largest bound on the heap or of a child kept (-1e300: none)."""
    out = hb[0] if hn > 0 else _NEG
    for d in range(frames[7][0]):
        out = max(out, frames[0][d])
    return out


def dive_frames(depth, trees, rows, cols, check, line=1.0):
    """save_frame's frames: ``depth`` of them (0: dives push every child they do not
    enter on the heap), and (how many are in use, the boxes between two visits to the
    best box open (``check``), below_line's ``line`` in thousandths, the boxes since the
    search last went on from the best box open)."""
    return (
        np.zeros(depth),
        np.zeros((depth, 2 * cols), dtype=np.int32),
        np.zeros((depth, 2, trees, rows)),
        np.zeros((depth, trees, cols), dtype=np.bool_),
        np.zeros((depth, trees), dtype=np.int64),
        np.zeros((depth, trees), dtype=np.bool_),
        np.zeros(depth, dtype=np.int64),
        np.array([0, max(1, check), round(1000 * line), 0], dtype=np.int64),
    )
