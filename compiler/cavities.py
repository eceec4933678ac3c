"""Learn data cavities (boxes with no data row) with z3, as paper section 5.3 describes.

A cavity of width k is a box  AND_{i<=k} (lb_i <= x_{f_i} < ub_i)  whose bounds are
thresholds of the ensemble (or -inf / +inf) and which holds no row of the data. Its
negation is a clause the sensitivity search must satisfy (passes/data_aware.py).

The search, one clause at a time, sizes 1, 2, ..., w:

* z3 ``Optimize`` over slot variables: F_i (which feature, F_1 < F_2 < ... to avoid
  permutations: the paper's r_if), A_i and B_i (the box covers threshold intervals
  A_i..B_i of F_i: the paper's s_ik / t_ik'), each slot non-trivial;
* for every data point x of the current sample: OR_i (x_{F_i} outside [A_i, B_i]);
* tightness objective (the paper's): minimise sum_i (A_i - B_i), i.e. the widest box;
* previously learned boxes are excluded, with every box inside one of them;
* counterexample-guided refinement: start from a random sample of the rows; check the
  candidate box against ALL rows; add rows that lie inside it to the sample and solve
  again;
* greedy literal pruning: drop literals whose removal keeps the box empty of data;
* a cap on the number of clauses and a time budget (progress on stderr).

Learned clauses are cached on disk, keyed by hashes of the model's thresholds, the data
and the parameters (``cache_dir()``), and can be written to / read from a JSON file.
Clauses read from a file are re-checked against the data: a box that holds a row is
discarded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import InputError
from .passes.data_aware import interval_index

FORMAT = "treesens-cavities/1"
MAX_CELLS = 3000  # projections added at once per refinement


@dataclass(frozen=True)
class Literal:
    """One side of a box: the threshold intervals of ``feature`` between lo and hi
    (lo <= x < hi in XGBoost's "<" convention; -inf / +inf for an open end)."""

    feature: str
    lo: float
    hi: float

    def to_json(self) -> dict:
        return {
            "feature": self.feature,
            "lo": None if self.lo == -math.inf else self.lo,
            "hi": None if self.hi == math.inf else self.hi,
        }


@dataclass(frozen=True)
class Clause:
    """NOT (box): at least one literal's feature lies outside its range."""

    literals: tuple[Literal, ...]

    def __str__(self) -> str:
        parts = []
        for lit in self.literals:
            lo = "" if lit.lo == -math.inf else f"{lit.lo:.6g} <= "
            hi = "" if lit.hi == math.inf else f" < {lit.hi:.6g}"
            parts.append(f"{lo}{lit.feature}{hi}")
        return "not (" + " and ".join(parts) + ")"


def feature_thresholds(ens) -> dict[int, np.ndarray]:
    """Sorted distinct numeric thresholds per feature (features with none left out)."""
    acc: dict[int, set] = {}
    for t in ens.trees:
        for n in np.flatnonzero(t.feature >= 0).tolist():
            if t.is_categorical(n):
                continue
            acc.setdefault(int(t.feature[n]), set()).add(float(t.threshold[n]))
    return {f: np.array(sorted(s)) for f, s in sorted(acc.items()) if s}


def model_key(ens) -> str:
    h = hashlib.sha256()
    h.update(ens.op.encode() + ens.cast.encode())
    for f, ths in feature_thresholds(ens).items():
        h.update(ens.features[f].name.encode() + b"\0")
        h.update(np.asarray(ths, dtype=np.float64).tobytes())
    return h.hexdigest()[:20]


def _box_mask(J: np.ndarray, box) -> np.ndarray:
    """Rows inside a box given as ((column, A, B), ...) over the interval-index matrix."""
    inside = np.ones(J.shape[0], dtype=bool)
    for c, a, b in box:
        col = J[:, c]
        inside &= (col >= a) & (col <= b)
    return inside


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


def learn_clauses(
    ens,
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
    """Cavity clauses of the data ``X`` (rows in the model's feature order)."""
    import z3

    t0 = time.time()
    X = np.asarray(X, dtype=np.float64)
    ths = feature_thresholds(ens)
    feats = list(ths)
    if not feats or X.shape[0] == 0:
        return []
    nf = len(feats)
    K = [len(ths[f]) for f in feats]  # intervals of feature feats[c] are 0..K[c]
    J = np.stack([interval_index(ens, ths[f], X[:, f]) for f in feats], axis=1)  # (n, nf)
    nan_rows = (J < 0).any(axis=1)
    if nan_rows.any():  # a missing value lies in no box: those rows never block one
        J = J[~nan_rows]
    rng = np.random.default_rng(seed)
    n = J.shape[0]
    if n == 0:
        return []
    # distinct rows are enough (a box holds a row iff it holds its interval pattern)
    J = np.unique(J, axis=0)
    n = J.shape[0]
    start = rng.choice(n, size=min(sample, n), replace=False)
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
            # greedy literal pruning: drop a literal if the box stays empty without it
            lits = list(box)
            for lit in list(lits):
                if len(lits) == 1:
                    break
                trial = tuple(x for x in lits if x != lit)
                if not _box_mask(J, trial).any():
                    lits = list(trial)
            # (the pruned box contains the z3 box, so it is inside no earlier box)
            found.append(tuple(lits))
    bar.done(
        f"learned {len(found)} cavity clauses (width <= {width}) in {time.time() - t0:.1f}s"
        + (" (time budget reached)" if timed_out else "")
    )
    if stats is not None:
        stats.update(
            {
                "clause_learning_time": time.time() - t0,
                "clause_iterations": iters,
                "clause_budget_reached": timed_out,
            }
        )
    out = []
    for box in found:
        lits = []
        for c, a, b in box:
            f = feats[c]
            lo = float(ths[f][a - 1]) if a > 0 else -math.inf
            hi = float(ths[f][b]) if b < K[c] else math.inf
            lits.append(Literal(ens.features[f].name, lo, hi))
        out.append(Clause(tuple(lits)))
    return out


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

    def outside(i, c, v) -> str:
        return f"(> A_{i}_{c} {v}) (< B_{i}_{c} {v})"

    def block(row) -> str:
        return (
            "(assert (or "
            + " ".join(
                f"(and r_{i}_{c} (or {outside(i, c, int(row[c]))}))"
                for i in range(size)
                for c in range(nf)
            )
            + "))"
        )

    known = [t for cols, lines in memo.items() if len(cols) == size for t in lines]
    add(base + [block(J[p]) for p in pts] + known)
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
        inside = np.flatnonzero(_box_mask(J, box))
        if inside.size:  # counterexample-guided refinement
            # the rows inside the box, projected onto the box's features: a box on these
            # features is empty iff it avoids every distinct projection, so add them all
            cols = [c for c, _, _ in box]
            key = tuple(cols)
            if key not in memo:  # first time: every row's projection (up to a cap)
                cells = np.unique(J[:, cols], axis=0)
            else:
                cells = np.unique(J[inside][:, cols], axis=0)
            if len(cells) > MAX_CELLS:
                cells = cells[rng.choice(len(cells), size=MAX_CELLS, replace=False)]
            sel = "(and " + " ".join(f"r_{i}_{c}" for i, c in enumerate(cols)) + ")"
            lines = [
                f"(assert (=> {sel} (or "
                + " ".join(outside(i, c, v) for i, (c, v) in enumerate(zip(cols, cell)))
                + ")))"
                for cell in cells.tolist()
            ]
            memo.setdefault(key, []).extend(lines)
            add(lines)
            pts.update(inside[:1].tolist())
            continue
        best = box
        s.add(width > sum(b - a for _, a, b in box))  # tightness: a wider box next
    return best, status, iters


def _contains(outer, inner) -> bool:
    """Is box ``inner`` inside box ``outer`` (both as ((column, A, B), ...))?"""
    d = {c: (a, b) for c, a, b in inner}
    for c, a, b in outer:
        if c not in d:
            return False
        ia, ib = d[c]
        if ia < a or ib > b:
            return False
    return True


def clause_holds_row(ens, clause: Clause, X: np.ndarray) -> np.ndarray:
    """Rows of X inside the clause's box (the clause is violated by them)."""
    inside = np.ones(X.shape[0], dtype=bool)
    for lit in clause.literals:
        f = ens.feature_index(lit.feature)
        col = X[:, f]
        ok = ~np.isnan(col)
        if lit.lo != -math.inf:  # x >= lo: the test at lo fails
            ok &= interval_index(ens, [lit.lo], col) >= 1
        if lit.hi != math.inf:
            ok &= interval_index(ens, [lit.hi], col) == 0
        inside &= ok
    return inside


def check_clauses(ens, clauses, X: np.ndarray) -> list[Clause]:
    """The clauses whose box holds no row of X (and whose features the model has)."""
    names = set(ens.feature_names)
    out = []
    for c in clauses:
        if not all(lit.feature in names for lit in c.literals):
            continue
        if not clause_holds_row(ens, c, X).any():
            out.append(c)
    return out


def save_clauses(path, clauses, meta: dict | None = None) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "format": FORMAT,
        **(meta or {}),
        "clauses": [{"literals": [lit.to_json() for lit in c.literals]} for c in clauses],
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)


def load_clauses(path) -> list[Clause]:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError("clauses file not found", str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read clauses: {e}", str(path)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("clauses"), list):
        raise InputError(
            'not a clauses file (expected {"clauses": [{"literals": [...]}, ...]})', str(path)
        )
    out = []
    for i, c in enumerate(doc["clauses"]):
        try:
            lits = tuple(
                Literal(
                    str(lit["feature"]),
                    -math.inf if lit.get("lo") is None else float(lit["lo"]),
                    math.inf if lit.get("hi") is None else float(lit["hi"]),
                )
                for lit in c["literals"]
            )
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"clause {i}: bad literal ({e})", str(path)) from None
        if lits:
            out.append(Clause(lits))
    return out


def clauses_for(
    ens,
    data,
    *,
    width: int = 2,
    max_clauses: int = 50,
    time_budget: float = 60.0,
    file=None,
    cache: bool = True,
    progress: bool = False,
    seed: int = 0,
    stats: dict | None = None,
) -> list[Clause]:
    """The cavity clauses for a model and a Dataset: from ``file`` if it exists (re-checked
    against the data), else from the disk cache, else learned (and written to ``file`` /
    the cache)."""
    if file is not None and not Path(file).exists():
        parent = Path(file).parent
        if not parent.is_dir():  # checked before minutes of learning, and never created
            raise InputError(f"cannot write the clauses: no directory {parent}", str(file))
    if file is not None and Path(file).exists():
        clauses = load_clauses(file)
        kept = check_clauses(ens, clauses, data.X)
        if stats is not None:
            stats.update(
                {"clauses_source": str(file), "clauses_discarded": len(clauses) - len(kept)}
            )
        return kept[:max_clauses] if max_clauses else kept
    key = f"{model_key(ens)}-{data.digest()}-w{width}-n{max_clauses}-t{time_budget:g}-s{seed}"
    cpath = None
    if cache:
        from ..frontends.data import cache_dir

        cpath = cache_dir() / "cavities" / f"{key}.json"
        if cpath.exists():
            try:
                clauses = load_clauses(cpath)
                if stats is not None:
                    stats["clauses_source"] = f"cache {cpath}"
                if file is not None:
                    save_clauses(file, clauses, {"key": key})
                return clauses
            except InputError:
                pass
    st: dict = {}
    clauses = learn_clauses(
        ens,
        data.X,
        width=width,
        max_clauses=max_clauses,
        time_budget=time_budget,
        seed=seed,
        progress=progress,
        stats=st,
    )
    if stats is not None:
        stats.update(st)
        stats["clauses_source"] = "learned"
    meta = {
        "key": key,
        "model": model_key(ens),
        "data": data.digest(),
        "data_source": data.source,
        "width": width,
        "max_clauses": max_clauses,
        "time_budget": time_budget,
        "complete": not st.get("clause_budget_reached", False),
    }
    for target in (cpath, file):
        if target is not None:
            with contextlib.suppress(OSError):
                save_clauses(target, clauses, meta)
    return clauses
