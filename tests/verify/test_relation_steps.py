"""The checker's ``relation`` step (verify/relations.py) against brute force: a box closes
exactly when no value of x1's part and value of x2's part meet the claim's relation, on
category codes (in any order the domain lists them) and on whole numbers read by a
float64 model's "<=" or "<" test, and on numbers a float32 model reads (two numbers
reading one float32 value meet a strict relation); NaN in a part meets nothing."""

from __future__ import annotations

import itertools
import math
import operator
from types import SimpleNamespace

import numpy as np
import pytest

from treesens.verify.domain import Domain
from treesens.verify.relations import relation_refusal

OPS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}


def _checker(domain: Domain, op: str, test: str = "<=", x2: Domain | None = None):
    """What relation_refusal reads of a Checker: one varied feature, x1's column 0 and
    x2's column 1, a float64 model of ``test``, the claim's relation ``op``; ``x2``: x2's
    own domain (certificate version 4), ``domain`` then x1's."""
    model = SimpleNamespace(features=["f"], float32=False, test=test)
    doms = (domain, domain if x2 is None else x2)
    return SimpleNamespace(
        m=model,
        domain=[domain],
        dom=lambda f, k=0: doms[k],
        relations={0: op},
        col_of=[{0: 0}, {0: 1}],
    )


def _closes(ch, parts) -> bool:
    return relation_refusal(ch, list(parts), ["relation", 0, ch.relations[0]]) is None


def _met(op: str, xs, ys) -> bool:
    return any(OPS[op](u, v) for u in xs for v in ys)


@pytest.mark.parametrize("op", list(OPS))
def test_a_box_of_category_codes_closes_exactly_when_no_codes_meet_the_relation(op):
    codes = (3, 0, 7, 2)  # the order splits cut, not the codes' own
    ch = _checker(Domain(0, 9, True, codes), op)
    runs = [(a, b) for a in range(4) for b in range(a + 1, 5)]
    for (a0, a1), (b0, b1) in itertools.product(runs, runs):
        parts = ((a0, a1, False), (b0, b1, True))
        assert _closes(ch, parts) == (not _met(op, codes[a0:a1], codes[b0:b1])), parts


@pytest.mark.parametrize("op", list(OPS))
def test_each_input_s_part_is_read_in_its_own_codes(op):
    # a domain per input (version 4): x1 takes 0..7, x2 (bounded to [6, 9]) 6, 7; x2's
    # part [0, 1) is code 6, not x1's code 0
    ones, twos = tuple(range(8)), (6, 7)
    ch = _checker(Domain(0, 9, True, ones), op, x2=Domain(6, 9, True, twos))
    for a0, a1, b0, b1 in itertools.product(range(8), range(1, 9), range(2), range(1, 3)):
        if a0 < a1 and b0 < b1:
            parts = ((a0, a1, False), (b0, b1, False))
            assert _closes(ch, parts) == (not _met(op, ones[a0:a1], twos[b0:b1])), parts


@pytest.mark.parametrize("test", ["<=", "<"])
@pytest.mark.parametrize("op", list(OPS))
def test_each_input_s_part_is_read_within_its_own_bounds(op, test):
    # x1 in [0, 2], x2 in [-3, 5], whole numbers: x2's part below 0 holds values x1's
    # bounds would leave out, and it meets x1 > x2
    ch = _checker(Domain(0, 2, True), op, test, x2=Domain(-3, 5, True))
    cuts = [-math.inf, -2.5, -1.0, 0.0, 1.5, 2.0, 4.0, math.inf]
    parts = [(lo, hi, False) for lo, hi in itertools.combinations(cuts, 2)]
    for pa, pb in itertools.product(parts, parts):
        xs, ys = _whole_numbers(pa, test, 0, 2), _whole_numbers(pb, test, -3, 5)
        assert _closes(ch, (pa, pb)) == (not _met(op, xs, ys)), (pa, pb)


def _whole_numbers(part, test: str, lb: int, ub: int) -> list[int]:
    lo, hi = part[:2]
    return [v for v in range(lb, ub + 1) if (lo < v <= hi if test == "<=" else lo <= v < hi)]


@pytest.mark.parametrize("test", ["<=", "<"])
@pytest.mark.parametrize("op", list(OPS))
def test_a_box_of_whole_numbers_closes_exactly_when_no_pair_meets_the_relation(op, test):
    ch = _checker(Domain(0, 5, True), op, test)
    cuts = [-math.inf, -0.5, 0.0, 1.5, 2.0, 2.5, 4.0, 5.0, math.inf]
    parts = [(lo, hi, False) for lo, hi in itertools.combinations(cuts, 2)]
    rng = np.random.default_rng(7)
    for i, j in rng.integers(len(parts), size=(400, 2)).tolist():
        pa, pb = parts[i], parts[j]
        xs, ys = _whole_numbers(pa, test, 0, 5), _whole_numbers(pb, test, 0, 5)
        assert _closes(ch, (pa, pb)) == (not _met(op, xs, ys)), (pa, pb)


def test_a_part_of_nan_alone_meets_no_relation():
    ch = _checker(Domain(0, 5, True, missing=True), "<=")
    assert _closes(ch, ((math.inf, -math.inf, True), (-math.inf, math.inf, True)))


def test_a_relation_step_on_a_feature_whose_unlisted_code_stands_for_many_is_refused():
    ch = _checker(Domain(0, 9, True, (3, 5, 0), unlisted=0), "!=")  # 0: also 1, 2, 4, ...
    why = relation_refusal(ch, [(2, 3, False), (2, 3, True)], ["relation", 0, "!="])
    assert why is not None and "unlisted code stands for many codes" in why


def _float32_checker(domain: Domain, op: str, test: str):
    """_checker's, of a float32 model: it reads each input as the float32 nearest it."""
    ch = _checker(domain, op, test)
    ch.m.float32 = True
    return ch


def _float32_reads(part, test: str, values: list[float]) -> list[float]:
    """The ``values`` a float32 model of ``test`` reads within the part."""
    lo, hi = part[:2]
    reads = [(v, float(np.float32(v))) for v in values]
    return [v for v, r in reads if (lo < r <= hi if test == "<=" else lo <= r < hi)]


@pytest.mark.parametrize("test", ["<=", "<"])
@pytest.mark.parametrize("op", list(OPS))
def test_a_box_of_float32_reads_closes_exactly_when_no_pair_meets_the_relation(op, test):
    # two inputs reading one float32 value may differ (0.1 and the double next to it):
    # a part of one read holds pairs x1 < x2 and x1 != x2
    one = float(np.float32(0.1))
    after = float(np.nextafter(np.float32(one), np.float32(1.0)))
    before = float(np.nextafter(np.float32(one), np.float32(0.0)))
    cuts = [-math.inf, 0.0, before, one, after, 0.5, 1.0, math.inf]
    # the numbers of the domain [0, 1] at and next to each read value the cuts name, so
    # a read's least and largest number and two numbers of one read are among them
    reads = [0.0, before, one, after, 0.25, 0.5, 0.75, 1.0]
    near = {u for w in reads for u in (math.nextafter(w, -1.0), w, math.nextafter(w, 2.0))}
    values = sorted(v for v in near if 0.0 <= v <= 1.0)
    ch = _float32_checker(Domain(0.0, 1.0, False), op, test)
    parts = [(lo, hi, False) for lo, hi in itertools.combinations(cuts, 2)]
    for pa, pb in itertools.product(parts, parts):
        xs, ys = (_float32_reads(p, test, values) for p in (pa, pb))
        assert _closes(ch, (pa, pb)) == (not _met(op, xs, ys)), (pa, pb)
