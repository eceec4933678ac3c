"""Test helper (not tests): an independent per-row brute force for the row-level audit.

For each row r: x2 = r with the features F set to every combination of one value per
threshold interval (``tests/oracle.py``'s independent interval values), scored with the
library's predict; r is flippable iff some x2 meets the flip condition.
"""

from __future__ import annotations

import itertools

import numpy as np

from treesens.compiler.audit import Target
from treesens.compiler.encode import resolve_features
from treesens.tests.oracle import interval_values


def _predict(ens):
    return ens.replayer.predict_proba if ens.replayer is not None else ens.proba


def brute_force_flippable(ens, X, vary, target: Target) -> list[bool]:
    """Per row: does some x2 (r with F set to one value per threshold interval of each
    feature in F) meet the flip condition, by the library's predict?"""
    F = sorted(resolve_features(ens, vary))
    vals = [interval_values(ens, f) for f in F]
    grid = np.array(list(itertools.product(*vals)), dtype=float)
    predict = _predict(ens)
    m = len(grid)
    P0 = predict(X)
    cand = np.repeat(X, m, axis=0)
    cand[:, F] = np.tile(grid, (len(X), 1))
    P = predict(cand)
    out = []
    for i, p in enumerate(P0):
        Pi = P[i * m : (i + 1) * m]
        g = target.gap.value
        if len(p) == 2:
            ok = Pi[:, 1] <= 0.5 - g if p[1] >= 0.5 else Pi[:, 1] >= 0.5 + g
        else:
            d = int(np.argmax(p))
            classes = [c for c in range(len(p)) if c != d]
            if target.cls is not None:
                classes = [c for c in classes if c == target.cls]
            ok = np.zeros(m, dtype=bool)
            for c in classes:
                ok |= Pi[:, c] >= g * np.delete(Pi, c, axis=1).max(axis=1)
        out.append(bool(ok.any()))
    return out
