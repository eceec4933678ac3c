"""The box search over every feature kind (search/pair_boxes.py): categorical splits
(a set of codes per input), features that may be missing (NaN a rank of its own, routed
by each node's missing rule: default side, LightGBM's zero band, NaN read as 0) and
their max gap, against the brute-force oracle on tiny ensembles (tests/feature_kinds.py)."""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np
import pytest

from treesens.answers.result import INSENSITIVE
from treesens.compiler.ensemble import MISSING_NAN, MISSING_ZERO, Feature, Tree
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.driver.solve import solve_query
from treesens.questions.max_gap import max_gap_query
from treesens.search import boxes
from treesens.search.box_search import FOUND, PROVED, box_search
from treesens.search.pair_boxes import PairTablesTooLarge, pair_tables
from treesens.search.pair_scope import applies, pair_encoding, plain_numeric
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.max_gap_oracle import (
    exact_max_gap,
    exact_max_ratio,
    max_gap_problems,
    max_ratio_problems,
)
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

FAR = 1e9  # a deadline no test reaches
VARIED = [(("f0",), 0.1), (("f1",), 0.2), (("f2",), 0.1), (("f0", "f1"), 0.3)]


def _search(ens, vary, g: float):
    q = Query(vary=tuple(vary), gap=Gap(g))
    enc = pair_encoding(ens, q)
    return q, box_search(enc, pair_tables(enc), time.time() + FAR)


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("lightgbm_like", [True, False], ids=["lightgbm", "xgboost"])
def test_box_search_agrees_with_brute_force_on_categories_and_missing_values(seed, lightgbm_like):
    ens = kinds_ensemble(seed, 4, 3, lightgbm_like=lightgbm_like)
    for vary, g in VARIED:
        q, out = _search(ens, vary, g)
        assert out.status == (FOUND if brute_force_sensitive(ens, q) else PROVED), (vary, g)


@pytest.mark.parametrize("seed", range(8))
def test_a_pair_found_over_categories_and_nan_meets_the_gap_and_shares_the_rest(seed):
    ens = kinds_ensemble(40 + seed, 5, 3)
    q, out = _search(ens, ("f0", "f1"), 0.05)
    if out.status != FOUND:
        pytest.skip("insensitive: no pair to check")
    x1, x2 = out.pair
    assert x1[2] == x2[2]
    p = ens.proba(np.stack([x1, x2]))[:, 1]
    assert p[0] >= 0.55 and p[1] <= 0.45


def _stump_on(feature: Feature, categories=None, missing=MISSING_NAN, default_left=True):
    """One split on f0 (threshold 1.0): "yes" scores +2, "no" -2; f1 unread."""
    tree = Tree(
        feature=[0, -1, -1],
        threshold=[1.0, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[default_left, False, False],
        value=np.array([[0.0], [2.0], [-2.0]]),
        missing=np.array([missing, MISSING_NAN, MISSING_NAN]),
        categories=(categories, None, None),
        outputs=(0,),
    )
    base = random_ensemble(0, 1, 1, 2, 1)
    features = (feature, Feature("f1"))
    return replace(
        base, trees=(tree,), features=features, intercept=(0.0,), op="<=", cast="float64"
    )


def _leaf_boxes(ens, vary=("f0",)):
    """Per pair leaf: its rank interval in x1's column of f0."""
    tab = pair_tables(pair_encoding(ens, Query(vary=vary, gap=Gap(0.1))))
    return sorted(zip(tab.lo[0].tolist(), tab.hi[0].tolist()))


def test_a_categorical_split_becomes_one_box_per_run_of_its_codes():
    # codes {0, 2} of four go "yes": runs [0,1) yes, [1,2) no, [2,3) yes, [3,4) no; each
    # of x1's four runs meets each of x2's
    f0 = Feature("f0", "categorical", categories=("a", "b", "c", "d"))
    ens = _stump_on(f0, categories=frozenset({0, 2}))
    assert _leaf_boxes(ens) == [(r, r + 1) for r in range(4) for _ in range(4)]


def test_a_nan_sent_left_is_the_last_rank_on_the_yes_side():
    # ranks of f0: 0 (<= 1.0), 1 (> 1.0), 2 (NaN): "yes" is {0, 2}, "no" is {1}
    ens = _stump_on(Feature("f0", may_be_missing=True), default_left=True)
    tab = pair_tables(pair_encoding(ens, Query(vary=("f0",), gap=Gap(0.1))))
    assert tab.sizes.tolist() == [3, 3, 1]
    yes = {(lo, hi) for lo, hi, v in zip(tab.lo[0], tab.hi[0], tab.values[0]) if v > 0}
    assert yes == {(0, 1), (2, 3)}


def test_a_feature_never_missing_has_no_nan_rank():
    ens = _stump_on(Feature("f0"))
    assert pair_tables(pair_encoding(ens, Query(vary=("f0",), gap=Gap(0.1)))).sizes[0] == 2


def test_lightgbm_s_zero_band_goes_to_the_default_side():
    # zero as missing, default "no": the band around 0 (below the threshold 1.0) scores -2
    ens = _stump_on(Feature("f0"), missing=MISSING_ZERO, default_left=False)
    tab = pair_tables(pair_encoding(ens, Query(vary=("f0",), gap=Gap(0.1))))
    x1_side = {(int(lo), float(v)) for lo, v in zip(tab.lo[0], tab.values[0])}
    # ranks: below the band, the band, between the band and 1.0, above 1.0
    assert x1_side == {(0, 2.0), (1, -2.0), (2, 2.0), (3, -2.0)}


def test_the_corner_of_a_nan_rank_is_nan():
    # every number of f0 is >= 2, so "no"; only NaN (default "yes") scores +2
    ens = _stump_on(Feature("f0", lb=2.0, may_be_missing=True), default_left=True)
    _, out = _search(ens, ("f0",), 0.3)
    assert out.status == FOUND and math.isnan(out.pair[0][0]) and out.pair[1][0] >= 2.0


def test_the_box_search_applies_to_categories_and_missing_values():
    enc = pair_encoding(kinds_ensemble(0, 3, 2), Query(vary=("f0",), gap=Gap(0.1)))
    assert applies(enc) and not plain_numeric(enc)


def test_a_plain_numeric_model_is_plain_numeric():
    enc = pair_encoding(random_ensemble(0, 3, 2, 3, 3), Query(vary=("f0",), gap=Gap(0.1)))
    assert plain_numeric(enc)


def test_the_box_stage_proves_insensitive_on_a_model_with_categories_and_nan():
    opts = (("heuristic_effort", 0.001),)
    for seed in range(40):
        ens = kinds_ensemble(seed, 4, 3)
        q = Query(vary=("f2",), gap=Gap(0.1), plan=Plan(timeout=60.0, options=opts))
        if brute_force_sensitive(ens, q):
            continue
        res = solve_query(ens, q)
        assert res.status == INSENSITIVE and res.stats["proved_by"] == boxes.FOUND_BY
        return
    pytest.fail("no insensitive case among the seeds")


@pytest.mark.parametrize("seed", range(16))
def test_max_gap_over_categories_and_missing_values_holds_the_exact_gap(seed):
    ens = kinds_ensemble(seed, 4, 3, lightgbm_like=seed % 2 == 0)
    vary, _ = VARIED[seed % len(VARIED)]
    tol = [1e-4, 1e-3, 1e-2][seed % 3]
    r = max_gap_query(ens, Query(vary=vary, plan=Plan(timeout=60.0)), tolerance=tol)
    assert r.max_gap["method"] == "boxes" and r.max_gap["proven"]
    assert not max_gap_problems(exact_max_gap(ens, vary), r, ens)


@pytest.mark.parametrize("seed", range(12))
def test_multiclass_max_gap_with_categories_and_missing_values_holds_the_exact_ratio(seed):
    ens = kinds_ensemble(seed, 6, 2, n_classes=3, lightgbm_like=seed % 2 == 0)
    classes = [(0, 1), (1, "any"), ("any", 2), ("any", "any")][seed % 4]
    vary = ("f0",) if seed % 2 else ("f1",)
    q = Query(vary=vary, classes=classes, plan=Plan(timeout=60.0))
    r = max_gap_query(ens, q, tolerance=[1e-4, 1e-3, 1e-2][seed % 3])
    assert r.max_gap["method"] == "boxes" and r.max_gap["proven"]
    assert not max_ratio_problems(exact_max_ratio(ens, vary, classes), r)


def test_building_the_tables_past_their_deadline_is_skipped_like_tables_too_large():
    # a category set or a NaN rank can multiply the pair leaves: the build looks at the
    # clock, so that the box stage's turn ends and the backend gets its time
    enc = pair_encoding(kinds_ensemble(0, 4, 3), Query(vary=("f0",), gap=Gap(0.1)))
    with pytest.raises(PairTablesTooLarge, match="time"):
        pair_tables(enc, deadline=time.time() - 1.0)
