"""Exact bounds of recorded boxes (numba), for the proofs compiled_proof.py rebuilds from
the compiled search's record: imported on first use only, as gap_kernel_jit.py is."""

import numpy as np

from .gap_kernel_jit import jit, walk


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
