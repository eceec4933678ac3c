"""An audit row's flip claim (claims.py ``flip``): x1 is the row, one value on every
feature (its domain a point: a number, one category code, or NaN alone: bounds that
hold no number, lb > ub, with ``missing``), and the
decision the claim says no x2 gets with the gap is another than the row's, as the
library's own predict decides the row (its raw scores: P >= 0.5 is class 1, a
multiclass row's class the largest score). A row within ``BOUNDARY`` of the decision
boundary is refused: the library's rounding of its link could decide it either way."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

BOUNDARY = 1e-6  # raw units: a row's score this near its decision's boundary is refused


def flip_row(checker) -> np.ndarray | str:
    """The row x1's domain states (a point on every feature), or why it is none."""
    row = []
    for f, name in enumerate(checker.m.features):
        d = checker.dom(f, 0)
        if d.missing and d.codes is None and not d.lb <= d.ub:  # NaN alone
            row.append(math.nan)
            continue
        one_code = d.codes is None or (len(d.codes) == 1 and d.unlisted is None)
        if d.missing or d.lb != d.ub or not math.isfinite(d.lb) or not one_code:
            return f"a flip claim's x1 is one row: x1's domain of {name!r} is not one value"
        if d.codes is not None and d.codes[0] != d.lb:
            return f"a flip claim's x1 is one row: x1's code of {name!r} is not its bounds'"
        row.append(d.lb)
    return np.array(row, dtype=np.float64)


def flip_refusal(checker, claim, scores: Callable | None, why_not: str) -> tuple[str, str]:
    """(why the flip claim is not of its row's other decision, "" when it is; the row's
    decision in words for the verdict)."""
    row = flip_row(checker)
    if isinstance(row, str):
        return row, ""
    if scores is None:
        return f"a flip claim needs the library's scores of its row: {why_not}", ""
    raw = np.asarray(scores(np.stack([row, row])), dtype=np.float64)[0]
    m = checker.m
    if m.n_outputs == 1:
        edge = 0.5 if m.link == "proba" else 0.0
        if abs(raw[0] - edge) < BOUNDARY:
            return "its row lies on the decision boundary: the library may decide it either way", ""
        decided = int(raw[0] >= edge)
        if claim.to != 1 - decided:
            return f"its row is decided {decided} by the library: x2's flip is to {1 - decided}", ""
        return "", f"x1 the row, decided {decided} by the library"
    top = np.sort(raw)[-2:]
    if top[1] - top[0] < BOUNDARY:
        return "its row's two largest classes tie: the library may decide it either way", ""
    decided = int(np.argmax(raw))
    if claim.classes[0] != decided:
        return f"its row is of class {decided} by the library, not {claim.classes[0]}", ""
    return "", f"x1 the row, of class {decided} by the library"
