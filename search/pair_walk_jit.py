"""The pair tables' tree walks (pair_boxes._Builder), compiled (numba): imported on
first use only, cached on disk where numba can write.

``walk_tree`` copies one ranked tree into the pair tables as _Builder's recursive walk
does, node for node and leaf for leaf in the same order, but records each leaf as the
pair of model leaves it stands for (x1's, x2's); the caller turns those into the rows'
values with the trees' leaf weights. On the 255-leaf LightGBM adult model the Python
walk took 25-31 CPU s per feature for 1.6-4.2 million pair leaves.
"""

import numba
import numpy as np

jit = numba.njit(cache=True, nogil=True)

# a frame of the walk's stack: the node, its copy (0, or 1 for copy 2's tree below a
# leaf of copy 1's), its state (0 entered, 1 back from "yes", 2 back from "no"), and
# once split: its column, the box's interval on it (a, b), its node index, its first
# leaf, the first leaf and node of its "no" side
N, LEVEL, STATE, COL, A, B, K, FIRST, MIDDLE, NO_START = range(10)
FRAME = 10


@jit
def walk_tree(tree, cols, product, lo, hi, node_base, nodes, n_nodes, pairs, n_leaves, stack):
    """Walk the ranked tree ``tree`` (feature, R, yes, no per node; a leaf: feature -1,
    R its leaf node) within the box [lo, hi), writing its pair nodes from row ``n_nodes``
    of ``nodes`` (NODE_FIELDS each; children numbered from ``node_base``, the tree's
    first node) and its leaves from row ``n_leaves`` of ``pairs`` (x1's leaf, x2's).
    ``cols``: per feature, its column for copy 1 and for copy 2 (a tree outside F: the
    same). ``product``: below each leaf of copy 1's walk, copy 2's tree is walked.
    Returns the new (n_nodes, n_leaves), or (-1, -1) when ``nodes`` or ``pairs`` is full
    (lo and hi are then left changed)."""
    feat, rank, yes, no = tree[0], tree[1], tree[2], tree[3]
    x1 = -1
    sp = 1
    stack[0, N] = 0
    stack[0, LEVEL] = 0
    stack[0, STATE] = 0
    while sp > 0:
        fr = stack[sp - 1]
        n = fr[N]
        state = fr[STATE]
        if state == 0:
            f = feat[n]
            if f < 0:
                if product and fr[LEVEL] == 0:  # x1's leaf: copy 2's tree below it
                    x1 = rank[n]
                    fr[N] = 0
                    fr[LEVEL] = 1
                    continue
                if n_leaves >= pairs.shape[0]:
                    return -1, -1
                pairs[n_leaves, 0] = x1 if product else rank[n]
                pairs[n_leaves, 1] = rank[n]
                n_leaves += 1
                sp -= 1
                continue
            c = cols[f, fr[LEVEL]]
            a, b = lo[c], hi[c]
            r = rank[n]
            if r >= b:  # the whole box takes "yes"
                fr[N] = yes[n]
                continue
            if r <= a:
                fr[N] = no[n]
                continue
            if n_nodes >= nodes.shape[0] or sp >= stack.shape[0]:
                return -1, -1
            fr[COL], fr[A], fr[B], fr[K], fr[FIRST] = c, a, b, n_nodes, n_leaves
            n_nodes += 1
            fr[STATE] = 1
            hi[c] = r
            nxt = stack[sp]
            nxt[N], nxt[LEVEL], nxt[STATE] = yes[n], fr[LEVEL], 0
            sp += 1
        elif state == 1:
            c = fr[COL]
            hi[c] = fr[B]
            fr[MIDDLE], fr[NO_START] = n_leaves, n_nodes
            lo[c] = rank[n]
            fr[STATE] = 2
            if sp >= stack.shape[0]:
                return -1, -1
            nxt = stack[sp]
            nxt[N], nxt[LEVEL], nxt[STATE] = no[n], fr[LEVEL], 0
            sp += 1
        else:
            c = fr[COL]
            lo[c] = fr[A]
            k, no_start = fr[K], fr[NO_START]
            out = nodes[k]
            out[0], out[1], out[2], out[3], out[4] = c, rank[n], fr[FIRST], fr[MIDDLE], n_leaves
            out[5] = k + 1 - node_base if no_start > k + 1 else -1
            out[6] = no_start - node_base if n_nodes > no_start else -1
            sp -= 1
    return n_nodes, n_leaves


def ranked_arrays(nodes: dict) -> np.ndarray:
    """A RankedTree (node -> (feature, R, yes, no)) as int32[4, nodes] (``tree``)."""
    size = max(nodes) + 1
    out = np.zeros((4, size), dtype=np.int32)
    keys = np.fromiter(nodes.keys(), dtype=np.int64, count=len(nodes))
    out[:, keys] = np.array(list(nodes.values()), dtype=np.int32).T
    return out
