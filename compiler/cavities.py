"""Cavity clauses (paper section 5.3): boxes of the input space that hold no data row.

A cavity of width k is a box  AND_{i<=k} (lb_i <= x_{f_i} < ub_i)  whose bounds are
thresholds of the ensemble (or -inf / +inf) and which holds no row of the data. Its
negation is a clause the sensitivity search must satisfy (passes/data_aware.py).

This module is pure: the clause types, their JSON form, and checking clauses against
rows. Learning them with z3 is search/cavity_learning.py; the clause files and the
disk cache are driver/clauses.py.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .ensemble import Ensemble
from .errors import FEATURES, InputError, closest
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


def feature_thresholds(ens: Ensemble) -> dict[int, np.ndarray]:
    """Sorted distinct numeric thresholds per feature (features with none left out)."""
    acc: dict[int, set] = {}
    for t in ens.trees:
        for n in np.flatnonzero(t.feature >= 0).tolist():
            if t.is_categorical(n):
                continue
            acc.setdefault(int(t.feature[n]), set()).add(float(t.threshold[n]))
    return {f: np.array(sorted(s)) for f, s in sorted(acc.items()) if s}


def model_key(ens: Ensemble) -> str:
    h = hashlib.sha256()
    h.update(ens.op.encode() + ens.cast.encode())
    for f, ths in feature_thresholds(ens).items():
        h.update(ens.features[f].name.encode() + b"\0")
        h.update(np.asarray(ths, dtype=np.float64).tobytes())
    return h.hexdigest()[:20]


def box_mask(J: np.ndarray, box: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """Rows inside a box given as ((column, A, B), ...) over the interval-index matrix."""
    inside = np.ones(J.shape[0], dtype=bool)
    for c, a, b in box:
        col = J[:, c]
        inside &= (col >= a) & (col <= b)
    return inside


@dataclass(frozen=True, eq=False)
class IntervalRows:
    """Data rows as threshold-interval indices, what the cavity search works on."""

    J: np.ndarray  # (distinct rows, features): interval index per column
    K: tuple[int, ...]  # intervals of column c are 0..K[c]
    feats: tuple[int, ...]  # the model's feature of each column
    thresholds: dict[int, np.ndarray]  # per feature, its sorted thresholds


def interval_rows(ens: Ensemble, X: np.ndarray) -> IntervalRows | None:
    """The distinct interval patterns of the rows of X; None when there is nothing to
    learn from. A missing value (NaN) is index -1, inside no box's range on its feature,
    but its row stays: it lies in every box over its other features that holds their
    values (leaving the row out made boxes that hold data rows)."""
    X = np.asarray(X, dtype=np.float64)
    ths = feature_thresholds(ens)
    feats = list(ths)
    if not feats or X.shape[0] == 0:
        return None
    J = np.stack([interval_index(ens, ths[f], X[:, f]) for f in feats], axis=1)
    J = J[~(J < 0).all(axis=1)]  # a row missing every value lies in no box
    if J.shape[0] == 0:
        return None
    # distinct rows are enough (a box holds a row iff it holds its interval pattern)
    J = np.unique(J, axis=0)
    return IntervalRows(J, tuple(len(ths[f]) for f in feats), tuple(feats), ths)


def pruned_box(J: np.ndarray, box: Sequence[tuple[int, int, int]]) -> tuple:
    """Greedy literal pruning: drop a literal if the box stays empty of rows without it."""
    lits = list(box)
    for lit in list(lits):
        if len(lits) == 1:
            break
        trial = tuple(x for x in lits if x != lit)
        if not box_mask(J, trial).any():
            lits = list(trial)
    return tuple(lits)


def box_clause(ens: Ensemble, rows: IntervalRows, box: Sequence[tuple[int, int, int]]) -> Clause:
    """A box over interval indices, ((column, A, B), ...), as a clause over thresholds."""
    lits = []
    for c, a, b in box:
        f = rows.feats[c]
        lo = float(rows.thresholds[f][a - 1]) if a > 0 else -math.inf
        hi = float(rows.thresholds[f][b]) if b < rows.K[c] else math.inf
        lits.append(Literal(ens.features[f].name, lo, hi))
    return Clause(tuple(lits))


def clause_holds_row(ens: Ensemble, clause: Clause, X: np.ndarray) -> np.ndarray:
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


def check_clause_features(ens: Ensemble, clauses: Iterable[Clause], where: str) -> None:
    """An ``InputError`` naming the clause (its index in the file) and the feature, at the
    first literal of a clause file that names no feature of the model: the file is the
    user's, and a clause dropped for a misspelt name would go unsaid."""
    names = ens.feature_names
    for i, c in enumerate(clauses):
        for lit in c.literals:
            if lit.feature not in names:
                raise InputError(
                    f"clause {i}: unknown feature {lit.feature!r}"
                    f"{closest(lit.feature, names, listing=FEATURES)}",
                    where,
                )


def check_clauses(ens: Ensemble, clauses: Iterable[Clause], X: np.ndarray) -> list[Clause]:
    """The clauses whose box holds no row of X (and whose features the model has)."""
    names = set(ens.feature_names)
    out = []
    for c in clauses:
        if not all(lit.feature in names for lit in c.literals):
            continue
        if not clause_holds_row(ens, c, X).any():
            out.append(c)
    return out


def clauses_document(clauses: Iterable[Clause], meta: dict | None = None) -> dict:
    """The JSON document of a clause file."""
    return {
        "format": FORMAT,
        **(meta or {}),
        "clauses": [{"literals": [lit.to_json() for lit in c.literals]} for c in clauses],
    }


def clauses_from_document(doc: object, where: str = "") -> list[Clause]:
    """The clauses of a parsed clause file; an ``InputError`` naming ``where`` if malformed."""
    if not isinstance(doc, dict) or not isinstance(doc.get("clauses"), list):
        raise InputError(
            'not a clauses file (expected {"clauses": [{"literals": [...]}, ...]})', where
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
            raise InputError(f"clause {i}: bad literal ({e})", where) from None
        if any(math.isnan(lit.lo) or math.isnan(lit.hi) for lit in lits):
            raise InputError(f"clause {i}: a literal's lo or hi is NaN, not a number", where)
        if lits:
            out.append(Clause(lits))
    return out
