"""The kernel's opt-in Lagrangian bound (gap_kernel.MPLP_BOUND, pair_mplp_jit.lag_rows): off
unless asked for; on, run on every box (a gate no box is above), the compiled search still
proves the brute-force largest gap, in fewer boxes."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.search import gap_kernel, gap_kernel_compile
from treesens.search.pair_mplp import mplp_setting
from treesens.tests.compiler.test_gap_kernel_lazy import _proven_brute_force, _search

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba is not installed")

CASES = range(12)
EVERY_BOX = (3, 1e300)


def test_the_bound_is_off_unless_treesens_mplp_bound_says_sweeps_and_gate():
    assert mplp_setting("") is None
    assert mplp_setting("3") is None
    assert mplp_setting("three,4") is None
    assert mplp_setting("3,4.5") == (3, 4.5)


def test_a_recording_search_leaves_the_bound_off_its_certificate_checks_plain_bounds(monkeypatch):
    monkeypatch.setattr(gap_kernel, "MPLP_BOUND", EVERY_BOX)
    one = gap_kernel_compile.ONE_NODE
    order = np.zeros(1, dtype=np.int64)
    assert gap_kernel.KernelSearch(one, order, 1.0).lag[4] == EVERY_BOX[0]
    assert gap_kernel.KernelSearch(one, order, 1.0, recording=True).lag is None


@pytest.mark.parametrize("lazy", [True, False])
@pytest.mark.parametrize("i", CASES)
def test_a_search_with_the_bound_on_every_box_proves_the_brute_force_largest_gap(
    i, lazy, monkeypatch
):
    monkeypatch.setattr(gap_kernel, "MPLP_BOUND", EVERY_BOX)
    _proven_brute_force(i, lazy, monkeypatch)


def test_the_bound_on_every_box_leaves_fewer_boxes_to_visit(monkeypatch):
    boxes = {}
    for setting in (None, EVERY_BOX):
        monkeypatch.setattr(gap_kernel, "MPLP_BOUND", setting)
        boxes[setting] = sum(_search(i, True, monkeypatch)[3].boxes for i in CASES)
    assert boxes[EVERY_BOX] < boxes[None]


def test_a_regressors_change_has_no_pair_sum_row_the_search_proves_it_without_the_bound(
    monkeypatch,
):
    # its one row is over both inputs, f(x1) - f(x2): the bound read a row past the last
    import treesens
    from treesens.tests.compiler.test_cut_walk_phases import _regressor
    from treesens.tests.oracle import brute_force_largest_change

    monkeypatch.setattr(gap_kernel, "MPLP_BOUND", EVERY_BOX)
    ens = _regressor()
    m = treesens.max_gap(ens, ["f0"], tolerance=1e-4).max_gap
    assert m["proven"] and m["lower"] <= brute_force_largest_change(ens, ["f0"]) <= m["upper"]
