"""The compiled search starts from the pair space cut at every rank of F's columns
(search/gap_kernel.first_boxes, ``F_FIRST_BOXES``): one box per pair of F's values, the
other columns whole, where there are few enough. Those boxes must tile the space, or a
search could end proven with the largest gap in a region no box held. Checked by
counting every pair of ranks, and against the exact largest gap by enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from treesens.compiler.query import Gap
from treesens.search import gap_kernel, gap_kernel_compile
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.compiler.test_gap_kernel_lazy import _case, _search
from treesens.tests.max_gap_oracle import exact_max_gap

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CASES = range(24)


def _tables(i: int):
    ens, q = _case(i)
    return pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0))))


def _varied(tab) -> list[int]:
    return [c for c, (_f, copy) in enumerate(tab.columns) if copy is not None]


@pytest.mark.parametrize("i", CASES)
def test_every_pair_of_ranks_lies_in_exactly_one_first_box(i):
    tab = _tables(i)
    boxes = gap_kernel.first_boxes(tab, gap_kernel.F_FIRST_BOXES)
    cols = len(tab.sizes)
    lo, hi = boxes[:, :cols], boxes[:, cols:]
    # every column but F's is whole in each box, so the ranks of F's columns decide
    others = [c for c in range(cols) if c not in _varied(tab)]
    assert (lo[:, others] == 0).all() and (hi[:, others] == tab.sizes[others]).all()
    varied = _varied(tab)
    for ranks in itertools.product(*[range(int(tab.sizes[c])) for c in varied]):
        inside = np.ones(len(boxes), dtype=bool)
        for c, r in zip(varied, ranks, strict=True):
            inside &= (lo[:, c] <= r) & (r < hi[:, c])
        assert inside.sum() == 1


def test_some_cases_start_from_more_than_one_box():
    # the cases above exercise the cut (F's ranks multiply to at most F_FIRST_BOXES)
    starts = [len(gap_kernel.first_boxes(_tables(i), gap_kernel.F_FIRST_BOXES)) for i in CASES]
    assert max(starts) > 4


def test_a_product_of_more_than_the_limit_starts_from_the_whole_space():
    tab = _tables(0)
    boxes = gap_kernel.first_boxes(tab, 1)
    assert len(boxes) == 1
    cols = len(tab.sizes)
    assert (boxes[0, :cols] == 0).all() and (boxes[0, cols:] == tab.sizes).all()


@pytest.mark.parametrize("most", [gap_kernel.F_FIRST_BOXES, 1])
@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("i", CASES)
def test_a_search_from_f_s_boxes_or_the_whole_space_proves_the_brute_force_largest_gap(
    i, lazy, most, monkeypatch
):
    monkeypatch.setattr(gap_kernel, "F_FIRST_BOXES", most)
    ens, q, _, out = _search(i, lazy, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)
