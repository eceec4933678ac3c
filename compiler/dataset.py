"""The in-memory data set of a data-aware query (reading files is readers/data.py)."""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError


@dataclass(frozen=True, eq=False)
class TableRows:
    """Where a table's rows are, for messages: a CSV file's row at its line in the file
    (the header counted: ``d.csv:4``, as a details file's errors), another table's (a
    Parquet file, a DataFrame, an array) by number from 1 (``row 3``)."""

    source: str
    lines: np.ndarray | None = None  # each row's first line in the file

    def error(self, r: int, problem: str, column: str | None = None) -> InputError:
        """The error of a problem in row ``r`` (from 0), in ``column`` if one is named."""
        named = f"column {column!r}" if column is not None else ""
        if self.lines is not None:
            where = f"{self.source}:{int(self.lines[r])}"
            return InputError(f"{named}: {problem}" if named else problem, where)
        at = f"{named}, row {r + 1}" if named else f"row {r + 1}"
        return InputError(f"{at}: {problem}", self.source)


@dataclass(frozen=True, eq=False)
class Dataset:
    """Rows in the model's feature order (float64, NaN = missing)."""

    X: np.ndarray  # (n_rows, n_features)
    y: np.ndarray | None
    names: tuple[str, ...]  # the model's feature names, in order
    source: str = "<data>"
    # the data's columns that are neither features nor the label (an id, a protected
    # attribute kept out of the model): as read, for grouping an audit's summary
    extras: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    # the model's features the data has no column for, which no tree reads (each column
    # holds one value: readers/data.py, unread_value)
    filled: tuple[str, ...] = ()
    # the label column asked for, found (``y``) or not (None: none asked, an array's)
    label: str | None = None
    # a CSV file's line of each row (TableRows), None: rows by number
    lines: np.ndarray | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def rows(self) -> TableRows:
        return TableRows(self.source, self.lines)

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    def digest(self) -> str:
        """A hash of the rows (and labels): the key of cached cavity clauses."""
        if "digest" not in self._cache:
            h = hashlib.sha256()
            h.update(np.ascontiguousarray(self.X, dtype=np.float64).tobytes())
            h.update(repr(self.X.shape).encode())
            if self.y is not None:
                h.update(np.ascontiguousarray(self.y).tobytes())
            self._cache["digest"] = h.hexdigest()[:20]
        return self._cache["digest"]

    def prefer(self) -> dict[int, np.ndarray]:
        """Per feature, the values seen in the data, most frequent first (ties: nearest
        the median first): ``invert`` takes the first that fits the chosen interval."""
        if "prefer" not in self._cache:
            out: dict[int, np.ndarray] = {}
            for f in range(self.X.shape[1]):
                col = self.X[:, f]
                col = col[~np.isnan(col)]
                if col.size == 0:
                    continue
                vals, counts = np.unique(col, return_counts=True)
                med = float(np.median(col))
                order = np.lexsort((np.abs(vals - med), -counts))
                out[f] = vals[order]
            self._cache["prefer"] = out
        return self._cache["prefer"]

    def ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """(min, max - min) per feature; a constant feature gets range 1."""
        with warnings.catch_warnings():  # a column missing in every row: range 1
            warnings.simplefilter("ignore", RuntimeWarning)
            lo = np.nanmin(self.X, axis=0)
            hi = np.nanmax(self.X, axis=0)
        lo = np.where(np.isnan(lo), 0.0, lo)
        rng = np.where(np.isnan(hi), 1.0, hi - lo)
        return lo, np.where(rng > 0, rng, 1.0)
