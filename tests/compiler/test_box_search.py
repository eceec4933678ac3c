"""The pair tables (search/pair_boxes.py) and the box search over them
(search/box_search.py), against the brute-force oracle on tiny ensembles."""

from __future__ import annotations

import time

import numpy as np
import pytest

from treesens.compiler.encode import encode
from treesens.compiler.query import FeatureBound, Gap, Query
from treesens.compiler.replay import meets
from treesens.search import box_search as box_search_module
from treesens.search.box_search import FOUND, GAVE_UP, PROVED, box_search
from treesens.search.pair_boxes import PairTablesTooLarge, held_bytes, pair_tables
from treesens.search.pair_scope import applies
from treesens.tests.oracle import brute_force_sensitive, random_ensemble
from treesens.tests.pass_cases import two_feature_ensemble

FAR = 1e9  # a deadline no test reaches


def _encoded(ens, vary, gap: Gap, **kw):
    q = Query(vary=tuple(vary), gap=gap, **kw)
    return q, encode(ens, q)[1]


def _search(ens, vary, gap: Gap):
    q, enc = _encoded(ens, vary, gap)
    return q, enc, box_search(enc, pair_tables(enc), time.time() + FAR)


# tiny random ensembles: (seed, trees, depth, features, thresholds, varied features, gap)
CASES = [
    (seed, trees, depth, 3, 3, vary, g)
    for seed, (trees, depth) in enumerate([(3, 2), (4, 3), (6, 2), (5, 3)] * 6)
    for vary, g in [(("f0",), 0.1), (("f1",), 0.3), (("f0", "f2"), 0.2)][seed % 3 : seed % 3 + 1]
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c[0]}-{'+'.join(c[5])}-g{c[6]}")
def test_box_search_agrees_with_the_brute_force_oracle(case):
    seed, trees, depth, n_f, n_th, vary, g = case
    ens = random_ensemble(seed, trees, depth, n_f, n_th, leaf_scale=1.0)
    q, _, out = _search(ens, vary, Gap(g))
    assert out.status == (FOUND if brute_force_sensitive(ens, q) else PROVED)


@pytest.mark.parametrize("seed", range(12))
def test_a_pair_the_box_search_finds_meets_the_gap_on_both_inputs(seed):
    ens = random_ensemble(100 + seed, 5, 3, 3, 3, leaf_scale=1.5)
    q, _, out = _search(ens, ("f1",), Gap(0.1))
    if out.status != FOUND:
        pytest.skip("insensitive: no pair to check")
    x1, x2 = out.pair
    assert np.array_equal(np.delete(x1, 1), np.delete(x2, 1))
    raw, proba = ens.raw(np.stack([x1, x2])), ens.proba(np.stack([x1, x2]))
    assert meets(ens, q, proba[0], raw[0], 0) and meets(ens, q, proba[1], raw[1], 1)


def test_box_search_proves_a_gap_no_pair_reaches():
    # two_feature_ensemble: varying x1 moves the score by at most 2 + 1 = 3
    _, _, out = _search(two_feature_ensemble(), ("x1",), Gap(1.6, "margin"))
    assert out.status == PROVED


def test_box_search_finds_a_pair_for_a_gap_one_pair_reaches():
    # x0 < 0.5: x1 < 0.5 scores 0.25 + 1 + 0.5, x1 >= 1.5 scores 0.25 - 1 - 0.5
    _, _, out = _search(two_feature_ensemble(), ("x1",), Gap(1.25, "margin"))
    assert out.status == FOUND


def test_box_search_gives_up_at_a_past_deadline():
    ens = random_ensemble(7, 6, 3, 3, 3)
    _, enc = _encoded(ens, ("f0",), Gap(0.1))
    assert box_search(enc, pair_tables(enc), time.time() - 1.0).status == GAVE_UP


def test_a_tree_without_a_varied_feature_keeps_its_leaves_in_the_pair_tables():
    # varying x0: tree 1 reads x1 only, so it keeps its two leaves (tree 0: 3 x 3 pairs,
    # of which the x1 tests agree on 5: (l1, l1) and (l3, l3), (l3, l4), ... see below)
    _, enc = _encoded(two_feature_ensemble(), ("x0",), Gap(0.1, "margin"))
    tab = pair_tables(enc)
    sizes = np.diff(np.append(tab.starts, tab.values.shape[1]))
    assert sizes[1] == 2


def test_the_product_of_a_tree_keeps_only_leaf_pairs_both_inputs_reach_together():
    # tree 0 varying x0: leaves 1 (x0 >= 0.5), 3, 4 (x0 < 0.5, then x1 < 0.5 or not).
    # Both inputs share x1, so (3, 4) and (4, 3) are impossible: 9 - 2 = 7 pairs
    _, enc = _encoded(two_feature_ensemble(), ("x0",), Gap(0.1, "margin"))
    tab = pair_tables(enc)
    assert tab.starts[1] - tab.starts[0] == 7


def test_the_sum_value_of_a_shared_leaf_cancels_for_a_binary_gap():
    _, enc = _encoded(two_feature_ensemble(), ("x0",), Gap(0.1, "margin"))
    tab = pair_tables(enc)
    assert np.all(tab.values[2, tab.starts[1] :] == 0.0)


def test_thresholds_are_the_gap_rows_relaxed_like_the_encoding():
    _, enc = _encoded(two_feature_ensemble(), ("x1",), Gap(0.5, "margin"))
    tab = pair_tables(enc)
    # rows: raw(x1) >= 0.5 and -raw(x2) >= 0.5, the intercept 0.25 moved to the right
    assert tab.thresholds[0] == pytest.approx(0.5 - 0.25 - enc.relax)
    assert tab.thresholds[1] == pytest.approx(0.5 + 0.25 - enc.relax)
    assert tab.thresholds[2] == pytest.approx(tab.thresholds[0] + tab.thresholds[1])


def test_the_box_search_does_not_apply_with_bounds_on_the_inputs():
    bound = (FeatureBound("x0", 0.0, 1.0),)
    _, enc = _encoded(two_feature_ensemble(), ("x1",), Gap(0.1), bounds=bound)
    assert not applies(enc)


def test_the_box_search_applies_to_a_multiclass_gap_between_two_given_classes():
    ens = random_ensemble(3, 6, 2, 3, 3, n_classes=3)
    _, enc = _encoded(ens, ("f0",), Gap(2.0), classes=(0, 1))
    assert applies(enc)


def test_the_box_search_does_not_apply_to_any_other_class():
    ens = random_ensemble(3, 6, 2, 3, 3, n_classes=3)
    _, enc = _encoded(ens, ("f0",), Gap(2.0), classes=(0, "any"))
    assert not applies(enc)


def test_a_multiclass_gap_has_a_pair_sum_row_of_the_two_classes():
    ens = random_ensemble(3, 6, 2, 3, 3, n_classes=3)
    _, enc = _encoded(ens, ("f0",), Gap(2.0), classes=(0, 1))
    tab = pair_tables(enc)
    # x1: class 0 over 1 and over 2; x2: class 1 over 0 and over 2; the sum of "0 over 1"
    # on x1 and "1 over 0" on x2
    assert tab.values.shape[0] == 5 and tab.sums == ((0, 2),)


# tiny multiclass ensembles: (seed, classes, trees, depth, (c1, c2), ratio)
MULTI_CASES = [
    (seed, 3 + seed % 2, trees, depth, pair, ratio)
    for seed, (trees, depth) in enumerate([(6, 2), (9, 2), (8, 3)] * 6)
    for pair, ratio in [(((0, 1)), 1.5), (((2, 0)), 3.0), (((1, 2)), 1.1)][seed % 3 : seed % 3 + 1]
]


@pytest.mark.parametrize("case", MULTI_CASES, ids=lambda c: f"seed{c[0]}-{c[4]}-g{c[5]}")
def test_box_search_agrees_with_the_brute_force_oracle_on_multiclass_gaps(case):
    seed, n_classes, trees, depth, pair, ratio = case
    ens = random_ensemble(300 + seed, trees, depth, 3, 3, n_classes=n_classes, leaf_scale=1.5)
    q, enc = _encoded(ens, ("f1",), Gap(ratio), classes=pair)
    out = box_search(enc, pair_tables(enc), time.time() + FAR)
    assert out.status == (FOUND if brute_force_sensitive(ens, q) else PROVED)
    if out.status == FOUND:
        raw, proba = ens.raw(np.stack(out.pair)), ens.proba(np.stack(out.pair))
        assert meets(ens, q, proba[0], raw[0], 0) and meets(ens, q, proba[1], raw[1], 1)


def test_the_box_search_applies_to_a_plain_binary_query():
    _, enc = _encoded(two_feature_ensemble(), ("x1",), Gap(0.1))
    assert applies(enc)


def test_pair_tables_past_their_memory_bound_raise_instead_of_allocating():
    _, enc = _encoded(two_feature_ensemble(), ("x1",), Gap(1.6, "margin"))
    with pytest.raises(PairTablesTooLarge, match="MB"):
        pair_tables(enc, max_bytes=64)


def _boxes_to_a_pair(enc, record: list | None) -> int | None:
    out = box_search(enc, pair_tables(enc), time.time() + FAR, record)
    return out.boxes if out.status == FOUND else None


def test_entering_the_child_with_more_room_first_finds_pairs_in_fewer_boxes(monkeypatch):
    # recording a proof keeps the "yes" side first (a certificate's order), so the two
    # orders are compared on the same searches (no boxes searched "yes" side first)
    monkeypatch.setattr(box_search_module, "PROBE_BOXES", 0)
    promising = yes_first = 0
    for seed in range(30):
        ens = random_ensemble(200 + seed, 12, 4, 4, 6, leaf_scale=0.8)
        _, enc = _encoded(ens, ("f0",), Gap(0.15))
        a, b = _boxes_to_a_pair(enc, None), _boxes_to_a_pair(enc, [])
        assert (a is None) == (b is None)  # the order changes the path, not the verdict
        if a is not None:
            promising, yes_first = promising + a, yes_first + b
    assert 0 < promising < yes_first


def test_the_first_probe_boxes_are_searched_yes_side_first():
    for seed in range(30):  # each finds its pair within PROBE_BOXES boxes
        ens = random_ensemble(200 + seed, 12, 4, 4, 6, leaf_scale=0.8)
        _, enc = _encoded(ens, ("f0",), Gap(0.15))
        assert _boxes_to_a_pair(enc, None) == _boxes_to_a_pair(enc, [])


@pytest.mark.parametrize("case", CASES[::4], ids=lambda c: f"seed{c[0]}-{'+'.join(c[5])}")
def test_boxes_derived_from_the_nodes_are_the_boxes_the_build_records(case):
    seed, trees, depth, n_features, thresholds, vary, g = case
    ens = random_ensemble(seed, trees, depth, n_features, thresholds)
    _, enc = _encoded(ens, vary, Gap(g))
    recorded, derived = pair_tables(enc), pair_tables(enc, boxes=False)
    assert recorded.boxes is not None and derived.boxes is None
    assert np.array_equal(recorded.lo, derived.lo) and np.array_equal(recorded.hi, derived.hi)
    assert np.array_equal(recorded.values, derived.values)


def test_a_pair_tree_s_nodes_are_its_rows_of_the_node_table():
    _, enc = _encoded(two_feature_ensemble(), ("x0",), Gap(0.1, "margin"))
    tab = pair_tables(enc)
    assert tab.node_table.dtype == np.int32 and tab.node_table.shape[1] == 7
    assert sum(len(nodes) for nodes in tab.nodes) == len(tab.node_table)
    assert np.array_equal(tab.nodes[1], tab.node_table[tab.node_starts[1] : tab.node_starts[2]])


def test_pair_tables_past_what_a_memory_limit_leaves_raise_before_they_are_built():
    _, enc = _encoded(two_feature_ensemble(), ("x0",), Gap(0.1, "margin"))
    leaves = pair_tables(enc).values.shape[1]
    with pytest.raises(PairTablesTooLarge, match="memory limit"):
        pair_tables(enc, max_held=held_bytes(leaves - 1, 3, 3))
