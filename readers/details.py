"""Feature declarations from a details CSV: ``feature,name,lb,ub`` (index, name, bounds).

Optional columns: ``kind`` (real, integer, binary, categorical), ``missing``
(true/false: the feature may be missing, so NaN is one more value to consider) and
``group`` (the one-hot group a column belongs to: rows with the same group are one
categorical feature, docs/pipelines.md).

A details file must fit its model: for a model with feature names of its own, each row
repeats the model's name at its index (a file may declare only some features); a model
with generic names only (f0, Column_0, x0, ...) gets a name for every feature.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..compiler.ensemble import KINDS, Ensemble, Feature
from ..compiler.errors import FEATURES, InputError, closest, name_list, not_a_regular_file, not_utf8
from .data import (
    INDEX_COLUMNS,
    INDEX_HINT,
    data_columns,
    feature_columns,
    looks_like_values,
    names_are_generic,
    read_features,
    refuse_details_as_data,
    unread_absent,
)
from .formats.registry import generic_names
from .table_files import check_separator

# the columns of a details file (the first two needed)
COLUMNS = ("feature", "name", "lb", "ub", "kind", "missing", "group")


# a number as a CSV writes it (pandas, Excel): ASCII digits, a sign, a decimal point,
# an exponent, or inf / nan; not Python's other float() forms ("1_0" read as 10, other
# scripts' digits such as full-width ones, which a spreadsheet keeps as text)
_NUMBER = re.compile(
    r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)"
)
# a feature index: ASCII digits ("3", "+3"; a spreadsheet's "3.0" is not one)
_INDEX = re.compile(r"\+?[0-9]+")


def _num(s: str, where: str, col: str) -> float:
    """A bound of column ``col`` (lb or ub); empty or "none": unbounded on that side."""
    s = (s or "").strip()
    if s == "" or s.lower() == "none":
        return math.inf if col == "ub" else -math.inf
    if not _NUMBER.fullmatch(s.lower()):
        raise InputError(f"column {col}: {s!r} is not a number", where)
    v = float(s)
    if math.isnan(v):
        raise InputError(f"column {col}: {s!r} is not a bound (leave it empty for no {col})", where)
    if v == (-math.inf if col == "ub" else math.inf):
        raise InputError(f"column {col}: {s!r} leaves no value to take", where)
    return v


def _rows_with_lines(text: str) -> tuple[list[list[str]], list[int]]:
    """The CSV's rows and the line each starts on (a quoted field may span lines)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows, starts, end = [], [], 0
    for row in reader:
        rows.append(row)
        starts.append(end + 1)
        end = reader.line_num
    return rows, starts


def details_names(details) -> tuple[str | None, ...] | None:
    """The names a details CSV (a path or a DataFrame) gives, at their indices (None at
    an index it does not declare); None when it cannot be read as one (apply_details,
    after the load, says why)."""
    try:
        if isinstance(details, (str, Path)):
            if not Path(details).is_file():  # a FIFO would block: apply_details names it
                return None
            text = Path(details).read_text(encoding="utf-8-sig")
        elif hasattr(details, "to_csv"):
            text = details.to_csv(index=False)
        else:
            return None
        rows, _ = _rows_with_lines(text)
        header = [h.strip().lower() for h in rows[0]]
        at, named = header.index("feature"), header.index("name")
        found = {int(r[at]): r[named].strip() for r in rows[1:] if any(c.strip() for c in r)}
    except (OSError, UnicodeDecodeError, ValueError, IndexError, csv.Error):
        return None
    if not found or min(found) < 0 or max(found) >= 1_000_000:
        return None
    return tuple(found.get(i) or None for i in range(max(found) + 1))


def apply_details(ens: Ensemble, path: str | Path) -> Ensemble:
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory, not a details file (feature,name,lb,ub)", str(path))
    if path.exists() and (special := not_a_regular_file(path.stat().st_mode, "details file")):
        raise InputError(special, str(path))
    if not path.is_file():
        raise InputError("details file not found", str(path))
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8-sig")  # a spreadsheet's UTF-8 starts with a byte-order mark
    except OSError as e:
        raise InputError(f"cannot read: {e}", str(path)) from None
    except UnicodeDecodeError as e:
        raise not_utf8(e, str(path)) from None
    return apply_details_text(ens, text, str(path))


def _header(first: list[str], path: str, features: Sequence[str] = ()) -> list[str]:
    """A details file's column names (lowercase), after checking that it names the
    columns it needs, no column it does not take, and none twice. ``features``: the
    model's feature names, which a data file's header names instead."""
    header = [h.strip().lower() for h in first]
    if header and header[0].startswith(("{", "[")):  # a model given as the details
        raise InputError(
            "a JSON file (a model?), not a details file: a details file is a CSV with "
            "columns feature,name,lb,ub",
            f"{path}:1",
        )
    check_separator(first, f"{path}:1")  # a spreadsheet's export split by ';'
    for need in ("feature", "name"):
        if need not in header and (data := _looks_like_data(first, features)):
            raise InputError(
                f"this looks like data ({data}), not a details file (feature,name,lb,ub): "
                "did you mean to give it as data (--data, data=)?",
                f"{path}:1",
            )
        if need not in header:
            # 'names' for name; not the columns of another kind of file ('tenure')
            near = [h for h in dict.fromkeys(header) if h and (need in h or h in need)]
            guess = f" (did you mean {near[0]!r}?)" if near else ""
            raise InputError(
                f"header has no {need!r} column{guess} (expected feature,name,lb,ub)",
                f"{path}:1",
            )
    # a column with no name (a spreadsheet's trailing comma) holds nothing treesens reads
    unknown = [h for h in header if h and h not in COLUMNS]
    if unknown:  # a bound under another name would be dropped: the feature unbounded
        raise InputError(
            f"unknown column {unknown[0]!r}{closest(unknown[0], COLUMNS)} (the columns a "
            f"details file takes: {', '.join(COLUMNS)}; bounds go in lb and ub)",
            f"{path}:1",
        )
    named_columns = [h for h in header if h]
    twice = next((h for h in named_columns if named_columns.count(h) > 1), None)
    if twice is not None:  # which one holds the bounds? the last was read, the first dropped
        raise InputError(f"column {twice!r} appears twice", f"{path}:1")
    return header


def _looks_like_data(first: list[str], features: Sequence[str]) -> str:
    """What in a header without a details file's columns makes it a data file's: the
    model's features among its columns, or a label column; "" where nothing does."""
    cols = [c.strip() for c in first]
    named = [c for c in cols if c in set(features)]
    if named:
        return f"its header names the model's features: {name_list(named, max_names=4)}"
    if "label" in cols:
        return "its header has a label column"
    return ""


def apply_details_text(ens: Ensemble, text: str, path: str) -> Ensemble:
    """The declarations of a details table given as CSV text; ``path`` names it in
    messages (a file, or ``<details DataFrame>``)."""
    rows, starts = _rows_with_lines(text)
    if not rows:
        raise InputError("empty details file (expected a header feature,name,lb,ub)", str(path))
    header = _header(rows[0], path, ens.feature_names)
    col = {h: i for i, h in enumerate(header)}
    feats = list(ens.features)
    named = not has_generic_names(ens)  # names of its own, which the file must repeat
    n_rows = sum(1 for row in rows[1:] if any(c.strip() for c in row))
    seen: dict[str, int] = {}
    declared: dict[int, int] = {}
    groups: dict[str, list[str]] = {}  # the optional column ``group``: one-hot groups
    for lineno, row in zip(starts[1:], rows[1:]):
        if not any(c.strip() for c in row):
            continue
        where = f"{path}:{lineno}"
        if len(row) != len(header):
            raise InputError(
                f"{len(row)} field{'s' if len(row) != 1 else ''}, the header has {len(header)}",
                where,
            )
        cell = row[col["feature"]]
        if not _INDEX.fullmatch(cell.strip()):
            raise InputError(
                f"column feature: {cell!r} is not a feature index (a whole number from 0)", where
            )
        idx = int(cell)
        if not 0 <= idx < len(feats):
            raise InputError(
                f"feature index {idx} out of range: the model {ens.source} has "
                f"{len(feats)} features (0..{len(feats) - 1}), this file declares {n_rows}",
                where,
            )
        if idx in declared:
            raise InputError(
                f"feature index {idx} declared twice (also line {declared[idx]})", where
            )
        declared[idx] = lineno
        name = row[col["name"]].strip()
        if not name:
            raise InputError("empty feature name", where)
        if name in seen:
            raise InputError(f"feature name {name!r} used twice (also line {seen[name]})", where)
        if named and name != ens.features[idx].name:
            raise InputError(
                f"feature {idx} is {name!r} here but {ens.features[idx].name!r} in the model "
                f"{ens.source} ({n_rows} features here, {len(feats)} in the model): the "
                "details file of another model?",
                where,
            )
        seen[name] = lineno
        feats[idx] = _declared(feats[idx], name, row, col, where)
        if "group" in col and row[col["group"]].strip():
            groups.setdefault(row[col["group"]].strip(), []).append(name)
    if not declared:
        raise InputError("no feature rows after the header", f"{path}:1")
    if not named and len(declared) != len(feats):
        _missing_features(ens, declared, path)
    names = [f.name for f in feats]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise InputError(f"after renaming, feature names clash: {', '.join(dups)}", str(path))
    out = ens.with_features(tuple(feats)).with_input("details", str(path))
    _refuse_missing_not_taken(out, [i for i in declared if feats[i].may_be_missing], declared, path)
    if groups:
        from .preprocessing.groups import declared_groups, fold_groups

        try:
            out = fold_groups(out, declared_groups(out, groups), f"declared in {path}")
        except InputError as e:
            raise InputError(e.message, str(path)) from None
    return out


def declared_missing(details) -> frozenset[str]:
    """The names of the features whose ``missing`` a details table (a CSV path or a
    DataFrame, already read by ``apply_details``) declares, true or false."""
    if details is None:
        return frozenset()
    rows, _ = _rows_with_lines(_details_text(details))
    header = [h.strip().lower() for h in rows[0]] if rows else []
    if "missing" not in header or "name" not in header:
        return frozenset()
    m, n = header.index("missing"), header.index("name")
    return frozenset(r[n].strip() for r in rows[1:] if len(r) == len(header) and r[m].strip())


# a bound column's side, as a note names it
_SIDES = {"lb": ("lower", -math.inf), "ub": ("upper", math.inf)}


def _details_text(details) -> str:
    """A details table (a CSV path or a DataFrame, already read by ``apply_details``) as
    CSV text."""
    if isinstance(details, (str, Path)):
        return Path(details).read_text(encoding="utf-8-sig")
    return details.to_csv(index=False)


def unstated_bounds(details) -> dict[str, tuple[bool, list[str]]]:
    """The sides a details table leaves unbounded without saying so (``none``, ``inf``
    or ``-inf`` say so): per bound column (lb, ub), whether the table lacks the column,
    and the names of the features left without that bound (every one, without it)."""
    rows, _ = _rows_with_lines(_details_text(details))
    header = [h.strip().lower() for h in rows[0]]
    named = header.index("name")
    declared = [r for r in rows[1:] if len(r) == len(header) and any(c.strip() for c in r)]
    out: dict[str, tuple[bool, list[str]]] = {}
    for side in _SIDES:
        if side not in header:
            out[side] = (True, [r[named].strip() for r in declared])
            continue
        at = header.index(side)
        out[side] = (False, [r[named].strip() for r in declared if not r[at].strip()])
    return out


def unstated_bounds_note(ens: Ensemble, details, shown: str) -> str | None:
    """The note on the sides a details table left unbounded by an empty cell or a missing
    column (``unstated_bounds``) that are still unbounded in ``ens`` (neither the data's
    range, a binary kind nor a later declaration bounds them): easy to miss when a bound
    was meant. ``shown`` names the table; None when there is nothing to say."""
    feats = {f.name: f for f in ens.features}  # a feature folded into a group: gone
    clauses, n_open = [], set()
    for side, (absent, names) in unstated_bounds(details).items():
        word, unbounded = _SIDES[side]
        open_ = [n for n in names if n in feats and getattr(feats[n], side) == unbounded]
        if open_:
            n_open.update(open_)
            why = f"no {side} column" if absent else f"{side} empty"
            clauses.append(f"no {word} bound for {name_list(map(repr, open_))} ({why})")
    if not clauses:
        return None
    return (
        f"{shown}: {'; '.join(clauses)}: {'they range' if len(n_open) > 1 else 'it ranges'} "
        "over all reals on that side (a bound of none, -inf or inf leaves a side unbounded "
        "on purpose, without this note)"
    )


def _refuse_missing_not_taken(ens: Ensemble, missing: list[int], lines: dict, path) -> None:
    """A feature declared missing for a model whose library's predict refuses NaN
    (scikit-learn's GradientBoosting) is an InputError at its line: every answer would
    be about inputs the model cannot score (a pair with NaN fails its replay, a proof over
    them is vacuous). Asked of the library on one row inside the bounds, which it scores
    without the NaN (so nothing else is taken for the refusal)."""
    if not missing or ens.replayer is None:
        return
    row = np.array([_inside(f) for f in ens.features], dtype=float)
    if nan_refused(ens, row, []) is not None:  # a row the library refuses for another reason
        return
    why = nan_refused(ens, row, missing)
    if why is not None:
        raise InputError(
            f"feature {ens.features[missing[0]].name!r} declared missing (column missing), "
            f"and this model cannot take missing values (its library's predict refuses NaN: "
            f"{why}); declare it missing false",
            f"{path}:{lines[missing[0]]}",
        )


def nan_refused(ens: Ensemble, row: np.ndarray, features: list[int]) -> str | None:
    """Why the model's library refuses ``row`` with NaN in ``features`` (the first line of
    what its predict raises), or None where it scores it."""
    rep = ens.replayer
    x = np.array(row, dtype=float)[None, :]
    x[0, features] = np.nan
    try:
        (rep.predict if ens.is_regressor else rep.predict_proba)(x)
    except Exception as e:  # noqa: BLE001 - whatever the library raises
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return None


def _inside(f: Feature) -> float:
    return f.lb if math.isfinite(f.lb) else (f.ub if math.isfinite(f.ub) else 0.0)


def _declared(feat: Feature, name: str, row: list[str], col: dict[str, int], where: str) -> Feature:
    """The feature as one row of a details file declares it (name, bounds, kind, missing)."""
    lb = _num(row[col["lb"]], where, "lb") if "lb" in col else -math.inf
    ub = _num(row[col["ub"]], where, "ub") if "ub" in col else math.inf
    if lb > ub:
        raise InputError(f"lower bound {lb:g} is above upper bound {ub:g}", where)
    kind = feat.kind
    if "kind" in col and row[col["kind"]].strip():
        kind = row[col["kind"]].strip().lower()
        if kind not in KINDS:
            raise InputError(f"unknown kind {kind!r} (use one of {', '.join(KINDS)})", where)
    missing = feat.may_be_missing
    if "missing" in col and row[col["missing"]].strip():
        flag = row[col["missing"]].strip().lower()
        if flag not in ("true", "false", "yes", "no", "1", "0"):
            raise InputError(f"column missing: {flag!r} is not true/false", where)
        missing = flag in ("true", "yes", "1")
    if kind == "binary" and (lb > 1 or ub < 0):
        raise InputError(f"a binary feature takes 0 or 1, not values in [{lb:g}, {ub:g}]", where)
    if kind == "integer" and math.isfinite(ub - lb) and math.floor(ub) < math.ceil(lb):
        raise InputError(f"an integer feature has no whole number in [{lb:g}, {ub:g}]", where)
    return replace(feat, name=name, lb=lb, ub=ub, kind=kind, may_be_missing=missing)


def _missing_features(ens: Ensemble, declared: dict[int, int], path: Path) -> None:
    """A model with generic names only is named by its details file in full: the error
    for a file that names fewer of its features (the details file of another model?)."""
    first = next(i for i in range(ens.n_features) if i not in declared)
    raise InputError(
        f"{len(declared)} features here, but the model {ens.source} has {ens.n_features} with "
        f"generic names only (f0, Column_0, x0, ...): a details file names every one of "
        f"them (feature {first} is missing); the details file of another model?",
        str(path),
    )


# the names a loader gives features when the model file has none (XGBoost's f0, f1, ...,
# LightGBM's Column_0, ..., scikit-learn's x0, ...): each format declares its own
GENERIC_NAMES = generic_names()


def has_generic_names(ens: Ensemble) -> bool:
    """Are the model's feature names its library's placeholders (f0, Column_0, x0, ...)?"""
    return names_are_generic(ens.feature_names)  # a format registered at run time counts too


def apply_data_names(ens: Ensemble, data, label: str | None = "label") -> Ensemble:
    """Name features after a data file's columns (in model order, the label column left out).

    Only used when the model's own names are generic (``has_generic_names``) and the data
    does not already have a column for each of them; otherwise the data's columns must
    match the model's names, which is checked where the data is used. ``data`` is a CSV /
    Parquet path or a DataFrame. A ``label`` other than the default must be a column.
    """
    header, where = data_columns(data)
    cols = feature_columns(header, label, where, ens.feature_names)
    if not has_generic_names(ens) or unread_absent(ens, cols) is not None:
        return ens  # a column for each feature a tree reads, by name
    _partly_named(ens, cols, where)
    refuse_details_as_data(cols, ens.feature_names, where)
    if looks_like_values(cols):  # the first row read as the header
        raise InputError(
            "its first line holds numbers, not column names: the data needs a header row "
            "naming its columns (they name the model's features, in order)",
            where,
        )
    if len(cols) != ens.n_features:
        besides = f" besides the label column {label!r}" if label in header else ""
        index = len(cols) == ens.n_features + 1 and header[0] in INDEX_COLUMNS
        raise InputError(
            f"{len(cols)} feature columns{besides}, but the model has {ens.n_features} features "
            f"(its names {', '.join(ens.feature_names[:2])}, ... are generic: the data's columns "
            f"name them in order){INDEX_HINT if index else ''}",
            where,
        )
    if "" in cols:
        raise InputError(f"column {header.index('') + 1} has no name", where)
    dups = sorted({c for c in cols if cols.count(c) > 1})
    if dups:
        raise InputError(f"duplicate column names: {', '.join(dups)}", where)
    return ens.with_features(tuple(replace(f, name=c) for f, c in zip(ens.features, cols)))


def _partly_named(ens: Ensemble, cols: list[str], where: str) -> None:
    """Data that names some of a generic model's features by the model's own names (f1,
    f2, ... of a model with f0, f1, ...) but not all of them: naming the columns in order
    would read each such column as another feature (f1 as f0, ...), so it is an error
    that names the features a tree reads without their column (the others need none)."""
    named = [c for c in cols if c in ens.feature_names]
    if not named:
        return
    read = read_features(ens)
    missing = [n for i, n in enumerate(ens.feature_names) if n not in cols and i in read]
    raise InputError(
        f"the data names {len(named)} of the model's {ens.n_features} features by its own "
        f"names ({name_list(map(repr, named))}) but has no column for "
        f"{name_list(map(repr, missing))}: columns named like the model's features are read "
        "by name, so name every one of them (or none: the columns then name the features "
        "in order)",
        where,
    )


def declare(ens: Ensemble, *, missing=(), categories: dict | None = None) -> Ensemble:
    """Declarations in code: features that may be missing (NaN becomes one more value the
    encoding can choose for them; by default no feature is missing), and category names
    of categorical features (``{feature: [name of code 0, name of code 1, ...]}``)."""
    feats = list(ens.features)
    for name in missing:
        i = _index(ens, name)
        feats[i] = replace(feats[i], may_be_missing=True)
    for name, cats in (categories or {}).items():
        i = _index(ens, name)
        cats = tuple(str(c) for c in cats)
        feats[i] = replace(
            feats[i],
            kind="categorical",
            categories=cats,
            category_values=None,
            lb=max(feats[i].lb, 0.0),
            ub=min(feats[i].ub, float(len(cats) - 1)),
        )
    return ens.with_features(tuple(feats))


def _index(ens: Ensemble, name) -> int:
    if isinstance(name, int):
        if not 0 <= name < ens.n_features:
            raise InputError(f"feature index {name} out of range 0..{ens.n_features - 1}")
        return name
    try:
        return ens.feature_index(str(name))
    except KeyError:
        raise InputError(
            f"unknown feature {name!r}{closest(str(name), ens.feature_names, listing=FEATURES)}"
        ) from None
