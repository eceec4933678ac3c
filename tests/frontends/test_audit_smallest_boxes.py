"""Where a row past the enumeration has too many x2 of no larger change than its query's
flip to score them, the box search of its anchored question, capped at the best flip's
change (questions/audit_nearest.py), proves the smallest change that flips: a box whose
least change is above the cap is dropped. Held against the brute force of
tests/audit_oracle.py on F of two and three features, the box's least change against
its x2 one by one, and the cap's edge."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from treesens.compiler.audit import FLIPPABLE, Target
from treesens.compiler.query import Gap
from treesens.questions import audit_nearest, audit_solve
from treesens.questions.audit_nearest import box_least, x2_columns
from treesens.search import box_search
from treesens.search.anchored_boxes import value_rank
from treesens.search.box_answers import tables_or_skip
from treesens.search.box_search import FOUND, PROVED, BoxSearch
from treesens.search.pair_scope import class_pair_encodings, pair_encoding
from treesens.tests.audit_oracle import brute_force_smallest_change
from treesens.tests.frontends.test_audit_boxes import _by_boxes
from treesens.tests.frontends.test_audit_smallest import (
    GAP,
    MODELS,
    _model,
    assert_the_smallest_flips,
)

VARY = [["a", "b"], ["a", "c"], ["a", "b", "c"]]


def _searched(lib, vary, monkeypatch):
    """The rows' answers with no x2 scored: each flipped row's smallest is the capped
    search's."""
    monkeypatch.setattr(audit_solve, "SMALLEST_CANDIDATES", 0)
    ens, X = _model(lib)
    ans, spec = _by_boxes(ens, X, vary, gap=GAP)
    return ens, X, ans, spec


@pytest.mark.parametrize("vary", VARY, ids=",".join)
@pytest.mark.parametrize("lib", MODELS)
def test_the_capped_search_proves_the_smallest_change_that_flips(lib, vary, monkeypatch):
    ens, X, ans, spec = _searched(lib, vary, monkeypatch)
    assert_the_smallest_flips(ens, X, vary, ans, spec)


@pytest.mark.parametrize("lib", MODELS)
def test_the_capped_searchs_x2_flips_by_the_library(lib, monkeypatch):
    ens, X, ans, _ = _searched(lib, ["a", "b", "c"], monkeypatch)
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit
    p2 = ens.replayer.predict_proba(ans.x2[hit])[:, 1]
    decided = np.asarray(ans.decision)[hit]
    assert np.all(np.where(decided == 1, p2 <= 0.5 - GAP, p2 >= 0.5 + GAP))


class _StopsEarly(BoxSearch):
    """A capped search that gives up after its first 8 boxes, as at its time limit."""

    def run(self, deadline):
        self.stop = lambda: self.boxes >= 8
        return super().run(deadline)


@pytest.mark.parametrize("lib", MODELS)
def test_a_capped_search_that_gives_up_keeps_a_flip_and_a_change_below_which_none_flips(
    lib, monkeypatch
):
    monkeypatch.setattr(audit_nearest, "BoxSearch", _StopsEarly)
    monkeypatch.setattr(box_search, "CHECK_EVERY", 1)  # the stop asked at every box
    ens, X, ans, spec = _searched(lib, ["a", "b", "c"], monkeypatch)
    least = brute_force_smallest_change(ens, X, ["a", "b", "c"], Target(Gap(GAP)), spec.scales)
    assert ans.unproven
    for i, low in ans.unproven.items():
        assert low <= least[i] + 1e-9 <= ans.change[i] + 2e-9


def _tables(ens, spec, r, decision):
    """The anchored question's encoding and tables of row r."""
    q = audit_solve.row_query(ens, spec, r, decision, 30.0)
    [enc] = class_pair_encodings(pair_encoding(ens, q), relations=True)
    return enc, tables_or_skip(enc, {})


@pytest.mark.parametrize("lib", MODELS)
def test_a_boxs_least_change_is_the_least_of_its_x2_one_by_one(lib):
    ens, X = _model(lib)
    _, spec = _by_boxes(ens, X[:1], ["a", "b", "c"], gap=GAP)
    cells = audit_solve._cells(ens, spec)
    rng = np.random.default_rng(0)
    for r in X[:4]:
        enc, tab = _tables(ens, spec, r, 0)
        cols = x2_columns(ens, cells, tab, r)
        assert len(cols) == 3
        for _ in range(20):
            lo, hi = np.zeros_like(tab.sizes), tab.sizes.copy()
            for j, *_ in cols:  # a random run of ranks per column of F
                lo[j] = rng.integers(0, tab.sizes[j])
                hi[j] = rng.integers(lo[j] + 1, tab.sizes[j] + 1)
            changes = []
            for ranks in itertools.product(*(range(lo[j], hi[j]) for j, *_ in cols)):
                x2 = r.copy()
                for k, (_j, f, vals, _) in zip(ranks, cols, strict=True):
                    x2[f] = vals[k]
                    assert value_rank(ens, f, x2[f]) == k  # the value is in the box
                changes.append(audit_solve.change_of(cells, r, x2))
            assert box_least(cols, lo, hi) == pytest.approx(min(changes), abs=1e-12)


@pytest.mark.parametrize("lib", MODELS)
def test_the_cap_drops_a_box_only_when_its_least_change_is_above_it(lib):
    ens, X = _model(lib)
    ans, spec = _by_boxes(ens, X, ["a", "b"], gap=GAP)
    i = ans.status.index(FLIPPABLE)
    enc, tab = _tables(ens, spec, X[i], ans.decision[i])
    search = BoxSearch(enc, tab, least=lambda lo, hi: 0.5)  # every box's least change
    search.cap = 0.5  # at the cap: kept
    assert search.run(math.inf).status == FOUND
    search = BoxSearch(enc, tab, least=lambda lo, hi: 0.5)
    search.cap = math.nextafter(0.5, 0.0)  # above the cap: dropped, the root first
    out = search.run(math.inf)
    assert (out.status, out.boxes) == (PROVED, 1)
