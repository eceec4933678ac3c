"""Lazy dives of the compiled largest-gap search (search/gap_kernel_jit.run,
``lazy_dives``): while a box's bound is its pair-sum rows', a dive's splits walk only the
trees that read the varied features (the others add 0 to a pair sum); their maxima stay
a larger box's until the pair sums close or a row binds. Those maxima are then looser,
never lower: on ensembles where the pair sums bind, every search, lazy or not, brackets
the exact largest gap found by enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.search import gap_kernel, gap_kernel_compile
from treesens.search.gap_boxes import _Bounds, largest_gap
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_gap_boxes import _bracket_problems
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

FAR = 1e18
TOLERANCE = 1e-4

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")


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
    monkeypatch.setattr(gap_kernel, "LAZY_SHARE", 1.0)  # whatever share of trees reads F
    ens, q = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(enc, tab, gap_bound(ens), offer, TOLERANCE, FAR)
    return ens, q, tab, out


def _proven_brute_force(i: int, lazy: bool, monkeypatch):
    """Case i's search, asserted proven on a bracket holding the brute-force largest gap."""
    ens, q, _, out = _search(i, lazy, monkeypatch)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)
    return out


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("i", range(24))
def test_lazy_and_eager_dives_prove_the_brute_force_largest_gap(i, lazy, monkeypatch):
    _proven_brute_force(i, lazy, monkeypatch)


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


def test_a_search_where_most_trees_read_f_is_not_lazy(monkeypatch):
    _, _, tab, _ = _search(0, True, monkeypatch)
    share = float(gap_kernel.reads_varied(tab).mean())
    order = np.arange(len(tab.starts))
    monkeypatch.setattr(gap_kernel, "LAZY_SHARE", share)
    assert gap_kernel.KernelSearch(tab, order, 0.0).lazy
    monkeypatch.setattr(gap_kernel, "LAZY_SHARE", share - 1e-9)
    assert not gap_kernel.KernelSearch(tab, order, 0.0).lazy


def test_a_lazy_search_walks_the_whole_space_once_at_its_start(monkeypatch):
    # the maxima a lazy dive starts from: walked when the search is made, not again at
    # every step (on the scale tier's largest tables a walk of every node costs more than
    # a box, and a step may be one box)
    from treesens.search.gap_kernel_jit import root_walk

    _, _, tab, _ = _search(0, True, monkeypatch)
    order = np.arange(len(tab.starts))
    search = gap_kernel.KernelSearch(tab, order, 0.0, lazy=True)
    ft = search.ft
    walked = root_walk(search.arrays, len(order), len(ft.sizes), int(np.diff(ft.node_start).max()))
    for held, fresh in zip(search.root, walked, strict=True):
        assert np.array_equal(held, fresh)


def test_an_eager_search_walks_no_root(monkeypatch):
    _, _, tab, _ = _search(0, False, monkeypatch)
    search = gap_kernel.KernelSearch(tab, np.arange(len(tab.starts)), 0.0, lazy=False)
    assert all(a.size == 0 for a in search.root)


def _resolved(tab, budget: int) -> list[tuple]:
    """A lazy search with no floor stepped ``budget`` boxes at a time until its heap
    empties: each resolved box's (boxes so far, bound, lower corner)."""
    b = _Bounds(tab)
    root = b.upper(b.top(np.ones(b.n, dtype=bool)))
    search = gap_kernel.KernelSearch(tab, b.order, root, lazy=True)
    out, boxes, status = [], 0, gap_kernel.BUDGET
    while status != gap_kernel.EMPTY:
        status, n, u = search.step(-math.inf, budget)
        boxes += n
        if status == gap_kernel.RESOLVED:
            out.append((boxes, u, tuple(search.corner)))
    return out


@pytest.mark.parametrize("i", [4, 9, 11, 16])
def test_a_lazy_dive_held_at_every_box_resolves_what_one_long_step_resolves(i, monkeypatch):
    # a dive held at a step's end goes on from its own per-tree arrays (walking its box
    # again, as a fresh lazy dive, reset the trees outside F to the whole space's maxima
    # and changed the boxes on these cases; on the 255-leaf LightGBM adult model the walk
    # itself cost a box at every step of one box)
    _, _, tab, _ = _search(i, True, monkeypatch)
    assert _resolved(tab, 1) == _resolved(tab, 1 << 30)
