"""One-hot groups a certificate folds into one feature each, as the checker sees them:
the model's own trees (over its own columns), each test on a group's column restated as
a categorical node on the group's feature.

The certificate states, per group, the ``feature`` (its name among the question's
features), the model ``columns`` it stands for, in code order, and each code's ``image``
(the model's values of those columns for that code): code k sets column k to 1 and the
others to 0, and a last code may set them all to 0 (a category an encoder dropped). The
checker requires exactly these images (any other vector is no row a one-hot encoding
makes), routes each code's image through every node on a group's column as the library
routes that value (its comparison, LightGBM's zero band and missing types), and sends
the codes whose image goes left to the left. A model column in no group is the feature
of the same name. A group's feature is never missing; the claim covers the stated codes
(the domain's), each the row its image makes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .models import Model, ModelError, Tree


@dataclass(frozen=True)
class Group:
    feature: str
    columns: tuple[str, ...]  # model columns, in code order
    images: tuple[tuple[float, ...], ...]  # per code, the columns' values


def read_groups(stated) -> list[Group]:
    """The certificate's ``groups``, each checked to be a one-hot encoding: code k's
    image sets column k alone to 1; one more code, if any, sets none."""
    if not isinstance(stated, list) or not stated:
        raise ModelError("the certificate's groups are a list of {feature, columns, images}")
    out, seen = [], set()
    for g in stated:
        name, columns = str(g["feature"]), tuple(str(c) for c in g["columns"])
        images = tuple(tuple(float(v) for v in image) for image in g["images"])
        n = len(columns)
        if n < 1 or len(set(columns)) != n or seen & set(columns):
            raise ModelError(f"group {name!r}: its columns are distinct and in no other group")
        seen.update(columns)
        one_hot = [tuple(float(i == k) for i in range(n)) for k in range(n)]
        if list(images[:n]) != one_hot or images[n:] not in ((), ((0.0,) * n,)):
            raise ModelError(
                f"group {name!r}: code k's image sets column k to 1 and the others to 0 "
                "(a last code may set them all to 0), not the images stated"
            )
        out.append(Group(name, columns, images))
    return out


def folded(model: Model, groups: list[Group]) -> Model:
    """``model`` over the folded features: each group one feature (in place of its first
    column, as treesens folds it) whose codes are its images, the other columns as they
    are. Every column of a group must be one of the model's."""
    of = {c: (g, k) for g in groups for k, c in enumerate(g.columns)}
    missing = [c for c in of if c not in model.features]
    if missing:
        raise ModelError(f"the group column {missing[0]!r} is not a feature of the model")
    names: list[str] = []
    user: list[int] = []  # per model column, its folded feature
    for c in model.features:
        name = of[c][0].feature if c in of else c
        if name not in names:
            names.append(name)
        user.append(names.index(name))
    if len(set(names)) != len(names) or any(
        g.feature in model.features and g.feature not in g.columns for g in groups
    ):
        raise ModelError("a group's feature has the name of another feature of the model")
    coded = {names.index(g.feature): g for g in groups}
    trees = [_restated(model, t, user, of, names) for t in model.trees]
    # the ungrouped features keep the model's NaN reading; a group's feature has none
    plain = [f for f in range(len(names)) if f not in coded]
    nan_read = model.nan_features if model.nan_features is not None else range(len(model.features))
    kept = {user[j] for j in nan_read if model.features[j] not in of} if model.reads_nan else set()
    return replace(
        model,
        trees=trees,
        features=names,
        known_codes={**model.known_codes, **{f: len(g.images) for f, g in coded.items()}},
        nan_features=frozenset(f for f in plain if f in kept),
        meaning={
            f: f"one-hot over {', '.join(g.columns)}"
            + (f"; code {len(g.columns)}: all of them 0" if len(g.images) > len(g.columns) else "")
            for f, g in coded.items()
        },
        to_model=_encoder(model.features, user, of),
    )


def _restated(model: Model, t: Tree, user: list[int], of: dict, names: list[str]) -> Tree:
    from .pair_space import goes_left  # the library's routing of one value

    feature = list(t.feature)
    cats: list[frozenset[int] | None] = (
        list(t.cats) if t.cats is not None else [None] * len(feature)
    )
    missing = list(t.missing) if t.missing is not None else None
    for n, j in enumerate(t.feature):
        if j < 0:
            continue
        feature[n] = user[j]
        col = model.features[j]
        if col not in of:
            continue
        g, k = of[col]
        cats[n] = frozenset(
            c for c, image in enumerate(g.images) if goes_left(model, t, n, image[k])
        )
        if missing is not None:  # a code is never NaN, nor in LightGBM's zero band
            missing[n] = "nan"
    coded = any(c is not None for c in cats)
    return replace(t, feature=feature, cats=cats if coded else None, missing=missing)


def _encoder(columns: list[str], user: list[int], of: dict):
    """Rows over the folded features -> rows over the model's columns (a group's code
    becomes its image), for the library's own scores of a replayed pair."""

    def to_model(X: np.ndarray) -> np.ndarray:
        out = np.empty((X.shape[0], len(columns)))
        for j, c in enumerate(columns):
            if c in of:
                g, k = of[c]
                out[:, j] = [g.images[int(v)][k] for v in X[:, user[j]]]
            else:
                out[:, j] = X[:, user[j]]
        return out

    return to_model
