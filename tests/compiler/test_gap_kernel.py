"""The compiled largest-gap search (search/gap_kernel.py) is the search of
search/gap_boxes.py at a lower cost per box: on tiny ensembles both prove the same
largest gap (each bracketing the exact one by enumeration), and the kernel's own parts
(its heap, the floor it drops boxes under) keep their contracts."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from treesens.compiler.query import Gap
from treesens.search import gap_kernel
from treesens.search.box_search import tree_order
from treesens.search.gap_boxes import largest_gap, root_bound
from treesens.search.gap_kernel import EMPTY, KernelSearch, floor_in_rows
from treesens.search.gap_search import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_encoding, pair_tables
from treesens.tests.compiler.test_gap_boxes import _bracket_problems, _case
from treesens.tests.max_gap_oracle import exact_max_gap

FAR = 1e18

pytestmark = pytest.mark.skipif(not gap_kernel.available(), reason="numba is not installed")


def _search(i: int, compiled: bool):
    ens, q, tol = _case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(enc, tab, gap_bound(ens), offer, tol, FAR, compiled=compiled)
    return ens, q, tol, out


@pytest.mark.parametrize("i", range(0, 60, 3))
def test_the_compiled_and_the_python_search_prove_the_same_largest_gap(i):
    ens, q, tol, fast = _search(i, compiled=True)
    _, _, _, slow = _search(i, compiled=False)
    exact = exact_max_gap(ens, q.vary)
    assert fast.proven and slow.proven
    assert not _bracket_problems(exact, fast.lower, fast.upper)
    assert not _bracket_problems(exact, slow.lower, slow.upper)
    assert abs(fast.upper - slow.upper) <= tol


def test_a_heap_grown_from_one_row_holds_the_same_search():
    ens, q, _ = _case(15)  # 615 boxes when none is dropped
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    order = tree_order(tab)
    root = root_bound(tab, lambda u: u)
    runs = []
    for capacity in (1, 1024):
        search = KernelSearch(tab, order, root, capacity=capacity)
        # a floor no box is above: every box is split down to its leaves or dropped
        status, boxes, _ = search.step(-math.inf, 10**9)
        while status != EMPTY:
            status, more, _ = search.step(-math.inf, 10**9)
            boxes += more
        runs.append((boxes, search.dropped))
    assert runs[0] == runs[1]
    assert runs[0][0] > 100


@pytest.mark.parametrize("floor", [1e-4, 0.01, 0.3, 0.4999])
def test_the_floor_in_rows_is_the_largest_bound_whose_gap_is_at_most_the_floor(floor):
    to_gap = gap_bound(_case(0)[0])
    u = floor_in_rows(to_gap, floor)
    assert to_gap(u) <= floor
    assert to_gap(np.nextafter(u, np.inf)) > floor


def test_a_floor_below_every_gap_drops_no_box():
    assert floor_in_rows(lambda u: 1.0, 0.5) == -math.inf


def test_a_kernel_loaded_in_this_process_is_not_compiled_again():
    _search(0, compiled=True)
    assert not gap_kernel.compiles_first()


def test_an_empty_numba_cache_announces_that_the_first_search_compiles(tmp_path):
    code = "from treesens.search import gap_kernel; print(gap_kernel.compiles_first())"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_the_kernel_made_ready_is_the_one_every_search_runs():
    gap_kernel.prepare()
    _search(0, compiled=True)  # a real search: no signature of its own to compile
    assert len(gap_kernel._kernel().signatures) == 1


def test_a_kernel_already_loaded_is_ready_at_no_cost():
    gap_kernel.prepare()
    assert gap_kernel.prepare() == gap_kernel.Readiness(0.0, False)


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("probes", [0, 1, gap_kernel.PROBES])
@pytest.mark.parametrize("i", range(1, 60, 6))
def test_every_split_rule_proves_the_brute_force_largest_gap(i, probes, compiled, monkeypatch):
    monkeypatch.setattr(gap_kernel, "PROBES", probes)
    ens, q, _, out = _search(i, compiled=compiled)
    assert out.proven
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_the_split_rule_learns_what_splits_gained():
    ens, q, _ = _case(15)
    tab = pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0))))
    search = KernelSearch(tab, tree_order(tab), root_bound(tab, lambda u: u))
    search.step(-math.inf, 10**9)
    assert search.costs[:, 1].sum() > 0  # nodes measured or split, their gains kept
