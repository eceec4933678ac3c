"""Does a pair of inputs meet the query? Asked of the library's own predict (the truth)
and of the Ensemble IR (to tell a rounding near-miss from a bug).

Every replay asks the library through ``library_output``: its columns must line up with
the model's (one per class, a regressor's one prediction, one raw score per output), or
the replay judges nothing (``OutputsMisaligned``); a library that raises on the rows
judges nothing either (``LibraryRaised``). Both are ``ReplayFailed``: an error, never a
verdict or a cut."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .ensemble import LOGISTIC, Ensemble
from .errors import InputError
from .query import ANY, DOWN, EITHER, UP, Query, class_index

if TYPE_CHECKING:  # the encoding's kinds read this module
    from .encode import Encoding


class ReplayFailed(Exception):
    """The library's outputs of a replay cannot judge the pair (the subclasses say why)."""


class OutputsMisaligned(ReplayFailed):
    """The library gives another number of columns than treesens' model of it has: its
    outputs do not line up with the model's classes, and no pair is judged on them."""


class LibraryRaised(ReplayFailed):
    """The library's predict raised on the rows (a value it refuses, say scikit-learn's
    "too large for float32"): no pair is judged on them."""


def library_output(ens: Ensemble, X: np.ndarray, raw: bool = False) -> np.ndarray:
    """The library's outputs of rows ``X`` as (rows, columns): its probabilities, one
    column per class (a regressor's predictions, one column), or with ``raw`` its raw
    scores, one column per output of the model; the IR's own when there is no replayer.
    OutputsMisaligned when the library gives another number of columns, LibraryRaised when
    it raises (an InputError of the replayer passes as it is)."""
    rep = ens.replayer
    if raw:
        call, width, each = "predict_raw", ens.n_outputs, "one per output"
        ask = ens.raw if rep is None else rep.predict_raw
    elif ens.is_regressor:
        call, width, each = "predict", 1, "its prediction"
        ask = ens.predict if rep is None else rep.predict
    else:
        call, width, each = "predict_proba", ens.n_classes, "one per class"
        ask = ens.proba if rep is None else rep.predict_proba
    try:
        out = np.asarray(ask(X), dtype=np.float64)
    except InputError:
        raise  # the replayer's own words on what it cannot be asked (check_pair says it)
    except Exception as e:  # noqa: BLE001 - whatever the library raises judges no pair
        raise LibraryRaised(
            f"the library's {call} raised on the pair ({type(e).__name__}: {e}): no pair "
            "is judged on it"
        ) from e
    if out.ndim == 1 and width == 1 and len(out) == len(X):
        out = out[:, None]
    if out.shape != (len(X), width):
        rows = out.ndim == 2 and len(out) == len(X)
        got = f"{out.shape[1]} columns" if rows else f"shape {out.shape} for {len(X)} inputs"
        raise OutputsMisaligned(
            f"the library's {call} gives {got}, treesens' model of it {width} ({each}): "
            "the library's outputs do not line up with the model's, no pair is judged on them"
        )
    return out


def meets(
    ens: Ensemble,
    q: Query,
    proba: np.ndarray,
    raw: np.ndarray,
    copy: int,
    other_class: int | None = None,
) -> bool:
    """Does one input (its probabilities and raw scores; a regressor's prediction as
    ``proba``) meet its side of the query?"""
    if ens.is_regressor:  # proba holds the prediction
        if q.delta is not None:  # a condition on the pair only: meets_pair
            return True
        a, b = q.threshold
        return float(proba[0]) >= a if copy == 0 else float(proba[0]) <= b
    g = q.gap
    if ens.n_classes == 2 and ens.n_outputs == 1:
        p = float(proba[1])
        if g.kind == "prob":
            return p >= 0.5 + g.value if copy == 0 else p <= 0.5 - g.value
        if ens.link == LOGISTIC:
            r = float(raw[0])
            return r >= g.value if copy == 0 else r <= -g.value
        return p >= 0.5 + g.value if copy == 0 else p <= 0.5 - g.value
    c1, c2 = (class_index(ens, c) for c in q.classes)
    if copy == 0:
        if c1 != ANY:
            targets = [c1]
        else:
            targets = [c for c in range(ens.n_classes) if c2 == ANY or c != c2]
    else:
        targets = [c2] if c2 != ANY else [c for c in range(ens.n_classes) if c != other_class]
    for c in targets:
        others = [k for k in range(ens.n_classes) if k != c]
        if g.kind == "prob":
            ok = all(float(proba[c]) >= g.value * float(proba[k]) for k in others)
        else:
            ok = all(float(raw[c]) - float(raw[k]) >= g.value for k in others)
        if ok:
            return True
    return False


def meets_pair(q: Query, f1: float, f2: float) -> bool:
    """Do a regressor's two predictions differ by at least ``q.delta`` in its direction
    (up: f(x2) - f(x1) >= delta)?
    (True for questions that ask nothing of the pair as a whole.)"""
    if q.delta is None:
        return True
    up, down = f2 - f1 >= q.delta, f1 - f2 >= q.delta
    return {UP: up, DOWN: down, EITHER: up or down}[q.direction]


def pair_slack(enc: Encoding, raw1: np.ndarray, raw2: np.ndarray) -> float:
    """The largest slack of the (unrelaxed) rows over both inputs, on IR raw scores
    (0.0 when the query has none); through a nonlinear link, the exact condition's."""
    lc = enc.condition.link_change
    if lc is not None:
        return lc.pair_slack(float(raw1[0]), float(raw2[0]))
    rows = enc.condition.pair_rows
    slacks = [float(np.dot(a, raw1) + np.dot(b, raw2)) - rhs for a, b, rhs in rows]
    return max(slacks) if slacks else 0.0


def predicted_class(proba: np.ndarray) -> int:
    return int(np.argmax(proba))


def condition_slack(enc: Encoding, raw: np.ndarray, copy: int) -> float:
    """Smallest slack of the (unrelaxed) gap rows of one copy, on IR raw scores."""
    rows = enc.condition.rows[copy]
    slacks = [float(np.dot(coefs, raw)) - rhs for coefs, rhs in rows]  # (empty for 'any')
    alts = enc.condition.alternatives[copy] if enc.condition.alternatives else ()
    if alts:
        slacks.append(max(min(float(np.dot(c, raw)) - r for c, r in grp) for grp in alts))
    return min(slacks) if slacks else 0.0
