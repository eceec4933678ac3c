"""The curve of a change through a nonlinear link (compiler/link_change.py): h moves a
prediction by exactly delta, its tangents lie below it (so they are valid rows), and the
cuts at a pair below the curve exclude that pair."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treesens.compiler.ensemble import EXP, SIGMOID
from treesens.compiler.link_change import LINK_ROUNDING, LinkChange

LINKS = {EXP: math.exp, SIGMOID: lambda s: 1.0 / (1.0 + math.exp(-s))}
GRID = np.linspace(-6.0, 4.0, 201)


def _curve(link: str, delta: float, directions=("up",)) -> LinkChange:
    return LinkChange(link, delta, 0.0, directions, ())


def _holds(row, s1: float, s2: float) -> bool:
    a, c, rhs = row
    return a[0] * s1 + c[0] * s2 >= rhs - 1e-9


@pytest.mark.parametrize("link,delta", [(EXP, 0.7), (EXP, 30.0), (SIGMOID, 0.3)])
def test_h_moves_the_prediction_by_exactly_delta(link, delta):
    g, lc = LINKS[link], _curve(link, delta)
    for s in GRID:
        h = lc.h(float(s))
        if math.isfinite(h):
            assert g(h) - g(s) == pytest.approx(delta, rel=1e-9)


def test_sigmoid_h_is_infinite_where_the_prediction_cannot_rise_by_delta():
    lc = _curve(SIGMOID, 0.3)
    assert lc.h(math.log(0.7 / 0.3) + 1e-6) == math.inf  # sigmoid(s) just above 0.7
    assert math.isfinite(lc.h(math.log(0.7 / 0.3) - 1e-3))


@pytest.mark.parametrize("link,delta", [(EXP, 0.7), (SIGMOID, 0.3), (SIGMOID, 0.9)])
def test_every_tangent_lies_below_the_curve(link, delta):
    lc = _curve(link, delta)
    for a in GRID:
        row = lc.tangent(float(a), "up")  # x2 the higher
        if row is None:
            continue
        for s1 in GRID:
            h = lc.h(float(s1))
            if math.isfinite(h):
                assert _holds(row, float(s1), h)


@pytest.mark.parametrize("link,delta", [(EXP, 0.7), (SIGMOID, 0.3)])
def test_cuts_exclude_a_pair_below_the_curve(link, delta):
    lc = _curve(link, delta, ("up", "down"))
    s1, s2 = 0.2, 0.1  # predictions too close in both directions
    up, down = lc.cuts(s1, s2)
    assert up and not any(_holds(r, s1, s2) for r in up)
    assert down and not any(_holds(r, s1, s2) for r in down)


def test_below_inverts_h():
    lc = _curve(EXP, 0.7)
    for s in GRID:
        assert lc.below(lc.h(float(s))) == pytest.approx(float(s), abs=1e-9)


@pytest.mark.parametrize("link", [EXP, SIGMOID])
def test_least_library_change_is_the_exact_change_less_the_links_rounding_both_ends(link):
    g, eta = LINKS[link], LINK_ROUNDING
    s1, s2 = 0.2, 0.9  # x2 the higher: direction up
    lc = _curve(link, 0.1)
    if link == EXP:
        least = g(s2) * (1 - eta) - g(s1) * (1 + eta)
    else:
        least = g(s2) - g(s1) - 2 * eta
    assert lc.least_library_change(s1, s2, 0.0) == pytest.approx(least, rel=1e-12)


def test_least_library_change_takes_each_raw_sum_shift_off_against_the_change():
    lc = _curve(SIGMOID, 0.1, ("up", "down"))
    g = LINKS[SIGMOID]
    shifted = g(0.9 - 1e-3) - g(0.2 + 1e-3) - 2 * LINK_ROUNDING
    assert lc.least_library_change(0.2, 0.9, 1e-3) == pytest.approx(shifted, rel=1e-12)
    assert lc.least_library_change(0.9, 0.2, 1e-3) == pytest.approx(shifted, rel=1e-12)
