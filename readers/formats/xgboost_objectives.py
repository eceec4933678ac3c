"""XGBoost's objectives as treesens reads them: which it supports, each one's link, and
the (classes, link, intercept) of an objective, its class count and its base score. The
native reader takes them from the model's file; a dump records none of them, so its
reader takes them from the caller (``LoadOptions.objective``, ``n_classes``,
``base_score``)."""

from __future__ import annotations

import numpy as np

from ...compiler.ensemble import EXP, IDENTITY, LOGISTIC, SOFTMAX, logit
from ...compiler.errors import InputError

SUPPORTED = (
    "binary:logistic",
    "binary:logitraw",
    "reg:logistic",
    "multi:softprob",
    "multi:softmax",
)
# their prediction is P(class 1), trained as a regression onto [0, 1]: they answer the
# binary questions as a binary classifier and the regressor questions as a regressor
PROBABILITY = ("reg:logistic",)
# regression objectives and their link; a log link's base_score is a prediction
REGRESSION = {
    "reg:squarederror": IDENTITY,
    "reg:absoluteerror": IDENTITY,
    "reg:pseudohubererror": IDENTITY,
    "reg:quantileerror": IDENTITY,  # of one quantile_alpha (several: num_target > 1)
    "reg:squaredlogerror": IDENTITY,  # trained on log1p(label), predicts the raw score
    "count:poisson": EXP,
    "reg:gamma": EXP,
    "reg:tweedie": EXP,
}
KNOWN = (*SUPPORTED, *REGRESSION)


def _f32(x) -> float:
    return float(np.float32(x))


def outputs(
    obj: str, num_class: int, bs: list[float], T: int, where: str
) -> tuple[int, str, tuple[float, ...]]:
    """(number of classes, link, intercept) of an objective and its base score."""
    if obj.startswith("multi:"):
        n_classes = max(num_class, 1)
        if n_classes > max(T, 2):  # every class has trees (and a huge count fills the memory)
            raise InputError(f"num_class={num_class} but the model has {T} trees", where)
        intercept = tuple(_f32(b) for b in (bs if len(bs) == n_classes else bs[:1] * n_classes))
        return n_classes, SOFTMAX, intercept
    if num_class > 1:  # xgboost would predict num_class columns from one output's trees
        raise InputError(f"num_class={num_class} but the objective {obj} has one output", where)
    b0 = _f32(bs[0])
    if REGRESSION.get(obj) == EXP:
        if not b0 > 0.0:
            raise InputError(f"base_score {b0} of a log-link objective is not positive", where)
        return 0, EXP, (float(np.log(b0)),)
    if obj in REGRESSION:
        return 0, IDENTITY, (b0,)
    if obj in ("binary:logistic", *PROBABILITY):
        if not 0.0 < b0 < 1.0:
            raise InputError(f"base_score {b0} of {obj} is not a probability", where)
        return 2, LOGISTIC, (logit(b0),)
    return 2, LOGISTIC, (b0,)
