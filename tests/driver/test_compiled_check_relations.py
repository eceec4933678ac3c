"""The compiled check (search/compiled_check.py, from a check's first box:
``HAND_OVER = 0``) under bounds and relations written as ``where=`` texts, on features
that may be missing, against the brute force that reads the texts' comparisons itself
(tests/interfaces/test_where_differential.py): the same answers, and a pair that meets
the written comparisons. test_compiled_check.py asks it no constraint."""

from __future__ import annotations

import functools
import os

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.search import compiled_check, gap_kernel
from treesens.search.compiled_check import COMPILED
from treesens.tests.interfaces.test_where_differential import (
    _case,
    _meets_written,
    _varied,
    brute_where,
)

SEEDS = int(os.environ.get("TS_COMPILED_WHERE_SEEDS", "16"))


@pytest.fixture(autouse=True)
def every_table(monkeypatch):
    """The compiled search from the first box, its kernel made ready first (as
    test_compiled_check.py's fixture: a cold compile counts in the time limit)."""
    if not compiled_check.compiled_check_applies():
        pytest.skip("the compiled check needs numba")
    monkeypatch.setattr(compiled_check, "HAND_OVER", 0)
    gap_kernel.prepare()


@functools.cache
def _answer(seed: int):
    """(brute force's answer, the box backend's result or None for an InputError)."""
    ens, vary, texts, said, gap = _case(seed)
    expected = brute_where(ens, vary, said, gap)
    try:
        r = treesens.check(ens, vary, gap=gap, where=texts, backend="boxes", timeout=30)
    except InputError:
        return expected, None, (ens, vary, texts, said)
    return expected, r, (ens, vary, texts, said)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_the_compiled_check_under_where_constraints_agrees_with_brute_force(seed):
    expected, r, (ens, vary, texts, said) = _answer(seed)
    if r is None:  # constraints that leave nothing: brute force finds nothing either
        assert not expected, texts
        return
    assert r.status == ("sensitive" if expected else "insensitive"), (texts, r.status, r.error)
    if expected:
        assert r.validated and _meets_written(said, _varied(ens, vary), r.witness_arrays)


def test_the_compiled_search_answers_checks_under_where_constraints():
    # the seeds above reach the compiled search, not only the checks before it
    searches = [
        (r.stats or {}).get("box_search", {}).get("search")
        for _, r, _ in (_answer(seed) for seed in range(SEEDS))
        if r is not None
    ]
    assert searches.count(COMPILED) >= SEEDS // 4, searches
