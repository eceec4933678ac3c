"""Exact bounds of recorded boxes (numba), for the proofs compiled_proof.py rebuilds from
the compiled search's record: imported on first use only, as gap_kernel_jit.py is."""

import numpy as np

from . import gap_kernel_jit, proof_bounds
from .gap_kernel_jit import jit, walk, walk_both
from .kernel_cache import compiled_from

# numba compiles these constants in (and the kernel's walks): kernel_cache renews the
# cache when either file changes
from .proof_bounds import DONE, LEAF, NEED_ROOM, NOT_PRUNED, RUNNING, SPLIT

compiled_from(__file__, gap_kernel_jit, proof_bounds)


@jit
def box_tops(ft_arrays, boxes, max_nodes):
    """Per box (rows lo | hi) and row, the sum over the trees of the row's largest value
    among the leaves meeting the box: what a certificate states a pruned box's bound to
    be (search/compiled_proof.py), walked as walk() walks a box."""
    values, node_start = ft_arrays[0], ft_arrays[1]
    rows, trees = values.shape[1], node_start.shape[0] - 1
    cols = boxes.shape[1] // 2
    out = np.empty((boxes.shape[0], rows))
    top, low = np.empty((trees, rows)), np.empty((trees, rows))
    opn = np.zeros((trees, cols), dtype=np.bool_)
    stack = np.empty(max_nodes + 1, dtype=np.int64)
    for b in range(boxes.shape[0]):
        lo, hi = boxes[b, :cols], boxes[b, cols:]
        for t in range(trees):
            walk(ft_arrays, t, lo, hi, top, low, stack, opn)
        for r in range(rows):
            s = 0.0
            for t in range(trees):
                s += top[t, r]
            out[b, r] = s
    return out


@jit
def walk_all_trees(ft_arrays, lo, hi, top, low, stack, opn):
    """walk() of every tree over the box lo, hi."""
    for t in range(top.shape[0]):
        walk(ft_arrays, t, lo, hi, top, low, stack, opn)


@jit
def preorder_ends(kind):
    """Per step of a preorder (SPLIT: two subtrees follow), where its subtree ends
    (exclusive), and the tree's depth."""
    n = kind.shape[0]
    end = np.empty(n, dtype=np.int64)
    # the open splits on the path, and how many of their two subtrees are done
    path = np.empty(n + 1, dtype=np.int64)
    seen = np.empty(n + 1, dtype=np.int64)
    sp, depth = 0, 0
    for i in range(n):
        if kind[i] == SPLIT:
            path[sp], seen[sp] = i, 0
            sp += 1
            depth = max(depth, sp)
            continue
        end[i] = i + 1
        while sp > 0:
            seen[sp - 1] += 1
            if seen[sp - 1] < 2:
                break
            sp -= 1
            end[path[sp]] = i + 1
    return end, depth


@jit
def prune_row(ft_arrays, i, leaf, rows_of, state, out_row, out_bound):
    """Whether the box of step i is pruned: the first row under its threshold and its
    bound (the sum over the trees of the row's largest value among the leaves meeting
    it) into out_row[i] / out_bound[i]. The pair-sum rows (from ``first_sum``) first,
    summed without the ``lazy`` trees (all 0 there); the other rows at a ``leaf`` only,
    with the lazy trees walked over the box now (their maxima in ``top`` are the
    root's)."""
    thresholds, first_sum, lazy = rows_of
    lo, hi, top, opn, entry, frames, fp, scratch = state
    fresh, scratch_low, fresh_opn, stack = scratch[0], scratch[1], scratch[4], scratch[6]
    trees, rows = top.shape[0], top.shape[1]
    for r in range(first_sum, rows):
        s = 0.0
        for t in range(trees):
            if not lazy[t]:
                s += top[t, r]
        if s < thresholds[r]:
            out_row[i], out_bound[i] = r, s
            return True
    if not leaf:
        return False
    for t in range(trees):
        if lazy[t]:
            walk(ft_arrays, t, lo, hi, fresh, scratch_low, stack, fresh_opn)
    for r in range(first_sum):
        s = 0.0
        for t in range(trees):
            s += fresh[t, r] if lazy[t] else top[t, r]
        if s < thresholds[r]:
            out_row[i], out_bound[i] = r, s
            return True
    return False


@jit
def tiling_tops(ft_arrays, steps, rows_of, settle, i, max_steps, state, pool, out_row, out_bound):
    """Walk a proof's tree down from step i, at most ``max_steps`` steps: at each leaf
    (with ``settle``, at each box: its pair-sum rows only above the leaves), prune_row.
    A box pruned above its leaves ends its subtree. Each box's per-tree maxima are its
    parent's, with only the trees a split can change (opn, walk) walked again, for both
    children at once (walk_both), as the kernel's splits do; the ``lazy`` trees (pair
    sums all 0) are not, their maxima the root's until a leaf needs them. The walks down
    a path are kept in ``pool``, put back on the way up. Returns (the next step,
    RUNNING / DONE / NOT_PRUNED / NEED_ROOM: the pool too small for the split at the
    step returned)."""
    kind, col, rank, end = steps
    lazy = rows_of[2]
    lo, hi, top, opn, entry, frames, fp, scratch = state
    ytop, ylow, ntop, nlow, yopn, nopn, stack, smask = scratch
    pw, ptop, popn, pentry, pntop, pnopn = pool
    trees = top.shape[0]
    n = kind.shape[0]
    done = 0
    while i < n and done < max_steps:
        done += 1
        k = kind[i]
        pruned = False
        if k == LEAF or (settle and k == SPLIT):
            pruned = prune_row(ft_arrays, i, k == LEAF, rows_of, state, out_row, out_bound)
            if k == LEAF and not pruned:
                return i, NOT_PRUNED
        if k == SPLIT and not pruned:
            c, rr, d, off = col[i], rank[i], fp[0], fp[1]
            nw = 0
            for t in range(trees):
                if opn[t, c] and not lazy[t]:
                    nw += 1
            if off + nw > pw.shape[0]:
                return i, NEED_ROOM
            j = off
            for t in range(trees):
                if lazy[t] or not opn[t, c]:
                    continue
                pw[j], pentry[j] = t, entry[t]
                ptop[j, :] = top[t]
                popn[j, :] = opn[t]
                walk_both(
                    ft_arrays, t, c, rr, lo, hi,
                    ytop, ylow, ntop, nlow, stack, smask, yopn, nopn, entry,
                )  # fmt: skip
                pntop[j, :] = ntop[t]
                pnopn[j, :] = nopn[t]
                top[t, :] = ytop[t]
                opn[t, :] = yopn[t]
                j += 1
            frames[d, 0], frames[d, 1], frames[d, 2], frames[d, 3] = c, rr, lo[c], hi[c]
            frames[d, 4], frames[d, 5], frames[d, 6] = 0, nw, off
            fp[0], fp[1] = d + 1, off + nw
            hi[c] = rr
            i += 1
            continue
        i = end[i]  # a leaf, or a box pruned above its leaves: up to the next "no" box
        while fp[0] > 0:
            d = fp[0] - 1
            c, rr, old_lo, old_hi = frames[d, 0], frames[d, 1], frames[d, 2], frames[d, 3]
            nw, off = frames[d, 5], frames[d, 6]
            if frames[d, 4] == 0:
                for j in range(off, off + nw):
                    top[pw[j], :] = pntop[j]
                    opn[pw[j], :] = pnopn[j]
                lo[c], hi[c] = rr, old_hi
                frames[d, 4] = 1
                break
            for j in range(off, off + nw):
                top[pw[j], :] = ptop[j]
                opn[pw[j], :] = popn[j]
                entry[pw[j]] = pentry[j]
            lo[c] = old_lo
            fp[0], fp[1] = d, off
    return i, (DONE if i >= n else RUNNING)


@jit
def tile(boxes, sizes):
    """The tree of cuts whose leaves are ``boxes`` (rows lo | hi) over the space
    [0, sizes): its steps in preorder (kind, column, rank, the leaf's box), "yes" (the
    side under the cut) first, each cut the least rank of the first column that no box
    straddles; ok False where the boxes overlap or leave part of the space uncovered."""
    n, cols = boxes.shape[0], sizes.shape[0]
    kind = np.empty(2 * n, dtype=np.int8)
    col = np.zeros(2 * n, dtype=np.int64)
    rank = np.zeros(2 * n, dtype=np.int64)
    box = np.full(2 * n, -1, dtype=np.int64)
    idx = np.arange(n)
    spare = np.empty(n, dtype=np.int64)
    seg = np.empty((2 * n + 1, 2), dtype=np.int64)
    region = np.empty((2 * n + 1, 2 * cols), dtype=np.int64)
    seg[0, 0], seg[0, 1] = 0, n
    region[0, :cols] = 0
    region[0, cols:] = sizes
    sp, m = 1, 0
    while sp > 0:
        sp -= 1
        a, b = seg[sp, 0], seg[sp, 1]
        rlo, rhi = region[sp, :cols].copy(), region[sp, cols:].copy()
        if b - a == 0 or m >= 2 * n:
            return kind[:m], col[:m], rank[:m], box[:m], False
        if b - a == 1:
            i = idx[a]
            for c in range(cols):
                if boxes[i, c] != rlo[c] or boxes[i, cols + c] != rhi[c]:
                    return kind[:m], col[:m], rank[:m], box[:m], False
            kind[m], box[m] = LEAF, i
            m += 1
            continue
        c, r = first_cut(boxes, idx[a:b], rlo, cols)
        if c < 0:
            return kind[:m], col[:m], rank[:m], box[:m], False
        kind[m], col[m], rank[m] = SPLIT, c, r
        m += 1
        below = a
        for k in range(a, b):  # stable: the boxes under the cut first
            if boxes[idx[k], cols + c] <= r:
                spare[below] = idx[k]
                below += 1
        rest = below
        for k in range(a, b):
            if boxes[idx[k], cols + c] > r:
                spare[rest] = idx[k]
                rest += 1
        idx[a:b] = spare[a:b]
        seg[sp, 0], seg[sp, 1] = below, b  # the "no" side, after the "yes" side's subtree
        region[sp, :cols], region[sp, cols:] = rlo, rhi
        region[sp, c] = r
        seg[sp + 1, 0], seg[sp + 1, 1] = a, below
        region[sp + 1, :cols], region[sp + 1, cols:] = rlo, rhi
        region[sp + 1, cols + c] = r
        sp += 2
    return kind[:m], col[:m], rank[:m], box[:m], True


@jit
def first_cut(boxes, members, rlo, cols):
    """(column, rank): the least rank past the region's start, on the first column that
    has one, that none of the ``members`` boxes straddles; (-1, -1) where none."""
    for c in range(cols):
        starts = boxes[members, c]
        order = np.argsort(starts, kind="mergesort")
        end = boxes[members[order[0]], cols + c]
        for k in range(1, order.shape[0]):
            s = starts[order[k]]
            if s >= end and s > rlo[c]:
                return c, s
            end = max(end, boxes[members[order[k]], cols + c])
    return -1, -1
