"""Which reading of a probability model answers a question.

A probability model (``Ensemble.probability``: XGBoost ``reg:logistic``, LightGBM
``cross_entropy``, CatBoost ``CrossEntropy``) predicts P(class 1). It answers the binary
questions (a gap, a margin gap, the largest probability gap, the audit's flip) as a
binary classifier, and the regressor questions (a change by at least delta, the threshold
form above / below) as a regressor whose link is the sigmoid. A question that is neither
(the largest gap, asked without a gap) takes the reading the model has: a loaded model's
is the binary classifier's; ``Ensemble.as_regressor()`` asks for the largest change.

Every other model has one reading, and is returned as it is: a question it cannot take is
refused where the question meets the model, as before.
"""

from __future__ import annotations

from .ensemble import Ensemble
from .query import Query


def read_as(ens: Ensemble, regressor: bool | None) -> Ensemble:
    """``ens`` read as a regressor (True), as a binary classifier (False), or as it is
    (None); a model with one reading, as it is."""
    if not ens.probability or regressor is None:
        return ens
    return ens.as_regressor() if regressor else ens.as_classifier()


def asks_regressor(q: Query) -> bool | None:
    """Whether the query asks a regressor's question (True), a classifier's (False), or
    either (None: a largest gap, or the default gap, which take the model's reading)."""
    if q.delta is not None or q.threshold is not None:
        return True
    if q.gap.given or q.classes is not None:
        return False
    return None


def read_for(ens: Ensemble, q: Query) -> Ensemble:
    """The reading of ``ens`` that answers ``q`` (``ens`` itself for a model with one
    reading)."""
    return read_as(ens, asks_regressor(q))
