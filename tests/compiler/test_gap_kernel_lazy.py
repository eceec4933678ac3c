"""Lazy dives of the compiled largest-gap search (search/gap_kernel_jit.run,
``lazy_dives``): while a box's bound is its pair-sum rows', a dive's splits walk only the
trees that read the varied features (the others add 0 to a pair sum); their maxima stay
a larger box's until the pair sums close or a row binds. Those maxima are then looser,
never lower: on ensembles where the pair sums bind, every search, lazy or not, brackets
the exact largest gap found by enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.search import gap_kernel
from treesens.search.gap_boxes import largest_gap
from treesens.search.gap_search import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_encoding, pair_tables
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

FAR = 1e18
TOLERANCE = 1e-4

pytestmark = pytest.mark.skipif(not gap_kernel.available(), reason="numba is not installed")


def _case(i: int):
    """Twelve to twenty trees of depth 2-3 over four or five features, one varied: most
    trees read no varied feature, so the pair sums bound the boxes while the rows of
    each input (summed over every tree) stay above them."""
    rng = np.random.default_rng([4702, i])
    ens = random_ensemble(
        rng,
        int(rng.integers(12, 21)),
        int(rng.integers(2, 4)),
        int(rng.integers(4, 6)),
        3,
        leaf_scale=1.0,
        bounded=bool(rng.random() < 0.5),
    )
    vary = (str(rng.choice(ens.feature_names)),)
    return ens, Query(vary=vary)


def _search(i: int, lazy: bool, monkeypatch):
    monkeypatch.setattr(gap_kernel, "LAZY_DIVES", lazy)
    ens, q = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(enc, tab, gap_bound(ens), offer, TOLERANCE, FAR)
    return ens, q, tab, out


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("i", range(24))
def test_lazy_and_eager_dives_prove_the_brute_force_largest_gap(i, lazy, monkeypatch):
    ens, q, _, out = _search(i, lazy, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_lazy_dives_visit_other_boxes_than_eager_ones(monkeypatch):
    # the cases above exercise the lazy walk: it changes the dives on some of them
    differ = [
        _search(i, True, monkeypatch)[3].boxes != _search(i, False, monkeypatch)[3].boxes
        for i in range(24)
    ]
    assert any(differ)


def test_only_trees_with_a_node_on_a_varied_column_read_f(monkeypatch):
    _, _, tab, _ = _search(0, True, monkeypatch)
    reads = gap_kernel.reads_varied(tab)
    sums = tab.values[tab.first_sum :]
    for t in range(len(tab.starts)):
        a = tab.starts[t]
        b = tab.starts[t + 1] if t + 1 < len(tab.starts) else tab.values.shape[1]
        if not reads[t]:  # a tree outside F adds exactly 0 to every pair sum
            assert not sums[:, a:b].any()
    assert reads.any() and not reads.all()


@pytest.mark.parametrize("group", [2, 3])
@pytest.mark.parametrize("i", range(24))
def test_merged_trees_bound_prove_the_brute_force_largest_gap(i, group, monkeypatch):
    monkeypatch.setattr(gap_kernel, "MERGE_GROUP", group)
    ens, q, _, out = _search(i, True, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def _pair_sum_terms(i: int, group: int):
    """On case i's whole pair space, the pair-sum term (half the row above its threshold) of
    every point's pair, their largest (brute force), the bound with ``group`` trees
    merged, and the bound of per-tree maxima."""
    from treesens.search import gap_kernel_jit as jit  # noqa: PLC0415 - numba on use

    ens, q = _case(i)
    tab = pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0))))
    search = gap_kernel.KernelSearch(tab, np.arange(len(tab.starts)), 0.0, merge=group)
    cols = len(tab.sizes)
    lo, hi = np.zeros(cols, dtype=np.int32), tab.sizes.astype(np.int32)
    max_nodes = int(np.diff(search.ft.node_start).max(initial=0))
    top, _low, _opn = jit.root_walk(search.arrays, len(tab.starts), cols, max_nodes)
    r = tab.first_sum
    work = jit.merge_buffers(search.merge, cols, max_nodes)
    merged = jit.merged_bound(
        search.arrays, lo, hi, top, search.ft.thresholds, r, search.merge, work
    )
    grid = np.stack(np.meshgrid(*[np.arange(s) for s in tab.sizes], indexing="ij"), -1)
    points = grid.reshape(-1, cols)
    inside = (tab.lo.T[None] <= points[:, None]) & (points[:, None] < tab.hi.T[None])
    reached = inside.all(axis=2)  # points x leaves: one leaf a tree
    exact = float((reached @ tab.values[r]).max() - tab.thresholds[r]) / 2.0
    independent = (float(top[r].sum()) - tab.thresholds[r]) / 2.0
    # no tree reads F (no group): +inf, the search keeps its own bound
    return exact, min(merged, independent), independent


@pytest.mark.parametrize("i", range(12))
def test_merged_trees_bound_the_pair_sum_of_every_pair_and_no_more_than_their_maxima(i):
    exact, merged, independent = _pair_sum_terms(i, 3)
    assert exact - 1e-9 <= merged <= independent + 1e-9


def test_merging_trees_tightens_the_pair_sum_bound_on_some_case():
    assert any(_pair_sum_terms(i, 3)[1] < _pair_sum_terms(i, 3)[2] - 1e-9 for i in range(12))
