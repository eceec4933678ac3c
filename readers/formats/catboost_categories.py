"""One-hot categorical features of CatBoost models, with their categories by name.

A CatBoost model records a one-hot category only as the 32-bit hash of its name (the
``values`` of a categorical feature; a split tests ``hash(x) == value``), so the names
come from the user: the data given with the model (``--data``, ``data=``), whose values
in the feature's column are its categories. catboost itself maps each name to the value
its hash equals, or to none of them (the model's own perfect hash of its categories).

A categorical feature's IR codes, in this order:

* ``0..k-1``: the names the data holds, sorted;
* ``k``: ``<other>``, any category the model never split on and the data does not name
  (replayed as that very string, which catboost maps to none of its values);
* then one code per value of the model no name hashes to, ``<catboost hash N>``: a
  category the model was trained on and tells apart, whose name nobody gave. It stays in
  the IR, so an answer covers every category the model can see; a pair that needs one
  cannot be replayed (no name of it is known) and is an error naming it. Bounds from the
  data (the default with data) keep a search to the data's categories.

Everything here is plain data (it pickles with the replayer); only the naming asks
catboost, through the model the replayer holds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ...compiler.dataset import TableRows
from ...compiler.ensemble import Ensemble, Feature, Tree
from ...compiler.errors import InputError, TreesensWarning, name_list
from ..table_files import read_table, table_rows

OTHER = "<other>"


def unnamed_label(value: int) -> str:
    return f"<catboost hash {value}>"


@dataclass(frozen=True)
class HashedFeature:
    """A categorical feature: ``column``, its place among the model's features; ``index``,
    catboost's index of it among the categorical features; ``values``, the hashes its
    splits test (increasing, as catboost writes them). Per IR code: ``identities`` (the
    index of the value the category's hash equals, ``len(values)`` for none) and
    ``names`` (the string catboost is given for it; None: no name is known)."""

    column: int
    index: int
    name: str
    values: tuple[int, ...]
    identities: tuple[int, ...]
    names: tuple[str | None, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        """The categories as treesens shows them (code c is ``labels[c]``)."""
        return tuple(
            n if n is not None else unnamed_label(self.values[i])
            for n, i in zip(self.names, self.identities)
        )

    @property
    def other(self) -> int:
        """The identity of every category whose hash is none of the values."""
        return len(self.values)

    def codes(self, identities) -> frozenset[int]:
        """The codes whose category is one of ``identities``."""
        return frozenset(c for c, i in enumerate(self.identities) if i in identities)

    def feature(self, like: Feature | None = None) -> Feature:
        """The IR feature (named as ``like`` is, when given)."""
        name = like.name if like is not None else self.name
        return Feature(name, "categorical", 0.0, float(len(self.labels) - 1), self.labels)

    def replay_name(self, code: float) -> str:
        """The string catboost is given for code ``code``, or one InputError."""
        labels = self.labels
        if not (math.isfinite(code) and code == int(code) and 0 <= code < len(labels)):
            raise InputError(
                f"feature {self.name!r}: {code!r} is not a category code 0..{len(labels) - 1}"
            )
        name = self.names[int(code)]
        if name is None:
            raise InputError(
                f"{labels[int(code)]} of feature {self.name!r} has no known name (the model "
                "splits on it, no data named it), so catboost cannot be asked about it: "
                "give data that holds it (--data, data=)"
            )
        return name


def refuse_unnamed_categories(ens: Ensemble) -> None:
    """One InputError, before any question is solved, when a categorical feature's domain
    holds categories known only by their hash: a pair needing one could be found but not
    replayed by catboost (a model loaded without the data that names them, folded one-hot
    groups or not; a CatBoost model inside a scikit-learn Pipeline, whose categories no
    data names: ``wrapped_hashed``)."""
    replayer = getattr(ens, "replayer", None)
    wrapped = wrapped_hashed(replayer)
    if wrapped:
        hf = wrapped[0]
        unnamed = [label for name, label in zip(hf.names, hf.labels) if name is None]
        known = (
            f"the CatBoost model's categorical feature {hf.name!r} has {len(unnamed)} "
            f"categor{'y' if len(unnamed) == 1 else 'ies'} known only by their hash "
            f"({name_list(unnamed)}), which catboost cannot be asked about"
        )
        if getattr(replayer, "pipe", None) is not None:  # no data names them in a Pipeline
            raise InputError(
                f"{known}, and treesens cannot name them through a scikit-learn Pipeline: "
                "give the CatBoost model itself (its .cbm or estimator) with the data that "
                "names them (--data ROWS.csv, data=)"
            )
        raise InputError(f"{known}: give the data that names them (--data ROWS.csv, data=)")
    for hf in getattr(getattr(ens, "replayer", None), "hashed", ()):
        f = ens.features[hf.column]
        unnamed = [
            label
            for code, (name, label) in enumerate(zip(hf.names, hf.labels))
            if name is None and f.lb <= code <= f.ub
        ]
        if unnamed:
            raise InputError(
                f"feature {f.name!r} has {len(unnamed)} "
                f"categor{'y' if len(unnamed) == 1 else 'ies'} the model splits on known "
                f"only by their hash ({name_list(unnamed)}), which catboost cannot be "
                "asked about: give the data that names them (--data ROWS.csv, data=)"
            )


def wrapped_hashed(replayer) -> tuple[HashedFeature, ...]:
    """The hashed features with a category nobody named of a CatBoost replayer that
    ``replayer`` wraps (a Pipeline's, folded groups': their ``inner``), () when it wraps
    none."""
    inner = getattr(replayer, "inner", None)
    while inner is not None:
        hashed = getattr(inner, "hashed", ()) or ()
        unnamed = tuple(hf for hf in hashed if any(n is None for n in hf.names))
        if unnamed:
            return unnamed
        inner = getattr(inner, "inner", None)
    return ()


def unnamed_feature(column: int, index: int, name: str, values: Sequence[int]) -> HashedFeature:
    """A feature whose categories nobody named: ``<other>`` and one code per value."""
    values = tuple(values)
    return HashedFeature(
        column,
        index,
        name,
        values,
        (len(values), *range(len(values))),
        (OTHER, *(None,) * len(values)),
    )


def named_feature(hf: HashedFeature, names: Sequence[str], identities: Sequence[int]):
    """``hf`` with the categories ``names`` (sorted), whose hashes are ``identities``."""
    order = sorted(range(len(names)), key=lambda i: names[i])
    names = [names[i] for i in order]
    ids = [int(identities[i]) for i in order]
    hit = set(ids)
    unnamed = [i for i in range(len(hf.values)) if i not in hit]
    return HashedFeature(
        hf.column,
        hf.index,
        hf.name,
        hf.values,
        (*ids, hf.other, *unnamed),
        (*names, _other_name(names), *(None,) * len(unnamed)),
    )


def _other_name(names: Sequence[str]) -> str:
    taken, k, name = set(names), 1, OTHER
    while name in taken:
        k += 1
        name = f"<other {k}>"
    return name


# ---------------------------------------------------------------------------------
# the user's data: category names in, codes out


def category_name(v: Any, feature: str, rows: TableRows, row: int) -> str | None:
    """The category a data value (``feature``'s in row ``row`` of ``rows``) names, as
    catboost reads it (an integer is its decimal text); None for a missing value; one
    InputError for a value catboost refuses."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, str):
        if v != v.strip():
            raise rows.error(
                row,
                f"the category {v!r} has white space around it, which treesens' data reader "
                "drops: rename it in the data",
                feature,
            )
        return v
    if isinstance(v, (bool, np.bool_)):
        raise rows.error(
            row, f"{v!r} is a truth value; catboost's categories are strings or integers", feature
        )
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        return str(int(v))  # an integer column pandas widened to float
    raise rows.error(
        row, f"{v!r} is not a category: catboost's categories are strings or integers", feature
    )


@dataclass(frozen=True)
class CatBoostColumns:
    """``Ensemble.columns`` of a CatBoost model with categorical features: the user's
    columns are the model's, and a categorical column holds category names (strings, or
    integers as catboost reads them), which become the names treesens knows."""

    hashed: tuple[HashedFeature, ...]
    names: tuple[str, ...]  # the model's feature names, for finding the columns

    def user_frame(self, df, rows: TableRows):
        df = df.copy()
        for hf in self.hashed:
            feature = self.names[hf.column]
            if feature not in df.columns:
                continue
            known = set(hf.labels)
            out = []
            for row, v in enumerate(df[feature].tolist()):
                name = category_name(v, feature, rows, row)
                if name is not None and name not in known:
                    raise rows.error(
                        row,
                        f"the category {name!r} was not named when the model was loaded "
                        f"(known: {name_list(hf.labels)}); load the model with this data "
                        "(--data, data=) to name its categories",
                        feature,
                    )
                out.append(name)
            df[feature] = np.array(out, dtype=object)
        return df

    def feature_of(self, column: str) -> str | None:
        return None

    def array_names(self, width: int) -> list[str] | None:
        return None


def columns_of(hashed: Sequence[HashedFeature], names: Sequence[str]) -> CatBoostColumns | None:
    return CatBoostColumns(tuple(hashed), tuple(names)) if hashed else None


def data_names(data, names: Sequence[str], label: str | None) -> tuple[dict[str, list[str]], str]:
    """Per column in ``names`` that the data has, the category names it holds (distinct),
    and where the data is, for messages. ``data``: a CSV / Parquet path or a DataFrame."""
    if isinstance(data, (str, Path)):
        # the frame treesens reads the data as (numbers as numbers: 1 and 1.0 are the
        # category 1, as catboost names the integer 1)
        frame, where = read_table(Path(data)), str(data)
        rows = table_rows(Path(data), len(frame))
    elif hasattr(data, "columns") and hasattr(data, "__getitem__"):
        frame, where = data, "<DataFrame>"
        rows = TableRows(where)
    else:
        return {}, ""
    cols = {str(c).strip(): c for c in frame.columns}
    out: dict[str, list[str]] = {}
    for feature in names:
        if feature not in cols or feature == label:
            continue
        column = frame[cols[feature]].tolist()
        seen = {category_name(v, feature, rows, r) for r, v in enumerate(column)}
        out[feature] = sorted(n for n in seen if n is not None)
    return out, where


# ---------------------------------------------------------------------------------
# naming the categories of a loaded model


def hashed_features(ens: Ensemble) -> tuple[HashedFeature, ...]:
    return tuple(getattr(ens.replayer, "hashed", ()) or ())


def categories_from_data(ens: Ensemble, data, label: str | None = "label") -> Ensemble:
    """``ens`` with the categories of its hashed categorical features named by the data's
    values in their columns (unchanged: no such feature, or no such column)."""
    hashed = hashed_features(ens)
    if not hashed or data is None:
        return ens
    names = [ens.features[hf.column].name for hf in hashed]
    found, where = data_names(data, names, label)
    given = {hf.column: found[n] for hf, n in zip(hashed, names) if n in found}
    return with_category_names(ens, given, where) if given else ens


def hashed_names(ens: Ensemble) -> set[str]:
    """The names of the features whose categories catboost knows by hash."""
    return {ens.features[hf.column].name for hf in hashed_features(ens)}


def declared_categories(ens: Ensemble, declared: Mapping[str, Sequence[str]], where: str):
    """``ens`` with the categories of hashed features named as ``declared`` (feature name
    -> category names) and bounded to them: a declaration says which values the feature
    takes."""
    cols = {ens.features[hf.column].name: hf.column for hf in hashed_features(ens)}
    given = {cols[n]: [str(c) for c in cats] for n, cats in declared.items()}
    named = with_category_names(ens, given, where)
    feats = list(named.features)
    for n, cats in declared.items():
        f = feats[cols[n]]
        feats[cols[n]] = replace(f, ub=float(len(set(cats)) - 1))
    return named.with_features(tuple(feats))


def with_category_names(ens: Ensemble, given: Mapping[int, Sequence[str]], where: str) -> Ensemble:
    """``ens`` with the categories of feature ``column`` named ``given[column]``: catboost
    maps each name to the value its hash equals (or to none), the trees' category sets
    follow the new codes, and catboost's predictions on a row per category are checked
    against the IR's."""
    rep = ens.replayer
    model = rep.model
    new = []
    for hf in rep.hashed:
        names = given.get(hf.column)
        if names is None:
            new.append(hf)
            continue
        names = sorted(set(names))
        clash = [n for n in names if n.startswith("<catboost hash ")]
        if clash:
            raise InputError(
                f"column {ens.features[hf.column].name!r}: {clash[0]!r} "
                "is a name treesens gives unnamed categories",
                where,
            )
        ids = [perfect_hash(model, n, hf, where) for n in names]
        if hf.values and all(i == len(hf.values) for i in ids):
            _warn_none_known(ens.features[hf.column].name, names, where)
        new.append(named_feature(hf, names, ids))
    feats = list(ens.features)
    trees = ens.trees
    for old, hf in zip(rep.hashed, new):
        if old is not hf:
            trees = tuple(_relabel(t, old, hf) for t in trees)
            feats[hf.column] = hf.feature(feats[hf.column])
    named = replace(
        ens,
        trees=trees,
        features=tuple(feats),
        replayer=rep.with_hashed(tuple(new)),
        columns=columns_of(new, [f.name for f in feats]),
        source=f"{ens.source} (categories named by {where})",
    )
    check_against_catboost(named, where)
    return named


def _warn_none_known(feature: str, names: Sequence[str], where: str) -> None:
    """Category names of which the model learned none: catboost reads them all as one
    unseen category, so the feature cannot tell them apart (a coding other than the
    training data's, 'F' for 'female'?)."""
    warnings.warn(
        f"{where}: column {feature!r}: none of its values ({name_list(map(repr, names))}) is "
        "a category the model learned; catboost reads them all as one unseen category, so "
        "they cannot change its prediction: are they written as in the training data?",
        TreesensWarning,
        stacklevel=2,
    )


def perfect_hash(model: Any, name: str, hf: HashedFeature, where: str) -> int:
    """The index of the value ``name``'s hash equals among ``hf.values`` (``len(values)``:
    none), as catboost computes it for the model."""
    fn = getattr(getattr(model, "_object", None), "_calc_cat_feature_perfect_hash", None)
    if fn is None:
        raise InputError(
            "this catboost cannot map category names to the model's hashes "
            "(_calc_cat_feature_perfect_hash; catboost 1.2 can)",
            where,
        )
    try:
        i = int(fn(name, hf.index))
    except Exception as e:  # noqa: BLE001 - CatBoostError, TypeError from its wrapper
        raise InputError(f"catboost cannot hash the category {name!r}: {e}", where) from None
    if not 0 <= i <= len(hf.values):
        raise InputError(
            f"catboost maps the category {name!r} to value {i} of {len(hf.values)}", where
        )
    return i


def _relabel(t: Tree, old: HashedFeature, new: HashedFeature) -> Tree:
    if t.categories is None:
        return t
    cats = list(t.categories)
    for n, c in enumerate(cats):
        if c is not None and int(t.feature[n]) == old.column:
            cats[n] = new.codes({old.identities[k] for k in c})
    return replace(t, categories=tuple(cats))


def check_against_catboost(ens: Ensemble, where: str) -> None:
    """catboost's predictions equal the IR's on a row of zeros per replayable category of
    each categorical feature (the others at ``<other>``), and on a row of NaN."""
    hashed = hashed_features(ens)
    for hf in hashed:  # the string <other> stands for categories the model never split on
        other = hf.names[hf.identities.index(hf.other)]
        if perfect_hash(ens.replayer.model, other, hf, where) != hf.other:
            raise InputError(
                f"feature {hf.name!r}: the model splits on the category {other!r}, the name "
                "treesens gives the categories it never split on",
                where,
            )
    base = np.zeros(ens.n_features)
    for hf in hashed:
        base[hf.column] = hf.names.index(next(n for n in hf.names if n is not None))
    rows = [base.copy()]
    nan = np.full(ens.n_features, math.nan)
    for hf in hashed:
        nan[hf.column] = base[hf.column]
        for c, n in enumerate(hf.names):
            if n is not None:
                r = base.copy()
                r[hf.column] = c
                rows.append(r)
    rows.append(nan)
    X = np.array(rows)
    if ens.is_regressor:
        ours, theirs = ens.predict(X), ens.replayer.predict(X)
    else:
        ours, theirs = ens.proba(X), ens.replayer.predict_proba(X)
    ours, theirs = ours.reshape(len(X), -1), theirs.reshape(len(theirs), -1)
    same = ours.shape == theirs.shape and np.isclose(ours, theirs, rtol=1e-9, atol=1e-12).all(1)
    if not np.all(same):
        bad = 0 if ours.shape != theirs.shape else int(np.flatnonzero(~same)[0])
        raise InputError(
            f"catboost predicts {np.round(theirs[bad], 6).tolist()} where the model read "
            f"here gives {np.round(ours[bad], 6).tolist()}: a part of the model treesens "
            "does not read",
            where,
        )


def replay_rows(hashed: Sequence[HashedFeature], X: np.ndarray) -> np.ndarray:
    """The rows catboost is given: each categorical column's codes as category names."""
    out = X.astype(object)
    for hf in hashed:
        out[:, hf.column] = [hf.replay_name(float(v)) for v in X[:, hf.column]]
    return out
