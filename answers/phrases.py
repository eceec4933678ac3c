"""An answer summed up in a few words: a regressor's condition on its two predictions, a
max gap's bounds, the bracket of a max-gap search still running, who proved an
insensitive answer. ``repr(result)``, the progress lines of the searches, the sweep's
table and the views (views/result_view.py) say them alike."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .proof import Proof
    from .result import Result

# what a query the box search alone cannot take is told (search/boxes.py); compare does
# not count it a failure (questions/compare.py)
NOT_DESCRIBED = "the box search does not describe this query"
# a query whose time limit ran out before its search began (driver/solve.py); the check
# command says what took the time (interfaces/cli/check.before_search_note)
BEFORE_SEARCH = "time limit reached before the search (loading and compiling)"
# the same where nothing was compiled (the heuristic and the box search read the trees'
# thresholds alone, driver/solve._start); the check command names the stage that took the
# time after the message's parenthesis
BEFORE_SEARCH_UNCOMPILED = "time limit reached before the search (loading and reading the trees)"
BEFORE_SEARCH_STAGE = {BEFORE_SEARCH: "compiling", BEFORE_SEARCH_UNCOMPILED: "reading the trees"}
# the constraints on the inputs the box search does not read (bounds that hold for both
# inputs alike it reads as the features' domains, compiler/bounds_as_domains.py; a bound on
# one input of a varied feature as a restriction of its column, search/pair_boxes.py)
UNREAD_CONSTRAINTS = "relations between the inputs"
# how an answer's note about features no tree splits on begins (questions/ask.py); the
# report's sentence of such a feature carries it (views/report_html.py)
NEVER_SPLITS = "the model never splits on"


def unsplit_reason(features: Sequence[str] = ()) -> str:
    """Why a max gap is 0 exactly (``max_gap["unsplit"]``, questions/max_gap.py): no tree
    reads a varied feature within the query's bounds, which may leave out splits a tree
    has; ``features``, the varied ones, named (else "the varied features")."""
    if len(features) == 1:
        where = f"{features[0]} within its bounds"
    elif features:
        where = f"{', '.join(features[:-1])} or {features[-1]} within their bounds"
    else:
        where = "the varied features within their bounds"
    return f"proven: no tree splits on {where}, so x1 and x2 reach the same leaves and get one prediction"


def prediction_condition(res: Result, fmt: str = ".12g") -> str | None:
    """What a regressor's question asked of the two predictions, in words (None: a
    classifier's question)."""
    if res.threshold:
        a, b = res.threshold
        return f"f(x1) >= {a:{fmt}}, f(x2) <= {b:{fmt}}"
    if res.delta:
        d, way = res.delta["at_least"], res.delta["direction"]
        return {  # read from x1 to x2: up, the prediction goes up
            "up": f"f(x2) - f(x1) >= {d:{fmt}}",
            "down": f"f(x1) - f(x2) >= {d:{fmt}}",
        }.get(way, f"|f(x2) - f(x1)| >= {d:{fmt}}")
    return None


def unproven_because(bounds: dict) -> str:
    """What left a max gap's bounds apart: the time limit (``stopped_by`` "table build":
    reached while building the box search's tables), or (``stopped_by`` "memory") the
    box search's open boxes shed at its memory budget, ("interrupted") Ctrl-C or a
    signal, ("rounding") the search's end with its bounds apart by their float32
    rounding allowance, more than the tolerance, ("work") its work budget spent, or
    ("error") a check of the bisection ending in error (its error line says which)."""
    return {
        "error": "a check ended in error",
        "memory": "boxes shed for memory",
        "interrupted": "interrupted",
        "rounding": "search complete; the bounds keep a float32 rounding allowance wider "
        "than the tolerance",
        "table build": "time limit during table build",
        "work": "work budget spent",
    }.get(bounds.get("stopped_by"), "time limit")


# a multiclass ratio whose pair gives a class probability 0 (pure leaves): the largest
# float stands for it (search/gap_units.py, ``_ratio``)
UNBOUNDED_RATIO = sys.float_info.max
UNBOUNDED = "unbounded: the pair gives a class probability 0"


def unbounded_ratio(bounds: dict) -> bool:
    """Whether a max gap's pair reaches an unbounded multiclass ratio."""
    lo = bounds.get("lower")
    return bounds.get("kind") == "ratio" and lo is not None and lo >= UNBOUNDED_RATIO


def lower_text(v: float, spec: str = ".4g") -> str:
    """A lower bound in a few digits, rounded down (0.49996 -> "0.4999", not "0.5"): the
    bracket shown still holds what was proven."""
    return _outward(v, spec, down=True)


def upper_text(v: float, spec: str = ".4g") -> str:
    """An upper bound in a few digits, rounded up."""
    return _outward(v, spec, down=False)


def _outward(v: float, spec: str, down: bool) -> str:
    """``v`` in ``spec``, rounded toward -inf (``down``) or +inf, in exponent form too
    (7.98849e-06 up: "7.989e-06"; 123456.7 down in .4g: "1.234e+05")."""
    text = format(v, spec)
    if not math.isfinite(v) or v == 0:
        return text
    if (float(text) <= v) if down else (float(text) >= v):
        return text
    if spec.endswith("f"):
        places = int(spec[1:-1])
    else:  # significant digits: the places of v's last one
        places = int(spec[1:-1]) - 1 - math.floor(math.log10(abs(v)))
    step = 10.0**-places
    q = math.floor(v / step) if down else math.ceil(v / step)
    for _ in range(3):  # q * step's own rounding may land it back on the wrong side
        shown = format(q * step, f".{max(places, 0)}f" if spec.endswith("f") else spec)
        if (float(shown) <= v) if down else (float(shown) >= v):
            return shown
        q += -1 if down else 1
    return shown


def unsplit_text(bounds: dict) -> str:
    """The max gap of a question no tree splits a varied feature of (``unsplit``): "max
    gap 0", "largest change 0", a multiclass model's "largest ratio 1"; the pair's one
    prediction reaches no more."""
    if bounds.get("kind") == "change":
        return "largest change 0"
    return "largest ratio 1" if bounds.get("kind") == "ratio" else "max gap 0"


def max_gap_brief(bounds: dict) -> str:
    """A max gap's bounds in a few words: "max gap in [0.41, 0.45], not proven"."""
    lo, hi = bounds.get("lower"), bounds.get("upper")
    what = "largest change" if bounds.get("kind") == "change" else "max gap"
    if bounds.get("unsplit"):
        return f"{unsplit_text(bounds)} (no tree splits on it)"
    if unbounded_ratio(bounds):
        return f"{what} {UNBOUNDED}"
    if lo is None:
        if bounds.get("proven"):
            return f"{what} none (proven)"
        return f"{what} unknown (<= {upper_text(hi, '.6g')})"
    low, high = lower_text(lo, ".6g"), upper_text(hi, ".6g")
    if bounds.get("proven") and hi <= lo:  # the pair reaches the bound
        return f"{what} {low} (proven: no more)"
    if bounds.get("proven"):
        return f"{what} {low} (proven < {high})"
    return f"{what} in [{low}, {high}], not proven"


class ProgressLine(str):
    """A progress line of a search still running (``max_gap_searching``'s): a display may
    show one per interval and drop those between, where a line of another kind told to
    the same callable (a note on making the box search's kernel ready) is shown whole."""


def max_gap_searching(
    kind: str, lower: float | None, upper: float, detail: str = "", left: float | None = None
) -> ProgressLine:
    """A progress line of a max-gap search still running: the bracket its bounds hold so
    far, marked as such ("max gap so far in [0.0083, 0.4875] (searching, 46 boxes, 12s
    left)"). ``kind``: "change" for a regressor's largest change; ``detail``: what the
    search has done; ``left``: the seconds left of its time limit (None or infinite: no
    limit but a work budget)."""
    what = "largest change" if kind == "change" else "max gap"
    if left is not None and math.isfinite(left):
        detail = (
            f"{detail}, {max(left, 0.0):.0f}s left" if detail else f"{max(left, 0.0):.0f}s left"
        )
    doing = f"searching, {detail}" if detail else "searching"
    if lower is None:
        return ProgressLine(f"{what} so far at most {upper_text(upper)} (no pair yet; {doing})")
    return ProgressLine(f"{what} so far in [{lower_text(lower)}, {upper_text(upper)}] ({doing})")


def proof_brief(proof: Proof) -> str:
    """An insensitive answer's proof in a word or two: "certified" (its certificate
    written and verified), or the prover and "(unchecked)" ("cpsat (unchecked)")."""
    if proof.bound is not None and not proof.checked:  # a max gap's upper bound
        return "not needed" if proof.needs_none else "not certified"
    return "certified" if proof.checked else f"{proof.by} (unchecked)"
