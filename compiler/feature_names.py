"""Features as a user names them: a name, a comma-separated string, an index, a list of
those, or a name as a library rewrote it (LightGBM: 'mean texture' -> mean_texture); the
one resolver that check, sweep, max_gap, audit and compare share."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable

import numpy as np

from .ensemble import Ensemble
from .errors import FEATURES, InputError, TreesensWarning, closest, name_list, spelled


def _name_key(name: str) -> str:
    """A feature name as libraries rewrite it (LightGBM: 'mean texture' -> mean_texture).
    The case stays: a name that differs in case only is another name ('Site' is not
    'site'), refused with a did-you-mean; so is one with more or other characters at an
    end ('age!', 'age' + an undecodable byte are not 'age'): a rewrite replaces characters,
    it does not drop them."""
    return re.sub(r"[^0-9A-Za-z]+", "_", name)


def feature_name(ens: Ensemble, item, keyword: str = "vary") -> str:
    """The model's name of one feature given by name, by index, or by its name before a
    library rewrote it (spaces and punctuation made underscores; a TreesensWarning names
    the feature so found)."""
    names = ens.feature_names
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if not 0 <= int(item) < len(names):
            raise InputError(
                f"{keyword}: feature index {int(item)} out of range 0..{len(names) - 1}"
            )
        return names[int(item)]
    if not isinstance(item, str):
        raise InputError(f"{keyword}: {item!r} is neither a feature name nor an index")
    if item in names:
        return item
    if ens.columns is not None and ens.columns.feature_of(item) is not None:
        return ens.columns.feature_of(item)  # a model column inside a user feature (race_B)
    if item.isdigit():
        return feature_name(ens, int(item), keyword)
    rewritten = [n for n in names if _name_key(n) == _name_key(item)]
    if len(rewritten) == 1:  # said: 'annual_income' may not be the feature meant
        warnings.warn(
            f"{keyword}: {item!r} is read as the feature {rewritten[0]!r} (the same name "
            "but for spaces and punctuation)",
            TreesensWarning,
            stacklevel=2,
        )
        return rewritten[0]
    raise InputError(
        f"{keyword}: unknown feature {item!r}{closest(item, names, listing=FEATURES)}"
        f"{positional_hint(names, item)}"
    )


def positional_hint(names: list[str], asked) -> str:
    """What to do when a model names its features by position only (f0, f1, ...:
    trained on an array) and a name of the user's own is asked ("sex"); else ""."""
    parts = [re.fullmatch(r"(\D*?)(\d+)", name) for name in names]
    if not names or None in parts or len({m.group(1) for m in parts}) != 1:
        return ""
    prefix = parts[0].group(1)
    if [int(m.group(2)) for m in parts] != list(range(len(names))):
        return ""
    if isinstance(asked, str) and re.fullmatch(re.escape(prefix) + r"\d+", asked):
        return ""  # one of the model's own kind of name, out of range
    return (
        f": the model names its features by position only ({', '.join(names[:2])}, ...); "
        f"name them with the data ({spelled('data=', '--data ROWS.csv')}: its columns, in "
        f"order) or a details file ({spelled('details=', '--details')})"
    )


ALL = "all"  # every feature, where features are named


def feature_list(ens: Ensemble, given, keyword: str = "vary") -> tuple[str, ...]:
    """The model's names of the features ``given`` as a name, a comma-separated string,
    an index, or a list of names and indices (check, sweep, max_gap, audit, compare);
    ``all`` is every feature, as a .sens file's ``vary all`` (unless one is named so)."""
    if isinstance(given, str) and given.strip() == ALL and ALL not in ens.feature_names:
        return tuple(ens.feature_names)
    if isinstance(given, str):
        whole = given.strip()
        known = whole in ens.feature_names or whole.isdigit() or "," not in whole
        items: Iterable = [whole] if known else [p.strip() for p in whole.split(",")]
    elif isinstance(given, (int, np.integer)):
        items = [given]
    elif given is None:
        items = []
    elif getattr(given, "ndim", 1) == 2 and hasattr(given, "columns"):
        raise InputError(_a_table_as_features(given, keyword))
    elif hasattr(given, "to_frame") and not all(isinstance(v, str) for v in given):
        raise InputError(_a_column_as_features(given, keyword))
    elif isinstance(given, Iterable):
        items = list(given)
    else:  # a float, say: feature_name says it is neither a name nor an index
        items = [given]
    blank = [isinstance(i, str) and not i.strip() for i in items]
    if not items or all(blank):
        raise InputError(f"{keyword}: no features given (a name, an index or a list of them)")
    if any(blank):  # 'sex,': a comma too many, or a name lost between two
        kept = ",".join(str(i).strip() for i, b in zip(items, blank) if not b)
        shown = repr(given) if isinstance(given, str) else repr(list(given))
        raise InputError(f"{keyword}: {shown} holds an empty name (did you mean {kept!r}?)")
    out: list[str] = []
    for i in items:
        name = feature_name(ens, i, keyword)
        if not (name in out and name != i and ens.columns is not None):
            out.append(name)  # columns of one group (race_A, race_B) name it once
    return tuple(out)


def _a_table_as_features(table, keyword: str) -> str:
    """The error of a DataFrame given where features are named: read as its column names
    it asked about every column, a question nobody meant when the data was passed in the
    features' place (``check(model, X_test)``)."""
    cols = [str(c) for c in table.columns]
    return (
        f"{keyword}: a DataFrame (columns {name_list(cols, max_names=4)}) is no list of "
        f"features; data goes in data=; to vary its columns, give {keyword}=list(df.columns)"
    )


def _a_column_as_features(column, keyword: str) -> str:
    """The error of a pandas Series of values given where features are named
    (``vary=X["sex"]``): its values were read as feature indices, another feature each."""
    name = getattr(column, "name", None)
    named = f"{keyword}={str(name)!r} names that column" if name is not None else ""
    return f"{keyword}: a column of values ({len(column)} of them) is no list of features" + (
        f"; {named}" if named else "; give the features' names"
    )


def refuse_repeats(names, keyword: str = "vary") -> None:
    """A feature listed twice is a slip (a second copy asks nothing more): an InputError
    naming ``keyword`` (check's vary, sweep's and the report's features, ...)."""
    names = list(names)
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise InputError(f"{keyword}: feature {twice[0]!r} listed twice")
