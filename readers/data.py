"""Data for data-aware queries: a CSV (or Parquet) file, or a DataFrame, with a label column.

Columns are matched to the model's features by name: every feature a tree reads needs a
column of its name (one no tree reads may have none: ``unread_absent``; for a LightGBM model, whitespace in a column name may stand for the "_" LightGBM
puts in its place when fitted on a DataFrame). Only a model without names of its own (generic names: f0,
Column_0, x0, ...) has its columns taken in order (the label column left out), when the counts match. The label
column may be absent only under its default name, ``label``. Every row of a CSV has as
many fields as its header. Values must be numbers; a categorical feature that declares
category names may also use the names. A missing value is accepted only for a feature
that may be missing (declared, or made so by the data: readers/load.py,
``missing_from_data``). Every problem is an ``InputError`` naming the file (and the
line / column / row).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..compiler.dataset import Dataset, TableRows
from ..compiler.errors import (
    InputError,
    TreesensWarning,
    name_list,
    near_matches,
    say_note,
    spelled,
)
from .formats.registry import generic_names
from .table_files import csv_header, file_stat, is_parquet, read_table, table_rows

# the label column's name when none is given: a data file without it has no labels
DEFAULT_LABEL = "label"
# a column the model does not use, of at most this many values, may be a label (as many
# as an audit's --by groups by value, questions/audit_groups.py)
LABEL_VALUES = 12


_LOADED: dict[tuple, Dataset] = {}


def _within_float32(vals: np.ndarray, name: str, rows: TableRows) -> None:
    """A model that reads its inputs as float32 (XGBoost, scikit-learn) takes no value
    beyond float32's range: it would be infinite to the library, which refuses it."""
    with np.errstate(over="ignore"):
        over = np.isinf(vals.astype(np.float32))
    if over.any():
        r = int(np.flatnonzero(over)[0])
        raise rows.error(
            r,
            f"{vals[r]:g} is beyond float32's range (about 3.4e38), in which the model reads "
            "its inputs",
            name,
        )


def label_column(label) -> str | None:
    """``label`` as a column's name, or None (the data has no label column). Anything
    else is an InputError: ``label=0`` read as no label, where it may mean a class (which
    ``classes`` names) or a column named 0 (``"0"``: columns are named by text)."""
    if label is None or isinstance(label, str):
        return label
    raise InputError(
        f"label: the data's label column, a name (a text; None: no label column), not "
        f"{label!r} (a column named so is {str(label)!r}; the classes asked about are classes=)"
    )


def load_data(data, ens, label: str | None = DEFAULT_LABEL, *, missing_ok: bool = False) -> Dataset:
    """A Dataset for ``ens`` from a path (CSV / Parquet), a pandas DataFrame, an array
    with the features in model order, or a Dataset (returned as it is). ``missing_ok``:
    a missing value is taken in any column (to find the columns that hold one), not only
    in those of features that may be missing."""
    label = label_column(label)
    if isinstance(data, Dataset):
        if data.names != tuple(ens.feature_names):
            raise InputError("the data set was loaded for a model with other features", data.source)
        return data
    if isinstance(data, (str, Path)):
        path = Path(data)
        st = file_stat(path)
        key = (
            str(path.resolve()),
            st.st_mtime_ns,
            st.st_size,
            label,
            tuple(ens.feature_names),
            tuple((f.kind, f.categories) for f in ens.features),
        )
        if key not in _LOADED:
            frame = read_table(path)
            header = str(path) if is_parquet(path) else f"{path}:1"
            _LOADED[key] = _from_frame(frame, ens, label, table_rows(path, len(frame)), header)
        ds = _LOADED[key]
        if ds.source != str(path):  # a cached read of the same file, named as given now
            ds = replace(ds, source=str(path))
        return _checked(ds, ens, missing_ok)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(data, pd.DataFrame):
        return _checked(_from_frame(data, ens, label, TableRows("<DataFrame>")), ens, missing_ok)
    arr = np.asarray(data)
    if arr.ndim != 2:
        raise InputError(f"data must be a table (2-d), got {not_a_table(data, arr)}")
    import pandas as pd

    named = ens.columns.array_names(arr.shape[1]) if ens.columns is not None else None
    if named is None and arr.shape[1] != ens.n_features:
        raise InputError(
            f"an array of {arr.shape[1]} columns for a model of {ens.n_features} features (an "
            "array's columns are the model's features, in order; give a DataFrame to match "
            "columns by name)",
            "<array>",
        )
    cols = named or list(ens.feature_names)
    frame = pd.DataFrame(arr, columns=cols)
    return _checked(_from_frame(frame, ens, None, TableRows("<array>")), ens, missing_ok)


def _checked(ds: Dataset, ens, missing_ok: bool) -> Dataset:
    """``ds``, unless a column of a feature that may not be missing holds a missing value
    (``missing_ok``: any column may). A feature the data lacks (``unread_absent``) takes
    the value ``ens``'s bounds give it (a cached read may have had others)."""
    fills = {ds.names.index(n): unread_value(ens.features[ds.names.index(n)]) for n in ds.filled}
    if any(ds.X[0, f] != v for f, v in fills.items()):
        X = ds.X.copy()
        for f, v in fills.items():
            X[:, f] = v
        X.setflags(write=False)
        ds = replace(ds, X=X, _cache={})
    if missing_ok:
        return ds
    for f in np.flatnonzero(np.isnan(ds.X).any(axis=0)).tolist():
        if not ens.features[f].may_be_missing:
            raise missing_value_error(
                ds.rows,
                ds.names[f],
                np.flatnonzero(np.isnan(ds.X[:, f])),
                "drop those rows or declare the feature as possibly missing (a details "
                "file's missing column)",
            )
    return ds


def data_columns(data) -> tuple[list[str], str]:
    """The column names of data (a CSV / Parquet path, a DataFrame or a Dataset), and
    where they are for messages (``file:1``, the CSV header line)."""
    if isinstance(data, Dataset):
        return list(data.names), data.source
    if isinstance(data, (str, Path)):
        path = Path(data)
        file_stat(path)
        if is_parquet(path):
            return [str(c).strip() for c in read_table(path).columns], str(path)
        return csv_header(path), f"{path}:1"
    if hasattr(data, "columns"):
        return [str(c).strip() for c in data.columns], "<DataFrame>"
    raise InputError(
        f"data given as {type(data).__name__} has no column names (give a file or a DataFrame)"
    )


def feature_columns(
    cols: list[str], label: str | None, where: str, features: Iterable[str] = ()
) -> list[str]:
    """The columns other than the label column. The label column may be absent only under
    its default name (a file without labels); a label named by the user must be there."""
    if label and label not in cols:
        if label != DEFAULT_LABEL:
            raise InputError(no_label(label, cols, set(features)), where)
        return list(cols)
    return [c for c in cols if c != label]


def no_label(label: str, cols: list[str], features: set[str]) -> str:
    """The error of a label column not in the data: the columns that are not the model's
    features (``features``; none known: all columns) are where the label column is, so
    the guess is among them, a name near or, with no name near, the few there are."""
    others = [c for c in cols if c not in features]
    near = near_matches(label, others) or (others if features and len(others) <= 3 else [])
    guess = f" (did you mean {', '.join(map(repr, near))}?)" if near else ""
    if not features:
        listed = f"the columns: {name_list(cols)}"
    elif others:
        listed = f"the columns not the model's features: {name_list(others)}"
    else:
        listed = f"every column is a feature of the model ({len(cols)} columns)"
    return f"no label column {label!r}{guess} ({listed})"


def _from_frame(df, ens, label, rows: TableRows, header: str | None = None) -> Dataset:
    """The data set of a frame, missing values (NaN) in any column (``_checked`` says
    which may hold them); ``rows`` says where its rows are for messages."""
    import pandas as pd

    where = rows.source
    cols = [str(c).strip() for c in df.columns]
    dup = next((c for i, c in enumerate(cols) if c in cols[:i]), None)
    if dup is not None:  # a CSV's header is checked so when read (table_files.py)
        raise InputError(f"column name {dup!r} appears twice", where)
    df = df.copy()
    df.columns = cols
    if ens.columns is not None:  # the user's columns are not the model's (one-hot groups)
        df = ens.columns.user_frame(df, rows)
        cols = list(df.columns)
    feature_columns(cols, label, header or where, ens.feature_names)
    y = None
    if label and label in cols:
        y = df[label].to_numpy()
        df = df.drop(columns=[label])
        cols = [c for c in cols if c != label]
    if len(df) == 0:
        raise InputError("the data has no rows", where)
    names = list(ens.feature_names)
    spaced = [re.sub(r"\s", "_", c) for c in cols]
    extras: dict[str, np.ndarray] = {}
    if (absent := unread_absent(ens, cols)) is not None:
        extras = {c: df[c].to_numpy() for c in cols if c not in names}
        df = df[[n for n in names if n not in absent]]
    elif (
        ens.origin is not None
        and ens.origin.format == "lightgbm"
        and len(set(spaced)) == len(spaced)
        and (absent := unread_absent(ens, spaced)) is not None
    ):
        extras = {c: df[c].to_numpy() for c, s in zip(cols, spaced) if s not in names}
        df.columns = spaced  # LightGBM turns the whitespace in a fitted frame's names into _
        df = df[[n for n in names if n not in absent]]
    elif len(cols) == len(names) and names_are_generic(names) and not set(cols) & set(names):
        df.columns = names  # a model without names of its own: the columns in order
        absent = []
    else:
        raise _mismatch(names, cols, label if y is not None else None, label, where)
    X = np.empty((len(df), len(names)), dtype=np.float64)
    for f, name in enumerate(names):
        feat = ens.features[f]
        if name in absent:  # no tree reads it: any value serves
            X[:, f] = unread_value(feat)
            continue
        col = df[name]
        if pd.api.types.is_bool_dtype(col) and _bool_categories(feat):
            vals = _categories(col.astype(object).map(_bool_name), feat, name, rows)
        elif pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
            vals = category_codes(vals, np.ones(len(vals), dtype=bool), feat, name, rows)
        else:
            vals = _categories(col, feat, name, rows)
        if np.isinf(vals).any():
            raise rows.error(int(np.flatnonzero(np.isinf(vals))[0]), "infinite value", name)
        if ens.cast == "float32":
            _within_float32(vals, name, rows)
        X[:, f] = vals
    X.setflags(write=False)
    return Dataset(X, y, tuple(names), where, extras, tuple(absent), label, rows.lines)


def read_features(ens) -> frozenset[int]:
    """The features some tree of the model splits on (by index)."""
    found = [np.unique(t.feature[t.feature >= 0]) for t in ens.trees]
    return frozenset(np.unique(np.concatenate(found)).tolist() if found else ())


def unread_absent(ens, cols: list[str]) -> list[str] | None:
    """The model's features that no tree reads and the data's columns ``cols`` lack (by
    name), when every feature a tree reads has its column: such a feature needs no data
    (no value of it moves a prediction) and its rows take ``unread_value``. None: a
    feature a tree reads has no column, or no feature has one (the columns may then name
    a generic model's features in order), or a column differs from a missing feature's
    name in case or separators only (``Mean_Radius``: a slip the error names)."""
    names = ens.feature_names
    have = set(cols)
    missing = [i for i, n in enumerate(names) if n not in have]
    if not missing:
        return []
    if len(missing) == len(names) or read_features(ens) & set(missing):
        return None
    others = [c for c in cols if c not in set(names)]
    if any(near_matches(names[i], others, 1, loose=False) for i in missing):
        return None  # a column named but for case or separators: the error's did-you-mean
    return [names[i] for i in missing]


def unread_value(feat) -> float:
    """The value a feature that no tree reads and the data lacks takes in every row (so
    in a pair found with the data): 0, or the bound of its declared range nearest 0."""
    v = min(max(0.0, feat.lb), feat.ub)
    if feat.integral and not float(v).is_integer():
        v = math.ceil(v) if math.ceil(v) <= feat.ub else math.floor(v)
    return float(v)


def missing_value_error(rows: TableRows, name: str, missing: np.ndarray, advice: str):
    """The error of a column holding missing values (``missing``: their rows), at the
    first such row, saying how many there are and ``advice``."""
    many = f"{missing.size} row{'s' if missing.size != 1 else ''} in all"
    return rows.error(int(missing[0]), f"missing value (NaN; {many}); {advice}", name)


# a first column without a name: the index pandas' to_csv writes by default
INDEX_COLUMNS = ("", "Unnamed: 0")
INDEX_HINT = (
    "; the first column, without a name, is a DataFrame's index, which to_csv writes "
    "unless told not to: write the data with to_csv(path, index=False)"
)


def _index_text(ds: Dataset) -> str:
    """What a note says of an unnamed first column the model does not use: the index
    pandas' to_csv writes by default (else "")."""
    index = next((c for c in ds.extras if c in INDEX_COLUMNS), None)
    if index is None:
        return ""
    return f"; {index!r} is a DataFrame's index, which to_csv(path, index=False) leaves out"


def data_notes(ds: Dataset) -> list[str]:
    """Notes on the data's columns: those the model does not use, and the features it
    lacks that no tree reads (the value their rows take)."""
    notes = []
    if ds.extras:
        cols = name_list(map(repr, ds.extras))
        notes.append(
            f"{ds.source}: columns the model does not use (an audit can group by them): "
            f"{cols}{unnamed_label_text(ds)}{_index_text(ds)}"
        )
    if ds.filled:
        values = [ds.X[0, ds.names.index(n)] for n in ds.filled]
        if len(values) == 1:
            held, any_value = f"{values[0]:g}", "any value gives"
        else:
            held = name_list(f"{n!r} = {v:g}" for n, v in zip(ds.filled, values))
            any_value = "any values give"
        notes.append(
            f"{ds.source}: no column for {name_list(map(repr, ds.filled))}, which no tree "
            f"reads: every row holds {held} there, as a pair found does ({any_value} the "
            "same predictions)"
        )
    return notes


def label_like(ds: Dataset) -> dict[str, int]:
    """Where the data has no column of the label's default name (and none was named): its
    columns the model does not use that look like a label, of 2 to ``LABEL_VALUES``
    values (name -> how many), so that a note can say which (no answer reads labels)."""
    if ds.y is not None or ds.label != DEFAULT_LABEL:
        return {}
    import pandas as pd

    counts = {c: int(pd.Series(v).nunique()) for c, v in ds.extras.items()}
    return {c: n for c, n in counts.items() if 1 < n <= LABEL_VALUES}


def unnamed_label_text(ds: Dataset) -> str:
    """The data note's words on the columns that look like the label (``label_like``):
    ``; no column is named 'label', the label column's default name: 'income' (2
    values) looks like the label, which no answer reads (--label income names it; in
    Python label='income')``; "" where none does."""
    like = label_like(ds)
    if not like:
        return ""
    which = " or ".join(f"{c!r} ({n} values)" for c, n in like.items())
    first = next(iter(like))
    return (
        f"; no column is named {DEFAULT_LABEL!r}, the label column's default name: {which} "
        f"looks like the label, which no answer reads "
        f"({spelled(f'label={first!r}', f'--label {first}')} names it)"
    )


def say_data_notes(*datasets: Dataset) -> None:
    """The data sets' notes (:func:`data_notes`), each once, as DataNote warnings (once
    per session under Python's default filter; within ``notes_once``, once in all),
    whichever route read the data: the CLI prints them as ``note: ...`` lines."""
    for note in dict.fromkeys(n for ds in datasets for n in data_notes(ds)):
        say_note(note)


def refuse_details_as_data(cols: list[str], names: list[str], where: str) -> None:
    """Columns ``feature`` and ``name`` and none of the model's: a details file given as
    data, which a model of generic names would otherwise take as naming its features."""
    if {"feature", "name"} <= set(cols) and not set(names) & set(cols):
        raise InputError(
            "a details file (feature,name,lb,ub: the features' names and bounds), not data: "
            "give it with --details (details=)",
            where,
        )


def _mismatch(names: list[str], cols: list[str], found: str | None, label, where: str):
    """The error for data whose columns do not name the model's features (columns are
    matched by name; by position only for a model whose names are generic)."""
    refuse_details_as_data(cols, names, where)
    missing = [n for n in names if n not in cols]
    extra = [c for c in cols if c not in names]
    others = (
        f"; the data's columns not in the model: {name_list(map(repr, extra))}" if extra else ""
    )
    position = (
        "; columns are matched by name, not by position: rename them to the model's features"
        if len(cols) == len(names)
        else ""
    )
    # no feature's column found at all: the data of another model, whose names are near
    # the model's only by chance ('age' for 'a'), unless they differ only in case
    loose = len(missing) < len(names)
    near = [(n, m[0]) for n in missing if (m := near_matches(n, extra, 1, loose=loose))]
    guess = f"; did you mean {name_list(f'{c!r} for {n!r}' for n, c in near)}?" if near else ""
    said = "" if label is None else f"; label column {label!r} "
    said += ("found" if found is not None else "not found") if label is not None else ""
    if looks_like_values(cols):  # a file without its header row
        guess += "; its first line holds numbers, not column names: it needs a header row"
    return InputError(
        f"the data does not match the model: no column for feature(s) "
        f"{name_list(map(repr, missing))} "
        f"({len(cols)} feature columns for {len(names)} features{others}{said}){position}{guess}",
        where,
    )


def looks_like_values(cols: list[str]) -> bool:
    """Are these column names numbers, not all of them whole (``17.99``, ``0.1184``): a
    file's first row of values read as its header? (Names ``1, 2, 3`` may be chosen.)"""
    return bool(cols) and all(is_number(c) for c in cols) and not all(c.isdigit() for c in cols)


def is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def names_are_generic(names: list[str]) -> bool:
    """Are these the placeholder names a library gives (f0, Column_0, x0, ...), i.e. does
    the model have no feature names of its own?"""
    return any(names == [p.format(i) for i in range(len(names))] for p in generic_names())


def _bool_categories(feat) -> bool:
    """Are a categorical feature's categories the booleans (an encoder fitted on a bool
    column)? A bool column's values are then those categories, read by name."""
    return (
        feat.kind == "categorical"
        and bool(feat.categories)
        and set(feat.categories)
        <= {
            "False",
            "True",
        }
    )


def _bool_name(v):
    return str(bool(v)) if isinstance(v, (bool, np.bool_)) else np.nan


def _categories(col, feat, name: str, rows: TableRows) -> np.ndarray:
    """Map category names to codes (a categorical feature with declared names)."""
    cats = list(feat.categories or ())
    out = np.empty(len(col), dtype=np.float64)
    number = np.zeros(len(col), dtype=bool)  # a number, not a category's name
    index = {c: i for i, c in enumerate(cats)}
    for i, v in enumerate(col.tolist()):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out[i] = index.get("nan", np.nan)  # a category learned from missing values
            continue
        if isinstance(v, (int, float, np.integer, np.floating)):
            number[i] = True
            try:
                out[i] = float(v)
            except OverflowError:  # an integer of hundreds of digits: infinite as a float
                out[i] = math.inf if v > 0 else -math.inf
            continue
        s = str(v).strip()
        if s in index:
            out[i] = float(index[s])
            continue
        try:
            out[i] = float(s)
            number[i] = True
            continue
        except ValueError:
            pass
        if cats:
            known = f"{', '.join(cats[:10])}{' ...' if len(cats) > 10 else ''}"
            raise rows.error(i, f"unknown category {s!r} (known: {known})", name)
        raise rows.error(i, f"{s!r} is not a number", name)
    return category_codes(out, number, feat, name, rows)


def category_codes(
    vals: np.ndarray, number: np.ndarray, feat, name: str, rows: TableRows
) -> np.ndarray:
    """The numbers (``number``: which entries) of a column of a categorical feature that
    names its categories, as category codes. Categories named by numbers (a model fitted
    on raw categories {0, 1, 5, 8, 9}, say) take the raw values, mapped to their codes
    0..n-1; other categories take the codes themselves. A number that is neither is an
    error naming the row. NaN is the category "nan" (learned from missing values) where
    there is one, else stays: missing."""
    cats = feat.categories
    if feat.kind != "categorical" or not cats:
        return vals
    which = number & ~np.isnan(vals)
    raw = _numeric_categories(cats)
    if raw is None:
        ok = (vals == np.floor(vals)) & (vals >= 0) & (vals < len(cats))
        what = f"category code {{:g}} is out of range 0..{len(cats) - 1}"
        codes = vals
    else:
        order = np.argsort(raw)
        pos = np.clip(np.searchsorted(raw[order], vals), 0, len(raw) - 1)
        ok = raw[order][pos] == vals
        what = "{:g} is not one of the model's categories"
        codes = np.where(ok, order[pos], vals).astype(np.float64)
    bad = np.flatnonzero(which & ~ok)
    if bad.size:
        r = int(bad[0])
        raise rows.error(
            r,
            f"{what.format(vals[r])} ({name_list(cats)}; "
            f"{bad.size} row{'s' if bad.size > 1 else ''} in all)",
            name,
        )
    if raw is None and which.any():
        _warn_codes(name, cats, rows.source)
    out = np.where(which, codes, vals)
    if "nan" in cats:  # a missing value is the category learned from missing values
        out[np.isnan(out)] = float(list(cats).index("nan"))
    return out


def _warn_codes(name: str, cats, where: str) -> None:
    """Numbers in the column of a feature whose categories are names are read as the
    model's codes, in its order: a coding of the user's own (Nord=0, Sud=1, ...) would
    be read silently as other categories. An array has no names to give: no warning."""
    if where == "<array>":
        return
    shown = ", ".join(f"{i}={c}" for i, c in enumerate(list(cats)[:6]))
    warnings.warn(
        f"{where}: column {name!r} holds numbers where the model names its categories: "
        f"read as the model's category codes ({shown}{', ...' if len(cats) > 6 else ''}); "
        f"if they are a coding of your own, write the category names instead",
        TreesensWarning,
        stacklevel=2,
    )


def _numeric_categories(cats) -> np.ndarray | None:
    """The categories as numbers, when every name is one (distinct and finite, but for
    one "nan": the category an encoder learned from missing values, which a missing value
    in the data is); else None."""
    try:
        raw = np.array([float(c) for c in cats], dtype=np.float64)
    except ValueError:
        return None
    known = raw[~np.isnan(raw)]
    if len(raw) - len(known) > 1 or not np.isfinite(known).all() or not known.size:
        return None
    return raw if len(np.unique(known)) == len(known) else None


def data_option(q):
    """The data a query names in its options (``data``: a path or a Dataset), or None."""
    return q.plan.options.data, q.plan.options.label or DEFAULT_LABEL


def dataset_for(ens, q) -> Dataset | None:
    """The Dataset the query's ``data`` option names (read and checked), or None: what the
    driver's solve_query / compile_query take as ``data``."""
    data, label = data_option(q)
    if data is None:
        return None
    return load_data(data, ens, label)


def not_a_table(data, arr: np.ndarray) -> str:
    """What a ``data`` that is no table is, in words: an array's shape, else its type (a
    dict or a set made an array of shape (), which named neither)."""
    if arr.ndim == 0:
        hint = " (pandas.DataFrame of it makes one)" if isinstance(data, dict) else ""
        return f"{type(data).__name__}{hint}; give a DataFrame, a CSV / Parquet path or a 2-d array"
    return f"an array of shape {arr.shape}"
