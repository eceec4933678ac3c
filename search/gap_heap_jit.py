"""The heap of open boxes of gap_kernel_jit.py's search (numba): a box is its bound in
``hb`` and its row lo | hi in ``hx``, the largest bound at the root. Rows are copied by
loops: numba's assignment of a row or a slice compiled its broadcasting setitem, about 7
CPU s of the kernel's first compile (bench/reports/scale-tier.md, "The first run's
compile")."""

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)
part = numba.njit(cache=True, nogil=True, inline="always")


@part
def copy_row(dst, i, src, j):
    """dst[i] = src[j], one column after the other."""
    for k in range(src.shape[1]):
        dst[i, k] = src[j, k]


@part
def heap_push(hb, hx, hn, u, lo, hi):
    """Push the box; the heap has room (make_room)."""
    cols = lo.shape[0]
    i = hn
    while i > 0:
        p = (i - 1) // 2
        if hb[p] >= u:
            break
        hb[i] = hb[p]
        copy_row(hx, i, hx, p)
        i = p
    hb[i] = u
    for k in range(cols):
        hx[i, k] = lo[k]
        hx[i, cols + k] = hi[k]
    return hn + 1


@jit
def make_room(hb, hx, hn, max_rows, u_floor, lost):
    """Room for one more box: the heap as it is while it has some; else its rows doubled,
    up to ``max_rows``; else, at ``max_rows``, the quarter of its boxes with the lowest
    bounds shed (heap_shed). Returns (hb, hx, hn)."""
    if hn < hb.shape[0]:
        return hb, hx, hn
    if hb.shape[0] < max_rows:
        n = min(2 * hn, max_rows)
        nb = np.empty(n, dtype=hb.dtype)
        nx = np.empty((n, hx.shape[1]), dtype=hx.dtype)
        for i in range(hn):  # loops: numba's slice assignment cost 2.9 s of the compile
            nb[i] = hb[i]
            for k in range(hx.shape[1]):
                nx[i, k] = hx[i, k]
        return nb, nx, hn
    return hb, hx, heap_shed(hb, hx, hn, hn - max(1, hn // 4), u_floor, lost)


@part
def push(hb, hx, hn, u, lo, hi, max_rows, u_floor, lost):
    """heap_push after make_room: returns (hb, hx, hn)."""
    hb, hx, hn = make_room(hb, hx, hn, max_rows, u_floor, lost)
    return hb, hx, heap_push(hb, hx, hn, u, lo, hi)


@part
def sift(hb, order, i, n):
    """Sift order[i] down the heap order[:n], the largest hb[order[.]] at its root."""
    while True:
        j = 2 * i + 1
        if j >= n:
            return
        if j + 1 < n and hb[order[j + 1]] > hb[order[j]]:
            j += 1
        if hb[order[j]] <= hb[order[i]]:
            return
        order[i], order[j] = order[j], order[i]
        i = j


@part
def ascending(hb, hn):
    """The indices of hb[:hn] in ascending order of bound: a heapsort (np.argsort's
    quicksort took 2.2 CPU s of the first compile, for a step that runs only once the
    heap is full)."""
    order = np.empty(hn, dtype=np.int64)
    for i in range(hn):
        order[i] = i
    for i in range(hn // 2 - 1, -1, -1):
        sift(hb, order, i, hn)
    for end in range(hn - 1, 0, -1):
        order[0], order[end] = order[end], order[0]
        sift(hb, order, 0, end)
    return order


@jit
def heap_shed(hb, hx, hn, keep, u_floor, lost):
    """Keep the ``keep`` boxes of largest bound, in place, and heap them again; returns
    how many are left. Of the others, a bound at most ``u_floor`` goes into lost[0] (the
    largest dropped bound, as a dive drops a box), a larger one into lost[1] (the largest
    bound shed for memory: it stays under the upper bound), counted in lost[2]."""
    n_drop = hn - keep
    order = ascending(hb, hn)  # the first n_drop go
    gone = np.zeros(hn, dtype=np.bool_)
    for i in range(n_drop):
        j = order[i]
        gone[j] = True
        b = hb[j]
        if b <= u_floor:
            if b > lost[0]:
                lost[0] = b
            lost[3] += 1.0  # dropped unrecorded (record)
        else:
            if b > lost[1]:
                lost[1] = b
            lost[2] += 1.0
    k = 0
    for i in range(hn):
        if not gone[i]:
            if k != i:
                hb[k] = hb[i]
                copy_row(hx, k, hx, i)
            k += 1
    tmp = np.empty((1, hx.shape[1]), dtype=hx.dtype)
    for i in range(k // 2 - 1, -1, -1):  # Floyd: sift each parent down
        copy_row(tmp, 0, hx, i)
        sift_down(hb, hx, i, k, hb[i], tmp, 0)
    return k


@part
def heap_pop(hb, hx, hn, lo, hi):
    cols = lo.shape[0]
    u = hb[0]
    for k in range(cols):
        lo[k] = hx[0, k]
        hi[k] = hx[0, cols + k]
    hn -= 1
    if hn > 0:  # the last box sifted down from the root; its row hn is not written (< hn)
        sift_down(hb, hx, 0, hn, hb[hn], hx, hn)
    return u, hn


@part
def sift_down(hb, hx, p, n, u, src, row):
    """Box u (its row ``src[row]``) placed at p of the heap's first n and sifted down."""
    while True:
        j = 2 * p + 1
        if j >= n:
            break
        if j + 1 < n and hb[j + 1] > hb[j]:
            j += 1
        if hb[j] <= u:
            break
        hb[p] = hb[j]
        copy_row(hx, p, hx, j)
        p = j
    hb[p] = u
    copy_row(hx, p, src, row)
