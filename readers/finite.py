"""The numbers of a loaded model checked before anything computes with them: a NaN
threshold, a NaN / infinite leaf value or intercept, or a leaf so large that sums of leaves
lose all precision, is one InputError naming the file and the tree and node."""

from __future__ import annotations

import math

import numpy as np

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError

# the largest leaf magnitude accepted: far above any trained model's (saved campaign
# models reach 1e17), far below where sums of leaves and the encodings' big-M constants
# overflow or lose all precision
MAX_LEAF = 1e30


def check_finite(ens: Ensemble, where: str) -> None:
    """Raise InputError at the first number of ``ens`` that no encoding can use."""
    for k, b in enumerate(ens.intercept):
        if not math.isfinite(b):
            raise InputError(f"base score / intercept {k} is {b}, not a finite number", where)
    if not math.isfinite(ens.scale) or ens.scale == 0:
        raise InputError(f"tree weight {ens.scale} is not a finite nonzero number", where)
    if _all_plainly_finite(ens):
        return
    for t, tree in enumerate(ens.trees):
        split = tree.feature >= 0
        numeric = split.copy()
        if tree.categories is not None:
            numeric &= np.array([c is None for c in tree.categories], dtype=bool)
        bad = np.flatnonzero(numeric & np.isnan(tree.threshold))
        if len(bad):
            raise InputError(f"tree {t} node {int(bad[0])}: the split threshold is NaN", where)
        leaf_values = np.where(split[:, None], 0.0, tree.value)
        bad = np.flatnonzero((~np.isfinite(leaf_values) | (np.abs(leaf_values) > MAX_LEAF)).any(1))
        if len(bad):
            i = int(bad[0])
            v = tree.value[i][
                np.argmax(~np.isfinite(tree.value[i]) | (np.abs(tree.value[i]) > MAX_LEAF))
            ]
            raise InputError(
                f"tree {t} node {i}: leaf value {v:g} is not a finite number of magnitude "
                f"at most {MAX_LEAF:g}",
                where,
            )


def _all_plainly_finite(ens: Ensemble) -> bool:
    """Every threshold is a number and every node value (leaves and the rest) finite and
    at most MAX_LEAF: nothing to report, decided in one pass over all trees (the loop
    above, tree by tree, finds where a problem is; its checks are narrower, so a model
    passing this one passes them)."""
    if not ens.trees:
        return True
    thresholds = np.concatenate([t.threshold for t in ens.trees])
    values = np.concatenate([t.value.ravel() for t in ens.trees])
    with np.errstate(invalid="ignore"):
        return (
            not np.isnan(thresholds).any()
            and bool(np.isfinite(values).all())
            and (values.size == 0 or float(np.abs(values).max()) <= MAX_LEAF)
        )
