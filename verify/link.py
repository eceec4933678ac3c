"""The ``link`` step: a pruned box of a change claimed of a regressor whose prediction is
exp(raw score) (XGBoost reg:gamma / count:poisson / reg:tweedie, LightGBM poisson /
gamma / tweedie, HistGradientBoosting poisson / gamma, CatBoost Poisson / Tweedie).

Such a change is no linear condition on the raw scores, so no row of verify/claims.py
states it. A part of direction ``up`` rules out the pairs with f(x2) - f(x1) >= D, that
is exp(r2) - exp(r1) = exp(r1) (e^(r2 - r1) - 1) >= D with r1, r2 the raw scores; this
grows with r1 and with s = r2 - r1 (and is negative for s < 0). So on a box where
r1 <= R and r2 - r1 <= S for every pair,

    f(x2) - f(x1) <= exp(R) (e^S - 1),

and the box holds no breaking pair when that is below D (S <= 0 closes it outright).
Direction ``down`` is the mirror: R bounds x2's raw score, S bounds r1 - r2.

The step ``["link", R, S]`` states the two bounds; the checker recomputes both from the
model over the box (R: the lower input's raw score, the offset included; S: the pair's
difference, in which the trees that read no varied feature cancel), requires the stated
ones to be at least its own, and applies the rule to the stated ones widened by the
library's rounding: each raw score by the float-summation relaxation of the model kind
(``Checker.eps``), and each prediction exp(raw) by a relative error of at most
``LINK_ROUNDING`` (a float32 exp), which is a shift of the raw score by ``SHIFT``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .claims import Claim, Row
from .models import Model

EXP = "exp"  # a Model's link whose prediction is exp(raw)
LINK_ROUNDING = 2.0**-20  # the library's exp, relative error at most (a few float32 ulps)
SHIFT = -math.log1p(-LINK_ROUNDING)  # that error as a shift of the raw score


@dataclass(frozen=True)
class LinkRule:
    """What a ``link`` step of one part must show: the change D, the row whose largest
    value is R (the raw score of the input whose prediction is the lower one) and the
    row whose largest value is S (the other input's raw score minus that one)."""

    delta: float
    low: Row
    rise: Row


def link_rule(model: Model, claim: Claim, part: dict) -> LinkRule | None:
    """The rule a part's ``link`` steps answer to; None when the model's prediction is
    not exp(raw) (then no ``link`` step is valid)."""
    if model.link != EXP:
        return None
    if claim.kind != "change":
        raise ValueError("a regressor's claim is a change, not a gap")
    d = claim.value
    if not (math.isfinite(d) and d > 0.0):
        raise ValueError(f"change {d} must be a finite number above 0")
    direction = str(part.get("direction", "up"))
    if direction == "up":  # f(x2) - f(x1) >= D: x1 the lower prediction
        return LinkRule(d, Row((1.0,), None, 0.0), Row((-1.0,), (1.0,), 0.0))
    if direction == "down":  # f(x1) - f(x2) >= D: x2 the lower prediction
        return LinkRule(d, Row(None, (1.0,), 0.0), Row((1.0,), (-1.0,), 0.0))
    raise ValueError(f"a part's direction is up or down, not {direction!r}")


def change_bound(r: float, s: float, e: float) -> float:
    """The largest change exp(r2') - exp(r1') over raw scores the library may compute,
    r1' <= r + e and r2' - r1' <= s + 2e (e: one score's rounding): exp(r + e) (e^(s + 2e)
    - 1); at most 0 when s + 2e <= 0, inf past the double range."""
    rise = s + 2.0 * e
    if rise <= 0.0:
        return rise  # no pair goes up (a negative number: below every D)
    try:
        return math.exp(r + e) * math.expm1(rise)
    except OverflowError:
        return math.inf


def link_prune(checker, box: list, step: list, rule: LinkRule | None) -> str | None:
    """Why the step ``["link", R, S]`` does not rule its box out (None: it does)."""
    if rule is None:
        return (
            f"a link step {step!r} on a model whose prediction is not exp(raw score) "
            "(its change is a row: a prune step)"
        )
    if len(step) != 3:
        return f"a link step states R and S: {step!r}"
    stated_r, stated_s = _number(step[1]), _number(step[2])
    own_r = _largest(checker, box, rule.low)
    own_s = _largest(checker, box, rule.rise)
    if not stated_r >= own_r:
        return f"its R (the lower input's raw score) is at most {own_r:.9g}, above the {stated_r!r} stated"
    if not stated_s >= own_s:
        return f"its S (the raw rise) is at most {own_s:.9g}, above the {stated_s!r} stated"
    e = checker.eps + SHIFT
    bound = change_bound(stated_r, stated_s, e)
    if not bound < rule.delta:
        return (
            f"its change bound exp(R) (e^S - 1) = {bound:.9g} (R {stated_r:.9g}, S "
            f"{stated_s:.9g}, each raw score widened by {e:.3g}) does not reach below "
            f"{rule.delta:.9g}"
        )
    return None


def _largest(checker, box: list, row: Row) -> float:
    """The row's largest value over the box, recomputed from the model's trees."""
    lo, hi, nan = checker.box_ends(box)
    return checker._offset(row) + checker._table(row).bound(lo, hi, nan, checker.col_missing)


def _number(v) -> float:
    """A stated bound: a number, or "-inf" (an empty box) / "inf"; anything else NaN
    (which no comparison accepts)."""
    if isinstance(v, bool):
        return math.nan
    if isinstance(v, (int, float)):
        return float(v)
    return {"-inf": -math.inf, "inf": math.inf}.get(str(v), math.nan)
