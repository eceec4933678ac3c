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


@dataclass(frozen=True)
class Literal:
    """One side of a box: the threshold intervals of ``feature`` between lo and hi
    (lo <= x < hi in XGBoost's "<" convention; -inf / +inf for an open end)."""

    feature: str
    lo: float
    hi: float

    def to_json(self) -> dict:
        return {"feature": self.feature, "lo": None if self.lo == -math.inf else self.lo,
                "hi": None if self.hi == math.inf else self.hi}


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


def learn_clauses(ens, X: np.ndarray, *, width: int = 2, max_clauses: int = 50, time_budget: float = 60.0,
                  sample: int = 200, seed: int = 0, progress: bool = False, stats: dict | None = None) -> list[Clause]:
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
            opt = z3.Optimize()
            opt.set("timeout", max(1, int(left * 1000)))
            F = [z3.Int(f"F{i}") for i in range(size)]
            A = [z3.Int(f"A{i}") for i in range(size)]
            B = [z3.Int(f"B{i}") for i in range(size)]
            for i in range(size):
                opt.add(F[i] >= 0, F[i] < nf, A[i] >= 0, A[i] <= B[i])
                if i:
                    opt.add(F[i - 1] < F[i])
                for c in range(nf):
                    opt.add(z3.Implies(F[i] == c, z3.And(B[i] <= K[c], z3.Or(A[i] > 0, B[i] < K[c]))))
            for box in found:  # no box inside an earlier one
                opt.add(z3.Not(z3.And([
                    z3.Or([z3.And(F[i] == c, A[i] >= a, B[i] <= b) for i in range(size)]) for c, a, b in box])))

            def val(i, row):
                e = z3.IntVal(int(row[nf - 1]))
                for c in range(nf - 2, -1, -1):
                    e = z3.If(F[i] == c, int(row[c]), e)
                return e

            def block(row):
                return z3.Or([z3.Or(A[i] > val(i, row), B[i] < val(i, row)) for i in range(size)])

            for p in pts:
                opt.add(block(J[p]))
            opt.minimize(z3.Sum([A[i] - B[i] for i in range(size)]))
            while True:
                iters += 1
                bar.show(f"learning cavity clauses: size {size}/{width}, {len(found)}/{max_clauses} clauses, "
                         f"{len(pts)} sample rows, {time.time() - t0:.1f}/{time_budget:.0f}s")
                r = opt.check()
                if r != z3.sat:
                    break
                m = opt.model()
                box = tuple(sorted((m.eval(F[i]).as_long(), m.eval(A[i]).as_long(), m.eval(B[i]).as_long())
                                   for i in range(size)))
                inside = np.flatnonzero(_box_mask(J, box))
                if inside.size == 0:
                    break
                new = rng.choice(inside, size=min(10, inside.size), replace=False)
                for p in new.tolist():
                    pts.add(p)
                    opt.add(block(J[p]))
                if time.time() - t0 > time_budget:
                    r = z3.unknown
                    break
            if r != z3.sat:
                if r == z3.unknown:
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
            box = tuple(lits)
            if any(_contains(old, box) for old in found):
                # pruned into an earlier box's sub-box: still exclude the z3 answer next time
                found_dummy = box
                del found_dummy
            found.append(box)
    bar.done(f"learned {len(found)} cavity clauses (width <= {width}) in {time.time() - t0:.1f}s"
             + (" (time budget reached)" if timed_out else ""))
    if stats is not None:
        stats.update({"clause_learning_time": time.time() - t0, "clause_iterations": iters,
                      "clause_budget_reached": timed_out})
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
        if lit.lo != -math.inf:
            ok &= ~np.array([ens.test_holds(v, lit.lo) for v in col.tolist()]) if col.size < 0 else \
                interval_index(ens, [lit.lo], col) >= 1
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
    doc = {"format": FORMAT, **(meta or {}),
           "clauses": [{"literals": [lit.to_json() for lit in c.literals]} for c in clauses]}
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
        raise InputError('not a clauses file (expected {"clauses": [{"literals": [...]}, ...]})', str(path))
    out = []
    for i, c in enumerate(doc["clauses"]):
        try:
            lits = tuple(
                Literal(str(lit["feature"]),
                        -math.inf if lit.get("lo") is None else float(lit["lo"]),
                        math.inf if lit.get("hi") is None else float(lit["hi"]))
                for lit in c["literals"])
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"clause {i}: bad literal ({e})", str(path)) from None
        if lits:
            out.append(Clause(lits))
    return out


def clauses_for(ens, data, *, width: int = 2, max_clauses: int = 50, time_budget: float = 60.0,
                file=None, cache: bool = True, progress: bool = False, seed: int = 0,
                stats: dict | None = None) -> list[Clause]:
    """The cavity clauses for a model and a Dataset: from ``file`` if it exists (re-checked
    against the data), else from the disk cache, else learned (and written to ``file`` /
    the cache)."""
    if file is not None and Path(file).exists():
        clauses = load_clauses(file)
        kept = check_clauses(ens, clauses, data.X)
        if stats is not None:
            stats.update({"clauses_source": str(file), "clauses_discarded": len(clauses) - len(kept)})
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
    clauses = learn_clauses(ens, data.X, width=width, max_clauses=max_clauses, time_budget=time_budget,
                            seed=seed, progress=progress, stats=st)
    if stats is not None:
        stats.update(st)
        stats["clauses_source"] = "learned"
    meta = {"key": key, "model": model_key(ens), "data": data.digest(), "data_source": data.source,
            "width": width, "max_clauses": max_clauses, "time_budget": time_budget,
            "complete": not st.get("clause_budget_reached", False)}
    for target in (cpath, file):
        if target is not None:
            try:
                save_clauses(target, clauses, meta)
            except OSError:
                pass
    return clauses
