"""Data-aware passes (paper section 4 and 5.3): the utility objective and cavity clauses.

Both work on the encoding's per-feature predicates. For a numeric feature with valid
(non-empty) threshold intervals of ranks 0..n-1, q_r (r = 1..n-1) is true iff x lies in
one of the first r of them; with q_0 = 0 and q_n = 1 (or 1 - m when the feature may be
NaN, m the NaN variable) the indicator of "x lies in the interval of rank r" is
q_{r+1} - q_r. Categorical features use their one-hot variables directly.

**UtilityObjective** ("prob"): the paper's product-of-marginals utility
u(x1, x2) = prod_f pi_f(x1_f) * pi_f(x2_f), as the linear objective
max sum_{copy} sum_f sum_r log pi_f(r) * [x_copy.f in interval r]. Features outside F
share their predicates between the copies, so their terms count twice (pi(x1) and pi(x2)
are both taken). This is the paper's Eq. (obj-data-aware) up to a constant.

Smoothing (``empty="smooth"``, default): add-alpha (Laplace) estimates
pi_f(r) = (count_r + alpha) / (N + alpha * n_f) with alpha = 1: an interval no data row
falls in gets a small positive probability 1 / (N + n_f) instead of log(0) = -inf, and
the estimates still sum to 1. ``empty="forbid"``: intervals with no data row are
excluded outright (indicator fixed to 0; non-empty ones use the plain frequency), and so
is NaN where the feature may be missing but no row misses it. That
restricts the search: the rows go to the problem's soft group, which the driver drops
if it makes the query infeasible (an "insensitive" answer is never based on data).

**CavityClauses** ("clause"): each learned cavity box B = AND_i (lo_i <= x_{f_i} < hi_i)
contains no data row; its negation OR_i (x_{f_i} < lo_i or x_{f_i} >= hi_i) is added for
BOTH inputs (each copy with its own predicates for varied features; once for a clause
whose features are all shared). Literals on varied features are kept (see
docs/data-aware.md): dropping one would turn the box into a larger one that does contain
data, excluding realistic pairs. Clause rows go to the soft group too.

The passes receive the Dataset and the clauses; loading data and learning clauses are
the driver's (driver/data.py, driver/clauses.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..dataset import Dataset
from ..domain import code_routes
from ..encode import Encoding
from ..ensemble import ZERO_BAND, Ensemble
from ..errors import InputError, spelled
from ..ir import EQ, GE, LE, Linear, Objective
from ..options import DataAwareMode
from ..query import Query
from .base import Compiled, Pass

if TYPE_CHECKING:  # cavities imports this module
    from ..cavities import Clause


def interval_index(ens: Ensemble, thresholds: Sequence[float], values: np.ndarray) -> np.ndarray:
    """Index of the threshold interval (domain.py numbering) of each value, as the library
    routes it: the number of thresholds whose test fails. NaN gives -1."""
    ths = np.asarray(thresholds, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if ens.cast == "float32":
        vc = v.astype(np.float32).astype(np.float64)
    elif ens.cast == "float64z":
        vc = np.where(np.abs(v) <= ZERO_BAND, 0.0, v)
    else:
        vc = v
    side = "right" if ens.op == "<" else "left"
    out = np.searchsorted(ths, vc, side=side).astype(np.int64)
    out[np.isnan(v)] = -1
    return out


def feature_ranks(enc: Encoding, f: int, values: np.ndarray) -> np.ndarray:
    """Rank (index among the valid intervals / codes) of each value for feature f; -1 when
    the value falls in no valid interval (outside the declared bounds, NaN, unknown code)."""
    dom = enc.domains[f]
    v = np.asarray(values, dtype=np.float64)
    if dom.codes is not None:
        pos = {c: i for i, c in enumerate(dom.codes)}
        feat = enc.ensemble.features[f]
        if not feat.categories:  # a code no split lists has the rank of the code it routes as
            routes = {code_routes(enc.ensemble, f, float(c)): i for i, c in enumerate(dom.codes)}
            for x in np.unique(v[~np.isnan(v)]).tolist():
                if float(x).is_integer() and int(x) not in pos and feat.lb <= x <= feat.ub:
                    pos[int(x)] = routes.get(code_routes(enc.ensemble, f, x), -1)
        return np.array(
            [
                pos.get(int(x), -1) if (not math.isnan(x) and float(x).is_integer()) else -1
                for x in v.tolist()
            ],
            dtype=np.int64,
        )
    j = interval_index(enc.ensemble, dom.thresholds, v)
    valid = np.asarray(dom.valid, dtype=np.int64)
    r = np.searchsorted(valid, j)
    ok = (j >= 0) & (r < len(valid))
    ok[ok] &= valid[r[ok]] == j[ok]
    return np.where(ok, r, -1)


@dataclass(frozen=True)
class Marginal:
    """One feature's marginal over its valid ranks, and NaN where the feature may be
    missing: one distribution over the values an input may take (Laplace-smoothed with
    ``alpha``), its shares summing to 1 with ``missing``'s."""

    counts: np.ndarray  # rows per valid rank (rows outside the domain and NaN not counted)
    probs: np.ndarray  # per valid rank
    missing: float | None = None  # NaN's share; None where the feature is never missing
    nan_rows: int = 0  # rows missing the feature, where it may be missing (else 0)

    @property
    def informative(self) -> bool:
        """Whether some row counts: has a value in an admissible interval, or misses a
        feature that may be missing (a column the data always miss still says NaN)."""
        return self.counts.sum() > 0 or self.nan_rows > 0


def marginals(enc: Encoding, X: np.ndarray, alpha: float = 1.0) -> dict[int, Marginal]:
    """Per feature: its Marginal in the rows ``X``. A feature that may be missing (the
    encoding has a NaN variable for it) counts NaN as one more value: its intervals'
    shares are of the rows with a value or NaN, not of the rows with a value only, which
    would score every value above a missing one by their ratio."""
    out = {}
    for f, dom in enc.domains.items():
        n = len(dom.valid)
        if n == 0:
            continue
        ranks = feature_ranks(enc, f, X[:, f])
        counts = np.bincount(ranks[ranks >= 0], minlength=n).astype(np.float64)
        may_miss = any(f in enc.nan[copy] for copy in (0, 1))
        nan_rows = float(np.isnan(X[:, f]).sum()) if may_miss else 0.0
        total, k = counts.sum() + nan_rows, n + int(may_miss)
        a = alpha if alpha > 0 else (1.0 if total == 0 else 0.0)
        probs = (counts + a) / (total + a * k)
        missing = (nan_rows + a) / (total + a * k) if may_miss else None
        out[f] = Marginal(counts, probs, missing, int(nan_rows))
    return out


def interval_indicators(
    enc: Encoding, copy: int, f: int
) -> list[tuple[dict[int, float], float]] | None:
    """Per valid rank r: the indicator "x_copy.f lies in interval r" as (terms, constant).
    None for a feature the encoding has no variables for (a single choice)."""
    hots = enc.onehot[copy].get(f)
    if hots is not None:
        return [({v: 1.0}, 0.0) for v in hots]
    qs = enc.pred[copy].get(f, ())
    m = enc.nan[copy].get(f)
    n = len(enc.domains[f].valid)
    if not qs and m is None:
        return None
    out = []
    for r in range(n):
        terms: dict[int, float] = {}
        const = 0.0
        # + q_{r+1}
        if r + 1 >= n:
            if m is None:
                const += 1.0
            else:
                const += 1.0
                terms[m] = terms.get(m, 0.0) - 1.0
        else:
            terms[qs[r]] = terms.get(qs[r], 0.0) + 1.0
        # - q_r
        if r >= 1:
            terms[qs[r - 1]] = terms.get(qs[r - 1], 0.0) - 1.0
        out.append(({v: c for v, c in terms.items() if c != 0.0}, const))
    return out


def _copies(enc, f: int) -> tuple[int, ...]:
    return (0, 1) if f in enc.varying else (0,)


class UtilityObjective(Pass):
    """Maximise the log of the product-of-marginals utility of both inputs (role optimize).

    The pass also records the utility's *separable maximum*, the sum over features and
    copies of the best admissible interval's weight, as ``Notes.objective_bound``, and adds
    it as the hard row "objective <= separable maximum" (tag ``("prob-bound",)``). Every
    point satisfies that row, since each copy of a feature lies in exactly one interval;
    it gives a solver's relaxation the bound directly. Without it, CP-SAT's LP (which
    leaves out the predicate ordering, presolved into clauses) can make an interval
    indicator q_{r+1} - q_r negative, and its bound rises far above any utility."""

    name = "prob"
    query_kinds = frozenset({"pair", "change"})  # an anchored x1 is a data row already

    def __init__(self, X: np.ndarray, alpha: float = 1.0, empty: str = "smooth"):
        if empty not in ("smooth", "forbid"):
            raise ValueError(f"empty intervals: 'smooth' or 'forbid', not {empty!r}")
        self.X = np.asarray(X, dtype=np.float64)
        self.alpha = float(alpha)
        self.empty = empty

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        enc = compiled.encoding
        forbid = self.empty == "forbid"
        acc: dict[int, float] = {}
        const = best = 0.0
        cons: list[Linear] = []
        for f, marginal in marginals(enc, self.X, 0.0 if forbid else self.alpha).items():
            if not marginal.informative:
                continue  # no data row in any admissible interval (nor NaN): no information
            for copy in _copies(enc, f):
                part = self._feature_copy(enc, f, copy, marginal)
                if part is None:
                    continue
                terms, c0, top, forbidden = part
                for v, c in terms.items():
                    acc[v] = acc.get(v, 0.0) + c
                const += c0
                best += top
                cons.extend(forbidden)
        items = [(v, c) for v, c in sorted(acc.items()) if c != 0.0]
        vs, cs = tuple(v for v, _ in items), tuple(c for _, c in items)
        prob = compiled.problem.with_objective(Objective("max", vs, cs, const, role="optimize"))
        if items:
            prob = prob.with_constraints([Linear(vs, cs, LE, best - const, ("prob-bound",))])
        prob = prob.with_notes(objective_bound=best)
        if cons:
            prob = prob.with_soft_constraints(cons)
        enc.stats["prob_forbidden_intervals"] = len(cons)
        return compiled.with_problem(prob), None

    def _feature_copy(
        self, enc: Encoding, f: int, copy: int, marginal: Marginal
    ) -> tuple[dict[int, float], float, float, list[Linear]] | None:
        """One feature and copy: its objective terms, their constant, the largest value
        they take at any point, and the forbidden intervals' rows. None without variables.

        A forbidden interval (no data row, ``prob_empty=forbid``; so is NaN where no row
        misses the feature) scores as one row in N + K_f would, below every interval with
        data: its row fixes it out while the rows hold, and when they are dropped (they
        left no pair) it is still the least likely place for the pair, not a free one."""
        ind = interval_indicators(enc, copy, f)
        if ind is None:
            return None
        counts, probs = marginal.counts, marginal.probs
        forbid = self.empty == "forbid"
        weight = 2.0 if f not in enc.varying else 1.0  # shared: counts for both inputs
        terms: dict[int, float] = {}
        const = 0.0
        values: list[float] = []
        forbidden: list[Linear] = []
        # an interval (or NaN) with no data row and no pseudo-count (forbid; or smooth
        # with prob_alpha = 0): as likely as one row in N + K_f, below every interval
        # with data, not log 0
        empty = -math.log(len(self.X) + len(ind)) * weight
        for r, (ind_terms, c0) in enumerate(ind):
            if forbid and counts[r] == 0:
                if ind_terms:
                    vs = tuple(ind_terms)
                    coefs = tuple(ind_terms[v] for v in vs)
                    forbidden.append(Linear(vs, coefs, EQ, -c0, ("prob-forbid", copy, f, r)))
                w = empty
            else:
                w = math.log(probs[r]) * weight if probs[r] > 0 else empty
            values.append(w)
            const += w * c0
            for v, c in ind_terms.items():
                terms[v] = terms.get(v, 0.0) + w * c
        m = enc.nan[copy].get(f)
        if m is not None:  # NaN (missing) rows: their share goes to the NaN variable
            pn = marginal.missing or 0.0
            if forbid and marginal.nan_rows == 0:  # no row misses f: NaN as an empty interval
                forbidden.append(Linear((m,), (1.0,), EQ, 0.0, ("prob-forbid", copy, f, "nan")))
            # no missing row in the data: as unlikely as an empty interval, not free
            w = math.log(pn) * weight if pn > 0 else empty
            values.append(w)
            if w:
                terms[m] = terms.get(m, 0.0) + w
        return terms, const, max(values), forbidden


class CavityClauses(Pass):
    """Exclude learned data cavities (boxes with no data row) for both inputs."""

    name = "clause"
    query_kinds = frozenset({"pair", "change"})  # an anchored x1 is a data row already

    def __init__(self, clauses: Iterable[Clause]):
        self.clauses = list(clauses)

    def apply(self, compiled: Compiled) -> tuple[Compiled, Any]:
        enc = compiled.encoding
        cons = []
        used = 0
        for ci, clause in enumerate(self.clauses):
            feats = [lit.feature for lit in clause.literals]
            try:
                idx = [enc.ensemble.feature_index(n) for n in feats]
            except KeyError:
                continue
            copies = (0, 1) if any(f in enc.varying for f in idx) else (0,)
            added = False
            for copy in copies:
                con = clause_constraint(enc, clause, idx, copy, ("cavity", ci, copy))
                if con is not None:
                    cons.append(con)
                    added = True
            used += added
        enc.stats["clauses"] = used
        prob = compiled.problem
        if cons:
            prob = prob.with_soft_constraints(cons)
        return compiled.with_problem(prob), None


def box_ranks(enc: Encoding, f: int, lo: float, hi: float) -> tuple[int, int] | None:
    """The valid ranks [a, b] of feature f whose intervals lie inside [lo, hi) (as the
    library routes values: x >= lo fails the test at lo, x < hi passes the test at hi).
    Only whole intervals count, so the box can only shrink. None when no rank fits."""
    dom = enc.domains[f]
    if dom.codes is not None:
        inside = [r for r, c in enumerate(dom.codes) if lo <= c < hi]
        if not inside or inside != list(range(inside[0], inside[-1] + 1)):
            return None
        return inside[0], inside[-1]
    # an interval j = [t_{j-1}, t_j) is inside iff t_{j-1} >= lo and t_j <= hi
    ranks = []
    for r, j in enumerate(dom.valid):
        a, b = dom.edges(j)
        if a >= lo and b <= hi:
            ranks.append(r)
    if not ranks:
        return None
    return ranks[0], ranks[-1]


def clause_constraint(
    enc: Encoding, clause: Clause, idx: Sequence[int], copy: int, tag: tuple
) -> Linear | None:
    """sum of "x outside literal i" >= 1, over the copy's predicates; None if vacuous."""
    acc: dict[int, float] = {}
    const = 0.0
    for lit, f in zip(clause.literals, idx):
        ab = box_ranks(enc, f, lit.lo, lit.hi)
        if ab is None:
            return None  # the box holds no whole interval of f: it excludes nothing
        a, b = ab
        n = len(enc.domains[f].valid)
        if a == 0 and b == n - 1 and enc.nan[copy].get(f) is None:
            continue  # the literal holds for every value: "outside" is false
        ind = interval_indicators(enc, copy, f)
        if ind is None:
            continue
        # outside = 1 - sum_{r in [a, b]} indicator_r
        const += 1.0
        for r in range(a, b + 1):
            terms, c0 = ind[r]
            const -= c0
            for v, c in terms.items():
                acc[v] = acc.get(v, 0.0) - c
    items = [(v, c) for v, c in sorted(acc.items()) if c != 0.0]
    rhs = 1.0 - const
    if not items:
        return None  # constant: always true (or the box holds everything, ignored)
    return Linear(tuple(v for v, _ in items), tuple(c for _, c in items), GE, rhs, tag)


def check_data_mode(q: Query, data: Dataset | None) -> bool:
    """Does the query ask for data-aware passes? An ``InputError`` for an unknown mode or
    a data-aware mode without data."""
    mode = DataAwareMode(q.plan.data_aware) if q.plan.data_aware is not None else DataAwareMode.NONE
    if mode == DataAwareMode.NONE:
        return False
    if data is None:
        raise InputError(
            f"data-aware mode {mode.value!r} needs data ({spelled('data=', '--data FILE')})"
        )
    return True


def needs_clauses(q: Query) -> bool:
    return DataAwareMode(q.plan.data_aware).uses_clauses


def data_passes(q: Query, data: Dataset | None, clauses: Iterable[Clause] = ()) -> list[Pass]:
    """The data-aware passes of a query (``Plan.data_aware``) for a Dataset and the
    cavity clauses learned for it.

    Options (``Plan.options``): ``prob_alpha`` (Laplace smoothing, default 1),
    ``prob_empty`` ("smooth" or "forbid").
    """
    if not check_data_mode(q, data):
        return []
    opts = q.plan.options
    out: list[Pass] = []
    if needs_clauses(q):
        out.append(CavityClauses(clauses))
    if DataAwareMode(q.plan.data_aware).uses_prob:
        out.append(
            UtilityObjective(
                data.X,
                alpha=float(opts.value("prob_alpha")),
                empty=str(opts.value("prob_empty")),
            )
        )
    return out
