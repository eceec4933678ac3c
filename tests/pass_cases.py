"""Test helpers (not tests) for the pass unit tests: a hand-built ensemble whose
affected leaves are known, the compiled problem of a query, every concrete pair of
inputs (one value per threshold interval), and a pass's verdict against the oracle."""

from __future__ import annotations

import itertools

import numpy as np

from treesens.compiler.encode import encode
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, Tree
from treesens.compiler.invert import values_for_pair
from treesens.compiler.ir import check_constraint
from treesens.compiler.passes import Compiled
from treesens.compiler.plan import DEFAULT_PASSES, Plan
from treesens.compiler.query import Gap, Query
from treesens.driver import solve_query
from treesens.tests.oracle import brute_force_sensitive, interval_values, random_ensemble

MARGIN = Gap(0.25, "margin")


def two_feature_ensemble() -> Ensemble:
    """Tree 0: x0 < 0.5 ? (x1 < 0.5 ? 1 : -1) : 2   (leaves 3, 4 below node 2; leaf 1).
    Tree 1: x1 < 1.5 ? 0.5 : -0.5                   (leaves 1, 2).
    Varying x1 affects leaves 3, 4 of tree 0 and both leaves of tree 1; leaf 1 of
    tree 0 has only x0 above it. Varying x0 affects every leaf of tree 0, none of tree 1."""
    t0 = Tree(
        feature=[0, -1, 1, -1, -1],
        threshold=[0.5, 0.0, 0.5, 0.0, 0.0],
        left=[2, -1, 3, -1, -1],
        right=[1, -1, 4, -1, -1],
        default_left=[True] * 5,
        value=np.array([[0.0], [2.0], [0.0], [1.0], [-1.0]]),
        outputs=(0,),
    )
    t1 = Tree(
        feature=[1, -1, -1],
        threshold=[1.5, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True] * 3,
        value=np.array([[0.0], [0.5], [-0.5]]),
        outputs=(0,),
    )
    return Ensemble(
        trees=(t0, t1),
        features=(Feature("x0", "real"), Feature("x1", "real")),
        n_classes=2,
        intercept=(0.25,),
        link=LOGISTIC,
        source="two-feature",
    )


def query(vary=("x1",), gap: Gap = MARGIN, passes=DEFAULT_PASSES, **kw) -> Query:
    """A question (``kw``: classes, bounds, ...) solved with ``passes``, one minute, no
    heuristic."""
    plan = Plan(passes=passes, timeout=60.0, options=(("heuristic", False),))
    return Query(vary=tuple(vary), gap=gap, plan=plan, **kw)


def compiled(ens: Ensemble, q: Query) -> Compiled:
    problem, enc = encode(ens, q)
    return Compiled(problem, enc)


def added(before: Compiled, after: Compiled) -> tuple:
    """The constraints a pass appended."""
    n = len(before.problem.constraints)
    assert after.problem.constraints[:n] == before.problem.constraints
    return after.problem.constraints[n:]


def concrete_pairs(ens: Ensemble, varying: frozenset[int]):
    """Every pair (x1, x2) of interval representatives that differs only in ``varying``."""
    values = [interval_values(ens, f) for f in range(ens.n_features)]
    shared = [f for f in range(ens.n_features) if f not in varying]
    varied = sorted(varying)
    for common in itertools.product(*(values[f] for f in shared)):
        for v1 in itertools.product(*(values[f] for f in varied)):
            for v2 in itertools.product(*(values[f] for f in varied)):
                x1, x2 = np.zeros(ens.n_features), np.zeros(ens.n_features)
                for f, v in zip(shared, common):
                    x1[f] = x2[f] = v
                for f, a, b in zip(varied, v1, v2):
                    x1[f], x2[f] = a, b
                yield x1, x2


def base_feasible_points(c: Compiled):
    """Variable values of every concrete pair that satisfies the problem ``c``."""
    enc = c.encoding
    for x1, x2 in concrete_pairs(enc.ensemble, enc.varying):
        vals = values_for_pair(enc, x1, x2, c.problem.n_vars)
        if all(check_constraint(k, vals) for k in c.problem.constraints):
            yield vals


# (seed, margin gap) of small random binary ensembles varying f0: sensitive, then not
VERDICT_CASES = [(1, 0.3), (2, 0.8), (3, 0.3), (4, 0.8)]


def verdict_case(seed: int, gap: float, passes: frozenset[str]) -> tuple[Ensemble, Query]:
    return random_ensemble(seed, 4, 3, 3, 3), query(("f0",), Gap(gap, "margin"), passes=passes)


def verdict(ens: Ensemble, q: Query) -> str:
    r = solve_query(ens, q)
    assert r.status in ("sensitive", "insensitive"), (r.status, r.error, r.message)
    return r.status


def oracle_verdict(ens: Ensemble, q: Query) -> str:
    return "sensitive" if brute_force_sensitive(ens, q) else "insensitive"
