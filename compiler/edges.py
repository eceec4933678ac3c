"""Where the library's comparison changes side: the doubles of a cell.

A split's test (``Ensemble.test_holds``: a cast to float32 or not, then ``<`` or ``<=``)
is monotone in the input, so the inputs that take one side form a range of doubles,
whose end ``first_no`` finds by a search over consecutive doubles.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from .ensemble import Ensemble


def ordered(x: float) -> int:
    """Order-preserving map of float64 to int (consecutive floats -> consecutive ints)."""
    i = struct.unpack("<q", struct.pack("<d", x))[0]
    return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)


def unordered(i: int) -> float:
    """The float64 that ``ordered`` maps to ``i``."""
    bits = i if i >= 0 else ((-i) | (1 << 63))
    return struct.unpack("<d", struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF))[0]


_FIRST_NO: dict = {}


def first_no(ens: Ensemble, t: float) -> float:
    """The smallest float64 input the library sends to the "no" side of a split at t.

    The library's test is monotone in the input, so a binary search over consecutive
    float64 values finds the exact edge, rounding included."""
    key = (ens.op, ens.cast, t)
    if key in _FIRST_NO:
        return _FIRST_NO[key]
    guess = _guess(ens, t)
    if guess is not None and _is_first_no(ens, t, guess):
        _FIRST_NO[key] = guess
        return guess
    hi = ordered(t)
    step = 1
    while ens.test_holds(unordered(hi), t):  # find a "no"
        hi += step
        step *= 2
    lo, step = hi - 1, 1
    while not ens.test_holds(unordered(lo), t):  # find a "yes"
        lo -= step
        step *= 2
    while hi - lo > 1:  # invariant: lo is "yes", hi is "no"
        mid = (lo + hi) // 2
        if ens.test_holds(unordered(mid), t):
            lo = mid
        else:
            hi = mid
    if len(_FIRST_NO) > 100_000:
        _FIRST_NO.clear()
    _FIRST_NO[key] = unordered(hi)
    return _FIRST_NO[key]


def _is_first_no(ens: Ensemble, t: float, x: float) -> bool:
    return not ens.test_holds(x, t) and ens.test_holds(unordered(ordered(x) - 1), t)


def _guess(ens: Ensemble, t: float) -> float | None:
    """Where the first "no" of a split at t should be, from how the library rounds (to
    be checked, as ``first_no`` does): t or the double after it; under a float32 cast,
    the first double that rounds to the smallest float32 on the "no" side (half-way to
    the float32 below it, ties to even). None where that is not a finite number."""
    if ens.cast != "float32":
        return t if ens.op == "<" else math.nextafter(t, math.inf)
    with np.errstate(over="ignore"):
        c = np.float32(t)
    if not np.isfinite(c):
        return None
    past = float(c) >= t if ens.op == "<" else float(c) > t
    s = c if past else np.nextafter(c, np.float32(np.inf))
    below = np.nextafter(s, np.float32(-np.inf))
    if not (np.isfinite(s) and np.isfinite(below)):
        return None
    mid = (float(below) + float(s)) / 2.0  # exact: a float32 has 24 bits, a double 53
    even = int(np.array(s, dtype=np.float32).view(np.uint32)) % 2 == 0
    return mid if even else math.nextafter(mid, math.inf)
