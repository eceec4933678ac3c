"""The compiled kernel of gap_kernel.py (numba): imported on first use only, since
importing numba and compiling take a few seconds; the compiled code is cached on disk
where numba can write.

Values and statuses as gap_kernel.py states them.
"""

import numba
import numpy as np

from . import box_bounds_jit, dive_frames_jit, gap_heap_jit, gap_kernel, pair_mplp_jit, relation_jit
from .box_bounds_jit import bound, children_bounds, is_open, open_rows, rows_above_sums
from .dive_frames_jit import (
    below_line,
    frame_first,
    leave_for_best,
    room_for,
    save_frame,
    take_frame,
)
from .gap_heap_jit import heap_pop, push
from .gap_kernel import SPLIT_TIE
from .kernel_cache import compiled_from
from .pair_mplp_jit import lag_rows
from .relation_jit import relation_bounds

compiled_from(
    __file__, box_bounds_jit, dive_frames_jit, gap_heap_jit, gap_kernel, pair_mplp_jit, relation_jit
)

_NEG = -1e300
_POS = 1e300
BUDGET, RESOLVED, EMPTY = 0, 1, 2
CHECK_EVERY = 64  # dive steps between two looks at the heap's best box

jit = numba.njit(cache=True, nogil=True)
# the small parts run() calls, inlined into it (numba copies a part's code into each
# caller and compiles it there again); the large ones that several callers share (walk,
# walk_children, choose_split, split, make_room, heap_shed) are called (@jit), compiled
# once: inlined too, the first compile took 81 CPU s against 46, for 3-8% more boxes a
# CPU second (bench/reports/scale-tier.md, "The first run's compile")
part = numba.njit(cache=True, nogil=True, inline="always")


@part
def fold(values, leaf, top, low, t):
    """A leaf meeting the box: its rows into tree t's maxima and minima."""
    for r in range(values.shape[1]):
        v = values[leaf, r]
        top[t, r] = max(top[t, r], v)
        low[t, r] = min(low[t, r], v)


@jit
def walk(ft_arrays, t, lo, hi, top, low, stack, opn):
    """Per row, the largest and smallest value over the leaves of tree t meeting the
    box: into top[t], low[t]; opn[t, c]: whether a node of t that the box reaches
    on column c has leaves of the box on both sides (a split on c can change t)."""
    values, node_start, leaf_start, nodes = ft_arrays
    rows = values.shape[1]
    for r in range(rows):
        top[t, r] = _NEG
        low[t, r] = _POS
    opn[t, :] = False
    a, b = node_start[t], node_start[t + 1]
    if a == b:
        leaf = leaf_start[t]
        for r in range(rows):
            top[t, r] = values[leaf, r]
            low[t, r] = values[leaf, r]
        return
    k = a
    sp = 0
    while True:
        c = nodes[k, 0]
        rr = nodes[k, 1]
        if lo[c] < rr < hi[c]:
            opn[t, c] = True
        if hi[c] > rr:  # the no side pushed, the yes side gone on with, as in walk_both
            child = nodes[k, 3]
            if child >= 0:
                stack[sp] = child
                sp += 1
            else:
                fold(values, -1 - child, top, low, t)
        if lo[c] < rr:
            child = nodes[k, 2]
            if child >= 0:
                k = child
                continue
            fold(values, -1 - child, top, low, t)
        if sp == 0:
            break
        sp -= 1
        k = stack[sp]


@part
def split_node(nodes, k, lo, hi):
    """The first node of a tree, from its node k, with leaves of the box on both sides:
    k is its root, or a node every box of the dive reached (``entry``, see walk_both),
    since the nodes above it pass the box on one side only."""
    while True:
        rr = nodes[k, 1]
        on_yes, on_no = lo[nodes[k, 0]] < rr, hi[nodes[k, 0]] > rr
        if on_yes and on_no:
            return k
        k = nodes[k, 2] if on_yes else nodes[k, 3]


@part
def gain(u, uy, un):
    """How far a split lowers the box's bound u: its worse child's fall, then (SPLIT_TIE) its
    better child's."""
    return (u - max(uy, un)) + SPLIT_TIE * (u - min(uy, un))


@part
def learn(costs, k, u, uy, un):
    costs[k, 0] += gain(u, uy, un)
    costs[k, 1] += 1.0


@jit
def choose_split(
    ft_arrays, u, lo, hi, top, low, order, start, opn, scratch, thresholds, first_sum, costs, probes
):
    """The node to split the box on: of the nodes that would split an open tree (each
    tree whose rows from ``start`` still differ, at split_node), the one of largest
    gain, measured (both children walked and bounded) for a node never split before, at
    most ``probes`` a box, else estimated by its mean gain so far (``costs``: sum, count;
    0 for a node neither measured nor split). With probes 0 and no costs, the first open
    tree of ``order``'s node. Returns (node, the node measured last, its nw: the scratch
    arrays hold its children)."""
    nodes = ft_arrays[3]
    entry, walked = scratch[8], scratch[9]
    opened, listed = scratch[13], scratch[14]
    best, best_gain = -1, -1.0
    measured, nw = -1, 0
    probed = 0
    # the trees open at the dive's last box, in ``order``'s order (a sub-box's trees open
    # are among its box's: a box's maxima and minima only narrow along a dive), unless the
    # list was dropped (a new dive) or was made over fewer rows than ``start`` asks
    anew = listed[0] < 0 or start < listed[1]
    n = order.shape[0] if anew else listed[0]
    kept = 0
    for i in range(n):
        t = order[i] if anew else opened[i]
        if not is_open(top, low, t, start):
            continue
        opened[kept] = t
        kept += 1
        # from the node the dive's boxes reach (kept for the box's children), not the root
        k = split_node(nodes, entry[t], lo, hi)
        entry[t] = k
        if costs[k, 1] == 0 and probed < probes:
            nw = walk_children(
                ft_arrays, nodes[k, 0], nodes[k, 1], lo, hi, opn, scratch, top, low, first_sum
            )
            uy, un = children_bounds(top, walked, nw, scratch, thresholds, first_sum, u)
            learn(costs, k, u, uy, un)
            probed += 1
            measured = k
            g = gain(u, uy, un)
        elif costs[k, 1] > 0:
            g = costs[k, 0] / costs[k, 1]
        else:
            g = 0.0
        if g > best_gain:
            best, best_gain = k, g
    listed[0], listed[1] = kept, start
    return best, measured, nw


@part
def walk_both(ft_arrays, t, c, rr, lo, hi, ytop, ylow, ntop, nlow, stack, smask, yopn, nopn, entry):
    """walk() of tree t for both children of the box lo, hi split on column c at rank
    rr (yes: hi[c] = rr, no: lo[c] = rr) in one pass: the two boxes differ on c only,
    so a node is visited once with a mask of the children that reach it (1 yes, 2 no)."""
    values, node_start, leaf_start, nodes = ft_arrays
    rows = values.shape[1]
    for r in range(rows):
        ytop[t, r] = _NEG
        ylow[t, r] = _POS
        ntop[t, r] = _NEG
        nlow[t, r] = _POS
    yopn[t, :] = False
    nopn[t, :] = False
    # the walk starts below the nodes the box lo, hi passes on one side only (the same
    # for every box inside it, so entry[t] is kept along a dive); a tree with a node on
    # c inside the box (the only ones walked) has a node with both sides below them
    k = entry[t]
    while True:
        cc = nodes[k, 0]
        if lo[cc] < nodes[k, 1]:
            if hi[cc] > nodes[k, 1]:
                break
            k = nodes[k, 2]
        else:
            k = nodes[k, 3]
    entry[t] = k
    m = 3
    sp = 0
    while True:
        cc = nodes[k, 0]
        r0 = nodes[k, 1]
        yl, yh, nl, nh = lo[cc], hi[cc], lo[cc], hi[cc]
        if cc == c:
            yh = rr
            nl = rr
        to_yes = 0
        to_no = 0
        # the two children written out: a shared helper returning both bits made the
        # search about a quarter slower (age 46 s against 36 s)
        if m & 1:
            if yl < r0 < yh:
                yopn[t, cc] = True
            if yl < r0:
                to_yes |= 1
            if yh > r0:
                to_no |= 1
        if m & 2:
            if nl < r0 < nh:
                nopn[t, cc] = True
            if nl < r0:
                to_yes |= 2
            if nh > r0:
                to_no |= 2
        # the no side pushed, the yes side gone on with (the next record, most often in
        # the cache line just read), without the stack between
        child = nodes[k, 3]
        if to_no != 0:
            if child >= 0:
                stack[sp] = child
                smask[sp] = to_no
                sp += 1
            else:
                if to_no & 1:
                    fold(values, -1 - child, ytop, ylow, t)
                if to_no & 2:
                    fold(values, -1 - child, ntop, nlow, t)
        child = nodes[k, 2]
        if to_yes != 0:
            if child >= 0:
                k = child
                m = to_yes
                continue
            if to_yes & 1:
                fold(values, -1 - child, ytop, ylow, t)
            if to_yes & 2:
                fold(values, -1 - child, ntop, nlow, t)
        if sp == 0:
            break
        sp -= 1
        k = stack[sp]
        m = smask[sp]


@part
def dropped(lost, u):
    """A box of bound u dropped under the floor: lost[0] is the largest such bound."""
    if u > lost[0]:
        lost[0] = u


@part
def record(rec, rec_n, lo, hi):
    """A box dropped (or resolved), appended to ``rec`` (rows lo | hi) while it has room:
    rec_n[0] boxes recorded, rec_n[1] 1 once one found no room."""
    i = rec_n[0]
    if i < rec.shape[0]:
        cols = lo.shape[0]
        rec[i, :cols] = lo
        rec[i, cols:] = hi
        rec_n[0] = i + 1
    else:
        rec_n[1] = 1


@part
def gone(lost, u, recs, lo, hi):
    """The box lo, hi dropped under the floor (or resolved): dropped() and record()."""
    dropped(lost, u)
    record(recs[0], recs[1], lo, hi)


@part
def record_other(rec, rec_n, lo, hi, c, rr, on_yes):
    """record() of the child of the box lo, hi split on column c at rank rr that the dive
    does not enter (the no side when ``on_yes``)."""
    keep_lo, keep_hi = lo[c], hi[c]
    if on_yes:
        lo[c] = rr
    else:
        hi[c] = rr
    record(rec, rec_n, lo, hi)
    lo[c], hi[c] = keep_lo, keep_hi


@jit
def walk_children(ft_arrays, c, rr, lo, hi, opn, scratch, top, low, first_sum):
    """Walk again, for both children of a split on column c at rank rr, only the trees
    the split can change (opn[t, c], see walk); they go into ``walked``, in tree order.
    While lazy[0] is set, the trees outside F (reads_f False) are left as they are (their
    maxima and minima the parent's: sound, and lazy[1] records that some are), and with
    lazy[2] so are the trees that read F whose pair-sum rows no longer differ over the
    box (``top``, ``low`` from ``first_sum``): those rows are one value on every sub-box,
    exactly the parent's, and their other rows the parent's bounds (stale[t] says so;
    walked again with the trees outside F). Returns how many were walked."""
    ytop, ylow, ntop, nlow, yopn, nopn, stack, smask, entry, walked, reads_f, lazy = scratch[:12]
    stale = scratch[12]
    nw = 0
    for t in range(opn.shape[0]):
        if opn[t, c]:
            if lazy[0] > 0 and not reads_f[t]:
                lazy[1] = 1
                continue
            if lazy[0] > 0 and lazy[2] > 0 and not is_open(top, low, t, first_sum):
                lazy[1] = 1
                stale[t] = True
                continue
            walked[nw] = t
            nw += 1
            walk_both(
                ft_arrays, t, c, rr, lo, hi, ytop, ylow, ntop, nlow, stack, smask, yopn, nopn, entry
            )
    return nw


@part
def enter(on_yes, c, rr, lo, hi, nw, top, low, opn, scratch):
    """Make the box lo, hi (and its per-tree arrays) its child on the yes side, or no."""
    ytop, ylow, ntop, nlow, yopn, nopn = scratch[:6]
    walked = scratch[9]
    if on_yes:
        hi[c] = rr
    else:
        lo[c] = rr
    for i in range(nw):
        t = walked[i]
        for r in range(top.shape[1]):
            top[t, r] = ytop[t, r] if on_yes else ntop[t, r]
            low[t, r] = ylow[t, r] if on_yes else nlow[t, r]
        for k in range(opn.shape[1]):
            opn[t, k] = yopn[t, k] if on_yes else nopn[t, k]


@jit
def split(ft_arrays, u, lo, hi, top, low, opn, scratch, thresholds, first_sum, rule, start):
    """Choose the box's split (choose_split; ``rule``: order, costs, probes), walk its
    children and bound them: (column, R, nw, the yes child's bound, the no child's), each
    at most u (a child's bound is at most its box's, and u may be the tighter, from
    above); a child no pair of whose ranks meets the relations (rule's last: relation_jit's
    table and same) at -1e300, dropped."""
    order, costs, probes = rule[0], rule[1], rule[2]
    nodes = ft_arrays[3]
    walked = scratch[9]
    k, measured, nw = choose_split(
        ft_arrays,
        u,
        lo,
        hi,
        top,
        low,
        order,
        start,
        opn,
        scratch,
        thresholds,
        first_sum,
        costs,
        probes,
    )
    if k < 0:  # no tree of the list open (it cannot be: a box narrows along a dive), anew
        scratch[14][0] = -1
        k, measured, nw = choose_split(
            ft_arrays, u, lo, hi, top, low, order, start, opn, scratch, thresholds, first_sum,
            costs, probes,
        )  # fmt: skip
    c, rr = nodes[k, 0], nodes[k, 1]
    if k != measured:
        nw = walk_children(ft_arrays, c, rr, lo, hi, opn, scratch, top, low, first_sum)
    uy, un = children_bounds(top, walked, nw, scratch, thresholds, first_sum, u)
    if k != measured and probes > 0:
        learn(costs, k, u, uy, un)
    uy, un = relation_bounds(rule[7], lo, hi, c, rr, uy, un, _NEG)
    return c, rr, nw, uy, un


@jit
def walk_outside_f(ft_arrays, lo, hi, top, low, opn, scratch):
    """The trees outside F, and those of F left stale, walked again over the box (they
    were left as a larger box's while the dive was lazy)."""
    stack, reads_f, stale = scratch[6], scratch[10], scratch[12]
    for t in range(reads_f.shape[0]):
        if not reads_f[t] or stale[t]:
            walk(ft_arrays, t, lo, hi, top, low, stack, opn)
            stale[t] = False


@jit
def lazy_or_not(ft_arrays, lo, hi, top, low, opn, scratch, u, rule):
    """The rows a split must separate (open_rows) and the box's bound, deciding whether
    the dive is lazy at this box (lazy[0]): while its pair sums are open and bound it
    (rows_above_sums) and ``rule``'s lazy_dives allows, its splits walk only the trees
    that read F. A dive that stops being lazy walks the trees it left first (their
    maxima tighten u). Returns (u, the rows' start); a box whose u is at most the
    floor (rule's last) is left as it is, to be dropped."""
    thresholds, first_sum, lazy_dives, u_floor = rule[3], rule[4], rule[5], rule[6]
    walked, lazy = scratch[9], scratch[11]
    if u <= u_floor:
        return u, 0
    start = open_rows(top, low, first_sum)
    lazy[0] = 0
    if lazy_dives and start == first_sum:
        lazy[0] = rows_above_sums(top, thresholds, first_sum)
    if lazy[1] > 0 and lazy[0] == 0:  # the trees left unwalked, walked again
        walk_outside_f(ft_arrays, lo, hi, top, low, opn, scratch)
        lazy[1] = 0
        u = min(bound(top, top, walked, 0, thresholds, first_sum), u)
        start = open_rows(top, low, first_sum)
    return u, start


@part
def push_other(hb, hx, hn, u, lo, hi, c, rr, on_yes, max_rows, u_floor, lost):
    """Push the child of the box lo, hi split on column c at rank rr that the dive does
    not enter (the no side when ``on_yes``): only its interval of c differs. Returns
    (hb, hx, hn)."""
    keep_lo, keep_hi = lo[c], hi[c]
    if on_yes:
        lo[c] = rr
    else:
        hi[c] = rr
    hb, hx, hn = push(hb, hx, hn, u, lo, hi, max_rows, u_floor, lost)
    lo[c], hi[c] = keep_lo, keep_hi
    return hb, hx, hn


@jit
def walk_varied(ft_arrays, lo, hi, top, low, opn, scratch, root):
    """A lazy dive's start: the trees that read F walked over the box [lo, hi), the
    others at their maxima and minima over the whole space (``root``: top, low, opn of
    root_walk), marked as left unwalked (lazy[1])."""
    node_start = ft_arrays[1]
    stack, entry, reads_f = scratch[6], scratch[8], scratch[10]
    lazy, stale = scratch[11], scratch[12]
    rtop, rlow, ropn = root
    for t in range(entry.shape[0]):
        entry[t] = node_start[t]
        stale[t] = False
        if reads_f[t]:
            walk(ft_arrays, t, lo, hi, top, low, stack, opn)
        else:  # loops: numba's slice assignment cost 3.8 s of the first compile
            for r in range(top.shape[1]):
                top[t, r] = rtop[t, r]
                low[t, r] = rlow[t, r]
            for k in range(opn.shape[1]):
                opn[t, k] = ropn[t, k]
    lazy[1] = 1


@jit
def root_walk(ft_arrays, trees, cols, max_nodes):
    """Every tree's maxima and minima over the whole pair space, and its opn (walk)."""
    rows = ft_arrays[0].shape[1]
    top, low = np.empty((trees, rows)), np.empty((trees, rows))
    opn = np.zeros((trees, cols), dtype=np.bool_)
    lo = np.zeros(cols, dtype=np.int32)
    hi = np.full(cols, np.iinfo(np.int32).max, dtype=np.int32)
    stack = np.empty(max_nodes + 1, dtype=np.int64)
    for t in range(trees):
        walk(ft_arrays, t, lo, hi, top, low, stack, opn)
    return top, low, opn


@jit
def start_dive(ft_arrays, lo, hi, top, low, opn, scratch, root, lazy_dives):
    """A dive's start: every tree walked over the box, or with ``lazy_dives`` those that
    read F only (walk_varied)."""
    scratch[14][0] = -1  # another box's arrays: choose_split lists its open trees anew
    if lazy_dives:
        walk_varied(ft_arrays, lo, hi, top, low, opn, scratch, root)
    else:
        walk_all(ft_arrays, lo, hi, top, low, opn, scratch)


@jit
def run_buffers(rows, trees, cols, max_nodes, reads_f, skip_closed):
    """run's working arrays: top, low, opn and the scratch split() and enter() take."""
    # top[t] is tree t's rows side by side, so a fold writes one cache line; with fold's
    # max and min taken without branches, the kernel visits 1.26-1.47x the boxes a CPU
    # second it did with each row's trees side by side (bench/reports/scale-tier.md,
    # "Lazy dives where up to 70% of the trees read F")
    per_tree = np.empty((6, trees, rows))
    top, low, ytop = per_tree[0], per_tree[1], per_tree[2]
    ylow, ntop, nlow = per_tree[3], per_tree[4], per_tree[5]
    per_col = np.empty((3, trees, cols), dtype=np.bool_)
    opn, yopn, nopn = per_col[0], per_col[1], per_col[2]
    # a walk's pending nodes: at most one per node of the tree
    stack = np.empty(max_nodes + 1, dtype=np.int64)
    smask = np.empty(max_nodes + 1, dtype=np.int8)
    entry = np.empty(trees, dtype=np.int64)
    # the trees a split walks again: their rows of y*/n* are the children's, the
    # other trees' are top and low's (nothing is copied for them)
    walked = np.empty(trees, dtype=np.int64)
    # (leave the trees outside F unwalked now?, are some left so?, leave the trees of F
    # whose pair sums are closed unwalked too? (gap_kernel.SKIP_CLOSED))
    lazy = np.zeros(3, dtype=np.int64)
    lazy[2] = skip_closed
    # per tree, whether it reads F and was left unwalked by a lazy dive (walk_children)
    stale = np.zeros(trees, dtype=np.bool_)
    # choose_split's trees open at the dive's last box, in order, and (their count, the
    # first row they were judged from); a count of -1: none listed (a new dive's box)
    opened = np.empty(trees, dtype=np.int64)
    listed = np.full(2, -1, dtype=np.int64)
    scratch = (
        ytop,
        ylow,
        ntop,
        nlow,
        yopn,
        nopn,
        stack,
        smask,
        entry,
        walked,
        reads_f,
        lazy,
        stale,
        opened,
        listed,
    )
    return top, low, opn, scratch


@jit
def walk_all(ft_arrays, lo, hi, top, low, opn, scratch):
    """Every tree walked over the box [lo, hi): a dive's start."""
    node_start = ft_arrays[1]
    stack, entry, lazy, stale = scratch[6], scratch[8], scratch[11], scratch[12]
    for t in range(entry.shape[0]):
        walk(ft_arrays, t, lo, hi, top, low, stack, opn)
        entry[t] = node_start[t]
        stale[t] = False
    lazy[1] = 0


@part
def split_row(row, lo, hi):
    """lo, hi = the halves of ``row`` (lo | hi), by loops: numba's slice assignment
    compiled its broadcasting setitem (gap_heap_jit.py)."""
    cols = lo.shape[0]
    for k in range(cols):
        lo[k] = row[k]
        hi[k] = row[cols + k]


@part
def join_row(row, lo, hi):
    """row = lo | hi, as split_row."""
    cols = lo.shape[0]
    for k in range(cols):
        row[k] = lo[k]
        row[cols + k] = hi[k]


@part
def leave_other(heap, u, lo, hi, c, rr, on_yes, recs, frames, bufs, nw):
    """The child of the box lo, hi split on column c at rank rr that the dive does not
    enter (the no side when ``on_yes``), of bound u: dropped under the floor, else kept
    with its arrays in a frame (``frames``, dive_frames': room_for's, below_line's; the
    search goes on from it, rather than walk it again, when it is the best box open:
    frame_first), else pushed on the heap (``heap``: hb, hx, hn, max_rows, u_floor,
    lost). Returns (hb, hx, hn)."""
    hb, hx, hn, max_rows, u_floor, lost = heap
    top, low, opn, scratch = bufs
    if u <= u_floor:
        dropped(lost, u)
        record_other(recs[0], recs[1], lo, hi, c, rr, on_yes)
        return hb, hx, hn
    if frames[0].shape[0] > 0 and below_line(frames, u, hb, hn, u_floor):
        room, hb, hx, hn = room_for(frames, u, hb, hx, hn, max_rows, u_floor, lost)
        if room:
            save_frame(frames, u, lo, hi, c, rr, on_yes, top, low, opn, scratch, nw)
            return hb, hx, hn
    return push_other(hb, hx, hn, u, lo, hi, c, rr, on_yes, max_rows, u_floor, lost)


@part
def leave_box(heap, u, lo, hi, frames, bufs):
    """The dive's box, of bound u, left for a better box open elsewhere: kept with its
    arrays in a frame where below_line and room_for allow, else pushed on the heap.
    Returns (hb, hx, hn)."""
    hb, hx, hn, max_rows, u_floor, lost = heap
    top, low, opn, scratch = bufs
    room = below_line(frames, u, hb, hn, u_floor)
    if room:
        room, hb, hx, hn = room_for(frames, u, hb, hx, hn, max_rows, u_floor, lost)
    if room:  # the box itself: its column 0 "split" at its own lower end, nothing walked
        save_frame(frames, u, lo, hi, 0, lo[0], True, top, low, opn, scratch, 0)
        return hb, hx, hn
    return push(hb, hx, hn, u, lo, hi, max_rows, u_floor, lost)


@part
def better_elsewhere(hb, hn, frames, visited, u):
    """Whether a dive at a box of bound u leaves it, a better box being open elsewhere:
    looked at every CHECK_EVERY boxes it visits (to the heap), or with ``frames``
    leave_for_best's (kept in a frame where there is room)."""
    if frames[0].shape[0] == 0:
        return visited % CHECK_EVERY == 0 and hn > 0 and hb[0] > u + 1e-12
    return leave_for_best(hb, hn, frames, u)


@jit
def run(
    ft_arrays,
    thresholds,
    first_sum,
    order,
    hb,
    hx,
    hn,
    u_floor,
    lost,
    max_rows,
    max_boxes,
    corner,
    max_nodes,
    costs,
    probes,
    held_box,
    held,
    reads_f,
    lazy_dives,
    root,
    bufs,
    recs,
    rels,
    frames,
    lag,
):
    """Pop and dive until ``max_boxes`` boxes, a resolved box above ``u_floor`` (its
    corners in ``corner``), or an empty heap of at most ``max_rows`` rows (``lost``:
    heap_shed's). A dive at ``max_boxes`` is held (``held_box``, ``held`` = (1, its bound,
    its boxes)) and goes on at the next run from its arrays in ``bufs`` (run_buffers').
    ``reads_f``, ``lazy_dives``, ``root``: lazy_or_not's, start_dive's; ``recs``: record()'s;
    ``rels``: split()'s; ``frames``: leave_other's, before the heap's; ``lag``: lag_rows'.
    Returns (status, heap, boxes, u)."""
    cols = corner.shape[1]
    lo, hi = np.empty(cols, dtype=np.int32), np.empty(cols, dtype=np.int32)
    top, low, opn, scratch = bufs
    rule = (order, costs, probes, thresholds, first_sum, lazy_dives, u_floor, rels)
    boxes = 0
    while hn > 0 or held[0] > 0 or frames[7][0] > 0:
        if held[0] > 0:  # the dive the last run held, its arrays as it left them
            split_row(held_box, lo, hi)
            u, visited = held[1], int(held[2])
            held[0] = 0.0
        else:
            if boxes >= max_boxes:
                return BUDGET, hb, hx, hn, boxes, 0.0
            m = frame_first(frames, hb, hn)
            if m >= 0:  # a box kept with its arrays: no walk from the roots
                u = take_frame(frames, m, lo, hi, top, low, opn, scratch)
            else:
                u_box, hn = heap_pop(hb, hx, hn, lo, hi)
                if u_box <= u_floor:
                    gone(lost, u_box, recs, lo, hi)
                    continue
                start_dive(ft_arrays, lo, hi, top, low, opn, scratch, root, lazy_dives)
                u = min(bound(top, top, scratch[9], 0, thresholds, first_sum), u_box)
            visited = 0
        while True:
            visited += 1
            boxes += 1
            u, start = lazy_or_not(ft_arrays, lo, hi, top, low, opn, scratch, u, rule)
            u = lag_rows(lag, lo, hi, u, u_floor, start)
            if u <= u_floor:
                gone(lost, u, recs, lo, hi)
                break
            if start < 0:  # resolved: the lower corner is an exact pair
                gone(lost, u, recs, lo, hi)
                for k in range(cols):
                    corner[0, k] = lo[k]
                    corner[1, k] = hi[k]
                return RESOLVED, hb, hx, hn, boxes, u
            c, rr, nw, uy, un = split(
                ft_arrays, u, lo, hi, top, low, opn, scratch, thresholds, first_sum, rule, start
            )
            on_yes = uy >= un  # the yes side on ties, as sorted() keeps it first
            go_u, stay_u = (uy, un) if on_yes else (un, uy)
            heap = (hb, hx, hn, max_rows, u_floor, lost)
            hb, hx, hn = leave_other(heap, stay_u, lo, hi, c, rr, on_yes, recs, frames, bufs, nw)
            enter(on_yes, c, rr, lo, hi, nw, top, low, opn, scratch)
            u = go_u
            if better_elsewhere(hb, hn, frames, visited, u):  # on from the best box open
                heap = (hb, hx, hn, max_rows, u_floor, lost)
                hb, hx, hn = leave_box(heap, go_u, lo, hi, frames, bufs)
                break
            if boxes >= max_boxes:  # hold the dive for the next run
                join_row(held_box, lo, hi)
                held[0], held[1], held[2] = 1.0, u, float(visited)
                return BUDGET, hb, hx, hn, boxes, 0.0
    return EMPTY, hb, hx, hn, boxes, 0.0
