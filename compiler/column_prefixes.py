"""0/1 columns whose names share a prefix (``site_north``, ``site_south``): the one-hot
encoding of one categorical feature, as far as names and data can tell."""

from __future__ import annotations

import numpy as np

from .ensemble import Ensemble

SEPARATORS = ("_", "=", ":", ".")  # what joins a feature's name to its category's


def binary_prefixes(ens: Ensemble, X: np.ndarray) -> dict[str, list[int]]:
    """The model's 0/1 columns (in the data ``X``) under each prefix of their names up
    to a separator: ``site_north`` is under ``site``."""
    names = ens.feature_names
    out: dict[str, list[int]] = {}
    for j in range(len(names)):
        if ens.features[j].kind == "categorical" or not np.isin(X[:, j], (0.0, 1.0)).all():
            continue
        for k, ch in enumerate(names[j]):
            if ch in SEPARATORS and 0 < k < len(names[j]) - 1:
                out.setdefault(names[j][:k], []).append(j)
    return out


def unseen_combinations(ens: Ensemble, X: np.ndarray, x: np.ndarray) -> list[tuple[str, ...]]:
    """The sets of 0/1 columns of one prefix that the input ``x`` sets to 1 together and
    no row of the data ``X`` does (``site_north`` and ``site_south`` of a ``get_dummies``
    encoding that the data never mixes); the largest such set per prefix, each once."""
    out: list[tuple[str, ...]] = []
    for cols in binary_prefixes(ens, X).values():
        on = [j for j in cols if x[j] == 1.0]
        if len(on) < 2 or (X[:, on] == 1.0).all(axis=1).any():
            continue
        found = tuple(ens.feature_names[j] for j in on)
        if not any(set(found) <= set(seen) for seen in out):
            out = [seen for seen in out if not set(seen) <= set(found)] + [found]
    return out
