"""Test helpers (not tests): tiny ensembles over every feature kind, built in the IR.

``kinds_ensemble(seed, ...)`` is ``oracle.random_ensemble``'s tree shapes over three
features of different kinds:

* f0 categorical, four named categories: every node on it is a categorical split
  sending a random proper subset of the codes "yes" (NaN "no", as the libraries do);
* f1 numeric and may be missing: each node's NaN goes to its default side, or (LightGBM
  like, ``op="<="``) the node's missing mode is drawn from NaN / zero band / none;
* f2 numeric, never missing.

The brute-force oracle (tests/oracle.py) enumerates every category, threshold interval,
the zero band and NaN, so it is the reference for each of them.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from treesens.compiler.ensemble import MISSING_NAN, MISSING_NONE, MISSING_ZERO, Ensemble, Feature
from treesens.tests.oracle import random_ensemble

CATEGORIES = ("a", "b", "c", "d")


def kinds_ensemble(
    seed: int,
    n_trees: int,
    depth: int,
    n_classes: int = 2,
    lightgbm_like: bool = True,
    n_thresholds: int = 3,
) -> Ensemble:
    """A random ensemble over a categorical f0, a may-be-missing f1 and a numeric f2."""
    rng = np.random.default_rng(10_000 + seed)
    kw = {"op": "<=", "cast": "float64"} if lightgbm_like else {}
    base = random_ensemble(seed, n_trees, depth, 3, n_thresholds, n_classes, leaf_scale=1.0, **kw)
    modes = [MISSING_NAN, MISSING_ZERO, MISSING_NONE] if lightgbm_like else [MISSING_NAN]
    trees = []
    for t in base.trees:
        n = len(t.feature)
        cats: list[frozenset[int] | None] = [None] * n
        missing = np.full(n, MISSING_NAN, dtype=np.int8)
        for k in np.flatnonzero(t.feature >= 0).tolist():
            f = int(t.feature[k])
            if f == 0:
                size = int(rng.integers(1, len(CATEGORIES)))
                cats[k] = frozenset(rng.choice(len(CATEGORIES), size, replace=False).tolist())
            elif f == 1:
                missing[k] = modes[int(rng.integers(len(modes)))]
        trees.append(replace(t, categories=tuple(cats), missing=missing))
    features = (
        Feature("f0", "categorical", categories=CATEGORIES, may_be_missing=True),
        Feature("f1", may_be_missing=True),
        Feature("f2"),
    )
    return replace(base, trees=tuple(trees), features=features)
