"""How far a library's float arithmetic can move a raw score from the exact sum of its
leaves: the margin every encoding relaxes its rows by, so that a proof over exact sums
holds for the library's own scores."""

from __future__ import annotations

import numpy as np

from .ensemble import Ensemble


def gap_relaxation(ens: Ensemble) -> float:
    """A bound on how far the library's raw score can be from the exact sum: 2^-20 of
    the largest possible sum (float64 sums, float32 leaf values and inputs), and for a
    library that adds float32 values one tree after the other, the rounding of every
    partial sum (``float32_sum_error``) when that is larger."""
    total = sum(float(np.abs(t.value).max()) if t.value.size else 0.0 for t in ens.trees)
    total = total * abs(ens.scale) + max((abs(b) for b in ens.intercept), default=0.0)
    relax = 2.0**-20 * total
    if ens.sums == "float32":
        relax = max(relax, float32_sum_error(ens))
    return relax + 1e-7


def float32_sum_error(ens: Ensemble) -> float:
    """A bound on the rounding of a float32 sum taken tree by tree: each addition errs by
    at most 2^-24 of the partial sum it makes, and the k-th partial sum of an output is at
    most |intercept| plus its first k trees' largest leaves (times the scale); the
    result's own rounding is one more such term."""
    u = 2.0**-24
    worst = 0.0
    for k in range(ens.n_outputs):
        partial = abs(ens.intercept[k]) if k < len(ens.intercept) else 0.0
        err = 0.0
        for t in ens.trees:
            if k in t.outputs and t.value.size:
                col = t.outputs.index(k)
                partial += abs(ens.scale) * float(np.abs(t.value[:, col]).max())
                err += u * partial
        worst = max(worst, err + u * partial)
    return worst
