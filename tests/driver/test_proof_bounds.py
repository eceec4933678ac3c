"""The bounds a rebuilt proof states, walked down its tree (search/proof_bounds.py): each
pruned box's bound is the one a walk of every tree over that box gives."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import pytest

from treesens.compiler.encode import encode
from treesens.compiler.query import Gap, Query
from treesens.search import compiled_proof, gap_kernel, gap_kernel_compile, proof_bounds
from treesens.search.compiled_check import CompiledBoxSearch
from treesens.search.compiled_proof import proof_from_boxes
from treesens.search.pair_boxes import pair_tables
from treesens.search.proof_bounds import ProofBounds, TiledTree, lazy_trees
from treesens.search.proof_tree import ProofTree
from treesens.tests.oracle import random_ensemble

pytestmark = pytest.mark.skipif(not gap_kernel_compile.available(), reason="numba not installed")


def _recorded(seed: int):
    """A compiled check's record of the boxes it proved "insensitive" with, its tables."""
    ens = random_ensemble(seed, 20 + seed % 20, 3 + seed % 3, 4 + seed % 3, 5, leaf_scale=0.2)
    enc = encode(ens, Query(vary=("f1",), gap=Gap(0.25 + 0.02 * (seed % 10))))[1]
    search = CompiledBoxSearch(enc, pair_tables(enc), recording=True)
    search.run(time.time() + 1e9)
    return search.tab, search.search.ft, search.search.recorded


# seeds whose checks are proved with 40-490 boxes recorded
PROVED = (13, 14, 17, 26, 41, 53, 56)


def _pruned_boxes(tree, sizes):
    """(box lo | hi, its step) of every pruned box of ``tree``, read from its steps."""
    out, stack = [], [(np.zeros(len(sizes), np.int64), sizes.astype(np.int64))]
    for event in tree.preorder():
        lo, hi = stack.pop()
        if event[0] == "split":
            c, r = event[1], event[2]
            yes_hi, no_lo = hi.copy(), lo.copy()
            yes_hi[c], no_lo[c] = r, r
            stack += [(no_lo, hi), (lo, yes_hi)]
        else:
            out.append((np.r_[lo, hi], event))
    return out


def _as_proof_tree(tiled: TiledTree) -> ProofTree:
    """The tiling's steps recorded in a ProofTree, box by box."""
    tree, pending = ProofTree(False), [ProofTree.ROOT]
    for kind, c, r, i in zip(
        *(a.tolist() for a in (tiled.kinds, tiled.cols, tiled.ranks, tiled.boxes))
    ):
        node = pending.pop()
        if kind == proof_bounds.SPLIT:
            yes, no = tree.split(node, c, r)
            pending += [no, yes]
        else:
            tree.leaf(node, tiled.replays.get(i) or ("box", i))
    return tree


def _walked(seed: int, settle: bool, pool: int | None = None):
    tab, ft, rec = _recorded(seed)
    tree = proof_from_boxes(tab, rec, {}, None, False)
    bounds = ProofBounds(ft, tree, settle)
    if pool is not None:
        bounds.pool = proof_bounds._pool(pool, tab.values.shape[0], len(tab.sizes))
    return tab, ft, rec, tree, bounds.run(time.time() + 1e9)


@pytest.mark.parametrize("seed", PROVED)
@pytest.mark.parametrize("settle", [False, True])
def test_each_pruned_box_states_the_bound_a_walk_of_every_tree_gives(seed, settle):
    tab, ft, rec, tree, pruned = _walked(seed, settle)
    assert pruned
    boxes = _pruned_boxes(tree, tab.sizes)
    tops = gap_kernel.flat_box_tops(ft, np.array([box for box, _ in boxes]))
    for (_box, (kind, row, bound)), top in zip(boxes, tops, strict=True):
        assert kind == "prune" and bound == top[row] and bound < tab.thresholds[row]


@pytest.mark.parametrize("seed", PROVED[:3])
def test_a_walk_without_room_for_its_path_grows_it_and_states_the_same_bounds(seed):
    *_, roomy, _ = _walked(seed, False)
    *_, cramped, pruned = _walked(seed, False, pool=1)
    assert pruned and list(cramped.preorder()) == list(roomy.preorder())


def test_settling_from_the_root_prunes_boxes_above_the_leaves():
    *_, leaves, _ = _walked(56, False)
    *_, settled, pruned = _walked(56, True)
    assert pruned and len(settled.preorder()) < len(leaves.preorder())


def test_a_leaf_no_row_prunes_gives_no_proof():
    tab, ft, rec = _recorded(13)
    tree = proof_from_boxes(tab, rec, {}, None, False)
    unreachable = replace(ft, thresholds=np.full_like(ft.thresholds, -1e300))
    assert ProofBounds(unreachable, tree, False).run(time.time() + 1e9) is False


def test_a_walk_past_its_deadline_stops_without_a_proof():
    tab, ft, rec = _recorded(56)
    tree = proof_from_boxes(tab, rec, {}, None, False)
    assert ProofBounds(ft, tree, False).run(time.time() - 1) is None


def test_the_lazy_trees_are_those_that_add_nothing_to_a_pair_sum():
    tab, ft, _ = _recorded(13)
    lazy = lazy_trees(ft)
    assert lazy.any() and not lazy.all()
    assert np.array_equal(lazy, ~gap_kernel.reads_varied(tab))


@pytest.mark.parametrize("seed", PROVED[:4])
@pytest.mark.parametrize("settle", [False, True])
def test_a_rebuilt_proof_held_as_arrays_reads_as_its_proof_tree_reads(seed, settle):
    tab, ft, rec = _recorded(seed)
    tiled = proof_from_boxes(tab, rec, {}, None, False)
    tree = _as_proof_tree(tiled)
    assert ProofBounds(ft, tiled, settle).run(time.time() + 1e9)
    assert ProofBounds(ft, tree, settle).run(time.time() + 1e9)
    assert list(tiled.preorder()) == tree.preorder()


def test_a_rebuilt_proof_is_held_as_the_tiling_s_arrays():
    tab, _ft, rec = _recorded(13)
    tree = proof_from_boxes(tab, rec, {}, None, False)
    assert isinstance(tree, TiledTree) and tree.size() == 2 * len(rec) - 1


def test_a_rebuilt_proof_reads_as_none_before_its_bounds_are_walked():
    tab, _ft, rec = _recorded(13)
    assert proof_from_boxes(tab, rec, {}, None, False).preorder() is None


def test_an_answer_s_rebuilt_proof_past_the_recording_limit_is_given_up(monkeypatch):
    tab, _ft, rec = _recorded(13)
    monkeypatch.setattr(compiled_proof, "MAX_RECORDED", 2 * len(rec) - 2)
    assert proof_from_boxes(tab, rec, {}, None, capped=True) is None
    assert proof_from_boxes(tab, rec, {}, None, capped=False) is not None


def test_the_tiling_reads_the_record_s_boxes_without_a_copy(monkeypatch):
    tab, _ft, rec = _recorded(13)
    from treesens.search import gap_kernel_tops_jit

    read, tile = [], gap_kernel_tops_jit.tile
    monkeypatch.setattr(gap_kernel_tops_jit, "tile", lambda b, s: read.append(b) or tile(b, s))
    assert proof_from_boxes(tab, rec, {}, None, False) is not None
    assert np.shares_memory(read[0], rec)
