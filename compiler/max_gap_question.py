"""The max-gap question (compiler/kinds.py's ``max_gap`` kind): what it takes, checked
against the model (binary, multiclass with two classes, or a regressor's largest
change; no gap of its own), its tolerance, and the pair question its search starts from.
questions/max_gap.py answers it."""

from __future__ import annotations

import math

from .ensemble import Ensemble
from .errors import InputError, spelled
from .question import CHANGE, DOWN, Gap, GapKind, Question
from .readings import read_for

# absolute, in probability (multiclass: ln units; a regressor's: relative to its bound):
# a thousandth of a probability ranks features and says how far F moves a decision
DEFAULT_TOLERANCE = 1e-3
MIN_TOLERANCE = 1e-6  # below this the solvers' float tolerances decide, not the search


def check_max_gap_model(ens: Ensemble, q: Question | None = None) -> None:
    """The search is defined for binary models (one output) with the gap in probability,
    and for multiclass models (boosted, softmax, or forests, averaged probabilities) with
    the gap a probability ratio between two classes (``q.classes``; either may be "any"); a query from the CLI or the API
    (``q``) must not name a gap of its own. A probability model is searched in the
    reading the query asks, or has (compiler/readings.py): a loaded one's largest gap is a
    probability gap."""
    if q is not None:
        ens = read_for(ens, q)
    if ens.is_regressor:
        _check_change_model(ens, q)
        return
    if ens.n_outputs > 1 and q is not None and not q.classes:
        raise InputError(
            f"{_asked_as()}: the model has {ens.n_classes} classes: give the two classes "
            f"to compare ({spelled('classes=(C1, C2)', '--classes C1,C2')}; either may be "
            "'any')"
        )
    if q is not None and q.gap.given:
        raise InputError(
            f"{_asked_as()} searches the gap itself: give no gap "
            f"({spelled('gap=, margin_gap=', '--gap, --margin-gap')})"
        )


def _asked_as() -> str:
    """The question's name as the interface in use spells it."""
    return spelled("max_gap", "--max-gap")


def _check_change_model(ens: Ensemble, q: Question | None) -> None:
    """A regressor's largest change f(x1) - f(x2) is searched with no question of its
    own given."""
    if q is not None and (q.threshold is not None or q.delta is not None):
        raise InputError(
            f"{_asked_as()} searches the largest change itself: give no delta or threshold "
            f"form ({spelled('delta=, above=, below=', '--delta, --above, --below')})"
        )


def max_gap_probe(ens: Ensemble, q: Question) -> Question:
    """``q`` checked for a max-gap search (``check_max_gap_model``), at the gap the search
    starts from (0, the ratio 1, or a regressor's change 0 upwards): what a caller
    resolves up front to check its classes."""
    check_max_gap_model(ens, q)
    q = q.with_(kind="", params=())  # the pair (or change) question the search asks
    if read_for(ens, q).is_regressor:  # the change f(x1) - f(x2): x1 the higher prediction
        return q.with_(delta=0.0, direction=DOWN)
    return q.with_(gap=Gap(1.0 if ens.n_outputs > 1 else 0.0, GapKind.PROB))


def unreached_gap(ens: Ensemble, q: Question) -> tuple[float, str]:
    """A max gap's ``gap`` and ``gap_kind`` before any pair reached one (its "error"
    result): the gap its search starts from, which no pair needs to reach: 0 in
    probability, a multiclass ratio of 1, a regressor's change of 0 (in the reading the
    query asks, where it can be read), never a check's gap the question does not ask."""
    try:
        regressor = read_for(ens, q).is_regressor
    except InputError:  # the reading asked is the error: the model as loaded
        regressor = ens.is_regressor
    if regressor:
        return 0.0, CHANGE
    return (1.0 if ens.n_outputs > 1 else 0.0), str(GapKind.PROB)


def check_tolerance(tolerance: float) -> float:
    """A max gap's tolerance, checked (``MIN_TOLERANCE`` <= it < 0.5)."""
    number = isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool)
    if not (number and math.isfinite(tolerance)):
        raise InputError(f"max-gap tolerance must be a number, got {tolerance!r}")
    if not MIN_TOLERANCE <= tolerance < 0.5:
        raise InputError(
            f"max-gap tolerance {tolerance:g} out of range: {MIN_TOLERANCE:g} <= tolerance < 0.5"
        )
    return float(tolerance)
