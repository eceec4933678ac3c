"""A bound on a box's pair-sum row by a solver (HiGHS), for the compiled largest-gap
search's best open boxes (search/gap_boxes.py).

The kernel bounds a box's pair-sum row by the sum of per-tree maxima over the trees that
read F, each over the box on its own: two trees may take their maxima at ranks of a
context column that no one input has. Here the same sum is a MILP over the box, in
rank space (Kantchelian et al.'s encoding): per tree, a leaf weight y_l in [0, 1] for
each pair leaf meeting the box, summing to 1; per node the box lets both ways, a binary
z_{c,R} ("rank of column c < R"), shared by every tree with a node on (c, R) and
monotone in R; the leaves below a node's "yes" side sum to at most z, those below its
"no" side to at most 1 - z. Its LP relaxation alone is never above the per-tree maxima
(each tree's weights sum to 1) and on the scale tier's best open boxes is 2-3 margin
below them (bench/reports/scale-tier.md, "Closing the max gap").

Only the solver's dual bound is used (the LP's optimum, the MILP's best bound at its time
limit), never a primal value, plus ``SLACK`` per unit of the trees' value spread for the
solver's tolerances: sound, whatever the solver has time for. highspy is optional: without
it ``available()`` is False and the search runs without these bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .gap_kernel import reads_varied
from .pair_boxes import PairTables

# added to a solver's bound per unit of the summed spread (max - min) of the trees'
# values over the box: HiGHS's feasibility and optimality tolerances are 1e-7
SLACK = 1e-6


# the compiled search bounds its best open boxes by the solver (SolverOnTop)
SOLVER_ON_TOP = True


def applies() -> bool:
    """Whether the compiled search uses the solver on its best boxes."""
    return SOLVER_ON_TOP and available()


def available() -> bool:
    try:
        import highspy  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


@dataclass
class _Model:
    """The MILP of one box: columns (cost, integer?), rows (lb, ub, indices, values)."""

    cost: list[float]
    integer: list[bool]
    rows: list[tuple[float, float, list[int], list[float]]]
    # the per-tree maxima summed, which the costs are relative to (each leaf's value
    # minus its tree's maximum), and the trees' spread summed (for SLACK)
    top: float
    spread: float


class PairSumBound:
    """The pair-sum row (the binary gap's m(x1) - m(x2), row ``tab.first_sum``) over a
    box ``lo <= rank < hi``, bounded over the trees that read F (the others add 0)."""

    def __init__(self, tab: PairTables):
        self.row = int(tab.first_sum)
        self.values = np.asarray(tab.values[self.row], dtype=np.float64)
        self.threshold = float(tab.thresholds[self.row])
        self.trees = np.flatnonzero(reads_varied(tab))
        self.nodes = tab.node_table.tolist()
        self.node_starts = np.asarray(tab.node_starts, dtype=np.int64)
        self.leaf_starts = np.asarray(tab.starts, dtype=np.int64)

    def walk(self, t: int, lo, hi) -> tuple[list[int], list[tuple[int, int, list, list]]]:
        """Tree t's pair leaves meeting the box, and its nodes the box lets both ways as
        (column, R, leaves below "yes", leaves below "no")."""
        s, e = int(self.node_starts[t]), int(self.node_starts[t + 1])
        if s == e:
            return [int(self.leaf_starts[t])], []
        both: list[tuple[int, int, list, list]] = []

        def below(k: int) -> list[int]:
            c, r, first, middle, _end, yes, no = self.nodes[s + k]
            ys, ns = lo[c] < r, hi[c] > r  # some rank of the box on each side
            yl = (below(yes) if yes >= 0 else [first]) if ys else []
            nl = (below(no) if no >= 0 else [middle]) if ns else []
            if ys and ns:
                both.append((c, r, yl, nl))
            return yl + nl

        return below(0), both

    def model(self, lo, hi, integer: bool) -> _Model:
        cost: list[float] = []
        kinds: list[bool] = []
        rows: list[tuple[float, float, list[int], list[float]]] = []
        z: dict[tuple[int, int], int] = {}
        top = spread = 0.0
        for t in self.trees:
            leaves, both = self.walk(int(t), lo, hi)
            v = self.values[leaves]
            best = float(v.max())
            top += best
            spread += best - float(v.min())
            if len(leaves) == 1:
                continue
            y = {}
            for leaf in leaves:
                y[leaf] = len(cost)
                cost.append(float(self.values[leaf]) - best)
                kinds.append(False)
            rows.append((1.0, 1.0, list(y.values()), [1.0] * len(y)))
            for c, r, yes, no in both:
                if (c, r) not in z:
                    z[c, r] = len(cost)
                    cost.append(0.0)
                    kinds.append(integer)
                k = z[c, r]
                rows.append(
                    (-math.inf, 0.0, [y[leaf] for leaf in yes] + [k], [1.0] * len(yes) + [-1.0])
                )
                rows.append(
                    (-math.inf, 1.0, [y[leaf] for leaf in no] + [k], [1.0] * len(no) + [1.0])
                )
        by_column: dict[int, list[tuple[int, int]]] = {}
        for (c, r), k in z.items():
            by_column.setdefault(c, []).append((r, k))
        for ks in by_column.values():
            ks.sort()
            for (_r1, k1), (_r2, k2) in zip(ks, ks[1:]):  # rank < r1 implies rank < r2
                rows.append((-math.inf, 0.0, [k1, k2], [1.0, -1.0]))
        return _Model(cost, kinds, rows, top, spread)

    def per_tree(self, lo, hi) -> float:
        """The kernel's bound of the row: the per-tree maxima summed (row units)."""
        top = sum(float(self.values[self.walk(int(t), lo, hi)[0]].max()) for t in self.trees)
        return self.in_rows(top)

    def in_rows(self, s: float) -> float:
        """A bound s on the pair-sum as a bound on the box (row units, as the kernel's
        ``bound``: the row's term halved)."""
        return (s - self.threshold) / 2.0

    def bound(self, lo, hi, integer: bool, seconds: float) -> float | None:
        """A bound on the box's pair-sum row (row units): the LP relaxation's optimum
        (``integer`` False) or the MILP's best bound after at most ``seconds``; None when
        the solver ends without one (an LP stopped by the time limit, an error)."""
        import highspy  # noqa: PLC0415 - optional

        m = self.model(lo, hi, integer)
        n = len(m.cost)
        if n == 0:  # every tree has one leaf in the box: the maxima are exact
            return self.in_rows(m.top)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("time_limit", float(max(seconds, 0.01)))
        h.addVars(n, np.zeros(n), np.ones(n))
        h.changeColsCost(n, np.arange(n, dtype=np.int32), np.asarray(m.cost))
        ints = np.flatnonzero(m.integer).astype(np.int32)
        if len(ints):
            kind = highspy.HighsVarType.kInteger
            h.changeColsIntegrality(len(ints), ints, np.array([kind] * len(ints)))
        inf = highspy.kHighsInf
        for lb, ub, idx, val in m.rows:
            lb = -inf if lb == -math.inf else lb
            h.addRow(lb, ub, len(idx), np.array(idx, dtype=np.int32), np.array(val))
        h.changeObjectiveSense(highspy.ObjSense.kMaximize)
        h.run()
        status = h.getModelStatus()
        info = h.getInfo()
        if status == highspy.HighsModelStatus.kInfeasible:  # no pair in the box (not expected)
            return None
        if len(ints):
            if status not in (
                highspy.HighsModelStatus.kOptimal,
                highspy.HighsModelStatus.kTimeLimit,
            ):
                return None
            got = float(info.mip_dual_bound)
        else:
            if status != highspy.HighsModelStatus.kOptimal:
                return None
            got = float(info.objective_function_value)
        if not math.isfinite(got):
            return None
        got = min(got, 0.0)  # never above the per-tree maxima
        return self.in_rows(m.top + got + SLACK * (1.0 + m.spread))


# the share of a search's time the solver may take on its best open boxes
SOLVER_SHARE = 0.5
# a box's LP relaxation, then its MILP, at most (seconds; MILP_SECONDS 0: the LP only)
LP_SECONDS = 2.0
MILP_SECONDS = 2.0


class SolverOnTop:
    """Between the kernel's steps, the heap's best box bounded by the solver: first its
    LP relaxation, then (if still the best) its MILP for at most ``MILP_SECONDS``, each
    result lowering the box's bound (gap_kernel.KernelSearch.lower_top; a box then at
    most the floor is dropped). A box the solver has bounded twice is left to the
    kernel to split; its children inherit its bound (the kernel's min with the parent's).
    The solver takes at most ``share`` of the time since the search started."""

    def __init__(self, tab: PairTables, share: float | None = None, seconds: float | None = None):
        self.bound = PairSumBound(tab)
        self.share = float(SOLVER_SHARE if share is None else share)
        self.seconds = float(MILP_SECONDS if seconds is None else seconds)
        self.levels: dict[bytes, int] = {}  # a box's solves so far, by its (lo, hi)
        self.spent = 0.0
        self.solves = 0
        self.dropped = 0

    def run(self, search, u_floor: float, elapsed: float, clock, left: float) -> None:
        """Bound best boxes while the solver's time is under ``share`` of ``elapsed``
        (``clock()``: the time now; ``left``: seconds to the deadline)."""
        t0 = clock()
        while self.spent + (clock() - t0) < self.share * elapsed:
            top = search.top_box()
            if top is None:
                break
            u, lo, hi = top
            key = lo.tobytes() + hi.tobytes()
            level = self.levels.get(key, 0)
            if level >= (2 if self.seconds > 0 else 1):  # (MILP_SECONDS 0: the LP only)
                break
            remaining = left - (clock() - t0)
            if remaining <= 0:
                break
            self.levels[key] = level + 1
            seconds = min(self.seconds if level else LP_SECONDS, remaining)
            got = self.bound.bound(lo, hi, integer=level == 1, seconds=seconds)
            self.solves += 1
            if got is not None and got < u:
                self.dropped += got <= u_floor
                search.lower_top(got, u_floor)
        self.spent += clock() - t0
