"""A fast search for a witness pair before (and to steer) the exact solver.

Coordinate ascent over threshold intervals, with random restarts (and data rows as
starting points when data is given): move one feature at a time to the interval that
most improves the score (the difference of the two decisions, weighted up, plus the
worse of the two sides' slacks), until both sides meet the gap.

It can only ever *find* a pair: whatever it finds goes through the same replay check as
a solver's answer, and "insensitive" is never concluded from it. When it fails, its best
point is passed to the solver as a hint.

Relations between the inputs (``where x1.age <= x2.age``) are met throughout: a start
pair is fixed up to meet them, a move to a value that breaks one is not taken, and a
feature under a relation that equal values meet (``==``, ``<=``, ``>=``) also moves on
both inputs together, the one move ``==`` leaves it. Under one that equal values break
(``<``, ``>``, ``!=``) a feature also moves both inputs into one interval: x1 to the
value tried and x2 beside it, at a value the model reads as another number, the shortest
decimal left in x1's interval on that side where it holds one (representatives alone put
the two inputs in different intervals).

Evaluation is incremental: changing feature f only changes the trees that test f, so
only those trees are re-evaluated.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..compiler.decimals import readable_in
from ..compiler.domain import cell_span
from ..compiler.encode import Encoding
from ..compiler.ensemble import MISSING_ZERO, ZERO_BAND, Ensemble
from ..compiler.passes.data_aware import interval_index
from ..compiler.query import feature_index
from .compiled_calls import signals_raised

MAX_CANDIDATES = 48  # interval representatives tried per feature move
# score = min(slack1, slack2) + balance * (slack1 + slack2). The sum is the difference of
# the two decisions, the part the varied features must create; the min keeps the two
# sides level. Weighting the sum up finds pairs a level score misses (docs/benchmarks.md,
# "Why the defaults are what they are")
BALANCE = 3.0
# an evaluator walks its trees compiled (search/tree_eval_jit.py; the same leaves and
# sums) once it has done this many row-tree evaluations and its work bound leaves at least
# as many: the max gap's seed on the 255-leaf LightGBM churn model took 17 s instead of
# 94, with the same pairs. Before it, the numpy walk: importing numba and loading the
# compiled walk (about 1 s) would cost a quick check more than it saves
COMPILED_AFTER_WORK = 3_000_000
# a relation between the inputs' copies of a feature (``where x1.age <= x2.age``), on values
RELATION_OPS = {
    "<=": np.less_equal,
    "<": np.less,
    ">=": np.greater_equal,
    ">": np.greater,
    "==": np.equal,
    "!=": np.not_equal,
}
# relations two equal values meet: a feature related so moves on both inputs together too
_MET_BY_EQUAL = ("<=", ">=", "==")


class Move(NamedTuple):
    """One move of a feature in the ascent: the copies (0 for x1) it sets to the value
    tried; ``apart``: x1 to the value and x2 beside it (``_Ascent.beside``), both inputs
    in one interval under a relation equal values break."""

    sides: tuple[int, ...]
    apart: bool = False


_ALONE = (Move((0,)), Move((1,)))


@dataclass(frozen=True)
class _Forest:
    """The model's trees as one set of node arrays (node ids offset per tree), built once
    per model and kept on it: the questions of a batch (questions/campaign.py,
    ``ask_many``) share it."""

    root: np.ndarray  # (n_trees,) each tree's root in the joint arrays
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    contrib: np.ndarray  # (n_nodes, n_out): a node's leaf value per output, scale applied
    uses: dict[int, np.ndarray]  # feature -> the trees that test it, in order
    # the walk's arrays: a leaf tests column 0 and both its children are itself, so a walk
    # of ``levels`` steps ends on every row's leaf without asking which nodes are inner
    walk_feature: np.ndarray
    children: np.ndarray  # (2, n_nodes): [the "no" child, the "yes" child]
    levels: int  # the deepest leaf's depth
    reads: np.ndarray  # each node's features read at or under it: bits (see _levels)

    @classmethod
    def of(cls, ens: Ensemble) -> _Forest:
        cached = ens.__dict__.get("_heuristic_forest")
        if cached is None:
            cached = cls._build(ens)
            object.__setattr__(ens, "_heuristic_forest", cached)  # immutable: like fingerprint
        return cached

    @classmethod
    def _build(cls, ens: Ensemble) -> _Forest:
        # whole-forest array operations: a loop over the trees cost ~10 ms per 300 trees,
        # a fifth of a check the heuristic answers
        trees = ens.trees
        sizes = np.array([t.n_nodes for t in trees], dtype=np.int64)
        root = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        offset = np.repeat(root, sizes)  # each node's tree's root

        def joint(name: str) -> np.ndarray:
            return np.concatenate([getattr(t, name) for t in trees]) if trees else np.zeros(0)

        feature = joint("feature").astype(np.int64)
        left = joint("left").astype(np.int64) + offset
        right = joint("right").astype(np.int64) + offset
        contrib = np.zeros((len(feature), ens.n_outputs))
        if all(len(t.outputs) == 1 for t in trees):
            column = np.repeat([t.outputs[0] for t in trees], sizes).astype(np.int64)
            contrib[np.arange(len(feature)), column] += joint("value")[:, 0] * ens.scale
        else:
            for t, r in zip(trees, root, strict=True):
                for j, o in enumerate(t.outputs):
                    contrib[r : r + t.n_nodes, o] += t.value[:, j] * ens.scale
        leaf = feature < 0
        me = np.arange(len(feature), dtype=np.int64)
        children = np.stack([np.where(leaf, me, right), np.where(leaf, me, left)])
        levels, reads = _levels(root, feature, left, right)
        return cls(
            root=root,
            feature=feature,
            threshold=joint("threshold"),
            left=left,
            right=right,
            contrib=contrib,
            uses=_trees_testing(feature, sizes, ens.n_features),
            walk_feature=np.where(leaf, 0, feature),
            children=children,
            levels=levels,
            reads=reads,
        )


def _trees_testing(feature: np.ndarray, sizes: np.ndarray, n_features: int) -> dict:
    """Feature -> the trees (ascending) with a node that tests it, from the joint
    ``feature`` array of trees of ``sizes`` nodes."""
    tree = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
    inner = feature >= 0
    pairs = np.sort(feature[inner] * max(1, len(sizes)) + tree[inner])
    # each (feature, tree) once; not np.unique, whose first call imports numpy.ma (12 ms)
    pairs = pairs[np.concatenate([[True], pairs[1:] != pairs[:-1]])] if len(pairs) else pairs
    f, t = np.divmod(pairs, max(1, len(sizes)))
    bounds = np.searchsorted(f, np.arange(n_features + 1))
    return {k: t[bounds[k] : bounds[k + 1]] for k in range(n_features)}


# a model with a leaf deeper than this walks compiled from the start: the numpy walk steps
# every row as deep as the deepest leaf
DEEP_LEVELS = 64


def _levels(
    root: np.ndarray, feature: np.ndarray, left: np.ndarray, right: np.ndarray
) -> tuple[int, np.ndarray]:
    """How many steps take every root to its deepest leaf; and each node's features read
    at or under it, as bits (feature f as bit min(f, 63): one bit for the 64th on)."""
    nodes, depths = root, []
    while True:
        inner = nodes[feature[nodes] >= 0]
        if not len(inner):
            break
        depths.append(inner)
        nodes = np.concatenate([left[inner], right[inner]])
    reads = np.zeros(len(feature), dtype=np.int64)
    for inner in reversed(depths):  # children before their parents
        bit = np.left_shift(np.int64(1), np.minimum(feature[inner], 63))
        reads[inner] = bit | reads[left[inner]] | reads[right[inner]]
    return len(depths), reads


class _TreeEval:
    """Leaf values of several trees for a batch of rows, all trees in one walk."""

    def __init__(self, enc: Encoding, work: int | None = None):
        ens = enc.ensemble
        self.forest = _Forest.of(ens)
        self.n_trees = len(ens.trees)
        self.uses = self.forest.uses
        self.lt = ens.op == "<"
        self.work = 0
        self.f32 = ens.cast == "float32"
        self.zero_band = ens.cast == "float64z"  # LightGBM reads |x| <= ZERO_BAND as 0.0
        # the compiled walk where this process has loaded it, else from COMPILED_AFTER_WORK on
        self.jit = _LOADED.get("walk")
        if self.jit is None and self.forest.levels > DEEP_LEVELS:
            self.jit = compiled_eval()
        self.jit_from = COMPILED_AFTER_WORK
        self.bound = work  # the work bound (None: none)

    def _compiled(self) -> CompiledWalk | None:
        """The compiled walk, loaded once the work done and left repay it; None before."""
        if self.jit is None and self.work >= self.jit_from and self._long():
            self.jit_from = math.inf
            self.jit = compiled_eval()
        return self.jit

    def leaves(self, trees: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The leaf (a joint node id) each row of ``X`` reaches in each tree: (trees, rows)."""
        fo = self.forest
        if self._compiled() is not None:
            trees = np.asarray(trees, dtype=np.int64)
            X = np.ascontiguousarray(X, dtype=np.float64)
            with signals_raised():
                return self.jit.leaves(
                    fo.root, fo.feature, fo.threshold, fo.left, fo.right, trees, X, self.lt
                )
        n = X.shape[0]
        node = np.repeat(fo.root[trees][:, None], n, axis=1)
        rows = np.arange(n)[None, :]
        feature, threshold, children = fo.walk_feature, fo.threshold, fo.children
        for _ in range(fo.levels):  # a leaf stays where it is
            v = X[rows, feature[node]]
            yes = v < threshold[node] if self.lt else v <= threshold[node]
            node = children[yes.view(np.int8), node]
        return node

    def _long(self) -> bool:
        """Whether the work bound leaves at least ``jit_from`` more evaluations."""
        return self.bound is None or self.bound - self.work >= self.jit_from

    def tree_values(self, trees: np.ndarray, X: np.ndarray) -> np.ndarray:
        """Each tree's contribution for each row: (trees, rows, outputs)."""
        self.work += _work(trees, X.shape[0])
        return self.forest.contrib[self.leaves(trees, X)]

    def add_changes(
        self, total: np.ndarray, trees: np.ndarray, x: np.ndarray, f: int, vals: np.ndarray,
        before: np.ndarray,
    ) -> bool:  # fmt: skip
        """total[j] += each tree's contribution less ``before`` (x's own contribution, a
        row for each of ``trees``) where row ``x`` (as the library reads it) has feature
        ``f`` at vals[j]: what ``add_in_order`` of ``tree_values``' changes adds, bit for
        bit, the work counted alike, each tree walked once over all the values (compiled).
        False (nothing done) where the walk is not compiled: the caller takes the rows one
        by one."""
        work = _work(trees, len(vals))
        self.work += work  # counted first, as tree_values counts it: the switch reads it
        if self._compiled() is None:
            self.work -= work
            return False
        fo = self.forest
        order = np.argsort(vals, kind="stable")
        with signals_raised():
            self.jit.add_varying(
                fo.root, fo.feature, fo.threshold, fo.left, fo.right, fo.reads, fo.levels,
                np.asarray(trees, dtype=np.int64), np.ascontiguousarray(x, dtype=np.float64),
                f, np.ascontiguousarray(vals[order], dtype=np.float64), order, self.lt,
                fo.contrib, np.ascontiguousarray(before, dtype=np.float64), total,
            )  # fmt: skip
        return True

    def add_in_order(self, total: np.ndarray, change: np.ndarray) -> None:
        """total += change[t] for each tree t in order (in place): the rounding of a sum
        taken tree after tree."""
        if self.jit is not None:
            with signals_raised():
                self.jit.add_in_order(total, change)
            return
        for d in change:
            total += d


def _work(trees: np.ndarray, rows: int) -> int:
    """A walk's work: its row-tree evaluations, plus a per-call overhead."""
    return len(trees) * (rows + 8)


class CompiledWalk(NamedTuple):
    """search/tree_eval_jit.py's functions."""

    leaves: Callable
    add_in_order: Callable
    add_varying: Callable


# "walk": the CompiledWalk (None where numba does not install) once an evaluator of this
# process has loaded it: the load is paid, and every evaluator after it walks compiled
_LOADED: dict = {}


def compiled_eval() -> CompiledWalk | None:
    """search/tree_eval_jit.py's walk, or None where numba does not install (the numpy
    walk then)."""
    if "walk" not in _LOADED:
        try:
            from .tree_eval_jit import (  # noqa: PLC0415 - numba when long
                add_in_order,
                add_varying,
                leaves,
            )
        except ImportError:
            _LOADED["walk"] = None
        else:
            _LOADED["walk"] = CompiledWalk(leaves, add_in_order, add_varying)
    return _LOADED["walk"]


def _outside_numeric_model(enc: Encoding) -> bool:
    """Does the model use anything this plain numeric evaluator does not mimic? A feature
    that may be missing is not: the ascent moves over its numbers, never NaN, whose
    routing they do not read (the solver's encoding has a NaN variable for it, the pair
    tables' encoding has none: the same search either way)."""
    ens = enc.ensemble
    if ens.cast not in ("float32", "float64", "float64z"):
        return True
    if any(getattr(d, "codes", None) is not None for d in enc.domains.values()):
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


def _copy_slack(rows, alternatives, raw: np.ndarray) -> np.ndarray:
    """A copy's slack: the smallest over its rows and, when it has alternatives (a class
    that may be any), the best alternative's smallest."""
    out = _slack(rows, raw) if rows else None
    if alternatives:
        best = np.max([_slack(group, raw) for group in alternatives], axis=0)
        out = best if out is None else np.minimum(out, best)
    return out


def _searchable(cond) -> bool:
    """Whether the ascent's score describes the condition: rows or alternatives on each
    copy, and no choice tying the copies' classes together ("any" against "any")."""
    return not cond.distinct and all(cond.rows[c] or cond.alternatives[c] for c in (0, 1))


@dataclass
class Spent:
    """The row-tree evaluations of the searches it was given to (find_witness's, the
    polishes'): a late polish's work clock counts them (gap_search.LatePolish)."""

    evaluations: int = 0


def find_witness(
    enc: Encoding,
    budget: float,
    seed: int = 0,
    starts: np.ndarray | None = None,
    margin: float = 0.0,
    work: int | None = None,
    balance: float = BALANCE,
    candidates: int = MAX_CANDIDATES,
    spent: Spent | None = None,
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """Return (x1, x2, found) — the best pair seen, and whether it meets both sides.

    ``margin`` asks for that much slack beyond the gap (to stay clear of rounding).
    ``work`` bounds the effort in row-tree evaluations, so that the same query gives the
    same answer however loaded the machine is; ``budget`` (seconds) is only a backstop.
    ``spent``: the search's evaluations added to it.
    """
    if not applies(enc):
        return None
    search = _Ascent(enc, seed, time.time() + budget, margin, work, balance, candidates)
    try:
        return _ascended(search, starts, margin)
    finally:
        if spent is not None:
            spent.evaluations += search.ev.work


def _ascended(
    search: _Ascent, starts: np.ndarray | None, margin: float
) -> tuple[np.ndarray, np.ndarray, bool] | None:
    """find_witness's restarts of ``search`` until one meets both sides or the budget ends."""
    best = (None, None, -np.inf)
    restart = 0
    while not search.out_of_budget():
        x1, x2 = search.start(starts, restart)
        x1, x2, s1, s2, ok = search.ascend(x1, x2)
        restart += 1
        if ok:
            return x1, x2, True
        if min(s1, s2) > best[2]:
            best = (x1.copy(), x2.copy(), min(s1, s2))
    if best[0] is None:
        return None
    return best[0], best[1], best[2] >= margin


def _relations(enc: Encoding) -> dict[int, list[tuple[int, int, Callable]]]:
    """The query's relations between the inputs, by feature: (left copy, right copy,
    comparison) each, 0 for x1; only on varied features (a shared feature's copies are
    one value, as the replay's constraint_violations reads them)."""
    out: dict[int, list[tuple[int, int, Callable]]] = {}
    for r in enc.query.relations:
        f = feature_index(enc.ensemble, r.feature)
        if f in enc.varying:
            out.setdefault(f, []).append((r.left - 1, r.right - 1, RELATION_OPS[r.op]))
    return out


def _move_sides(enc: Encoding) -> dict[int, tuple[Move, ...]]:
    """Feature -> its moves: x1 alone and x2 alone for a varied feature; both together
    too where a relation on it holds for equal values (under ``x1.f == x2.f`` a move of
    one copy alone breaks it, so only both together move f), and both into one interval
    (x2 beside x1, ``Move.apart``) where one breaks for them (``<``, ``>``, ``!=``); both
    for a shared feature."""
    together, apart = set(), set()
    for r in enc.query.relations:
        f = feature_index(enc.ensemble, r.feature)
        (together if r.op in _MET_BY_EQUAL else apart).add(f)
    return {
        f: _ALONE
        + ((Move((0, 1)),) if f in together else ())
        + ((Move((0, 1), apart=True),) if f in apart else ())
        if f in enc.varying
        else (Move((0, 1)),)
        for f in range(enc.ensemble.n_features)
    }


def applies(enc: Encoding) -> bool:
    """Whether the ascent's score and evaluation describe the query (not: categorical
    splits, missing-as-zero; those are the solver's job; NaN, which it never tries, is
    too)."""
    return _searchable(enc.condition) and not _outside_numeric_model(enc)


def pair_ascent(
    enc: Encoding, seed: int, deadline: float, margin: float, work: int | None
) -> _Ascent:
    """The ascent's state (evaluator, values, slacks, work count) for another search over
    pairs of ``enc`` (search/gap_polish.py); only where ``applies(enc)``."""
    return _Ascent(enc, seed, deadline, margin, work, BALANCE, MAX_CANDIDATES)


class _Ascent:
    """Restarted coordinate ascent on the pair's score (see BALANCE), one random stream."""

    def __init__(
        self,
        enc: Encoding,
        seed: int,
        deadline: float,
        margin: float,
        work: int | None,
        balance: float,
        candidates: int,
    ):
        ens = enc.ensemble
        self.ev = _TreeEval(enc, work)
        self.rng = np.random.default_rng(seed)
        self.deadline, self.margin, self.work = deadline, margin, work
        self.balance, self.candidates = balance, candidates
        self.feats = list(range(ens.n_features))
        self.reps = {
            f: np.array([enc.domains[f].reps[j] for j in enc.domains[f].valid]) for f in self.feats
        }
        self.varying = enc.varying
        self.ens, self.domains = ens, enc.domains
        self.readable: dict[tuple[int, float], tuple[float, float]] = {}  # readable_apart's
        self.related = _relations(enc)
        self.sides = _move_sides(enc)
        self.features = ens.features
        cond = enc.condition
        self.rows = cond.rows
        self.alternatives = cond.alternatives or ((), ())
        self.base = np.asarray(ens.intercept, dtype=np.float64)

    def cast(self, X: np.ndarray) -> np.ndarray:
        """The inputs as the library reads them."""
        if self.ev.f32:
            return X.astype(np.float32).astype(np.float64)
        if self.ev.zero_band:
            return np.where(np.abs(X) <= ZERO_BAND, 0.0, X)
        return X

    def out_of_budget(self) -> bool:
        return time.time() >= self.deadline or (self.work is not None and self.ev.work >= self.work)

    def start(self, starts: np.ndarray | None, restart: int) -> tuple[np.ndarray, np.ndarray]:
        """A starting pair: the next given start, or random representatives."""
        rng, reps = self.rng, self.reps
        if starts is not None and restart < len(starts):
            x1 = starts[restart].astype(np.float64).copy()
        else:
            x1 = np.array([rng.choice(reps[f]) for f in self.feats], dtype=np.float64)
        x2 = x1.copy()
        for f in self.varying:
            x2[f] = rng.choice(reps[f])
        self.meet_relations(x1, x2)
        return x1, x2

    def allowed(self, x: list[np.ndarray], f: int, placed: list[np.ndarray | None]):
        """Which of the values ``placed`` sets as feature ``f`` (each copy's array, None
        for a copy left at pair ``x``'s) meet the query's relations on ``f`` (None: all
        of them)."""
        rels = self.related.get(f)
        if not rels:
            return None
        n = len(next(v for v in placed if v is not None))
        xs = [np.full(n, x[i][f]) if placed[i] is None else placed[i] for i in (0, 1)]
        ok = np.ones(n, dtype=bool)
        for a, b, op in rels:
            ok &= op(xs[a], xs[b])
        return ok

    def placed(
        self, x: list[np.ndarray], f: int, move: Move, vals: np.ndarray
    ) -> list[np.ndarray | None]:
        """The values of ``f`` each copy takes where ``move`` tries each of ``vals`` (None
        for a copy it leaves)."""
        if move.apart:
            return self.beside(x, f, vals)
        return [vals if i in move.sides else None for i in (0, 1)]

    def beside(self, x: list[np.ndarray], f: int, vals: np.ndarray) -> list[np.ndarray]:
        """For each of ``vals``, the pair's values of ``f`` in one interval: x1 at the
        value and x2 at a value above or below that the model reads as another number
        (``readable_apart``) and meets the relations on ``f`` with it, else x2 at the
        value and x1 so beside it (the value at the declared range's end, where x2's
        neighbour would be outside it); the value on both where none does (which breaks
        them: a move to it is not taken)."""
        v1, v2 = vals.copy(), vals.copy()
        up, down = self.readable_apart(f, vals)
        for near in (down, up):  # above before below: above written last
            v2 = np.where(self.allowed(x, f, [vals, near]) & ~np.isnan(near), near, v2)
        met = self.allowed(x, f, [v1, v2])
        for near in (down, up):
            ok = ~met & self.allowed(x, f, [near, vals]) & ~np.isnan(near)
            v1 = np.where(ok, near, v1)
        return [v1, v2]

    def meet_relations(self, x1: np.ndarray, x2: np.ndarray) -> None:
        """Pair (x1, x2) made to meet the query's relations where it breaks one: the
        feature's value on x2 chosen at random among its representatives that meet them
        with x1's, else x1's among those that meet them with x2's, else x2's a value above
        or below x1's that the library reads as another number (``readable_apart``),
        where a strict relation is on a feature of one interval, or of two whose representatives are in the wrong order: the pair's own leaves are
        evaluated, and the offer replays it."""
        x = [x1, x2]
        for f in self.related:
            if self.allowed(x, f, [None, x2[f : f + 1]])[0]:  # it meets them
                continue
            near = np.concatenate(self.readable_apart(f, x1[f : f + 1]))
            near = near[~np.isnan(near)]
            for i, vals in ((1, self.reps[f]), (0, self.reps[f]), (1, near)):
                ok = self.allowed(x, f, [vals if j == i else None for j in (0, 1)])
                if ok.any():
                    x[i][f] = self.rng.choice(vals[ok])
                    break

    def read_apart(self, f: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The values of feature ``f`` nearest each of ``v`` above and below that the
        library reads as another number, NaN outside its declared range: the next whole
        number of an integral feature (a value its rows can hold), the next float32 a
        float32 model reads (one float64 step apart, it reads both as one number), past
        LightGBM's zero band from 0."""
        feat = self.features[f]
        if feat.integral:  # a whole number (a code), as the user's rows hold
            up, down = np.floor(v) + 1, np.ceil(v) - 1
        elif self.ev.f32:
            v32 = v.astype(np.float32)
            up = np.nextafter(v32, np.float32(np.inf)).astype(np.float64)
            down = np.nextafter(v32, np.float32(-np.inf)).astype(np.float64)
        else:
            up, down = np.nextafter(v, np.inf), np.nextafter(v, -np.inf)
        if self.ev.zero_band and not feat.integral:  # the band reads as 0, all of it
            past = np.nextafter(ZERO_BAND, np.inf)
            band = np.abs(v) <= ZERO_BAND
            up, down = np.where(band, past, up), np.where(band, -past, down)
        inside = [(w >= feat.lb) & (w <= feat.ub) for w in (up, down)]
        return np.where(inside[0], up, np.nan), np.where(inside[1], down, np.nan)

    def readable_apart(self, f: int, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``read_apart``'s values, each the shortest decimal between it and the end of
        the interval of ``f`` holding its value of ``v`` (decimals.readable_in over that
        rest of the interval, within the declared range) where the interval holds it: the
        model reads any value there as the neighbour, and a witness shows 0.3 where it
        showed 1.4e-45 beside 0. The next whole number of an integral feature as it is."""
        up, down = self.read_apart(f, v)
        dom = self.domains.get(f)
        if self.features[f].integral or dom is None or dom.codes is not None:
            return up, down
        up, down = up.copy(), down.copy()
        for i, x in enumerate(v.tolist()):
            if math.isnan(x):
                continue
            key = (f, x)
            if key not in self.readable:
                self.readable[key] = self.readable_beside(f, x, up[i], down[i])
            up[i], down[i] = self.readable[key]
        return up, down

    def readable_beside(self, f: int, x: float, up: float, down: float) -> tuple[float, float]:
        """``readable_apart``'s pair for one value ``x`` and its neighbours ``up``, ``down``."""
        dom = self.domains[f]
        j = int(interval_index(self.ens, dom.thresholds, np.array([x]))[0])
        span = cell_span(self.ens, self.features[f], dom.thresholds, j)
        if span is None:
            return up, down
        lo, hi = span
        if lo <= up <= hi:  # NaN (no neighbour within the range) is left as it is
            r = readable_in(up, hi)
            up = r if r is not None and up <= r <= hi else up
        if lo <= down <= hi:
            r = readable_in(lo, down)
            down = r if r is not None and lo <= r <= down else down
        return up, down

    def full_contrib(self, x: np.ndarray) -> np.ndarray:
        X = self.cast(x[None, :])
        return self.ev.tree_values(np.arange(self.ev.n_trees), X)[:, 0]

    def slacks(self, c: list[np.ndarray]) -> tuple[list[np.ndarray], list[float]]:
        """Raw scores and slacks of the two copies from their per-tree contributions."""
        raw = [self.base + c[0].sum(0), self.base + c[1].sum(0)]
        return raw, [float(self.slack(i, raw[i][None])[0]) for i in (0, 1)]

    def slack(self, copy: int, raw: np.ndarray) -> np.ndarray:
        return _copy_slack(self.rows[copy], self.alternatives[copy], raw)

    def ascend(
        self, x1: np.ndarray, x2: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, float, float, bool]:
        """Coordinate ascent from (x1, x2); returns the local optimum, its two slacks and
        whether it meets both sides."""
        rng, margin = self.rng, self.margin
        x = [x1, x2]
        c = [self.full_contrib(x1), self.full_contrib(x2)]
        raw, s = self.slacks(c)
        if min(s) >= margin:
            return x1, x2, s[0], s[1], True
        improved = True
        while improved and not self.out_of_budget():
            improved = False
            for f in rng.permutation(self.feats):
                cand = self.reps[f]
                if len(cand) > self.candidates:
                    cand = rng.choice(cand, self.candidates, replace=False)
                trees = self.ev.uses[f]
                if not len(trees):
                    continue
                for move in self.sides[f]:
                    k = self.best_move(x, c, raw, s, f, move, cand, trees)
                    if k is None:
                        continue
                    self.take(x, c, f, move, cand[k], trees)
                    raw, s = self.slacks(c)
                    improved = True
                    if min(s) >= margin:
                        return x1, x2, s[0], s[1], True
        return x1, x2, s[0], s[1], False

    def best_move(
        self,
        x: list[np.ndarray],
        c: list[np.ndarray],
        raw: list[np.ndarray],
        s: list[float],
        f: int,
        move: Move,
        vals: np.ndarray,
        trees: np.ndarray,
    ) -> int | None:
        """The index of the value of ``f`` (set by ``move``) that raises the score most,
        or None when none raises it."""
        sl1, sl2 = self.moved_slacks(x, c, raw, f, move, vals, trees)
        score = np.minimum(sl1, sl2) + self.balance * (sl1 + sl2)
        k = int(np.argmax(score))
        if score[k] > min(s) + self.balance * (s[0] + s[1]) + 1e-12:
            return k
        return None

    def moved_slacks(
        self,
        x: list[np.ndarray],
        c: list[np.ndarray],
        raw: list[np.ndarray],
        f: int,
        move: Move,
        vals: np.ndarray,
        trees: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The two copies' slacks with feature ``f`` set by ``move`` to each of ``vals``
        (only ``trees``, those testing ``f``, evaluated again)."""
        n = len(vals)
        new = [np.repeat(raw[0][None], n, 0), np.repeat(raw[1][None], n, 0)]
        placed = self.placed(x, f, move, vals)
        for i, v in enumerate(placed):
            if v is None:
                continue
            row, col = self.cast(x[i][None])[0], self.cast(v)
            if self.ev.add_changes(new[i], trees, row, f, col, c[i][trees]):
                continue
            X = np.repeat(x[i][None], n, 0)
            X[:, f] = v
            X = self.cast(X)
            change = self.ev.tree_values(trees, X) - c[i][trees][:, None, :]
            self.ev.add_in_order(new[i], change)
        s1, s2 = self.slack(0, new[0]), self.slack(1, new[1])
        ok = self.allowed(x, f, placed)  # a value that breaks a relation: no move
        if ok is None:
            return s1, s2
        return np.where(ok, s1, -np.inf), np.where(ok, s2, -np.inf)

    def take(
        self, x: list[np.ndarray], c: list[np.ndarray], f: int, move: Move, val, trees
    ) -> None:
        """``move`` with value ``val`` of ``f`` made on pair ``x`` (contributions ``c``)."""
        for i, v in enumerate(self.placed(x, f, move, np.array([val], dtype=np.float64))):
            if v is not None:
                self.move(x[i], c[i], f, float(v[0]), trees)

    def move(self, x: np.ndarray, c: np.ndarray, f: int, val: float, trees: np.ndarray) -> None:
        """Set feature ``f`` of copy ``x`` to ``val`` and update its tree contributions."""
        x[f] = val
        c[trees] = self.ev.tree_values(trees, self.cast(x[None]))[:, 0]
