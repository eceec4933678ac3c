"""What a report's ranking gains after its sweep: the protected features' audited flips
as lower bounds of their max gaps (where max gaps stayed open, the budget a report run
again needs is sweep_budget.budget_advice's).

A row the audit flips and its x2 differ only in the feature: a pair of the max gap's
question. Replayed here with the model's own library, both inside the feature domains
the ranking searched, the gap the pair meets is a lower bound of that feature's max gap
(the upper bound stays the search's proof).
"""

from __future__ import annotations

import math

import numpy as np

from ..answers.accept import shown_value
from ..answers.result import ERROR, SENSITIVE, Result
from ..compiler.audit import FLIPPABLE
from ..compiler.ensemble import Ensemble
from ..compiler.replay import library_output
from .max_gap import achieved_gap, bounds_meet, max_gap_line

# the report's found_by of a max gap's lower bound taken from the row-level audit
AUDIT_FOUND_BY = "row-level audit"


def best_flip(ens: Ensemble, df, feature: str) -> dict | None:
    """The audited row of ``df`` (questions.audit's frame) whose flip meets the largest
    gap (a binary classifier's), as ``{"row", "x2"}`` (x2: the feature's shown value),
    or None."""
    if ens.is_regressor or ens.n_classes != 2 or ens.n_outputs != 1 or df.empty:
        return None
    hits = df[df["status"] == FLIPPABLE]
    if hits.empty:
        return None
    hi = np.maximum(hits["p_row"], hits["p_x2"])
    lo = np.minimum(hits["p_row"], hits["p_x2"])
    met = np.minimum(hi - 0.5, 0.5 - lo).to_numpy()
    k = int(np.argmax(met))
    return {"row": int(hits["row"].iloc[k]), "x2": hits[f"x2_{feature}"].iloc[k]}


def _code(ens: Ensemble, f: int, shown) -> float | None:
    """The feature's value behind a shown one (a category's name, a number)."""
    feat = ens.features[f]
    if shown is None:
        return math.nan
    if feat.kind == "categorical" and feat.categories:
        for code in range(len(feat.categories)):
            if feat.shown_category(code) == shown:
                return float(code)
    try:
        return float(shown)
    except (TypeError, ValueError):
        return None


def _inside(ens: Ensemble, x: np.ndarray) -> bool:
    """Whether every value of ``x`` lies in its feature's domain."""
    return all(feat.admits(v) for feat, v in zip(ens.features, x.tolist(), strict=True))


def raise_lower(ens: Ensemble, X: np.ndarray, r: Result, flip: dict) -> bool:
    """Raise ``r``'s max gap lower bound (a ranked feature's) to the gap the audited
    ``flip`` meets, replayed, when it lies in the domain and beats the search's own; the
    pair becomes the result's witness. Whether it did."""
    mg = r.max_gap
    if r.status == ERROR or mg is None or mg.get("kind", "prob") != "prob" or len(r.features) != 1:
        return False
    f = ens.feature_names.index(r.features[0])
    x1 = np.array(X[flip["row"]], dtype=float)
    v = _code(ens, f, flip["x2"])
    if v is None:
        return False
    x2 = x1.copy()
    x2[f] = v
    if not (_inside(ens, x1) and _inside(ens, x2)):
        return False
    p = np.asarray(library_output(ens, np.stack([x1, x2])), dtype=float)
    if p[0, 1] < p[1, 1]:  # x1 the input scored high, as the max gap's pair
        x1, x2, p = x2, x1, p[::-1]
    outputs = {"x1": p[0].tolist(), "x2": p[1].tolist()}
    g = achieved_gap(outputs)
    lower = mg.get("lower")
    if g <= 0 or g > mg["upper"] or (lower is not None and g <= lower):
        return False
    names = ens.feature_names
    r.witness = {
        "x1": {names[j]: shown_value(ens, j, x1[j]) for j in range(ens.n_features)},
        "x2": {names[j]: shown_value(ens, j, x2[j]) for j in range(ens.n_features)},
    }
    r.outputs, r.validated, r.status, r.gap = outputs, True, SENSITIVE, g
    mg["lower"] = g
    mg["proven"] = bounds_meet(mg)
    r.message = max_gap_line(mg, r.features)
    r.stats["found_by"] = AUDIT_FOUND_BY
    r.notes.append(
        f"its lower bound is the row-level audit's: the data's row at index {flip['row']} "
        f"and the same row with {r.features[0]} changed, both replay-checked with the "
        "model's own library"
    )
    return True
