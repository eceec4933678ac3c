"""The shortest decimal in a range of doubles: how a witness value reads.

Every input a cell holds routes the same way in every tree, so a witness may show any of
them; it shows the one with the fewest significant digits (14.1, not the float32 value
14.099999935267341 the library reads it as, nor the double 33.40000000000001 just past
a threshold), and that very number is replayed.
"""

from __future__ import annotations

import decimal
import math

# the finest power of ten tried: below the smallest subnormal double, so that every range
# holding a double holds a decimal of this form
_FINEST = -330
# exact: a double is a decimal of at most 767 significant digits
_EXACT = decimal.Context(prec=800, rounding=decimal.ROUND_HALF_EVEN, Emin=-2000, Emax=2000)


def shortest_decimal(lo: float, hi: float, near: float, integral: bool = False) -> float | None:
    """The decimal with the fewest significant digits in [lo, hi] (finite doubles), the
    one nearest ``near`` among those, as the double nearest it (whose repr is that
    decimal); an integer when ``integral``. None when the range holds none."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        return None
    top = math.floor(math.log10(max(abs(lo), abs(hi), 1.0))) + 1
    target = decimal.Decimal(min(max(near, lo), hi))
    for k in range(top, -1 if integral else _FINEST - 1, -1):
        step = decimal.Decimal((0, (1,), k))
        n = target.quantize(step, context=_EXACT)
        # the multiple of step nearest the target; when it falls outside, the next one
        # towards the range is the only other candidate
        for m in (n, _EXACT.add(n, step), _EXACT.subtract(n, step)):
            v = float(m) + 0.0  # + 0.0: zero reads 0, not -0 (a negative target)
            if lo <= v <= hi:
                return v
    return None


def readable_in(lo: float, hi: float, integral: bool = False) -> float | None:
    """The shortest decimal in [lo, hi] nearest its middle (``shortest_decimal``); an
    unbounded side reaches as far from the other end as that end is from zero (at least
    1), as a value one would write: 20 in [14.05, inf), 0 on the whole line."""
    if math.isinf(lo) and math.isinf(hi):
        lo, hi = -1.0, 1.0
    elif math.isinf(lo):
        lo = hi - max(1.0, abs(hi))
    elif math.isinf(hi):
        hi = lo + max(1.0, abs(lo))
    return shortest_decimal(lo, hi, lo / 2 + hi / 2, integral)
