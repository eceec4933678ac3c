"""A pair's gap in gap units (a probability gap, or the log of a probability ratio for a
multiclass query), the bound a row's value puts on it, and the best pair the library's
own predict replays for a search."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..answers.result import Result
from ..answers.verdict import PROBA_AGREEMENT, library_outputs, scores_apart
from ..compiler.encode import Encoding
from ..compiler.ensemble import LOGISTIC, Ensemble
from ..compiler.passes.feature_constraints import constraint_violations
from ..compiler.query import Gap, GapKind, Query
from ..compiler.replay import ReplayFailed, library_output, meets

# added to a bound on the gap: the library's float32 sigmoid, rounded up
PROBA_SLACK = 1e-6


def achieved_gap(p1: float, p2: float) -> float:
    """The largest gap a pair with these class-1 probabilities meets:
    min(P(x1) - 0.5, 0.5 - P(x2)), rounded down until it holds in floating point."""
    g = min(p1 - 0.5, 0.5 - p2)
    while not (p1 >= 0.5 + g and p2 <= 0.5 - g):
        g = float(np.nextafter(g, -math.inf))
    return g


def gap_bound(ens: Ensemble) -> Callable[[float], float]:
    """Row units (a row's value at gap 0) to a bound on the gap, in gap units."""
    if ens.is_regressor:  # the change f(x1) - f(x2); the row's threshold is relaxed already
        return lambda u: u
    if ens.n_outputs > 1:  # softmax rows are log ratios already; float32 slack added
        return lambda u: u + PROBA_SLACK
    if ens.link == LOGISTIC:

        def to_gap(u: float) -> float:
            g = 1.0 / (1.0 + math.exp(-u)) - 0.5 if u > -700 else -0.5
            return min(0.5, g + PROBA_SLACK)

        return to_gap
    return lambda u: min(0.5, u + PROBA_SLACK)  # the raw score is the probability


def achieved_ratio(ens: Ensemble, q: Query, proba: np.ndarray, raw: np.ndarray) -> float:
    """The largest probability ratio a replayed multiclass pair meets for ``q``'s two
    classes, as the query's own check reads it (log units); -inf when it meets none."""
    c = [int(k) for k in q.classes]
    g = min(
        _ratio(float(proba[i, c[i]]), float(proba[i, k]))
        for i in (0, 1)
        for k in range(ens.n_classes)
        if k != c[i]
    )
    for _ in range(64):  # rounded down until the check agrees
        if g < 1.0:
            return -math.inf
        qg = q.with_(gap=Gap(g, GapKind.PROB))
        if meets(ens, qg, proba[0], raw[0], 0) and meets(ens, qg, proba[1], raw[1], 1):
            return math.log(g)
        g = float(np.nextafter(g, -math.inf))
    return -math.inf


LOG_MAX = math.log(float(np.finfo(float).max))


def _ratio(p: float, q: float) -> float:
    """p / q, where a class the library gives probability 0 (underflow) is beaten by any
    ratio: the largest float stands for it."""
    return p / q if q > 0 else (float(np.finfo(float).max) if p > 0 else 0.0)


@dataclass
class BestPair:
    """The best replayed pair (in gap units), and a disagreement between the library
    and the IR."""

    ens: Ensemble
    # the query whose bounds and relations every offered pair must meet (None: none):
    # the box search reads bounds as narrower domains (compiler/bounds_as_domains.py) and
    # relations in rank space (relation_boxes.py), and a pair outside them is no lower
    # bound of the query's gap
    query: Query | None = None
    gap: float = -math.inf
    pair: tuple[np.ndarray, np.ndarray] | None = None
    enc: Encoding | None = None
    outputs: dict | None = None
    disagreement: str | None = None
    offered: int = 0

    def offer_for(self, enc: Encoding) -> Callable[[np.ndarray, np.ndarray], float | None]:
        """The offer of one encoding's search: replay, measure, keep the best."""
        ens = self.ens

        def offer(x1: np.ndarray, x2: np.ndarray) -> float | None:
            self.offered += 1
            q = self.query
            # a pair off the bounds or the relations between the inputs: no lower bound
            constrained = q is not None and (q.bounds or q.relations)
            if constrained and constraint_violations(ens, q, x1, x2):
                return None
            X = np.stack([x1, x2])
            try:
                ir, lib = library_outputs(ens, X)
                raw = library_output(ens, X, raw=True) if ens.n_outputs > 1 else None
            except ReplayFailed as e:  # as a disagreement: the search ends in error
                self.disagreement = str(e)
                return None
            if scores_apart(ens, lib, ir) > PROBA_AGREEMENT:
                self.disagreement = (
                    "the library's predict disagrees with treesens' model of it: "
                    f"library {lib.tolist()}, treesens {ir.tolist()}"
                )
                return None
            if ens.is_regressor:
                g = float(lib[0, 0]) - float(lib[1, 0])
            elif raw is not None:
                g = achieved_ratio(ens, enc.query, lib, raw)
            else:
                g = achieved_gap(float(lib[0, 1]), float(lib[1, 1]))
            if g > self.gap:
                self.gap, self.pair, self.enc = g, (x1, x2), enc
                self.outputs = {"x1": lib[0].tolist(), "x2": lib[1].tolist()}
            return g

        return offer


def shown_gap(ens: Ensemble, g: float) -> float:
    """A gap in gap units as results state it: a probability, or a ratio."""
    if ens.n_outputs == 1:
        return g
    # past the largest float the ratio is stated as it (as _ratio states a zero class)
    return math.exp(g) if g < LOG_MAX else float(np.finfo(float).max)


def shown_lower(ens: Ensemble, q: Query, res: Result, g: float) -> float:
    """The lower bound ``g`` (gap units) as results state it: the gap the reported pair
    meets. A ratio is e^g rounded down until the pair's replayed probabilities meet it by
    the check's own rule (e^ln G may land an ulp above the G the pair met: a pair at
    exactly 12/21 against 4/21 would claim 3.0000000000000004, which it does not meet)."""
    r = shown_gap(ens, g)
    if ens.n_outputs == 1 or res.outputs is None or res.classes is None:
        return r
    proba = np.array([res.outputs["x1"], res.outputs["x2"]], dtype=np.float64)
    at = q.with_(classes=tuple(res.classes))
    for _ in range(64):
        qg = at.with_(gap=Gap(r, GapKind.PROB))
        if r <= 1.0 or (
            meets(ens, qg, proba[0], proba[0], 0) and meets(ens, qg, proba[1], proba[1], 1)
        ):
            return r
        r = float(np.nextafter(r, -math.inf))
    return r
