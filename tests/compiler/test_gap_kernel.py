"""The compiled largest-gap search (search/gap_kernel.py) is the search of
search/gap_boxes.py at a lower cost per box: on tiny ensembles both prove the same
largest gap (each bracketing the exact one by enumeration), and the kernel's own parts
(its heap, the floor it drops boxes under, the memory budget it sheds boxes at) keep
their contracts."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.query import Gap, Query
from treesens.search import gap_boxes, gap_kernel, gap_kernel_compile
from treesens.search.box_search import tree_order
from treesens.search.gap_boxes import largest_gap, root_bound
from treesens.search.gap_kernel import EMPTY, KernelSearch, floor_in_rows
from treesens.search.gap_units import achieved_gap, gap_bound
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.compiler.test_gap_boxes import _bracket_problems, _case, _deeper_case
from treesens.tests.conftest import this_treesens_env
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.oracle import random_ensemble

FAR = 1e18

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")


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


def test_a_kernel_search_one_box_a_step_holds_its_dives_and_visits_the_same_boxes():
    ens, q, _ = _case(15)  # 615 boxes when none is dropped
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    order = tree_order(tab)
    root = root_bound(tab, lambda u: u)
    runs = []
    for budget in (1, 10**9):
        search = KernelSearch(tab, order, root)
        status, boxes, steps = -1, 0, 0
        while status != EMPTY:
            status, more, _ = search.step(-math.inf, budget)
            boxes, steps = boxes + more, steps + 1
        runs.append((boxes, search.dropped))
        if budget == 1:
            assert steps >= boxes
    assert runs[0] == runs[1]


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
    assert not gap_kernel_compile.compiles_first()


def test_an_empty_numba_cache_announces_that_the_first_search_compiles(tmp_path):
    code = (
        "from treesens.search import gap_kernel_compile; print(gap_kernel_compile.compiles_first())"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "True", out.stderr


def test_the_kernel_made_ready_is_the_one_every_search_runs():
    gap_kernel.prepare()
    _search(0, compiled=True)  # a real search: no signature of its own to compile
    # (besides the build with the opt-in Lagrangian bound, whose ``lag`` is not None:
    # test_gap_kernel_mplp.py's searches compile it in the same process)
    plain = [s for s in gap_kernel_compile.kernel().signatures if str(s[-1]) == "none"]
    assert len(plain) == 1


def test_a_compile_estimate_adds_the_rebuild_kernels_only_for_a_certificate(monkeypatch):
    search = gap_kernel_compile.kernel()
    monkeypatch.setattr(gap_kernel_compile, "_cold", lambda run: run is not search)  # cached
    assert gap_kernel_compile.compile_seconds() == 0
    assert (
        gap_kernel_compile.compile_seconds(proof=True) == gap_kernel_compile.PROOF_COMPILE_SECONDS
    )


def test_the_rebuild_kernels_made_ready_are_the_ones_every_rebuild_runs():
    """In a fresh process: made ready with the kernel, then a recorded search's proof
    rebuilt (and its estimate's bounds), each rebuild kernel has the one build it had."""
    code = (
        "import time\n"
        "from treesens.compiler.encode import encode\n"
        "from treesens.compiler.query import Gap, Query\n"
        "from treesens.search import compiled_proof, gap_kernel, gap_kernel_compile\n"
        "from treesens.search.compiled_check import CompiledBoxSearch\n"
        "from treesens.search.pair_boxes import pair_tables\n"
        "from treesens.tests.oracle import random_ensemble\n"
        "gap_kernel.prepare(rebuild=compiled_proof.ready_rebuild)\n"
        "ready = [list(k.signatures) for k in gap_kernel_compile.proof_kernels()]\n"
        "ens = random_ensemble(7, 40, 4, 5, 6, leaf_scale=0.1)\n"
        "enc = encode(ens, Query(vary=('f1',), gap=Gap(0.2)))[1]\n"
        "s = CompiledBoxSearch(enc, pair_tables(enc), recording=True, capped=False)\n"
        "s.run(time.time() + 1e9)\n"
        "compiled_proof.REBUILD_SAMPLE = 4\n"
        "assert compiled_proof.rebuild_estimate(s.search.recorded, s.search.ft) is not None\n"
        "after = [list(k.signatures) for k in gap_kernel_compile.proof_kernels()]\n"
        "print(s.proof.preorder() is not None, all(ready), ready == after)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code], env=this_treesens_env(), capture_output=True, text=True
    )
    assert p.stdout.split() == ["True", "True", "True"], p.stderr


def test_a_process_waits_for_the_kernel_another_is_compiling_then_loads_its_build():
    import fcntl

    gap_kernel.prepare()  # its build in numba's cache
    lock = Path(gap_kernel_compile.kernel()._cache._cache_path) / gap_kernel_compile.COMPILE_LOCK
    code = (
        "from treesens.search import gap_kernel, gap_kernel_compile\n"
        "r = gap_kernel.prepare(print)\n"
        "print('compiled', r.compiled, 'misses', gap_kernel_compile.cache_misses(gap_kernel_compile.kernel()))"
    )
    with open(lock, "a") as held:  # as a process compiling the kernel holds it
        fcntl.flock(held, fcntl.LOCK_EX)
        p = subprocess.Popen(
            [sys.executable, "-u", "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=this_treesens_env(),  # the same copy, the same numba cache and lock
        )
        first = p.stdout.readline()  # its first line, while the lock is held
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert first.strip() == "max gap: waiting for another process compiling the box search"
    ready, readiness = out.strip().splitlines()
    assert ready.startswith("max gap: the box search another process compiled is ready after")
    # the wait is left out of the time limit, and the kernel loaded, not compiled again
    assert readiness == "compiled True misses 0"


def test_a_kernel_already_loaded_is_ready_at_no_cost():
    gap_kernel.prepare()
    assert gap_kernel.prepare() == gap_kernel_compile.Readiness(0.0, False)


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


# ---- the heap's memory budget: boxes of lowest bound shed, their bound kept -------------

TINY_HEAP = 1  # bytes: the smallest heap the kernel keeps (heap_rows: 4 boxes)


def _shed_search(i: int, heap_bytes: int = TINY_HEAP):
    ens, q, tol = _deeper_case(i)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    out = largest_gap(enc, tab, gap_bound(ens), offer, tol, FAR, heap_bytes=heap_bytes)
    return ens, q, tol, out


@pytest.mark.parametrize("i", range(30))
def test_a_search_that_sheds_boxes_for_memory_still_brackets_the_exact_gap(i):
    # without the shed boxes' bound under the upper bound, 5 of these 30 searches report
    # an upper bound below the exact largest gap (the shed boxes held the best pairs)
    ens, q, _, out = _shed_search(i)
    assert not _bracket_problems(exact_max_gap(ens, q.vary), out.lower, out.upper)


def test_the_upper_bound_is_at_least_the_largest_bound_shed():
    _, _, _, out = _shed_search(5)
    assert out.shed_boxes > 0
    assert out.upper >= out.shed_upper


def test_a_search_that_shed_boxes_above_its_floor_is_not_proven():
    _, _, tol, out = _shed_search(5)  # the exact gap 0.363 lies in the boxes shed
    assert out.shed_upper > out.lower + tol
    assert not out.proven


def test_boxes_shed_below_the_final_floor_leave_the_search_proven():
    _, _, tol, out = _shed_search(7)
    assert out.shed_boxes > 0 and out.shed_upper <= out.lower + tol
    assert out.proven


def test_the_same_search_within_its_budget_sheds_nothing():
    _, _, _, out = _shed_search(5, heap_bytes=gap_kernel.HEAP_BYTES)
    assert out.shed_boxes == 0 and out.shed_upper is None and out.proven


def test_a_heap_at_its_budget_holds_at_most_its_rows():
    ens, q, _ = _deeper_case(5)
    tab = pair_tables(pair_encoding(ens, q.with_(gap=Gap(0.0))))
    search = KernelSearch(tab, tree_order(tab), root_bound(tab, lambda u: u), heap_bytes=1)
    status = search.step(-math.inf, 10**9)[0]
    while status != EMPTY:
        status = search.step(-math.inf, 10**9)[0]
    assert search.shed_boxes > 0
    assert len(search.hb) <= search.max_rows == gap_kernel.heap_rows(1, len(tab.sizes))


def test_a_heap_budget_holds_the_rows_and_their_copy_while_they_grow():
    rows = gap_kernel.heap_rows(gap_kernel.HEAP_BYTES, 28)
    box = 8 + 2 * 28 * 4
    assert 1.5 * rows * box <= gap_kernel.HEAP_BYTES < 1.5 * (rows + 1) * box


# ---- the clock: a search of slow boxes ends near its deadline ---------------------------


def _long_search():
    """100 trees of depth 5 over four features: a search of about 2,800 boxes."""
    rng = np.random.default_rng([99, 0])
    ens = random_ensemble(rng, 100, 5, 4, 6, leaf_scale=1.0)
    enc = pair_encoding(ens, Query(vary=(ens.feature_names[0],), gap=Gap(0.0)))

    def offer(x1, x2):
        p = ens.proba(np.stack([x1, x2]))[:, 1]
        return achieved_gap(p[0], p[1])

    return ens, enc, pair_tables(enc), offer


def test_a_search_of_slow_boxes_ends_within_a_few_boxes_of_its_deadline(monkeypatch):
    # each box takes a tenth of a second on a clock of the test's (as a box of a
    # 1,000-tree model's tables does): the search looks at the clock often enough
    # to end within a few boxes of its limit, not a step of thousands of boxes later
    per_box, limit = 0.1, 20.0
    clock = types.SimpleNamespace(now=0.0)
    monkeypatch.setattr(gap_boxes, "time", types.SimpleNamespace(time=lambda: clock.now))
    step = KernelSearch.step

    def slow_step(self, u_floor, max_boxes):
        out = step(self, u_floor, max_boxes)
        clock.now += per_box * out[1]
        return out

    monkeypatch.setattr(KernelSearch, "step", slow_step)
    ens, enc, tab, offer = _long_search()
    out = largest_gap(enc, tab, gap_bound(ens), offer, 1e-4, limit)
    assert not out.proven and out.boxes < 2000
    assert clock.now <= limit + 0.5


def test_the_compiled_search_one_box_a_step_visits_the_boxes_of_long_steps(monkeypatch):
    ens, enc, tab, offer = _long_search()
    monkeypatch.setattr(gap_boxes, "FIRST_STEP", 1 << 20)
    big = largest_gap(enc, tab, gap_bound(ens), offer, 1e-4, FAR)
    monkeypatch.setattr(gap_boxes, "FIRST_STEP", 1)
    monkeypatch.setattr(gap_boxes, "LONGEST_STEP", 1)
    one = largest_gap(enc, tab, gap_bound(ens), offer, 1e-4, FAR)
    assert one.proven and big.proven
    assert (one.boxes, one.lower, one.upper) == (big.boxes, big.lower, big.upper)


def test_a_step_interrupted_in_the_kernel_raises_ctrl_c_and_keeps_the_bound_from_before_it():
    ens, q, _ = _case(15)
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0)))
    tab = pair_tables(enc)
    search = KernelSearch(tab, tree_order(tab), root_bound(tab, lambda u: u))
    search.step(-math.inf, 5)
    before = search.upper()

    def interrupted_run(*args):  # what numba's dispatcher raises (search/compiled_calls.py)
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise SystemError("CPUDispatcher(<function run>) returned a result") from e

    search.run = interrupted_run
    search.hn = 0  # the heap the run was changing: no longer to be read
    with pytest.raises(KeyboardInterrupt):
        search.step(-math.inf, 5)
    assert search.upper() == before > -FAR
