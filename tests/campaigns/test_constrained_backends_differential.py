"""Checks under constraints on every installed backend: the differential campaign's
models (XGBoost, LightGBM and scikit-learn, with categorical and may-be-missing
features, binary and multiclass) and the missing-value campaign's (CatBoost with
nan_mode Min or Max, ONNX files of skl2onnx and onnxmltools, scikit-learn forests and
HistGradientBoosting, trained on data with NaN, every feature may be missing) asked with a relation on a varied feature (``!=`` too on
a category code), a relation on a shared one, and bounds on either input of any
feature, at the largest gap brute force reaches, just above it and at a fixed gap, on
CP-SAT, CBC, HiGHS, Gurobi, z3 and the box search, with the heuristic on or off. Brute
force asks the library's predict of every pair of a grid (two values of every routing
signature of the related feature, one of every other's, NaN too) that meets the
constraints: an "insensitive" answer must leave it no pair, and a "sensitive" one's pair
must meet the constraints and the gap by the library's predict."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from treesens.backends.registry import available
from treesens.compiler.errors import InputError
from treesens.compiler.passes.feature_constraints import constraint_violations
from treesens.compiler.plan import Plan
from treesens.compiler.query import ANY, FeatureBound, FeatureRelation, Gap, Query
from treesens.driver import solve_query
from treesens.tests.campaigns import test_library_max_gap_missing as missing
from treesens.tests.compiler.test_relations_in_boxes import _library_values
from treesens.tests.regressions import harness as H

SEEDS = int(os.environ.get("TS_CONSTRAINED_BACKEND_SEEDS", "2"))
SLOW_SEEDS = int(os.environ.get("TS_CONSTRAINED_BACKEND_SLOW_SEEDS", "60"))
BACKENDS = [b for b in ("cpsat", "cbc", "highs", "gurobi", "z3", "boxes") if available(b)]
ORDERS = ("<", "<=", ">", ">=", "==")
COMPARE = {
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
    "==": np.equal,
    "!=": np.not_equal,
}
MAX_PAIRS = 20_000_000  # shared rows x varied values squared


def _constraints(rng, ens) -> tuple[Query, dict[int, list[float]]]:
    """A query's varied features, relations and bounds, and the grid's values."""
    names = ens.feature_names
    k = min(ens.n_features, int(rng.integers(1, 3)))
    vary = tuple(sorted(rng.choice(names, size=k, replace=False).tolist()))
    relations, related = [], set()
    if rng.random() < 0.6:
        f = names.index(str(rng.choice(vary)))
        coded = ens.features[f].kind == "categorical"
        relations.append(FeatureRelation(names[f], 1, str(rng.choice(ORDERS + ("!=",) * coded)), 2))
        related.add(f)
    shared = [n for n in names if n not in vary]
    if shared and rng.random() < 0.25:  # holds whatever the shared value, NaN too
        op = str(rng.choice(["<=", ">=", "=="]))
        relations.append(FeatureRelation(str(rng.choice(shared)), 1, op, 2))
    values = {f: _library_values(ens, f, f in related) for f in range(ens.n_features)}
    bounds = []
    for _ in range(int(rng.integers(0, 3))):
        f = int(rng.integers(ens.n_features))
        ends = sorted(v for v in values[f] if not math.isnan(v))
        a, b = sorted(rng.choice(len(ends), size=2).tolist())
        lo, hi = ends[a], ends[b]
        u = rng.random()
        lo, hi = (-math.inf, hi) if u < 0.2 else (lo, math.inf) if u < 0.4 else (lo, hi)
        copies = [(1, 2), (1,), (2,)][int(rng.integers(3))]
        bounds.append(FeatureBound(names[f], float(lo), float(hi), copies))
    return Query(vary=vary, relations=tuple(relations), bounds=tuple(bounds)), values


class _Pairs:
    """The grid: shared rows x varied values, which pairs of varied values the
    constraints allow, which shared rows they allow, and the library's outputs."""

    def __init__(self, ens, q: Query, values):
        names = ens.feature_names
        varying = sorted(names.index(v) for v in q.vary)
        shared = [f for f in range(ens.n_features) if f not in varying]
        S, V = H._grid([values[f] for f in shared]), H._grid([values[f] for f in varying])
        self.ns, self.nv = len(S), len(V)
        self.fits = self.ns * self.nv <= H.MAX_ROWS and self.ns * self.nv**2 <= MAX_PAIRS
        if not self.fits:
            return
        self.allowed = np.ones((self.nv, self.nv), dtype=bool)
        self.rows = np.ones(self.ns, dtype=bool)
        for b in q.bounds:
            f = names.index(b.feature)
            if f in shared:  # both inputs hold the shared value
                col = S[:, shared.index(f)]
                self.rows &= (col >= b.lo) & (col <= b.hi)
                continue
            col = V[:, varying.index(f)]
            inside = (col >= b.lo) & (col <= b.hi)
            self.allowed &= (inside[:, None] if 1 in b.copies else True) & (
                inside[None, :] if 2 in b.copies else True
            )
        for r in q.relations:
            f = names.index(r.feature)
            if f in varying:
                col = V[:, varying.index(f)]
                u, w = col[:, None], col[None, :]
                a, c = (u, w) if r.left == 1 else (w, u)
                self.allowed &= COMPARE[r.op](a, c) & ~np.isnan(u) & ~np.isnan(w)
        self.X = np.empty((self.ns * self.nv, ens.n_features))
        self.X[:, shared] = np.repeat(S, self.nv, axis=0)
        self.X[:, varying] = np.tile(V, (self.ns, 1))
        rep = ens.replayer
        self.proba = np.asarray(rep.predict_proba(self.X), dtype=np.float64)
        self.raw = np.asarray(rep.predict_raw(self.X), dtype=np.float64)
        self.proba, self.raw = (a.reshape(len(self.X), -1) for a in (self.proba, self.raw))

    def best_binary_gap(self, kind: str) -> float:
        """The largest binary gap (probability or margin) an allowed pair reaches."""
        hi = self.raw[:, 0] if kind == "margin" else self.proba[:, 1] - 0.5
        lo = -self.raw[:, 0] if kind == "margin" else 0.5 - self.proba[:, 1]
        hi, lo = hi.reshape(self.ns, self.nv), lo.reshape(self.ns, self.nv)
        both = np.minimum(hi[:, :, None], lo[:, None, :])
        ok = self.allowed[None] & self.rows[:, None, None]
        return float(np.where(ok, both, -np.inf).max())

    def sensitive(self, ens, q: Query) -> bool:
        """Whether an allowed pair meets the query's gap (and classes)."""
        met = H.side_ok(ens, q.gap, self.proba, self.raw).reshape(self.ns, self.nv, -1)
        met = met.astype(np.float64)
        if ens.n_classes == 2 and ens.n_outputs == 1:
            pairs = [(0, 1)]
        else:
            C = ens.n_classes
            c1, c2 = (H._class_of(ens, c) for c in q.classes)
            pairs = [
                (a, b)
                for a in (range(C) if c1 == ANY else [c1])
                for b in (range(C) if c2 == ANY else [c2])
                if a != b
            ]
        reach = self.allowed.astype(np.float64)
        for a, b in pairs:
            hit = ((met[:, :, a] @ reach) * met[:, :, b]).sum(axis=1) > 0
            if (hit & self.rows).any():
                return True
        return False


def _queries(rng, ens, q: Query, pairs: _Pairs) -> list[Query]:
    """The query at a few gaps: binary, the largest an allowed pair reaches, the next
    double up and a fixed one; multiclass, a fixed ratio or margin for a class pair."""
    binary = ens.n_classes == 2 and ens.n_outputs == 1
    kind = "margin" if rng.random() < 0.25 else "prob"
    if not binary:
        c1, c2 = (int(c) for c in rng.choice(ens.n_classes, 2, replace=False))
        classes = [(c1, c2), (c1, ANY), (ANY, c2), (ANY, ANY)][int(rng.integers(4))]
        g = float(rng.choice([1.0, 1.5, 3.0, 20.0] if kind == "prob" else [0.05, 0.3, 1.0]))
        return [q.with_(gap=Gap(g, kind), classes=classes)]
    gaps = [float(rng.choice([0.0, 0.1, 0.3] if kind == "prob" else [0.0, 0.5, 1.5]))]
    best = pairs.best_binary_gap(kind)
    if 0.0 <= best < (0.4999 if kind == "prob" else math.inf):
        gaps += [best, float(np.nextafter(best, math.inf))]
    return [q.with_(gap=Gap(g, kind)) for g in gaps]


def _problems(ens, q: Query, pairs: _Pairs, rng) -> list[str]:
    truth = pairs.sensitive(ens, q)
    out = []
    for backend in BACKENDS:
        options = () if rng.random() < 0.5 else (("heuristic", False),)
        r = solve_query(ens, q.with_(plan=Plan(timeout=60.0, backend=backend, options=options)))
        said = f"{backend} {options} gap {q.gap} classes {q.classes}: {r.status}"
        if r.status == "insensitive" and truth:
            out.append(f"{said}, and brute force has a pair")
        elif r.status == "sensitive":
            w = r.witness_arrays
            x1, x2 = np.asarray(w.x1, dtype=np.float64), np.asarray(w.x2, dtype=np.float64)
            out += [f"{said}: {p}" for p in H.check_witness(ens, q, r)]
            out += [f"{said}: {p}" for p in constraint_violations(ens, q, x1, x2)]
        elif r.status == "error":
            refused = "does not describe this query" in (r.error or "")
            too_large = backend == "gurobi" and H.GUROBI_LIMIT in (r.error or "")
            if not (refused or too_large):
                out.append(f"{said}: {r.error}")
    return out


def _agrees(seed: int, folder) -> None:
    spec, ens, _ = H.campaign_model(seed, 991, folder)
    _asks_agree(ens, spec.family, np.random.default_rng([2026, 11, 29, 5, seed]))


def _library_agrees(family: str, seed: int, folder) -> None:
    """A binary classifier for even seeds, a 3-class one for odd (the campaign's model
    seed picks the kind); one whose grid is too large is skipped."""
    ens, kind, _, _ = missing._model(family, 501 + 3 * seed + seed % 2, folder)
    if math.prod(len(H.feature_values(ens, f)) for f in range(ens.n_features)) > 100_000:
        pytest.skip(f"{family} model {seed}: a grid too large to enumerate")
    _asks_agree(ens, family, np.random.default_rng([2026, 11, 29, 6, seed]))


def _asks_agree(ens, family: str, rng) -> None:
    problems = []
    for _ in range(4):
        q, values = _constraints(rng, ens)
        pairs = _Pairs(ens, q, values)
        if not pairs.fits:
            continue
        for qq in _queries(rng, ens, q, pairs):
            try:
                problems += _problems(ens, qq, pairs, rng)
            except InputError:  # constraints that leave no pair, or hold x1 to x2
                continue
    assert not problems, (family, problems)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_constrained_checks_on_every_backend_agree_with_brute_force(seed, tmp_path):
    _agrees(seed, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(SEEDS, SEEDS + SLOW_SEEDS))
def test_more_constrained_checks_on_every_backend_agree_with_brute_force(seed, tmp_path):
    _agrees(seed, tmp_path)


@pytest.mark.parametrize("family", missing.FAMILIES)
def test_constrained_checks_of_models_with_missing_values_agree_with_brute_force(family, tmp_path):
    _library_agrees(family, 0, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("family", missing.FAMILIES)
@pytest.mark.parametrize("seed", range(1, 1 + SLOW_SEEDS))
def test_more_constrained_checks_of_models_with_missing_values_agree(family, seed, tmp_path):
    _library_agrees(family, seed, tmp_path)
