"""What x2 must meet to count as another decision than a given one (the audit's flip, an
anchored query's x2), and how far a candidate is past it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ensemble import Ensemble
from .query import Gap


@dataclass(frozen=True)
class Target:
    """What x2 must meet: a binary gap (prob or margin) or a multiclass ratio G toward
    any other class (``cls`` None) or a named class index; for a regressor, a prediction
    at least ``delta`` from the row's (``direction`` up: above it, down: below, either)."""

    gap: Gap
    cls: int | None = None
    delta: float | None = None
    direction: str = "either"

    def words(self) -> str:
        """What x2 must meet, in a few words: "prob gap 0.2", "prediction moves by 100"."""
        if self.delta is not None:
            way = {"up": "up ", "down": "down "}.get(self.direction, "")
            return f"prediction moves {way}by at least {self.delta:g}"
        if self.gap.kind == "prob" and self.gap.value >= 1:  # a multiclass ratio (binary < 0.5)
            to = "another class" if self.cls is None else f"class {self.cls}"
            return f"probability ratio {self.gap.value:g} to {to}"
        return f"{self.gap.kind} gap {self.gap.value:g}"


def flip_confidence(
    ens: Ensemble, target: Target, d: np.ndarray, proba: np.ndarray, raw: np.ndarray | None
) -> np.ndarray:
    """How far each candidate is past the flip condition (>= 0: it flips); for a
    regressor, how far its prediction moved from the row's (``d``) beyond delta."""
    if ens.is_regressor:
        moved = proba[:, 0] - d
        return {"up": moved, "down": -moved}.get(target.direction, np.abs(moved)) - target.delta
    g = target.gap
    if ens.n_classes == 2 and proba.shape[1] == 2:
        if g.kind == "margin":
            m = raw[:, 0]
            return np.where(d == 1, -g.value - m, m - g.value)
        p = proba[:, 1]
        return np.where(d == 1, (0.5 - g.value) - p, p - (0.5 + g.value))
    k = proba.shape[1]
    best = np.full(len(proba), -np.inf)
    for c in range(k) if target.cls is None else [target.cls]:
        others = np.delete(proba, c, axis=1)
        if g.kind == "margin":
            score = raw[:, c] - np.delete(raw, c, axis=1).max(axis=1) - g.value
        else:
            score = proba[:, c] - g.value * others.max(axis=1)
        best = np.maximum(best, np.where(d == c, -np.inf, score))
    return best
