"""Learn data cavities (boxes with no data row) with z3, as paper section 5.3 describes.

The search, one clause at a time, sizes 1, 2, ..., w:

* z3 over slot variables: F_i (which feature, F_1 < F_2 < ... to avoid permutations:
  the paper's r_if), A_i and B_i (the box covers threshold intervals A_i..B_i of F_i:
  the paper's s_ik / t_ik'), each slot non-trivial;
* for every data point x of the current sample: OR_i (x_{F_i} outside [A_i, B_i]);
* tightness objective (the paper's): the widest box, by strengthening;
* previously learned boxes are excluded, with every box inside one of them;
* counterexample-guided refinement: start from a random sample of the rows; check the
  candidate box against ALL rows; add rows that lie inside it to the sample and solve
  again;
* greedy literal pruning: drop literals whose removal keeps the box empty of data;
* a cap on the number of clauses and a time budget (progress on stderr).

z3 is imported only when learning runs. The clause types and checks are
compiler/cavities.py; clause files and the cache are driver/clauses.py.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ..compiler.cavities import Clause, box_clause, box_mask, interval_rows, pruned_box
from ..compiler.ensemble import Ensemble
from ..compiler.solver import SolveOptions

MAX_CELLS = 3000  # projections added at once per refinement


class _Progress:
    def __init__(self, enabled: bool, total: int):
        self.enabled = enabled and sys.stderr is not None
        self.total = total
        self.tty = self.enabled and sys.stderr.isatty()
        self.last = 0.0

    def show(self, msg: str, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.time()
        if not force and now - self.last < (0.2 if self.tty else 5.0):
            return
        self.last = now
        if self.tty:
            sys.stderr.write("\r\033[K" + msg)
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    def done(self, msg: str) -> None:
        if not self.enabled:
            return
        sys.stderr.write(("\r\033[K" if self.tty else "") + msg + "\n")
        sys.stderr.flush()


@dataclass(frozen=True, eq=False)
class BoxSearch:
    """What the search needs: the data as distinct rows of threshold-interval indices."""

    J: np.ndarray  # (rows, features) interval index of each row, NaN rows left out
    K: tuple[int, ...]  # intervals of column c are 0..K[c]
    width: int = 2
    max_clauses: int = 50
    time_budget: float = 60.0
    sample: int = 300
    seed: int = 0
    progress: bool = False
    deadline: float | None = None  # absolute time.time(): learning ends by then too


@dataclass
class FoundBoxes:
    boxes: list  # each ((column, A, B), ...): intervals A..B of column hold no row
    stats: dict = field(default_factory=dict)


def solve(search: BoxSearch, options: SolveOptions) -> FoundBoxes:
    """The worker's entry point (``python -m treesens.backends.worker`` this module)."""
    stats: dict = {}
    return FoundBoxes(learn_boxes(search, stats), stats)


def learn_clauses(
    ens: Ensemble,
    X: np.ndarray,
    *,
    width: int = 2,
    max_clauses: int = 50,
    time_budget: float = 60.0,
    sample: int = 300,
    seed: int = 0,
    progress: bool = False,
    stats: dict | None = None,
) -> list[Clause]:
    """Cavity clauses of the data ``X`` (rows in the model's feature order), learned in
    this process (the driver learns them in a worker: driver/clauses.py)."""
    rows = interval_rows(ens, X)
    if rows is None:
        return []
    search = BoxSearch(rows.J, rows.K, width, max_clauses, time_budget, sample, seed, progress)
    st: dict = {}
    boxes = learn_boxes(search, st)
    if stats is not None:
        stats.update(st)
    return [box_clause(ens, rows, box) for box in boxes]


def learn_boxes(search: BoxSearch, stats: dict) -> list:
    """The boxes of ``search``, widest first per size; statistics go to ``stats``."""
    import z3

    t0 = time.time()
    J, K = search.J, list(search.K)
    width, max_clauses, time_budget = search.width, search.max_clauses, search.time_budget
    if search.deadline is not None:  # the time the worker took to start counts
        time_budget = max(0.0, min(time_budget, search.deadline - t0))
    nf = len(K)
    rng = np.random.default_rng(search.seed)
    n = J.shape[0]
    start = rng.choice(n, size=min(search.sample, n), replace=False)
    progress = search.progress
    bar = _Progress(progress, max_clauses)
    found: list[tuple[tuple[int, int, int], ...]] = []
    iters = 0
    timed_out = False
    memo: dict = {}  # feature columns -> refinement constraints learned so far (SMT-LIB)
    for size in range(1, max(1, width) + 1):
        if len(found) >= max_clauses or timed_out:
            break
        if size > nf:
            break
        pts = set(start.tolist())
        while len(found) < max_clauses:
            left = time_budget - (time.time() - t0)
            if left <= 0:
                timed_out = True
                break
            box, r, it = _solve_box(
                z3,
                J,
                K,
                nf,
                size,
                found,
                pts,
                rng,
                t0,
                time_budget,
                bar,
                lambda size=size, pts=pts: (
                    f"learning cavity clauses: size {size}/{width}, "
                    f"{len(found)}/{max_clauses} clauses, {len(pts)} sample rows, "
                    f"{time.time() - t0:.1f}/{time_budget:.0f}s"
                ),
                memo,
                max(1.0, left / max(1, max_clauses - len(found))),
            )
            iters += it
            if box is None:
                if r == "unknown":
                    timed_out = True
                break  # no further box of this size
            # (the pruned box contains the z3 box, so it is inside no earlier box)
            found.append(pruned_box(J, box))
    bar.done(
        f"learned {len(found)} cavity clauses (width <= {width}) in {time.time() - t0:.1f}s"
        + (" (time budget reached)" if timed_out else "")
    )
    stats.update(
        {
            "clause_learning_time": time.time() - t0,
            "clause_iterations": iters,
            "clause_budget_reached": timed_out,
        }
    )
    return found


def _solve_box(z3, J, K, nf, size, found, pts, rng, t0, budget, bar, msg, memo, slice_s):
    """The widest box of ``size`` literals holding no row of J (all rows, by refinement).

    Variables per slot i and feature c: r_i_c (slot i is feature c: the paper's r_if),
    A_i_c, B_i_c (the box covers intervals A..B: the paper's s_ik / t_ik'), fixed to 0
    when unselected. The tightness objective is met by strengthening: after each box,
    demand a wider one (sum of B - A larger), until unsat or out of time. Constraints
    are written as SMT-LIB text and parsed in batches (z3's Python term building is the
    bottleneck otherwise).
    Returns (box or None, "sat" / "unsat" / "unknown", iterations).
    """
    s = z3.Solver()
    s.set("random_seed", 0)
    decls = {}
    for i in range(size):
        for c in range(nf):
            for nm, mk in ((f"r_{i}_{c}", z3.Bool), (f"A_{i}_{c}", z3.Int), (f"B_{i}_{c}", z3.Int)):
                decls[nm] = mk(nm)

    preamble = "\n".join(
        f"(declare-const {nm} {'Bool' if nm[0] == 'r' else 'Int'})" for nm in decls
    )

    first = [True]

    def add(text_lines) -> None:
        if text_lines:  # the solver remembers declarations: give them once
            s.from_string((preamble + "\n" if first[0] else "") + "\n".join(text_lines))
            first[0] = False

    base = _base_assertions(K, nf, size, found)

    known = [t for cols, lines in memo.items() if len(cols) == size for t in lines]
    add(base + [_block(J[p], size, nf) for p in pts] + known)
    width = z3.Sum(
        [decls[f"B_{i}_{c}"] - decls[f"A_{i}_{c}"] for i in range(size) for c in range(nf)]
    )
    best = None
    iters = 0
    status = "unsat"
    t_clause = time.time()
    while True:
        left = budget - (time.time() - t0)
        if best is not None and time.time() - t_clause > slice_s:
            status = "sat"  # good enough: the widest found within this clause's time slice
            break
        if left <= 0:
            status = "unknown" if best is None else "sat"
            break
        s.set("timeout", max(1, int(left * 1000)))
        iters += 1
        bar.show(msg())
        res = s.check()
        if res == z3.unknown:
            status = "unknown" if best is None else "sat"
            break
        if res == z3.unsat:
            status = "sat" if best is not None else "unsat"
            break
        m = s.model()
        box = tuple(
            sorted(
                (c, m.eval(decls[f"A_{i}_{c}"]).as_long(), m.eval(decls[f"B_{i}_{c}"]).as_long())
                for i in range(size)
                for c in range(nf)
                if z3.is_true(m.eval(decls[f"r_{i}_{c}"]))
            )
        )
        inside = np.flatnonzero(box_mask(J, box))
        if inside.size:  # counterexample-guided refinement
            lines = _refinement(J, box, inside, memo, rng)
            memo.setdefault(tuple(c for c, _, _ in box), []).extend(lines)
            add(lines)
            pts.update(inside[:1].tolist())
            continue
        best = box
        s.add(width > sum(b - a for _, a, b in box))  # tightness: a wider box next
    return best, status, iters


def _outside(i: int, c: int, v: int) -> str:
    """Slot i (feature column c) excludes interval v."""
    return f"(> A_{i}_{c} {v}) (< B_{i}_{c} {v})"


def _block(row, size: int, nf: int) -> str:
    """The box must not hold this row (of interval indices)."""
    return (
        "(assert (or "
        + " ".join(
            f"(and r_{i}_{c} (or {_outside(i, c, int(row[c]))}))"
            for i in range(size)
            for c in range(nf)
        )
        + "))"
    )


def _refinement(J: np.ndarray, box, inside: np.ndarray, memo: dict, rng) -> list[str]:
    """Assertions excluding the rows inside ``box``, projected onto the box's features: a
    box on these features is empty iff it avoids every distinct projection, so all of
    them are added (every row's the first time these features are seen, up to a cap)."""
    cols = [c for c, _, _ in box]
    if tuple(cols) not in memo:
        cells = np.unique(J[:, cols], axis=0)
    else:
        cells = np.unique(J[inside][:, cols], axis=0)
    if len(cells) > MAX_CELLS:
        cells = cells[rng.choice(len(cells), size=MAX_CELLS, replace=False)]
    sel = "(and " + " ".join(f"r_{i}_{c}" for i, c in enumerate(cols)) + ")"
    return [
        f"(assert (=> {sel} (or "
        + " ".join(_outside(i, c, v) for i, (c, v) in enumerate(zip(cols, cell)))
        + ")))"
        for cell in cells.tolist()
    ]


def _base_assertions(K: list[int], nf: int, size: int, found: list) -> list[str]:
    """SMT-LIB assertions of a box of ``size`` slots: one feature per slot, in increasing
    order, a non-trivial interval range each, and inside no earlier box."""
    base = []
    for i in range(size):
        base.append(
            "(assert ((_ pbeq 1"
            + " 1" * nf
            + ") "
            + " ".join(f"r_{i}_{c}" for c in range(nf))
            + "))"
        )
        for c in range(nf):
            base.append(
                f"(assert (ite r_{i}_{c} (and (>= A_{i}_{c} 0) (<= A_{i}_{c} B_{i}_{c}) "
                f"(<= B_{i}_{c} {K[c]}) (or (> A_{i}_{c} 0) (< B_{i}_{c} {K[c]}))) "
                f"(and (= A_{i}_{c} 0) (= B_{i}_{c} 0))))"
            )
            if i:  # features in increasing order: i < j -> f_i < f_j
                prev = " ".join(f"r_{i - 1}_{d}" for d in range(c))
                base.append(f"(assert (=> r_{i}_{c} (or false {prev})))")
    for box in found:  # no box inside an earlier one
        parts = []
        for c, a, b in box:
            parts.append(
                "(or false "
                + " ".join(
                    f"(and r_{i}_{c} (>= A_{i}_{c} {a}) (<= B_{i}_{c} {b}))" for i in range(size)
                )
                + ")"
            )
        base.append("(assert (not (and " + " ".join(parts) + ")))")
    return base
