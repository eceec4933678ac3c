"""The groups an audit's breakdown column falls into (``--by``, the report's protected
feature, a contract's ``by``): a column of a few values keeps one group per value; a
numeric column of more than MAX_VALUES values is cut into intervals of about equal counts
(its deciles), each labelled by the lowest and highest value of its rows."""

from __future__ import annotations

import numpy as np

# a numeric column with more values than this among the rows is broken down by intervals
# of about equal counts (its deciles) instead of value by value
MAX_VALUES = 12


def binned(values):
    """``values`` (a pandas Series) as group labels when numeric with more than
    MAX_VALUES values: a value a tenth of the rows or more take is a group of its own, the
    other rows are cut at their deciles, each interval named "[a, b]" by the lowest and
    highest value of its rows (a value alone when they are one), as an ordered category
    in the order of their values; missing values stay missing. The column itself
    otherwise (text, categories, booleans, few values)."""
    import pandas as pd

    if values.dtype.kind == "b" or isinstance(values.dtype, pd.CategoricalDtype):
        return values
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.isna().sum() > values.isna().sum() or numeric.nunique() <= MAX_VALUES:
        return values
    x = numeric.to_numpy(dtype=np.float64)
    seen = ~np.isnan(x)
    counts = numeric.value_counts()
    heavy = np.isin(x, counts[counts >= 0.1 * counts.sum()].index.to_numpy(dtype=np.float64))
    spans = {v: (v, v, heavy & (x == v)) for v in np.unique(x[heavy])}  # lowest: lo, hi, rows
    rest = seen & ~heavy
    if rest.any():
        cut = pd.qcut(x[rest], 10, labels=False, duplicates="drop") if len(set(x[rest])) > 1 else 0
        where = np.flatnonzero(rest)
        for b in np.unique(cut):
            rows = np.zeros(len(x), dtype=bool)
            rows[where[np.asarray(cut) == b]] = True
            spans[x[rows].min()] = (x[rows].min(), x[rows].max(), rows)
    order = sorted(spans)
    names = _span_names([spans[v][:2] for v in order])
    labels = np.full(len(x), None, dtype=object)
    for v, name in zip(order, names, strict=True):
        labels[spans[v][2]] = name
    return pd.Series(labels, index=values.index, name=values.name).astype(
        pd.CategoricalDtype(names, ordered=True)
    )


def group_names(keys: list) -> list[str]:
    """The summary's names of a column's groups: floats (a data column of few values, read
    as numbers) with 4 significant digits, more where two would read alike, as binned's
    intervals are named (0.1029, not 0.10294117647058824); any other value as str."""
    if keys and all(isinstance(k, (float, np.floating)) for k in keys):
        return _span_names([(k, k) for k in keys])
    return [str(k) for k in keys]


def _span_names(spans: list[tuple[float, float]]) -> list[str]:
    """Each interval's label with 4 significant digits, more where two would read alike."""
    for digits in range(4, 18):
        names = [
            f"{lo:.{digits}g}" if lo == hi else f"[{lo:.{digits}g}, {hi:.{digits}g}]"
            for lo, hi in spans
        ]
        if len(set(names)) == len(names):
            break
    return names
