"""Sparse preprocessing output as the final model reads it. A OneHotEncoder (and a
ColumnTransformer under its ``sparse_threshold``) may output a sparse matrix, which leaves
its zeros out. XGBoost reads an entry left out as a missing value (an entry stored as 0
is a 0), so a one-hot column's 0 goes the node's missing side; scikit-learn and LightGBM
read it as 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...compiler.ensemble import Ensemble, Feature
from ...compiler.errors import UnsupportedModelError
from .fold import ColumnMap, node_routes

BIGGEST = float(np.finfo(np.float64).max)


def reads_absent_as_missing(final: Any) -> bool:
    """Whether the pipeline's final model reads a sparse matrix's absent entries as
    missing values (XGBoost's estimators)."""
    return type(final).__module__.split(".")[0] == "xgboost"


def as_model_input(out: Any, absent_missing: bool) -> np.ndarray:
    """The preprocessing's output as dense doubles: a sparse matrix's absent entries
    NaN where ``absent_missing``, else 0."""
    if not hasattr(out, "toarray"):
        return np.asarray(out, dtype=np.float64)
    if not absent_missing:
        return np.asarray(out.toarray(), dtype=np.float64)
    coo = out.tocoo()
    dense = np.full(coo.shape, np.nan)
    dense[coo.row, coo.col] = coo.data
    return dense


def refuse_zeros_read_apart(
    inner: Ensemble, features: Sequence[Feature], maps: Sequence[ColumnMap], where: str
) -> None:
    """Refuse a numeric column that the sparse output leaves out where it is 0, when a
    node of ``inner`` sends a missing value apart from 0 on it: its folded thresholds
    (the column's map, 0 a number) would route the inputs that map to 0 wrongly. A column
    whose map never reaches 0 (at any double, or at NaN for an imputed input), or
    whose nodes send 0 and a missing value alike, folds as it is."""
    for j, m in enumerate(maps):
        if m.forward is None:
            continue
        lo, hi, at_nan = m.forward(np.array([-BIGGEST, BIGGEST, np.nan])).tolist()
        if not (lo <= 0.0 <= hi or at_nan == 0.0):
            continue
        for t in inner.trees:
            nodes = np.flatnonzero(t.feature == j)
            nodes = nodes[[not t.is_categorical(int(n)) for n in nodes]]
            routes = node_routes(inner, t, nodes, np.array([0.0, np.nan]))
            if nodes.size and (routes[0] != routes[1]).any():
                raise UnsupportedModelError(
                    f"the preprocessing's output is sparse and XGBoost reads its zeros as "
                    f"missing values: the column of {features[m.user].name!r} is 0 at some "
                    "input, where a split sends a missing value apart from 0, which treesens "
                    "does not fold; make the output dense (OneHotEncoder(sparse_output=False), "
                    "ColumnTransformer(sparse_threshold=0))",
                    where,
                )
