"""Test helpers (not tests): a brute-force sensitivity oracle and tiny ensembles built
directly in the Ensemble IR.

* ``brute_force_sensitive(ens, query)`` enumerates one value per threshold interval of
  every feature (shared features once, varied features once per copy) and evaluates the
  IR (``ens.raw`` / ``ens.proba``) on all of them, vectorised.
* ``random_ensemble(rng, ...)`` builds a small random XGBoost-like ensemble.
* ``subset_sum_ensemble(numbers, k)`` is the construction of the paper's hardness
  theorem (depth-1 trees): sensitive to ``{f'}`` iff a subset of ``numbers`` sums to k.

The interval representatives are computed here independently of
``treesens.compiler.domain`` (each interval of a feature is identified by how the
library's comparison routes the value at every threshold), so that a bug in the
domain code shows up as a disagreement; ``reps="domain"`` uses ``build_domain`` instead.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from treesens.compiler.domain import build_domain
from treesens.compiler.encode import resolve_features
from treesens.compiler.ensemble import (
    LOGISTIC,
    MISSING_ZERO,
    SOFTMAX,
    ZERO_BAND,
    Ensemble,
    Feature,
    ModelOrigin,
    Tree,
)
from treesens.compiler.kinds import resolve_condition
from treesens.compiler.query import ANY, Query, class_index
from treesens.compiler.replay import meets

MAX_ROWS = 4_000_000  # refuse enumerations larger than this (rows of the product)
CHUNK = 200_000

__all__ = [
    "feature_thresholds",
    "interval_values",
    "brute_force_witness",
    "brute_force_sensitive",
    "random_ensemble",
    "subset_sum_ensemble",
    "subset_sum_exists",
]


# ---------------------------------------------------------------------------------------
# the oracle
# ---------------------------------------------------------------------------------------
def feature_thresholds(ens: Ensemble) -> list[list[float]]:
    """Sorted distinct thresholds of every feature, over all numeric split nodes (a
    categorical feature naming its categories takes each of them: ``interval_values``)."""
    ths: list[set[float]] = [set() for _ in range(ens.n_features)]
    for t in ens.trees:
        for n in np.flatnonzero(t.feature >= 0).tolist():
            f = int(t.feature[n])
            if t.missing is not None and t.missing[n] == MISSING_ZERO:
                # LightGBM's zero band [-z, z] routed as missing: cut both of its edges
                z = ZERO_BAND
                edges = (
                    (np.nextafter(-z, -math.inf), z)
                    if ens.op == "<="
                    else (-z, np.nextafter(z, math.inf))
                )
                ths[f].update(float(e) for e in edges)
            if not t.is_categorical(n):
                ths[f].add(float(t.threshold[n]))
            elif not ens.features[f].categories:
                raise NotImplementedError("the oracle enumerates named categories only")
    return [sorted(s) for s in ths]


def _admissible(ens: Ensemble, feat: Feature, v: float) -> bool:
    if not math.isfinite(v) or v < feat.lb or v > feat.ub:
        return False
    return not (feat.integral and v != math.floor(v))


def _raw_candidates(ens: Ensemble, feat: Feature, thresholds: list[float]) -> list[float]:
    # an infinite threshold sends every finite value the same way: no cell of its own
    thresholds = [t for t in thresholds if math.isfinite(t)]
    out: list[float] = []
    for t in thresholds:
        t32 = np.float32(t)
        out += [
            t,
            float(t32),
            float(np.nextafter(t32, np.float32(np.inf))),
            float(np.nextafter(t32, np.float32(-np.inf))),
            float(np.nextafter(t, math.inf)),
            float(np.nextafter(t, -math.inf)),
            math.floor(t),
            math.ceil(t),
            math.floor(t) - 1.0,
            math.ceil(t) + 1.0,
        ]
    if thresholds:
        out += [math.floor(thresholds[0]) - 1.0, math.ceil(thresholds[-1]) + 1.0]
    else:  # a feature no split reads: two values, for a pair under x1.f < x2.f
        out += [0.0, 1.0]
    for b in (feat.lb, feat.ub):
        if math.isfinite(b):
            out += [b, math.ceil(b), math.floor(b)]
    if math.isfinite(feat.lb) and math.isfinite(feat.ub):
        out.append((feat.lb + feat.ub) / 2.0)
    vals = []
    for v in out:
        if not math.isfinite(v):
            continue
        c = float(ens.cast_value(v))
        if _admissible(ens, feat, c):
            vals.append(c)
        elif _admissible(ens, feat, v):  # a bound whose float32 value lies past it
            vals.append(v)
    return vals


def interval_values(
    ens: Ensemble, f: int, thresholds=None, reps: str = "independent"
) -> list[float]:
    """One admissible value per non-empty threshold interval of feature ``f``, and NaN
    last for a feature that may be missing (the library routes it by each node's
    missing-value rule, which ``ens.raw`` follows).

    ``reps="independent"``: many candidate values (each threshold, its float32/float64
    neighbours, integers around it, the bounds), one kept per routing signature (which
    side of each threshold the library's comparison sends it). ``reps="domain"``: the
    representatives of ``treesens.compiler.domain.build_domain``.
    """
    if thresholds is None:
        thresholds = feature_thresholds(ens)[f]
    feat = ens.features[f]
    nan = [math.nan] if feat.may_be_missing else []
    if feat.kind == "categorical" and feat.categories:  # every category within the bounds
        return [float(c) for c in range(len(feat.categories)) if feat.lb <= c <= feat.ub] + nan
    if reps == "domain":
        dom = build_domain(ens, f, thresholds)
        return [float(dom.reps[j]) for j in dom.valid] + nan
    if reps != "independent":
        raise ValueError(f"unknown reps mode {reps!r}")
    seen: dict[tuple[bool, ...], float] = {}
    for v in sorted(_raw_candidates(ens, feat, thresholds)):
        sig = tuple(ens.test_holds(v, t) for t in thresholds)
        seen.setdefault(sig, v)
    if not seen:
        raise ValueError(f"feature {feat.name!r} has no admissible value")
    return sorted(seen.values()) + nan


def _grid(values: list[list[float]]) -> np.ndarray:
    if not values:
        return np.zeros((1, 0))
    return np.array(list(itertools.product(*values)), dtype=np.float64).reshape(-1, len(values))


def _side_ok(ens: Ensemble, q: Query, X: np.ndarray, copy: int, other_class) -> np.ndarray:
    """Vectorised ``meets`` for one copy over the rows of X."""
    out = np.zeros(len(X), dtype=bool)
    for s in range(0, len(X), CHUNK):
        Xs = X[s : s + CHUNK]
        raw = ens.raw(Xs)
        proba = ens.proba(Xs)
        if ens.n_classes == 2 and ens.n_outputs == 1:
            g = q.gap.value
            if q.gap.kind == "margin" and ens.link == LOGISTIC:
                r = raw[:, 0]
                ok = r >= g if copy == 0 else r <= -g
            else:
                p = proba[:, 1]
                ok = p >= 0.5 + g if copy == 0 else p <= 0.5 - g
        else:
            ok = np.array(
                [meets(ens, q, proba[i], raw[i], copy, other_class) for i in range(len(Xs))],
                dtype=bool,
            )
        out[s : s + CHUNK] = ok
    return out


def cell_grid(ens: Ensemble, vary, reps: str = "independent", max_rows: int = MAX_ROWS):
    """One point per combination of threshold cells, as (X, ns, nv): row s * nv + v joins
    the s-th combination of the shared features with the v-th of the varied ones."""
    varying = sorted(resolve_features(ens, vary))
    shared = [f for f in range(ens.n_features) if f not in varying]
    ths = feature_thresholds(ens)
    vals = {f: interval_values(ens, f, ths[f], reps) for f in range(ens.n_features)}
    S = _grid([vals[f] for f in shared])
    V = _grid([vals[f] for f in varying])
    ns, nv = len(S), len(V)
    if ns * nv > max_rows:
        raise ValueError(f"enumeration too large: {ns} x {nv} rows")
    X = np.empty((ns * nv, ens.n_features))
    X[:, shared] = np.repeat(S, nv, axis=0)
    X[:, varying] = np.tile(V, (ns, 1))
    return X, ns, nv


def binary_gap_reached(ens: Ensemble, feature: str, gap: float) -> bool:
    """Whether the library's own predict, over one point per threshold cell, gives a pair
    differing only in ``feature`` with P(class 1) >= 0.5 + gap and <= 0.5 - gap."""
    X, ns, nv = cell_grid(ens, [feature])
    p = ens.replayer.predict_proba(X)[:, 1].reshape(ns, nv)
    return bool(np.any((p.max(axis=1) >= 0.5 + gap) & (p.min(axis=1) <= 0.5 - gap)))


def brute_force_witness(ens: Ensemble, query: Query, reps: str = "independent"):
    """A pair (x1, x2) meeting the query, found by enumeration, or None if there is none.

    Only plain queries are supported (no extra bounds or relations); the class ``any``
    for x2 is supported when c1 is explicit (then x2 must be another class than c1).
    """
    if query.bounds or query.relations:
        raise NotImplementedError("the oracle does not handle extra bounds or relations")
    resolve_condition(ens, query)  # same input errors as the pipeline
    X, ns, nv = cell_grid(ens, query.vary, reps)
    other = None
    if query.classes is not None and not (ens.n_classes == 2 and ens.n_outputs == 1):
        c1 = class_index(ens, query.classes[0])
        if c1 == ANY and class_index(ens, query.classes[1]) == ANY:
            raise NotImplementedError("the oracle needs an explicit c1 or c2")
        other = c1
    ok0 = _side_ok(ens, query, X, 0, other).reshape(ns, nv)
    ok1 = _side_ok(ens, query, X, 1, other).reshape(ns, nv)
    both = ok0.any(axis=1) & ok1.any(axis=1)
    if not both.any():
        return None
    s = int(np.flatnonzero(both)[0])
    i = int(np.flatnonzero(ok0[s])[0])
    j = int(np.flatnonzero(ok1[s])[0])
    return X[s * nv + i].copy(), X[s * nv + j].copy()


def brute_force_best_above(ens: Ensemble, vary) -> tuple[float, float]:
    """(b, A*) for a regressor's threshold form: a below-threshold b and the largest a with
    a pair f(x1) >= a, f(x2) <= b equal outside ``vary``, by enumerating every threshold
    cell. b lies between two cells' values, where float32 and float64 sums agree."""
    X, ns, nv = cell_grid(ens, vary)
    pred = ens.predict(X).reshape(ns, nv)
    hi, lo = pred.max(axis=1), pred.min(axis=1)
    values = np.unique(lo)
    k = len(values) // 2
    b = float(values[0] + 1.0) if k == 0 else float((values[k - 1] + values[k]) / 2)
    return b, float(hi[lo <= b].max())


def brute_force_largest_change(ens: Ensemble, vary, reps: str = "independent") -> float:
    """A regressor's largest change max f(x1) - f(x2) over pairs equal outside ``vary``,
    by enumerating every threshold cell (the IR's predictions)."""
    X, ns, nv = cell_grid(ens, vary, reps)
    pred = ens.predict(X).reshape(ns, nv)
    return float((pred.max(axis=1) - pred.min(axis=1)).max())


def brute_force_sensitive(ens: Ensemble, query: Query, reps: str = "independent") -> bool:
    """Is ``ens`` sensitive for ``query``, by enumerating every threshold interval?"""
    return brute_force_witness(ens, query, reps) is not None


# ---------------------------------------------------------------------------------------
# tiny ensembles
# ---------------------------------------------------------------------------------------
def _f32(x: float) -> float:
    return float(np.float32(x))


def _random_tree(
    rng: np.random.Generator,
    depth: int,
    pools: list[list[float]],
    n_out: int,
    leaf_scale: float,
    split_prob: float,
) -> tuple[list, list, list, list, list, list]:
    feature: list[int] = []
    threshold: list[float] = []
    left: list[int] = []
    right: list[int] = []
    default_left: list[bool] = []
    value: list[list[float]] = []

    def new_node() -> int:
        feature.append(-1)
        threshold.append(0.0)
        left.append(-1)
        right.append(-1)
        default_left.append(False)
        value.append([0.0] * n_out)
        return len(feature) - 1

    def grow(d: int) -> int:
        n = new_node()
        if d < depth and (d == 0 or rng.random() < split_prob):
            f = int(rng.integers(len(pools)))
            feature[n] = f
            threshold[n] = pools[f][int(rng.integers(len(pools[f])))]
            default_left[n] = bool(rng.random() < 0.5)
            lo = grow(d + 1)
            hi = grow(d + 1)
            left[n], right[n] = lo, hi
        else:
            value[n] = [_f32(rng.normal(0.0, leaf_scale)) for _ in range(n_out)]
        return n

    grow(0)
    return feature, threshold, left, right, default_left, value


def random_ensemble(
    rng,
    n_trees: int,
    depth: int,
    n_features: int,
    n_thresholds: int,
    n_classes: int = 2,
    *,
    leaf_scale: float = 0.6,
    split_prob: float = 0.8,
    intercept_scale: float = 0.2,
    integer_features: bool = False,
    op: str = "<",
    cast: str = "float32",
    bounded: bool = False,
    close_thresholds: bool = False,
) -> Ensemble:
    """A small XGBoost-like ensemble built directly in the IR.

    Logistic link (binary) or softmax (``n_classes`` > 2, tree i adds to class i % C),
    test ``float32(x) < t``, thresholds drawn per feature from a pool of
    ``n_thresholds`` float32 values (so trees share thresholds), float32 leaf values,
    ``replayer=None`` (the pipeline then checks witnesses against the IR itself).
    ``rng`` is a ``numpy.random.Generator`` or a seed.

    Other libraries' comparisons: ``op="<="`` and/or ``cast="float64"`` (then thresholds
    are doubles, not float32: scikit-learn compares float32(x) <= t, LightGBM x <= t).
    ``bounded``: each feature gets finite bounds (which may empty some intervals);
    ``close_thresholds``: each feature also gets a threshold just above its lowest one
    (the next float32 for XGBoost-like ensembles: an interval holding one input; else
    1e-9 above: an interval holding no float32 input, and one double for float64).
    The defaults draw the same random numbers as before these options existed.
    """
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    xgb_like = op == "<" and cast == "float32"
    pools = []
    for _ in range(n_features):
        if integer_features:
            raw = rng.integers(-4, 5, size=n_thresholds) + 0.5
        else:
            raw = np.round(rng.uniform(-2.0, 2.0, size=n_thresholds), 3)
        pool = {_f32(v) for v in raw} if xgb_like else {float(v) for v in raw}
        if close_thresholds:
            t = float(sorted(pool)[0])
            pool.add(
                _f32(np.nextafter(np.float32(t), np.float32(np.inf))) if xgb_like else t + 1e-9
            )
        pools.append(sorted(pool))
    trees = []
    multi = n_classes > 2
    for i in range(n_trees):
        f, th, lo, hi, dl, val = _random_tree(rng, depth, pools, 1, leaf_scale, split_prob)
        trees.append(
            Tree(
                feature=f,
                threshold=th,
                left=lo,
                right=hi,
                default_left=dl,
                value=np.array(val),
                outputs=(i % n_classes if multi else 0,),
            )
        )
    n_out = n_classes if multi else 1
    intercept = tuple(_f32(rng.normal(0.0, intercept_scale)) for _ in range(n_out))
    kind = "integer" if integer_features else "real"
    features = []
    for i in range(n_features):
        lb, ub = -math.inf, math.inf
        if bounded:
            a, b = sorted(float(v) for v in rng.uniform(-2.5, 2.5, size=2))
            lb, ub = (a, b) if not integer_features else (math.floor(a), math.ceil(b))
        features.append(Feature(f"f{i}", kind, lb, ub))
    features = tuple(features)
    return Ensemble(
        trees=tuple(trees),
        features=features,
        n_classes=n_classes,
        intercept=intercept,
        link=SOFTMAX if multi else LOGISTIC,
        op=op,
        cast=cast,
        origin=ModelOrigin("random", f"{n_trees}x{depth}"),
        replayer=None,
    )


def _stump(feature: int, threshold: float, no_value: float, yes_value: float) -> Tree:
    """A depth-1 tree: ``x < threshold`` -> ``yes_value`` (left), else ``no_value``."""
    return Tree(
        feature=[feature, -1, -1],
        threshold=[threshold, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True, False, False],
        value=np.array([[0.0], [yes_value], [no_value]]),
        outputs=(0,),
    )


def subset_sum_ensemble(numbers, k) -> Ensemble:
    """The paper's reduction from subset sum (Theorem, section 3).

    Boolean features f0..f{n-1} and f'; tree T_i splits on f_i: 0 if false, u_i if true;
    tree T' splits on f': -k-0.5 if false, -k+0.5 if true. The raw score is
    sum(u_i x_i) - k -+ 0.5, so with a margin gap in (0, 0.5) (e.g. 0.25) the ensemble is
    sensitive to {f'} iff some subset of ``numbers`` sums to ``k``.
    """
    numbers = [int(u) for u in numbers]
    n = len(numbers)
    trees = [_stump(i, 0.5, float(u), 0.0) for i, u in enumerate(numbers)]
    trees.append(_stump(n, 0.5, float(-k + 0.5), float(-k - 0.5)))
    features = tuple(Feature(f"f{i}", "binary", 0.0, 1.0) for i in range(n)) + (
        Feature("f'", "binary", 0.0, 1.0),
    )
    return Ensemble(
        trees=tuple(trees),
        features=features,
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        op="<",
        cast="float32",
        origin=ModelOrigin("subset-sum", f"{numbers} k={k}"),
        replayer=None,
    )


def subset_sum_exists(numbers, k) -> bool:
    """Does some subset of ``numbers`` (possibly empty) sum to ``k``? (plain DP)"""
    reach = {0}
    for u in numbers:
        reach |= {s + int(u) for s in reach}
    return int(k) in reach


class IRReplayer:
    """The IR as its own "library" (for ensembles built directly in the IR): its
    probabilities, raw scores and predictions are the Ensemble's."""

    library = "ir"

    def __init__(self, ens):
        self.ens = ens

    def predict_proba(self, X):
        return self.ens.proba(X)

    def predict_raw(self, X):
        return self.ens.raw(X)

    def predict(self, X):
        return self.ens.predict(X)
