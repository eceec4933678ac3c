"""One-hot groups: model columns that together encode one categorical feature.

A group ``race`` of columns ``race_A, race_B, race_C`` is one user feature with the
categories A, B, C: in each input exactly one of its columns is 1 (or none, for the
category an encoder dropped). The ensemble is folded onto the user's features, so the
encoding chooses one category per input (never two and a half races), sweeps ask one
query per group, and witnesses read ``race: "B"``. Groups are declared
(``{"race": ["race_A", "race_B", "race_C"]}``, or ``{"race": {"columns": [...],
"dropped": "A"}}``) or inferred from data (``"infer"``): columns sharing a prefix whose
rows each hold exactly one 1, or at most one 1 with some rows holding none (a category
dropped by ``drop_first``, named ``UNNAMED_DROPPED``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...compiler.column_prefixes import SEPARATORS, binary_prefixes
from ...compiler.dataset import TableRows
from ...compiler.ensemble import Ensemble, Feature
from ...compiler.errors import InputError
from .fold import ColumnMap, fold, identity, node_routes

# the name of an inferred group's dropped category (``pd.get_dummies(drop_first=True)``
# leaves no trace of which category it dropped)
UNNAMED_DROPPED = "(dropped)"


@dataclass(frozen=True)
class OneHotGroup:
    name: str
    columns: tuple[str, ...]  # model columns, one per category
    categories: tuple[str, ...]  # the category each column stands for
    dropped: str | None = None  # the category without a column (all of them 0)

    @property
    def names(self) -> tuple[str, ...]:
        """The user feature's categories: code c is ``names[c]``."""
        return (*self.categories, self.dropped) if self.dropped is not None else self.categories

    def one_hot(self, codes: np.ndarray) -> np.ndarray:
        """(n, len(columns)) model values of category codes."""
        codes = np.asarray(codes, dtype=np.float64)
        return (codes[:, None] == np.arange(len(self.columns))[None, :]).astype(np.float64)


@dataclass(frozen=True)
class GroupColumns:
    """How the user's columns become the model's: each group is one user column
    (``Ensemble.columns`` of a grouped ensemble)."""

    groups: tuple[OneHotGroup, ...]
    model_names: tuple[str, ...]
    user_names: tuple[str, ...]
    inner: Any = None  # the folded ensemble's own ``columns`` (CatBoost's categories), or None
    # the ensemble over the model's own columns (a certificate states its thresholds)
    unfolded: Any = field(default=None, compare=False, repr=False)

    def user_frame(self, df, rows: TableRows):
        """``df`` with each group's columns collapsed into one column of category names
        (a frame that already has the group's column is left as it is)."""
        df = df.copy()
        for g in self.groups:
            if g.name in df.columns or not all(c in df.columns for c in g.columns):
                continue
            block = df[list(g.columns)].to_numpy(dtype=np.float64, na_value=np.nan)
            ones = (block == 1.0).sum(axis=1)
            bad = np.flatnonzero(~np.isin(block, (0.0, 1.0)).all(axis=1) | (ones > 1))
            if g.dropped is None:
                bad = np.union1d(bad, np.flatnonzero(ones == 0))
            if bad.size:
                r = int(bad[0])
                raise rows.error(
                    r,
                    f"the one-hot group {g.name!r} ({', '.join(g.columns)}) holds "
                    f"{block[r].tolist()}, not exactly one 1 ({bad.size} rows in all)",
                )
            names = np.array(g.names, dtype=object)
            codes = np.where(ones == 1, block.argmax(axis=1), len(g.categories))
            pos = list(df.columns).index(g.columns[0])
            df = df.drop(columns=list(g.columns))
            df.insert(min(pos, len(df.columns)), g.name, names[codes])
        return df if self.inner is None else self.inner.user_frame(df, rows)

    def feature_of(self, column: str) -> str | None:
        """The group a model column belongs to (``race_B`` -> ``race``), or None."""
        return next((g.name for g in self.groups if column in g.columns), None)

    def array_names(self, width: int) -> list[str] | None:
        """The column names of an unnamed array of ``width`` columns, or None."""
        if width == len(self.model_names):
            return list(self.model_names)
        return list(self.user_names) if width == len(self.user_names) else None


class GroupReplayer:
    """The model's own predict, on user rows whose groups are category codes."""

    def __init__(self, inner, ens_features: tuple[str, ...], layout: list[tuple[int, int]]):
        self.inner = inner
        self.library = inner.library
        self.model_names = ens_features
        self.layout = layout  # per model column: (user feature, category code or -1)

    def to_model(self, X) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        out = np.empty((X.shape[0], len(self.layout)))
        for j, (u, code) in enumerate(self.layout):
            out[:, j] = X[:, u] if code < 0 else (X[:, u] == code).astype(np.float64)
        return out

    def predict_proba(self, X) -> np.ndarray:
        return self.inner.predict_proba(self.to_model(X))

    def predict_raw(self, X) -> np.ndarray:
        return self.inner.predict_raw(self.to_model(X))

    def predict(self, X) -> np.ndarray:
        return self.inner.predict(self.to_model(X))


def groups_from_text(text: str) -> dict[str, list[str] | dict]:
    """``"race=race_A,race_B,race_C; sex=sex_F,sex_M"`` as a mapping of group to columns;
    ``"race=race_B,race_C dropped A"`` names the category without a column."""
    out: dict[str, list[str] | dict] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        name, eq, cols = part.partition("=")
        cols, dropped = (_DROPPED.split(cols, maxsplit=1) + [""])[:2]
        dropped = dropped.strip()
        columns = [c.strip() for c in cols.split(",") if c.strip()]
        if not eq or not name.strip() or not columns:
            raise InputError(
                f"groups: {part!r} is not NAME=COLUMN,COLUMN,... [dropped CATEGORY] "
                "(groups are separated by ';')"
            )
        if name.strip() in out:  # a dict would keep the last one without a word
            raise InputError(f"groups: group {name.strip()!r} is given twice")
        out[name.strip()] = {"columns": columns, "dropped": dropped} if dropped else columns
    if not out:
        raise InputError('groups: give "infer" or NAME=COLUMN,COLUMN,...')
    return out


_DROPPED = re.compile(r"\s+dropped\s+")


def declared_groups(ens: Ensemble, spec: Mapping) -> list[OneHotGroup]:
    """Groups from ``{"race": [columns]}`` or ``{"race": {"columns": [...], "dropped":
    "A"}}``; every column must be a model feature in at most one group."""
    out, seen = [], set()
    for name, value in spec.items():
        name = str(name)
        if isinstance(value, Mapping):
            unknown = set(value) - {"columns", "dropped"}
            if unknown:
                raise InputError(f"group {name!r}: unknown key(s) {sorted(unknown)}")
            cols, dropped = value.get("columns", ()), value.get("dropped")
        else:
            cols, dropped = value, None
        if isinstance(cols, str) or len(list(cols)) < (1 if dropped is not None else 2):
            raise InputError(f"group {name!r}: give a list of at least two columns")
        cols = tuple(str(c) for c in cols)
        twice = [c for i, c in enumerate(cols) if c in cols[:i]]
        if twice:  # not "in another group": a slip in this one
            raise InputError(f"group {name!r}: column {twice[0]!r} listed twice")
        for c in cols:
            if c not in ens.feature_names:
                raise InputError(f"group {name!r}: {c!r} is not a feature of the model")
            if c in seen:
                raise InputError(f"group {name!r}: column {c!r} is in another group too")
            _one_hot_column(ens, name, c)
            seen.add(c)
        if name in ens.feature_names and name not in cols:
            raise InputError(f"group {name!r}: the model has a feature of that name")
        out.append(
            OneHotGroup(
                name, cols, category_names(name, cols), None if dropped is None else str(dropped)
            )
        )
    return out


def category_names(name: str, columns: tuple[str, ...]) -> tuple[str, ...]:
    """``race_A`` of group ``race`` stands for category ``A``; a column without the
    group's prefix stands for itself."""
    out = []
    for c in columns:
        sep = next(
            (s for s in SEPARATORS if c.startswith(name + s) and len(c) > len(name) + 1), None
        )
        out.append(c[len(name) + 1 :] if sep else c)
    if len(set(out)) != len(out):
        return columns
    return tuple(out)


def inferred_groups(ens: Ensemble, X: np.ndarray) -> list[OneHotGroup]:
    """Columns sharing a prefix (up to a separator) whose data rows each hold one 1 and
    otherwise 0, or at most one 1 and some rows none (their category was dropped: named
    ``UNNAMED_DROPPED``); the longest such prefix wins."""
    names = ens.feature_names
    out = []
    taken: set[int] = set()
    prefixes = binary_prefixes(ens, X)
    for prefix in sorted(prefixes, key=lambda p: (-len(p), p)):
        cols = [j for j in prefixes[prefix] if j not in taken]
        if len(cols) < 2 or len(cols) != len(prefixes[prefix]) or prefix in names:
            continue
        ones = X[:, cols].sum(axis=1)
        if (ones > 1).any() or not (X[:, cols] == 1).any(axis=0).all():
            continue
        taken.update(cols)
        col_names = tuple(names[j] for j in cols)
        categories = category_names(prefix, col_names)
        dropped = None
        if (ones == 0).any():
            dropped = UNNAMED_DROPPED if UNNAMED_DROPPED not in categories else f"{prefix}_?"
        out.append(OneHotGroup(prefix, col_names, categories, dropped))
    return sorted(out, key=lambda g: names.index(g.columns[0]))


def _one_hot_column(ens: Ensemble, group: str, column: str) -> None:
    """A group's column must be a one-hot column, taking 0 and 1 only: one declared
    categorical, or in bounds without them (age in [18, 79]) or with a finite bound beyond
    them (count in [0, 10]), or that the model splits where 0 and 1 go the same way
    (age < 40: it was trained on other values), is an InputError, since the folded feature
    would set it to 0 or 1 all the same and answer about inputs the model is not given."""
    j = ens.feature_names.index(column)
    feat = ens.features[j]
    if feat.kind == "categorical":
        raise InputError(f"group {group!r}: column {column!r} is categorical, not a 0/1 column")
    lb, ub = feat.lb, feat.ub
    if lb > 0 or ub < 1 or -math.inf < lb < 0 or 1 < ub < math.inf:
        raise InputError(
            f"group {group!r}: column {column!r} is declared in [{lb:g}, {ub:g}], not a 0/1 column"
        )
    split = _split_not_between_0_and_1(ens, j)
    if split is not None:
        raise InputError(
            f"group {group!r}: the model splits column {column!r} at {column} {ens.op} "
            f"{split}, where 0 and 1 go the same way: not a 0/1 column"
        )


# a split a library makes to send missing values apart (every number to one side) on a
# 0/1 column: its threshold is just past 1 (XGBoost's cut above a column's largest value,
# 2.00001 by hist, 2.000001 by exact) or infinite (LightGBM, scikit-learn's
# HistGradientBoosting; CatBoost: the float32 extremes)
_PAST_ONE = 2.001
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _split_not_between_0_and_1(ens: Ensemble, j: int) -> str | None:
    """A numeric split of the model on column ``j`` that sends 0 and 1 the same way and is
    not a split of missing values from every number, as text (its threshold); or None."""
    probe = np.array([0.0, 1.0, np.nan])
    for t in ens.trees:
        nodes = np.flatnonzero(t.feature == j)
        if t.categories is not None:
            nodes = np.array([n for n in nodes.tolist() if t.categories[n] is None], dtype=int)
        if not nodes.size:
            continue
        routes = node_routes(ens, t, nodes, probe)  # (0, 1, NaN) x nodes: the "yes" side?
        for k in np.flatnonzero(routes[0] == routes[1]).tolist():
            th = float(t.threshold[nodes[k]])
            apart = routes[2, k] != routes[0, k]  # missing values go the other way
            if apart and (1 < th <= _PAST_ONE or abs(th) >= _FLOAT32_MAX):
                continue
            return str(np.float32(th)) if float(np.float32(th)) == th else repr(th)
    return None


def fold_groups(ens: Ensemble, groups: list[OneHotGroup], how: str) -> Ensemble:
    """``ens`` over the user's features: each group one categorical feature (in place
    of its first column), the other columns as they are."""
    if not groups:
        return ens
    names = ens.feature_names
    group_of = {c: (g, k) for g in groups for k, c in enumerate(g.columns)}
    features: list[Feature] = []
    index: dict[str, int] = {}
    for j, name in enumerate(names):
        if name not in group_of:
            index[name] = len(features)
            features.append(ens.features[j])
            continue
        g, _ = group_of[name]
        if g.name not in index:
            index[g.name] = len(features)
            features.append(Feature(g.name, "categorical", 0.0, float(len(g.names) - 1), g.names))
    maps, layout = [], []
    for name in names:
        if name in group_of:
            g, k = group_of[name]
            u = index[g.name]
            values = tuple(1.0 if c == k else 0.0 for c in range(len(g.names)))
            maps.append(ColumnMap(u, values=values))
            layout.append((u, k))
        else:
            maps.append(ColumnMap(index[name], forward=identity))
            layout.append((index[name], -1))
    listed = "; ".join(_listed(g) for g in groups)
    columns = GroupColumns(
        tuple(groups), tuple(names), tuple(f.name for f in features), ens.columns, ens
    )
    return fold(
        ens,
        features,
        maps,
        replayer=GroupReplayer(ens.replayer, tuple(names), layout),
        columns=columns,
        source=f"{ens.source} (one-hot groups {how}: {listed})",
    )


def _listed(g: OneHotGroup) -> str:
    """A group as the model's source names it."""
    if g.dropped is None:
        return f"{g.name} = {', '.join(g.columns)}"
    return f"{g.name} = {', '.join(g.columns)}, and {g.dropped!r}: all of them 0"
