"""The checker's walk of a proof, with the leaves each box meets carried down the tree.

``Checker.run`` (box_checks.py) recomputes, at every pruned box, which boxes of the row's
table (leaves, or leaf pairs) meet it, over every column the box narrows. The walk here
checks the same steps with the same rules and messages, but keeps, per box of the
proof, the indices of the table boxes that meet it: a split changes one column, so a
child's set is its parent's filtered on that column alone. This is the same set: two
boxes meet when they share a value (or NaN) in every column, and a child's interval in
a column lies inside each ancestor's, so meeting the child's in that column implies
meeting every ancestor's there. The bound at a pruned box is then, as in
``_Table.bound``, the sum over trees of the largest value among the boxes left (minus
infinity when some tree has none left), summed in the same order.
"""

from __future__ import annotations

import math
import time
from array import array

import numpy as np

from .verdict import Verdict, covering, prune_refusal, unstated_bound

INF = math.inf


class LiveTable:
    """A row's table (box_checks.py ``_Table``) read by columns, with each tree's first box:
    the boxes meeting a box of the proof are an array of indices (in table order),
    narrowed a column at a time."""

    def __init__(self, table):
        self.empty_tree = table.empty_tree
        self.value = table.value
        self.nan = np.ascontiguousarray(table.nan.T)  # [columns, boxes]
        self.starts = table.starts
        self._ends(table)

    def _ends(self, table) -> None:
        self.lo = np.ascontiguousarray(table.lo.T)  # [columns, boxes]
        self.hi = np.ascontiguousarray(table.hi.T)

    def everything(self) -> np.ndarray:
        return np.arange(self.value.size)

    def split(self, live: np.ndarray, c: int, sides: list) -> list:
        """Per side of a split of column c (its interval (lo, hi), normalised, and
        whether it holds NaN; None: it narrows nothing), the boxes of ``live`` that meet
        it there; column c of ``live`` is read once for both."""
        a, b = self.lo[c].take(live), self.hi[c].take(live)
        out = []
        for side in sides:
            if side is None:
                out.append(live)
                continue
            lo, hi, nan = side
            meet = np.maximum(a, lo) < np.minimum(b, hi)
            if nan:
                meet |= self.nan[c].take(live)
            out.append(live.compress(meet))
        return out

    def bound(self, live: np.ndarray) -> float:
        """Per tree the largest value of its boxes in ``live`` (sorted), summed."""
        if self.empty_tree:
            return -INF
        if self.value.size == 0:
            return 0.0
        # where each tree's boxes begin in ``live``: a tree with none begins where the
        # next one does (or at the end)
        firsts = live.searchsorted(self.starts)
        if firsts[-1] == live.size or (firsts[1:] == firsts[:-1]).any():
            return -INF  # some tree has no box left: nothing reaches it
        return float(np.maximum.reduceat(self.value.take(live), firsts).sum())


class CompiledLiveTable(LiveTable):
    """A LiveTable whose two steps are walk_jit.py's compiled loops (the same sets and
    maxima; the maxima summed by numpy, in the same order)."""

    def __init__(self, table, kernels):
        super().__init__(table)
        self.kernels = kernels

    def _ends(self, table) -> None:
        # per column, each box's two ends side by side (one memory read): [c, boxes, 2]
        # (no copy by columns besides: the split reads these alone)
        self.ends = np.ascontiguousarray(np.stack([table.lo.T, table.hi.T], axis=2))

    def split(self, live: np.ndarray, c: int, sides: list) -> list:
        yes, no = (self._given(side) for side in sides)
        yes_live, no_live = self.kernels.split(live, self.ends[c], self.nan[c], *yes, *no)
        return [live if s is None else out for s, out in zip(sides, (yes_live, no_live))]

    @staticmethod
    def _given(side: tuple | None) -> tuple:
        """A side as the compiled split takes it: one that narrows nothing as the whole
        line (its boxes, unused, are ``live`` itself); one with a NaN end as the empty
        interval, which numpy's max or min, NaN there, makes it (its NaN kept)."""
        if side is None:
            return -INF, INF, True
        lo, hi, nan = side
        return (INF, -INF, nan) if math.isnan(lo) or math.isnan(hi) else side

    def bound(self, live: np.ndarray) -> float:
        if self.empty_tree:
            return -INF
        if self.value.size == 0:
            return 0.0
        top, whole = self.kernels.tops(live, self.value, self.starts)
        return float(top.sum()) if whole else -INF


# a proof of this many steps or more is walked with the compiled steps (walk_jit.py)
# where numba is installed; a shorter one with numpy, sparing numba's import
COMPILED_FROM = 50_000


def compiled_kernels(steps: int):
    """walk_jit.py for a proof of ``steps`` steps, or None: walk with numpy. Its steps
    are loaded before the walk, compiled first where numba's cache has none
    (``compile_seconds`` counts that time)."""
    if steps < COMPILED_FROM:
        return None
    try:
        from . import walk_jit
    except Exception:  # noqa: BLE001 - numba is not installed, or cannot compile here
        return None
    _ready(walk_jit)
    return walk_jit


# the seconds this process spent compiling walk_jit.py's steps (numba's cache had none)
_COMPILED: list[float] = []


def compile_seconds() -> float:
    """The seconds this process spent compiling the checker's compiled steps, in all: a
    caller times a check without them (a first run's, once per install)."""
    return sum(_COMPILED)


def _ready(kernels) -> None:
    """Load ``kernels``' two steps by calling them on one box, with the types every walk
    gives them, and count the seconds where numba compiled them."""
    steps = (kernels.split, kernels.tops)
    if all(k.signatures for k in steps):
        return
    t0 = time.time()
    live = np.arange(1)
    kernels.split(live, np.zeros((1, 2)), np.zeros(1, dtype=bool), -INF, INF, True, 0.0, 1.0, False)
    kernels.tops(live, np.zeros(1), np.zeros(1, dtype=np.int64))
    if any(sum(k.stats.cache_misses.values()) for k in steps):
        _COMPILED.append(time.time() - t0)


class Walker:
    """The walk of one certificate's parts by a Checker (``ch``): its row tables are
    built once (``ch._table``) and read by columns once."""

    def __init__(self, ch):
        self.ch = ch
        self.tables: dict[tuple, LiveTable] = {}
        # per column, whether its box parts are normalised as they are (``_norm_part``
        # changes only an integer feature's ends; code positions stay)
        self.as_is = [d.codes is not None or not d.integer for d in ch.col_dom]

    def _live_table(self, row, kernels) -> LiveTable:
        key = (row.a, row.b, kernels is not None)
        if key not in self.tables:
            table = self.ch._table(row, keep=False)  # freed once read by columns
            live = LiveTable(table) if kernels is None else CompiledLiveTable(table, kernels)
            self.tables[key] = live
        return self.tables[key]

    def _narrowing(self, c: int, part: tuple) -> tuple | None:
        """A split's side in column c as the live boxes are narrowed to it: its interval
        normalised, and whether it holds NaN; None when it is as wide as the domain and
        excludes nothing (``_Table.bound``'s cut)."""
        lo, hi, nan = part
        if not self.as_is[c]:
            lo, hi = self.ch._norm_part(self.ch.columns[c][0], lo, hi, self.ch.col_input[c])
        nan = bool(nan)
        if lo > -INF or hi < INF or (self.ch.col_missing[c] and not nan):
            return float(lo), float(hi), nan
        return None

    def run(self, proof: list, rows: dict):
        """``Checker.run``'s walk (the same checks, the same verdicts and messages), with
        each box's live table boxes carried from its parent."""
        ch = self.ch
        threshold = {name: r.rhs - ch.eps * r.weight for name, r in rows.items()}
        tol = {name: ch.eps * r.weight for name, r in rows.items()}
        offset = {name: ch._offset(r) for name, r in rows.items()}
        used = sorted(
            {
                step[1]
                for step in proof
                if isinstance(step, list)
                and len(step) > 1
                and step[0] == "prune"
                and isinstance(step[1], str)
                and step[1] in rows
            }
        )
        kernels = compiled_kernels(len(proof))
        tables = [self._live_table(rows[name], kernels) for name in used]
        at = {name: k for k, name in enumerate(used)}
        box = [(-INF, INF, bool(m)) for m in ch.col_missing]
        # (box, its live boxes per table: None where no box below is pruned with it)
        stack = [(box, [t.everything() for t in tables])]
        needs = subtree_needs(proof, at)
        pruned = 0
        for i, step in enumerate(proof):
            if not stack:
                return Verdict(False, f"step {i}: the proof goes on after covering the space")
            box, live = stack.pop()
            shape = misshapen_step(i, step)
            if shape is not None:
                return Verdict(False, shape)
            if step[0] == "split":
                split = split_sides(ch, box, i, step)
                if isinstance(split, Verdict):
                    return split
                c, sides, no_box, yes_box = split
                cut = [self._narrowing(c, side) for side in sides]
                kids = [
                    t.split(s, c, cut) if needs[i] >> k & 1 else (None, None)
                    for k, (t, s) in enumerate(zip(tables, live, strict=True))
                ]
                stack.append((no_box, [no for _, no in kids]))
                stack.append((yes_box, [yes for yes, _ in kids]))
                continue
            if step[0] in ("replay", "alike", "relation"):  # check.SETTLED's
                why = ch.settled_refusal(box, step, rows)
                if why is not None:
                    return Verdict(False, f"box {pruned} (step {i}): {why}", pruned)
                pruned += 1
                continue
            name = step[1]
            if step[0] != "prune" or name not in rows:
                return Verdict(False, f"step {i}: unknown step {step!r}")
            bound = offset[name] + tables[at[name]].bound(live[at[name]])
            unstated = unstated_bound(step, i)
            if unstated is not None:
                return unstated
            stated = float(step[2]) / ch.m.margin_per_logit  # logit units -> raw
            wrong = prune_refusal((pruned, i), name, bound, stated, tol[name], threshold[name])
            if wrong is not None:
                return wrong
            pruned += 1
        return covering(stack, pruned)


def misshapen_step(i: int, step) -> str | None:
    """Why step i is not a step's shape, a list of three whose first is its kind (None:
    it is): one line naming the step, not a Python error."""
    if isinstance(step, list) and len(step) == 3 and isinstance(step[0], str):
        return None
    return f"step {i}: a step is a list of three, its kind first, not {str(step)[:80]}"


def split_column(step: list, columns: int) -> int | None:
    """The column a "split" step names, or None when it names none of the ``columns``."""
    c = step[1] if len(step) == 3 else None
    ok = isinstance(c, int) and not isinstance(c, bool) and 0 <= c < columns
    return c if ok else None


def split_sides(ch, box: list, i: int, step: list) -> tuple[int, tuple, list, list] | Verdict:
    """A "split" step of ``box``: its column, the column's two sides and the two boxes
    (no, yes), or the verdict rejecting step i."""
    c = split_column(step, len(box))
    if c is None:
        return Verdict(False, f"step {i}: a split on no column of the pair space {step!r}")
    sides = ch._split_box(box[c], c, step[2])
    if sides is None:
        return Verdict(False, f"step {i}: a split this column cannot take {step!r}")
    no_box, yes_box = list(box), list(box)
    yes_box[c], no_box[c] = sides
    return c, sides, no_box, yes_box


def subtree_needs(proof: list, at: dict[str, int]) -> list[int]:
    """Per step of the proof (in preorder: a split's "yes" box, then its "no" box), the
    tables (bit k: table ``at[name] == k``) that some pruned box of its subtree reads:
    a box's live set of another table is never read below it and need not be narrowed.
    A proof that is not a tree of splits needs every table everywhere (the walk then
    rejects it)."""
    every = (1 << len(at)) - 1
    parent, stack = array("q"), [-1]  # 8 bytes a step, not a Python int's 36
    for i, step in enumerate(proof):
        if not stack:
            return [every] * len(proof)
        parent.append(stack.pop())
        if isinstance(step, list) and step and step[0] == "split":
            stack += [i, i]
    need = [0] * len(proof)
    for i in range(len(proof) - 1, -1, -1):
        step = proof[i]
        if isinstance(step, list) and len(step) > 1 and step[0] == "prune":
            k = at.get(step[1]) if isinstance(step[1], str) else None
            need[i] |= every if k is None else 1 << k
        if parent[i] >= 0:
            need[parent[i]] |= need[i]
    return need
