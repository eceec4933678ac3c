"""A pipeline's certificate states the per-column maps its proof relied on: for each
column the final model reads, the input it is computed from, the affine map a scaler
applies (``x -> (x - shift) / scale``, when the column is one), and, per threshold t of
the model on the column, the boundary b in the input's units where the model's test
``cast(map(x)) op t`` stops holding (it holds exactly for x < b). The checker confirms
each by calling the pipeline's own transform at the stated points (verify/models_pipeline.py)
and checks the proof over the inputs. A column of an input that may be missing (an
imputer fills it) states ``nan``, the column's value when the input is NaN. A column an
encoder makes from a categorical input (one-hot, ordinal) is stated by the input's raw
categories (code k is the k-th) and the column's image of each code.
"""

from __future__ import annotations

import copy
import math
import weakref
from typing import Any

import numpy as np

from ..compiler.ensemble import Ensemble
from ..readers.formats.sklearn import from_estimator
from ..readers.preprocessing.fold import numeric_boundaries
from ..readers.preprocessing.pipeline import features_and_maps, input_categories


class NoMaps(Exception):
    """The pipeline's columns cannot be stated for the checker (the message says why)."""


def pipeline_refusal(ens: Ensemble) -> str | None:
    """Why a pipeline's answers get no certificate whatever the question (None: they may)."""
    pipe = getattr(ens.replayer, "pipe", None)
    if pipe is None:
        return "the pipeline's fitted steps are not at hand"
    final = pipe.steps[-1][1]
    if not type(final).__module__.startswith("sklearn."):
        return (
            f"the checker reads pipelines ending in a scikit-learn model, not "
            f"{type(final).__name__} (it loads a Pipeline from a .skops file, which holds "
            "scikit-learn's classes only)"
        )
    return None


# per pipeline (its replayer): the maps, which do not depend on the question (finding the
# boundaries runs the pipeline's transform some 64 times per column)
_MAPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def pipeline_maps(ens: Ensemble, where: str) -> list[dict[str, Any]]:
    """Per column the final model reads: ``input`` (index of the pipeline's input),
    ``map`` ([shift, scale], when the column is that affine map of its input) and
    ``boundaries`` ([t, b] per threshold of the model on the column)."""
    if ens.replayer not in _MAPS:
        _MAPS[ens.replayer] = _maps(ens, where)
    return copy.deepcopy(_MAPS[ens.replayer])


def _maps(ens: Ensemble, where: str) -> list[dict[str, Any]]:
    pipe = ens.replayer.pipe
    inner = from_estimator(pipe.steps[-1][1], where)
    _, maps = features_and_maps(pipe, inner, where)
    bounds = numeric_boundaries(inner, maps)
    categories = input_categories(pipe, where)
    out = []
    for j, m in enumerate(maps):
        if m.values is not None:
            raw = [_raw(c) for c in categories[m.user]]
            if any(isinstance(v, float) and math.isnan(v) for v in [*raw, *m.values]):
                raise NoMaps(
                    f"the encoder of {ens.features[m.user].name!r} has a category learned "
                    "from missing values (NaN), which a certificate does not state"
                )
            col = {"input": int(m.user), "categories": raw, "values": list(m.values)}
            if ens.features[m.user].may_be_missing and m.missing is not None:
                col["nan"] = "nan" if math.isnan(m.missing) else _number(m.missing)
            out.append(col)
            continue
        if m.forward is None:
            raise NoMaps(f"column {j} of the pipeline is not a numeric map of one input")
        stated = sorted(bounds.get(j, {}).items())
        col: dict[str, Any] = {"input": int(m.user)}
        affine = _affine(m.forward, [b for _, b in stated])
        if affine is not None:
            col["map"] = affine
        col["boundaries"] = [[float(t), _number(b)] for t, b in stated]
        if ens.features[m.user].may_be_missing:  # an imputed input: NaN's image
            v = float(m.forward(np.array([np.nan]))[0])
            col["nan"] = "nan" if math.isnan(v) else _number(v)
        out.append(col)
    return out


def _affine(forward, points: list[float]) -> list[float] | None:
    """[shift, scale] with forward(x) = (x - shift) / scale at 0, 1 and ``points`` (to
    1e-9 relative), or None (a clipped or other map)."""
    v0, v1 = (float(v) for v in forward(np.array([0.0, 1.0])))
    if not v1 > v0:
        return None
    scale = 1.0 / (v1 - v0)
    shift = -v0 * scale
    xs = np.array([p for p in points if math.isfinite(p)] or [0.0])
    ys = forward(xs)
    if not np.allclose(ys, (xs - shift) / scale, rtol=1e-9, atol=1e-9):
        return None
    return [shift, scale]


def _raw(category) -> str | float:
    """A raw category as JSON holds it: a string, or a number."""
    if isinstance(category, (str, np.str_)):
        return str(category)
    return float(category)


def _number(v: float) -> float | str:
    return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
