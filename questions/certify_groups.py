"""A grouped model's certificate states its one-hot groups: per feature treesens folded
(``--groups``, groups inferred from data), the model columns it stands for and each
code's image, the row of those columns the code makes (code k: column k at 1, the others
0; a dropped category's code: all of them 0). The checker folds the model's own columns
the same way and routes each image through the trees (verify/models_groups.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.ensemble import Ensemble
from ..readers.preprocessing.fold import ColumnMap, identity, numeric_boundaries
from ..readers.preprocessing.groups import GroupColumns


def groups_refusal(ens: Ensemble) -> str | None:
    """Why a model whose columns treesens changed gets no certificate (None: it may):
    the checker folds one-hot groups over the model's own columns, nothing else."""
    if ens.columns is None:
        return None
    if not isinstance(ens.columns, GroupColumns) or ens.columns.inner is not None:
        return "the checker reads the model's own columns, and one-hot groups folded over them"
    return None


def group_section(ens: Ensemble) -> list[dict[str, Any]] | None:
    """The certificate's ``groups`` (None: the model's columns are its features)."""
    if not isinstance(ens.columns, GroupColumns):
        return None
    out = []
    for g in ens.columns.groups:
        codes = np.arange(len(g.names))
        images = g.one_hot(codes)  # the dropped category's code: no column set
        out.append(
            {
                "feature": g.name,
                "columns": list(g.columns),
                "categories": list(g.names),
                "images": images.tolist(),
            }
        )
    return out


def model_test(ens: Ensemble) -> str:
    """The comparison the model's library makes at its splits, which a certificate
    states: a grouped model's folded trees compare ``x < b`` at restated boundaries, and
    its certificate splits the model's own columns at the model's own thresholds, under
    the model's own test (LightGBM's "<=")."""
    cols = ens.columns
    if isinstance(cols, GroupColumns) and cols.unfolded is not None:
        return cols.unfolded.op
    return ens.op


def model_thresholds(ens: Ensemble) -> dict[int, dict[float, float]]:
    """Per ungrouped feature of a grouped model, its folded thresholds -> the model's
    own: folding restates ``cast(x) op t`` as ``x < b`` (b the first double where the
    test fails), and the checker splits the model's own columns at t."""
    cols = ens.columns
    if not isinstance(cols, GroupColumns) or cols.unfolded is None:
        return {}
    if _LAST and _LAST[0] is cols:  # the parts of one certificate (one bisection per column)
        return _LAST[1]
    user = {name: f for f, name in enumerate(ens.feature_names)}
    maps = [
        ColumnMap(user[name], forward=identity)
        if name in user
        else ColumnMap(user[cols.feature_of(name)], values=(0.0, 1.0))
        for name in cols.model_names
    ]
    out: dict[int, dict[float, float]] = {}
    for j, pairs in numeric_boundaries(cols.unfolded, maps).items():
        out[maps[j].user] = {b: t for t, b in pairs.items()}
    _LAST[:] = [cols, out]
    return out


_LAST: list = []  # the last grouped model's columns and its thresholds
