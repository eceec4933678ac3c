"""An encoder's codes as a HistGradientBoosting model's categorical splits read them.
Its trees number a categorical feature's categories by the raw values it saw at fit
(``Feature.category_values``: [0, 2, 3] when code 1 was absent from the training data),
and predict routes any other value (a category the data lacked, a negative
``unknown_value`` or ``encoded_missing_value``) as a missing value."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ...compiler.ensemble import Ensemble
from .fold import ColumnMap


def as_known_categories(inner: Ensemble, j: int, m: ColumnMap) -> ColumnMap:
    """Column ``j``'s map with each encoder value as the index of that value among the
    categories ``inner`` reads on it (NaN: one it routes as missing); other columns as
    they are."""
    feat = inner.features[j]
    if m.values is None or feat.kind != "categorical" or feat.category_values is None:
        return m
    index = {float(v): k for k, v in enumerate(feat.category_values) if _number(v)}

    def known(v: float | None) -> float | None:
        if v is None:
            return None
        return float(index.get(v, np.nan)) if not math.isnan(v) else v

    return replace(m, values=tuple(known(v) for v in m.values), missing=known(m.missing))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
