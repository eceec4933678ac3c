"""The checker's walk of a proof over the pair space (pair_space.py): its splits must
partition the space, each pruned box's bound of the named row, recomputed from the
leaves' boxes the box meets, must be the stated one and below the row's threshold, and
each box closed without a bound (a replay, ``alike``, ``relation``, ``link``) must be so
as its step says."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .alike import alike_refusal
from .claims import Row
from .domain import EMPTY, INF, bound_value
from .link import LinkRule, link_prune
from .models import Tree
from .pair_space import LeafBoxes, PairSpace, no_boxes
from .relations import relation_refusal
from .rounding import before
from .verdict import Verdict, covering, prune_refusal, unstated_bound
from .walk import misshapen_step, split_sides

# steps that close a box without a bound: a replay, ``alike``, ``relation``
SETTLED = ("replay", "alike", "relation")


class Checker(PairSpace):
    """A proof's checker over the pair space of its claim (PairSpace's arguments): each
    row's leaves (or leaf pairs) of every tree as a table of boxes with their weight, and
    ``run``, the walk of one part of the proof."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._tables: dict[tuple, _Table] = {}
        self._cuts: dict[tuple[float, float], float] = {}

    def _table(self, row: Row, keep: bool = True) -> _Table:
        """The row's leaves (or leaf pairs) of every tree as boxes with their weight in
        the row; a tree that adds nothing to it is left out. ``keep``: held for the next
        call (the walk of walk.py holds its own copy, read by columns)."""
        key = (row.a, row.b)
        if key in self._tables:
            return self._tables[key]
        trees = []
        for ti, t in enumerate(self.m.trees):
            wa, wb = _weights(t, row.a), _weights(t, row.b)
            if wa is None and wb is None:
                continue
            if wb is None:
                trees.append(self._boxes(ti, 0).valued(wa))
            elif wa is None:
                trees.append(self._boxes(ti, 1).valued(wb))
            elif not self.reads_varied[ti]:  # both inputs reach the same leaf
                one = self._boxes(ti, 0)
                value = np.asarray(wa)[one.nodes] + np.asarray(wb)[one.nodes]
                if np.all(value == 0.0):
                    continue  # opposite weights: the tree drops out
                trees.append((one.lo, one.hi, one.nan, value))
            else:
                trees.append(self._pairs(self._boxes(ti, 0), self._boxes(ti, 1), wa, wb))
        table = _Table.of(trees, len(self.columns))
        if keep:
            self._tables[key] = table
        return table

    def _offset(self, row: Row) -> float:
        out = 0.0
        for coefs in (row.a, row.b):
            for k, c in enumerate(coefs or ()):
                out += c * self.m.offset_of(k)
        return out

    def _pairs(self, one: LeafBoxes, two: LeafBoxes, wa: list, wb: list) -> tuple:
        """The leaf pairs the two inputs reach together, as arrays (lo, hi, nan, value):
        x1's leaf bounds the columns of input 1, x2's those of input 2, both the shared
        columns; a pair whose box is empty in some column is left out. Computed a block
        of x1's leaves at a time."""
        cols = len(self.columns)
        if not len(one.nodes) or not len(two.nodes):
            return no_boxes(cols)
        arrays, others = [one.lo, one.hi, one.nan], [two.lo, two.hi, two.nan]
        v1, v2 = np.asarray(wa)[one.nodes], np.asarray(wb)[two.nodes]
        own1 = np.array([c == 1 for _, c in self.columns])
        own2 = np.array([c == 2 for _, c in self.columns])
        block = max(1, 4_000_000 // max(1, len(two.nodes) * cols))
        out: list[list] = [[], [], [], []]
        for s in range(0, len(one.nodes), block):
            a = [x[s : s + block, None, :] for x in arrays]
            b = [x[None, :, :] for x in others]
            side = []
            for (x, y), meet in zip(
                zip(a, b, strict=True), (np.maximum, np.minimum, np.logical_and)
            ):
                m = meet(x, y)
                m = np.where(own1, x, m)
                side.append(np.where(own2, y, m))
            lo, hi, nan = side
            alive = np.all((lo < hi) | nan, axis=2)
            i, j = np.nonzero(alive)
            for k, x in enumerate((lo, hi, nan)):
                out[k].append(x[i, j])
            out[3].append(v1[s + i] + v2[j])
        return tuple(np.concatenate(x) for x in out)

    # ---- the walk -------------------------------------------------------------
    def run(self, proof: list, rows: dict[str, Row], link: LinkRule | None = None) -> Verdict:
        """Walk one part of the proof: its splits must partition the pair space, and at
        each pruned box the named row's bound, recomputed, must be the stated one and lie
        below the row's threshold (its right-hand side less the relaxation); at a ``link``
        step, the change through the exp link bounded as ``link`` says (verify/link.py)."""
        threshold = {name: r.rhs - self.eps * r.weight for name, r in rows.items()}
        box = [(-INF, INF, bool(m)) for m in self.col_missing]
        stack = [box]
        pruned = 0
        for i, step in enumerate(proof):
            if not stack:
                return Verdict(False, f"step {i}: the proof goes on after covering the space")
            box = stack.pop()
            shape = misshapen_step(i, step)
            if shape is not None:
                return Verdict(False, shape)
            if step[0] == "split":
                split = split_sides(self, box, i, step)
                if isinstance(split, Verdict):
                    return split
                _, _, no_box, yes_box = split
                stack.append(no_box)
                stack.append(yes_box)
                continue
            if step[0] == "link":
                why = link_prune(self, box, step, link)
                if why is not None:
                    return Verdict(False, f"box {pruned} (step {i}): {why}", pruned)
                pruned += 1
                continue
            if step[0] in SETTLED:
                why = self.settled_refusal(box, step, rows)
                if why is not None:
                    return Verdict(False, f"box {pruned} (step {i}): {why}", pruned)
                pruned += 1
                continue
            name = step[1]
            if step[0] != "prune" or name not in rows:
                return Verdict(False, f"step {i}: unknown step {step!r}")
            row = rows[name]
            lo, hi, nan = self.box_ends(box)
            bound = self._offset(row) + self._table(row).bound(lo, hi, nan, self.col_missing)
            unstated = unstated_bound(step, i)
            if unstated is not None:
                return unstated
            stated = float(step[2]) / self.m.margin_per_logit  # logit units -> raw
            wrong = prune_refusal(
                (pruned, i), name, bound, stated, self.eps * row.weight, threshold[name]
            )
            if wrong is not None:
                return wrong
            pruned += 1
        return covering(stack, pruned)

    def _read_threshold(self, t: float) -> float:
        """The threshold on the input x of a split the library makes on the value it
        reads: LightGBM reads x in its zero band [-z, z] as 0.0, so read(x) <= t holds
        for x <= t outside the band and, inside it, when 0 <= t."""
        z = self.m.zero_band
        if not z or not -z <= t < z:
            return t
        return z if t >= 0.0 else before(-z)

    def _cut(self, at: float) -> float:
        """The test's threshold of a proof's split at the number ``at``: the library's
        reading of it (``_read_threshold``, ``_test_at``), kept per value and sign (a
        proof splits at the model's thresholds, few values many times)."""
        key = (at, math.copysign(1.0, at))
        cut = self._cuts.get(key)
        if cut is None:
            cut = self._cuts[key] = self._test_at(self._read_threshold(at))
        return cut

    def _split_box(self, part: tuple, c: int, at) -> tuple | None:
        """The (yes, no) parts of a box part at a split: a number t, the library's test
        at t on the value it reads (NaN goes "no"); "nan", the numbers and NaN; ``{"codes": [...]}``, the
        first codes of the domain's list and the rest (NaN goes "no"). None: the split
        does not fit the column (``c``)."""
        lo, hi, nan = part
        dom = self.col_dom[c]
        if isinstance(at, (int, float)) and not isinstance(at, bool) and dom.codes is None:
            yes, no = self._split(lo, hi, self._cut(float(at)))
            return (*yes, False), (*no, nan)
        if at == "nan" and dom.missing:
            return (lo, hi, False), (*EMPTY, nan)
        if isinstance(at, dict) and set(at) == {"codes"} and dom.codes is not None:
            cut = len(at["codes"])
            if [int(c) for c in at["codes"]] != list(dom.codes[:cut]):
                return None
            return (lo, min(hi, cut), False), (max(lo, cut), hi, nan)
        return None

    def settled_refusal(self, box: list, step: list, rows: dict[str, Row]) -> str | None:
        """Why a box closed by a step of ``SETTLED`` is not (None: it is): its replay,
        the same leaves for x1 and x2 (verify/alike.py), the claim's relations
        (verify/relations.py)."""
        if step[0] == "replay":
            return self._replay(box, step, rows)
        if step[0] == "relation":
            return relation_refusal(self, box, step)
        return alike_refusal(self, step)

    # ---- a box the library's own scores rule out ---------------------------------
    def _replay(self, box: list, step: list, rows: dict[str, Row]) -> str | None:
        """Why a ``["replay", x1, x2]`` step does not rule its box out (None: it does):
        the pair must lie in the box and the domain, every tree must give each input one
        value over the box (so the library scores every pair of the box as this one),
        and the library's raw scores of the pair must miss some row of the condition."""
        if self.replay is None:
            return "a replayed box needs the library's scores: " + self.replay_refusal
        xs = [np.array([bound_value(v) for v in step[k]], dtype=np.float64) for k in (1, 2)]
        if any(x.shape != (len(self.domain),) for x in xs):
            return "its pair does not give every feature a value"
        for c, (f, copy) in enumerate(self.columns):
            for k in (0, 1) if copy is None else (copy - 1,):
                if not self._admits(c, box[c], float(xs[k][f])):
                    return f"its pair's x{k + 1} is outside the box or the domain (feature {f})"
            if copy is None and not _same(xs[0][f], xs[1][f]):
                return f"its pair differs in feature {f}, which is not varied"
        lo, hi, nan = self.box_ends(box)
        for ti, t in enumerate(self.m.trees):
            for k in (0, 1):
                b = self._boxes(ti, k)
                meet = (np.maximum(b.lo, lo) < np.minimum(b.hi, hi)) | (b.nan & nan)
                values = {_leaf_value(t, int(n)) for n in b.nodes[np.all(meet, axis=1)]}
                if len(values) > 1:
                    return f"tree {ti} gives x{k + 1} more than one value over the box"
        raw = self.replay(np.stack(xs))
        if self.misses is not None:  # the library's probabilities (Model.float32_link)
            if self.misses(raw):
                return None
            return "the library's probabilities of its pair meet the claim"
        for r in rows.values():
            value = sum(a * raw[0][o] for o, a in enumerate(r.a or ()))
            value += sum(b * raw[1][o] for o, b in enumerate(r.b or ()))
            if value < r.rhs:
                return None
        return "the library's scores of its pair meet every row of the condition"

    def _admits(self, c: int, part: tuple, v: float) -> bool:
        """Whether the value v of column c's feature lies in its domain and in the box's part
        (lo, hi, nan): NaN where the part holds NaN; for a coded feature, a code of the
        domain whose place in its list lies in [lo, hi); else a number within the
        domain's bounds, in the interval of the library's test, as the library compares
        it."""
        lo, hi, nan = part
        d = self.col_dom[c]
        if math.isnan(v):
            return d.missing and bool(nan)
        if d.codes is not None:
            if not v.is_integer() or int(v) not in d.codes:
                return False
            return lo <= d.codes.index(int(v)) < hi
        if not (d.lb <= v <= d.ub) or (d.integer and not v.is_integer()):
            return False
        x = float(np.float32(v)) if self.m.float32 else v
        return lo <= x < hi if self.m.test == "<" else lo < x <= hi


def _leaf_value(t: Tree, n: int) -> tuple:
    return tuple(t.values[n]) if t.values is not None else (t.value[n], t.output)


def _same(a: float, b: float) -> bool:
    """The same input value (NaN is NaN)."""
    return bool(a == b or (math.isnan(a) and math.isnan(b)))


def _weights(t: Tree, coefs: tuple[float, ...] | None) -> list[float] | None:
    """Per node, the leaf's weight in a row's side (None: the tree adds nothing to it)."""
    if coefs is None:
        return None
    if t.values is not None:
        if not any(coefs):
            return None
        return [sum(c * v for c, v in zip(coefs, vals, strict=True)) for vals in t.values]
    c = coefs[t.output] if t.output < len(coefs) else 0.0
    if c == 0.0:
        return None
    return [c * v for v in t.value]


@dataclass(frozen=True)
class _Table:
    """Boxes with values, grouped by tree: the bound on a box is the sum over trees of
    the largest value among the tree's boxes that meet it. Two boxes meet when, in every
    column, their intervals share a value or both hold NaN."""

    lo: np.ndarray  # [boxes, columns]
    hi: np.ndarray
    nan: np.ndarray  # [boxes, columns]: NaN is in the box
    value: np.ndarray  # [boxes]
    starts: np.ndarray  # first box of each tree
    empty_tree: bool  # some tree has no box at all: nothing is reachable

    @classmethod
    def of(cls, trees: list, columns: int) -> _Table:
        """From per tree either a list of (lo, hi, nan, value) boxes or those as arrays."""
        trees = [t if isinstance(t, tuple) else _as_arrays(t, columns) for t in trees]
        sizes = [len(t[3]) for t in trees]
        if not sum(sizes):
            z = np.zeros((0, columns))
            return cls(z, z, z.astype(bool), np.zeros(0), np.zeros(0, dtype=np.int64), bool(trees))
        lo, hi, nan, value = (np.concatenate([t[k] for t in trees]) for k in range(4))
        starts = np.cumsum([0, *sizes[:-1]]).astype(np.int64)
        return cls(lo, hi, nan.astype(bool), value.astype(np.float64), starts, 0 in sizes)

    def bound(self, lo: np.ndarray, hi: np.ndarray, nan: np.ndarray, missing: np.ndarray) -> float:
        if self.empty_tree:
            return -INF
        if self.value.size == 0:
            return 0.0
        # only the columns the box narrows can exclude (NaN left out of a column that has it)
        cut = (lo > -INF) | (hi < INF) | (missing & ~nan)
        meet = np.maximum(self.lo[:, cut], lo[cut]) < np.minimum(self.hi[:, cut], hi[cut])
        if nan[cut].any():
            meet |= self.nan[:, cut] & nan[cut]
        live = np.all(meet, axis=1)
        top = np.maximum.reduceat(np.where(live, self.value, -INF), self.starts)
        return float(top.sum())


def _as_arrays(boxes: list, columns: int) -> tuple:
    if not boxes:
        return no_boxes(columns)
    return tuple(np.array([b[k] for b in boxes]) for k in range(4))
