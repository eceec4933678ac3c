"""The checker's ``relation`` step (verify/relations.py) against brute force: a box closes
exactly when no value of x1's part and value of x2's part meet the claim's relation, on
category codes (in any order the domain lists them) and on whole numbers read by a
float64 model's "<=" or "<" test; NaN in a part meets nothing."""

from __future__ import annotations

import itertools
import math
import operator
from types import SimpleNamespace

import numpy as np
import pytest

from treesens.verify.check import Domain
from treesens.verify.relations import relation_refusal

OPS = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}


def _checker(domain: Domain, op: str, test: str = "<="):
    """What relation_refusal reads of a Checker: one varied feature, x1's column 0 and
    x2's column 1, a float64 model of ``test``, the claim's relation ``op``."""
    model = SimpleNamespace(features=["f"], float32=False, test=test)
    return SimpleNamespace(
        m=model,
        domain=[domain],
        dom=lambda f, k: domain,
        relations={0: op},
        col_of=[{0: 0}, {0: 1}],
    )


def _per_input_checker(x1: Domain, x2: Domain, op: str):
    """A Checker whose varied feature has a domain per input (version 4)."""
    ch = _checker(x1, op)
    ch.dom = lambda f, k: (x1, x2)[k]
    return ch


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


@pytest.mark.parametrize("op", list(OPS))
def test_a_box_of_codes_under_a_domain_per_input_reads_each_part_by_its_input_s_codes(op):
    x1, x2 = Domain(0, 9, True, (5, 6)), Domain(0, 9, True, tuple(range(10)))
    ch = _per_input_checker(x1, x2, op)
    runs = [(a, b) for a in range(3) for b in range(a + 1, 3)]
    for (a0, a1), (b0, b1) in itertools.product(runs, [(b, b + 2) for b in range(9)]):
        parts = ((a0, a1, False), (b0, b1, True))
        met = _met(op, x1.codes[a0:a1], x2.codes[b0:b1])
        assert _closes(ch, parts) == (not met), parts


def test_a_relation_step_on_a_feature_whose_unlisted_code_stands_for_many_is_refused():
    codes = Domain(0, 9, True, (3, 5, 0), unlisted=0)  # 0 stands for 0, 1, 2, 4, 6, ...
    ch = _checker(codes, "!=")
    why = relation_refusal(ch, [(2, 3, False), (2, 3, True)], ["relation", 0, "!="])
    assert why is not None and "unlisted code stands for many codes" in why
