"""A witness value is the shortest decimal of its cell: ``shortest_decimal`` finds the
decimal with the fewest significant digits in a range of doubles, and a domain's
representative is that decimal for the cell's range, which the library's own comparison
(XGBoost float32 ``<``, scikit-learn float32 ``<=`` against a double threshold, LightGBM
double ``<=``) routes into the cell."""

from __future__ import annotations

import decimal
import math
import struct
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from treesens.compiler.decimals import shortest_decimal
from treesens.compiler.domain import build_domain, in_interval
from treesens.compiler.edges import first_no
from treesens.compiler.ensemble import IDENTITY, Ensemble, Feature, Tree

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
# how the libraries compare: XGBoost, scikit-learn, LightGBM
LIBRARIES = {
    "xgboost": ("<", "float32"),
    "sklearn": ("<=", "float32"),
    "lightgbm": ("<=", "float64"),
}


def _digits(v: float) -> int:
    """Significant digits of the shortest repr of v (0 for zero)."""
    if v == 0:
        return 0
    return len(decimal.Decimal(repr(v)).normalize().as_tuple().digits)


def _fewest_digits(lo: float, hi: float, integral: bool) -> int | None:
    """The fewest significant digits of a decimal whose double lies in [lo, hi] (an
    integer when ``integral``), for p = 1, 2, ...: lo rounded down and up to p digits,
    the two p-digit decimals one of which is the first whose double is at least lo."""
    if integral:
        lo = float(math.ceil(lo))
        if lo > hi:
            return None
    if lo <= 0 <= hi:
        return 0
    for p in range(1, 18):
        for way in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING):
            d = decimal.Context(prec=p, rounding=way).plus(decimal.Decimal(lo))
            if lo <= float(d) <= hi:
                return p
    return None


def _ordered_pair(a: float, b: float) -> tuple[float, float]:
    return (a, b) if a <= b else (b, a)


@settings(max_examples=300, deadline=None)
@given(finite, finite, st.floats(0, 1))
def test_the_shortest_decimal_lies_in_its_range(a, b, where):
    lo, hi = _ordered_pair(a, b)
    v = shortest_decimal(lo, hi, lo + where * (hi - lo))
    assert v is not None and lo <= v <= hi


@settings(max_examples=300, deadline=None)
@given(finite, finite, st.floats(0, 1))
def test_no_decimal_of_the_range_has_fewer_digits(a, b, where):
    lo, hi = _ordered_pair(a, b)
    v = shortest_decimal(lo, hi, lo + where * (hi - lo))
    assert _digits(v) == _fewest_digits(lo, hi, integral=False)


@settings(max_examples=300, deadline=None)
@given(finite, st.floats(0, 1e-3))
def test_a_range_a_few_floats_wide_still_reads_short(a, width):
    lo, hi = a, a + width * max(1.0, abs(a))
    v = shortest_decimal(lo, hi, lo)
    assert _digits(v) == _fewest_digits(lo, hi, integral=False)


@settings(max_examples=300, deadline=None)
@given(finite, finite)
def test_an_integral_range_gives_its_shortest_integer(a, b):
    lo, hi = _ordered_pair(a, b)
    v = shortest_decimal(lo, hi, (lo + hi) / 2, integral=True)
    if math.ceil(lo) > hi:
        assert v is None
    else:
        assert v == math.floor(v) and lo <= v <= hi
        assert _digits(v) == _fewest_digits(lo, hi, integral=True)


def test_of_equally_short_decimals_the_one_nearest_the_target_is_chosen():
    assert shortest_decimal(11.0, 39.0, 31.0) == 30.0
    assert shortest_decimal(11.0, 39.0, 12.0) == 20.0  # 10 is outside


def test_a_double_just_past_a_threshold_reads_as_the_next_short_decimal():
    lo = math.nextafter(26.95, math.inf)  # 26.950000000000003
    assert shortest_decimal(lo, 26.98, lo) == 26.96


def test_zero_reads_as_0_not_minus_0_from_a_range_reaching_below_zero():
    # the cell (-inf, 0.0525) of a feature without bounds: its middle is negative
    v = shortest_decimal(-0.9475, 0.0525, -0.4475)
    assert v == 0 and math.copysign(1.0, v) == 1.0 and repr(v) == "0.0"


def _one_threshold_ensemble(op: str, cast: str, t: float, feat: Feature) -> Ensemble:
    tree = Tree(
        feature=[0, -1, -1],
        threshold=[t, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True] * 3,
        value=np.array([[0.0], [-1.0], [1.0]]),
        outputs=(0,),
    )
    return Ensemble(
        trees=(tree,),
        features=(feat,),
        n_classes=0,
        intercept=(0.0,),
        link=IDENTITY,
        source="one-threshold",
        op=op,
        cast=cast,
    )


def _key(x: float) -> int:
    """The doubles in order as integers."""
    i = struct.unpack("<q", struct.pack("<d", x))[0]
    return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)


def _double(k: int) -> float:
    bits = k if k >= 0 else (-k) | (1 << 63)
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _cell_ends(ens: Ensemble, t: float, j: int, feat: Feature) -> tuple[float, float]:
    """The first and last double the library routes into cell j (0: yes, 1: no), within
    the feature's bounds: the first "no" found by bisection over all doubles."""
    yes, no = _key(-sys.float_info.max), _key(sys.float_info.max)
    while no - yes > 1:
        mid = (yes + no) // 2
        if ens.test_holds(_double(mid), t):
            yes = mid
        else:
            no = mid
    if j == 0:
        return feat.lb, min(feat.ub, _double(yes))
    return max(feat.lb, _double(no)), feat.ub


@pytest.mark.parametrize("library", LIBRARIES)
@settings(max_examples=150, deadline=None)
@given(
    t=st.floats(-1e4, 1e4, allow_nan=False),
    lb=st.floats(-2e4, 0),
    width=st.floats(1e-3, 4e4),
    j=st.integers(0, 1),
    integral=st.booleans(),
)
def test_the_representative_is_the_shortest_decimal_the_library_routes_into_its_cell(
    library, t, lb, width, j, integral
):
    op, cast = LIBRARIES[library]
    if cast == "float32" and library == "xgboost":
        t = float(np.float32(t))  # XGBoost's thresholds are float32 values
    feat = Feature("x", "integer" if integral else "real", lb, lb + width)
    ens = _one_threshold_ensemble(op, cast, t, feat)
    lo, hi = _cell_ends(ens, t, j, feat)
    assume(lo <= hi)
    dom = build_domain(ens, 0, [t])
    v = dom.reps[j]
    if integral and math.ceil(lo) > hi:
        assert v is None
        return
    assert v is not None
    assert in_interval(ens, dom.thresholds, j, v) and feat.lb <= v <= feat.ub
    assert not integral or v == math.floor(v)
    assert _digits(v) == _fewest_digits(lo, hi, integral)


@pytest.mark.parametrize("library", LIBRARIES)
@settings(max_examples=200, deadline=None)
@given(t=st.floats(-1e30, 1e30, allow_nan=False))
def test_the_first_double_on_a_splits_no_side_is_where_the_library_changes_side(library, t):
    op, cast = LIBRARIES[library]
    feat = Feature("x")
    ens = _one_threshold_ensemble(op, cast, t, feat)
    assert first_no(ens, t) == _cell_ends(ens, t, 1, feat)[0]


any_double = st.floats(allow_nan=False, width=64)
EDGES = [3.4028235677973366e38, 3.402823567797337e38, -3.402823567797337e38, 2.0**-150]


@settings(max_examples=3000, deadline=None)
@given(x=any_double | st.sampled_from(EDGES), t=any_double)
def test_a_float32_test_reads_the_input_as_numpy_float32_does(x, t):
    # test_holds rounds without NumPy (struct): the same float32, inf beyond its range
    ens = _one_threshold_ensemble("<", "float32", 0.0, Feature("x"))
    with np.errstate(over="ignore"):
        expected = float(np.float32(x)) < t
    assert ens.test_holds(x, t) == expected
