"""A max gap's bounds (``MaxGap``): what stopped a search short of meeting them, what
they measure (a probability gap, a multiclass ratio, a regressor's change), whether they
meet within the stated tolerance, and the line that says them in words."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ..answers.phrases import (
    UNBOUNDED,
    lower_text,
    unbounded_ratio,
    unproven_because,
    unsplit_reason,
    unsplit_text,
    upper_text,
)
from ..compiler.ensemble import Ensemble
from ..compiler.query import GapKind

CHANGE = "change"  # MaxGap.kind of a regressor: the largest change f(x1) - f(x2)
# MaxGap.stopped_by of a search whose time limit came while building its pair tables
TABLE_BUILD = "table build"
# ... of a search whose open boxes were shed above the floor at its memory budget
MEMORY = "memory"
# ... of a search Ctrl-C or a signal stopped (its bounds ride on the KeyboardInterrupt)
INTERRUPTED = "interrupted"
# ... of a search that ended with its bounds farther apart than the tolerance: they keep
# the float32 rounding allowance (search/gap_search.py), wider than a tolerance that small
ROUNDING = "rounding"
# ... of a search a work budget ended (answers/work.py): its boxes, or its bisection's
# steps' work, all spent; the same bounds on any machine
WORK = "work"


@dataclass(frozen=True)
class MaxGap:
    """The bounds on the largest gap g*: ``lower`` is the gap the reported witness
    achieves (None: no witness), ``upper`` a proven bound (no pair reaches a larger gap),
    ``proven``: they meet within ``tolerance`` (with ``lower`` None: g* < ``upper`` <=
    ``tolerance``, insensitive to within the tolerance)."""

    lower: float | None
    upper: float
    tolerance: float
    proven: bool
    steps: int
    kind: str = "prob"
    method: str = "bisection"  # or "boxes": one best-first search (search/gap_search.py)
    # not proven: what stopped the search, None for the time limit, "memory" for the box
    # search's open boxes shed above the floor at its memory budget, TABLE_BUILD for the
    # time limit reached while building the box search's tables, INTERRUPTED for Ctrl-C
    # or a signal, ROUNDING for a tolerance below the bounds' float32 allowance, WORK for
    # a work budget spent, "error" for a bisection's check ending in error
    stopped_by: str | None = None
    # no tree splits on a varied feature within its bounds: x1 and x2 reach the same
    # leaves, one prediction; ``upper`` is then exact, the least gap there is (0; a ratio
    # of 1): no pair reaches a larger one
    unsplit: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


def bounds_meet(d: dict) -> bool:
    """Whether a max gap's bounds (``MaxGap.to_dict()``, a pair reached) are within
    its stated tolerance: absolute for a probability, relative for a change and a ratio."""
    lo, hi, tol = d["lower"], d["upper"], d["tolerance"]
    if d.get("kind") == CHANGE:
        return hi - lo <= tol * lo
    if d.get("kind") == "ratio":
        return hi <= lo * math.exp(tol)
    return hi - lo <= tol


def gap_kind(ens: Ensemble) -> str:
    """What a max gap measures: a regressor's change, a multiclass ratio, a probability."""
    if ens.is_regressor:
        return CHANGE
    return "ratio" if ens.n_outputs > 1 else "prob"


def result_gap_kind(ens: Ensemble) -> str:
    """A max gap's ``gap_kind``: what its ``gap`` field holds, a regressor's change
    (prediction units) or a probability gap (a multiclass ratio included, as a check's)."""
    return CHANGE if ens.is_regressor else str(GapKind.PROB)


def max_gap_line(m: MaxGap | dict, features: Sequence[str] = ()) -> str:
    """One line for people: the bounds and whether they meet (``features``: the varied
    ones, named where no tree splits on them)."""
    d = m.to_dict() if isinstance(m, MaxGap) else m
    lo, hi, tol = d["lower"], d["upper"], d["tolerance"]
    if d.get("unsplit"):
        return f"{unsplit_text(d)} ({unsplit_reason(features)})"
    if d.get("kind") == CHANGE:
        return _change_line(lo, hi, tol, d["proven"], unproven_because(d))
    why = unproven_because(d)
    if unbounded_ratio(d):
        return f"max gap {UNBOUNDED} (its ratio is stated as the largest float)"
    high = upper_text(hi, ".6g")
    if lo is None:
        if d["proven"]:
            return (
                f"max gap: none (no pair reaches gap {high}: insensitive to within the tolerance)"
            )
        return f"max gap: unknown (at most {high}; {why})"
    low = lower_text(lo, ".6g")
    if d["proven"] and hi <= lo:  # the pair reaches the bound: the largest gap there is
        return f"max gap {low} (proven: no pair reaches more; tolerance {tol:g})"
    if d["proven"]:
        return f"max gap {low} (proven: no pair reaches {high}; tolerance {tol:g})"
    return f"max gap in [{low}, {high}], not proven ({why}; tolerance {tol:g})"


def _change_line(lo: float | None, hi: float, tol: float, proven: bool, why: str) -> str:
    """A regressor's largest change f(x1) - f(x2), in words."""
    high = upper_text(hi, ".6g")
    if lo is None:
        if proven:
            return (
                f"largest change: none above the tolerance (no pair moves the prediction by {high})"
            )
        return f"largest change: unknown (at most {high}; {why})"
    low = lower_text(lo, ".6g")
    if proven:
        return f"largest change {low} (proven: no pair moves the prediction by more than {high})"
    return f"largest change in [{low}, {high}], not proven ({why}; relative tolerance {tol:.3g})"
