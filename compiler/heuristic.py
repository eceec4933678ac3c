"""A fast search for a witness pair before (and to steer) the exact solver.

Coordinate ascent over threshold intervals, with random restarts (and data rows as
starting points when data is given): move one feature at a time to the interval that
most improves the score (the difference of the two decisions, weighted up, plus the
worse of the two sides' slacks), until both sides meet the gap.

It can only ever *find* a pair: whatever it finds goes through the same replay check as
a solver's answer, and "insensitive" is never concluded from it. When it fails, its best
point is passed to the solver as a hint.

Evaluation is incremental: changing feature f only changes the trees that test f, so
only those trees are re-evaluated.
"""

from __future__ import annotations

import time

import numpy as np

from .encode import Encoding
from .ensemble import MISSING_ZERO

MAX_CANDIDATES = 48  # interval representatives tried per feature move
# score = min(slack1, slack2) + balance * (slack1 + slack2). The sum is the difference of
# the two decisions, the part the varied features must create; the min keeps the two
# sides level. Weighting the sum up finds pairs a level score misses (docs/benchmarks.md,
# "Why the defaults are what they are")
BALANCE = 3.0


class _TreeEval:
    """Per-tree leaf values for batches of rows, one tree at a time."""

    def __init__(self, enc: Encoding):
        ens = enc.ensemble
        self.ens = ens
        self.trees = ens.trees
        self.n_out = ens.n_outputs
        # per tree: contribution vector per node (scale applied), shape (n_nodes, n_out)
        self.contrib = []
        for t in ens.trees:
            c = np.zeros((t.n_nodes, self.n_out))
            for j, o in enumerate(t.outputs):
                c[:, o] += t.value[:, j] * ens.scale
            self.contrib.append(c)
        self.uses: dict[int, list[int]] = {f: [] for f in range(ens.n_features)}
        for ti, t in enumerate(ens.trees):
            for f in set(t.feature[t.feature >= 0].tolist()):
                self.uses[f].append(ti)
        self.lt = ens.op == "<"
        self.work = 0
        self.f32 = ens.cast == "float32"

    def leaves(self, ti: int, X: np.ndarray) -> np.ndarray:
        t = self.trees[ti]
        n = X.shape[0]
        node = np.zeros(n, dtype=np.int64)
        rows = np.arange(n)
        feat, thr, left, right = t.feature, t.threshold, t.left, t.right
        for _ in range(64):
            f = feat[node]
            inner = f >= 0
            if not inner.any():
                break
            v = X[rows, np.where(inner, f, 0)]
            yes = v < thr[node] if self.lt else v <= thr[node]
            nxt = np.where(yes, left[node], right[node])
            node = np.where(inner, nxt, node)
        return node

    def tree_values(self, ti: int, X: np.ndarray) -> np.ndarray:
        self.work += X.shape[0] + 8  # row-tree evaluations, plus a per-call overhead
        return self.contrib[ti][self.leaves(ti, X)]


def _outside_numeric_model(enc: Encoding) -> bool:
    """Does the model use anything this plain numeric evaluator does not mimic?"""
    ens = enc.ensemble
    if ens.cast not in ("float32", "float64"):
        return True
    if any(getattr(d, "codes", None) is not None for d in enc.domains.values()):
        return True
    if any(getattr(enc, "nan", ({}, {}))):
        return True
    return any(
        (t.categories is not None and any(c is not None for c in t.categories))
        or (t.missing is not None and bool((t.missing == MISSING_ZERO).any()))
        for t in ens.trees
    )


def _slack(rows, raw: np.ndarray) -> np.ndarray:
    """Smallest slack over a copy's gap rows, per row of raw scores (n, n_out)."""
    out = None
    for coefs, rhs in rows:
        s = raw @ np.asarray(coefs) - rhs
        out = s if out is None else np.minimum(out, s)
    return out


def find_witness(
    enc: Encoding,
    budget: float,
    seed: int = 0,
    starts: np.ndarray | None = None,
    margin: float = 0.0,
    work: int | None = None,
    balance: float = BALANCE,
    candidates: int = MAX_CANDIDATES,
):
    """Return (x1, x2, found) — the best pair seen, and whether it meets both sides.

    ``margin`` asks for that much slack beyond the gap (to stay clear of rounding).
    ``work`` bounds the effort in row-tree evaluations, so that the same query gives the
    same answer however loaded the machine is; ``budget`` (seconds) is only a backstop.
    """
    cond = enc.condition
    if any(cond.alternatives) or not cond.rows[0] or not cond.rows[1]:
        return None
    if _outside_numeric_model(enc):
        return None  # categorical splits, NaN choices, LightGBM's zero band: the solver's job
    ens = enc.ensemble
    ev = _TreeEval(enc)
    rng = np.random.default_rng(seed)
    deadline = time.time() + budget
    feats = list(range(ens.n_features))
    reps = {f: np.array([enc.domains[f].reps[j] for j in enc.domains[f].valid]) for f in feats}
    varying = enc.varying
    cast = (lambda X: X.astype(np.float32).astype(np.float64)) if ev.f32 else (lambda X: X)
    rows1, rows2 = cond.rows
    base = np.asarray(ens.intercept, dtype=np.float64)
    best = (None, None, -np.inf)

    def full_contrib(x: np.ndarray) -> np.ndarray:
        X = cast(x[None, :])
        return np.stack([ev.tree_values(ti, X)[0] for ti in range(len(ev.trees))])

    restart = 0

    def out_of_budget() -> bool:
        return time.time() >= deadline or (work is not None and ev.work >= work)

    def ascend(x1: np.ndarray, x2: np.ndarray):
        """Coordinate ascent from (x1, x2); returns the local optimum, its two slacks and
        whether it meets both sides."""
        c1, c2 = full_contrib(x1), full_contrib(x2)
        raw1, raw2 = base + c1.sum(0), base + c2.sum(0)
        s1, s2 = float(_slack(rows1, raw1[None])[0]), float(_slack(rows2, raw2[None])[0])
        if min(s1, s2) >= margin:
            return x1, x2, s1, s2, True
        improved = True
        while improved and not out_of_budget():
            improved = False
            for f in rng.permutation(feats):
                cand = reps[f]
                if len(cand) > candidates:
                    cand = rng.choice(cand, candidates, replace=False)
                trees = ev.uses[f]
                if not trees:
                    continue
                moves = ((0, cand), (1, cand)) if f in varying else ((2, cand),)
                for which, vals in moves:
                    n = len(vals)
                    new1 = np.repeat(raw1[None], n, 0)
                    new2 = np.repeat(raw2[None], n, 0)
                    if which in (0, 2):
                        X = np.repeat(x1[None], n, 0)
                        X[:, f] = vals
                        X = cast(X)
                        for ti in trees:
                            new1 += ev.tree_values(ti, X) - c1[ti]
                    if which in (1, 2):
                        X = np.repeat(x2[None], n, 0)
                        X[:, f] = vals
                        X = cast(X)
                        for ti in trees:
                            new2 += ev.tree_values(ti, X) - c2[ti]
                    sl1 = _slack(rows1, new1)
                    sl2 = _slack(rows2, new2)
                    score = np.minimum(sl1, sl2) + balance * (sl1 + sl2)
                    k = int(np.argmax(score))
                    if score[k] > min(s1, s2) + balance * (s1 + s2) + 1e-12:
                        if which in (0, 2):
                            x1[f] = vals[k]
                            Xk = cast(x1[None])
                            for ti in trees:
                                c1[ti] = ev.tree_values(ti, Xk)[0]
                        if which in (1, 2):
                            x2[f] = vals[k]
                            Xk = cast(x2[None])
                            for ti in trees:
                                c2[ti] = ev.tree_values(ti, Xk)[0]
                        raw1, raw2 = base + c1.sum(0), base + c2.sum(0)
                        s1 = float(_slack(rows1, raw1[None])[0])
                        s2 = float(_slack(rows2, raw2[None])[0])
                        improved = True
                        if min(s1, s2) >= margin:
                            return x1, x2, s1, s2, True
        return x1, x2, s1, s2, False

    while not out_of_budget():
        if starts is not None and restart < len(starts):
            x1 = starts[restart].astype(np.float64).copy()
        else:
            x1 = np.array([rng.choice(reps[f]) for f in feats], dtype=np.float64)
        x2 = x1.copy()
        for f in varying:
            x2[f] = rng.choice(reps[f])
        x1, x2, s1, s2, ok = ascend(x1, x2)
        restart += 1
        if ok:
            return x1, x2, True
        if min(s1, s2) > best[2]:
            best = (x1.copy(), x2.copy(), min(s1, s2))
    if best[0] is None:
        return None
    return best[0], best[1], best[2] >= margin
