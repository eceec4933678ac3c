"""The brute-force oracle's values of a feature under a relation between the inputs
(tests/regressions/harness.candidate_values, read as the least and the largest of each
routing class by test_relations_in_boxes._library_values) hold two values of a class
wherever the class has two, so that a pair x1.f < x2.f within one class is tried. Three
classes had one value where treesens found a pair of two: LightGBM's zero band (every
value within 1e-35 of 0 read as 0, a missing_type Zero node's default side), the
category codes past the last a split lists, and the values of a whole-number feature no
tree reads (tests/oracle._raw_candidates' 0 alone). On a model whose largest gap needs x1
and x2 in such a class, the oracle's largest gap is the max gap's."""

from __future__ import annotations

import numpy as np

from treesens.compiler.ensemble import MISSING_NAN, MISSING_ZERO, Ensemble, Feature, Tree
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureRelation, Query
from treesens.questions.max_gap import max_gap_query
from treesens.tests.compiler.test_max_gap_relations import _brute_max_gap, _Gap
from treesens.tests.compiler.test_relations_in_boxes import _library_values

TOLERANCE = 1e-3
LEAF = 3.0  # the f1 subtree's leaves: a pair reaching it has gap sigmoid(3) - 0.5


def _f1_subtree(first: int) -> tuple[list, ...]:
    """Nodes ``first``.. of a subtree on f1: f1 <= 0.5 -> -LEAF, else +LEAF."""
    return (
        [1, -1, -1],
        [0.5, 0.0, 0.0],
        [first + 1, -1, -1],
        [first + 2, -1, -1],
        [[0.0], [-LEAF], [LEAF]],
    )


def _ensemble(feature: Feature, head: dict, cast: str = "float64") -> Ensemble:
    """One tree whose ``head`` nodes on f0 lead to the f1 subtree for one class of f0's
    values alone (every other value: leaf 0), and f1 real."""
    feats, ths, lefts, rights, vals = (list(head[k]) for k in ("f", "t", "l", "r", "v"))
    for col, part in zip((feats, ths, lefts, rights, vals), _f1_subtree(len(feats))):
        col += part
    n = len(feats)
    tree = Tree(
        feature=feats,
        threshold=ths,
        left=lefts,
        right=rights,
        default_left=head["dl"] + [False] * (n - len(head["dl"])),
        value=np.array(vals),
        outputs=(0,),
        missing=head.get("m", [MISSING_NAN] * len(head["f"])) + [MISSING_NAN] * 3,
        categories=head.get("c", (None,) * len(head["f"])) + (None,) * 3,
    )
    f1 = Feature("f1", "real", 0.0, 1.0)
    return Ensemble((tree,), (feature, f1), 2, (0.0,), "logistic", op="<=", cast=cast)


def _exact_and_max_gap(ens: Ensemble, values: dict[int, list[float]]) -> tuple[float, float]:
    """Brute force's largest gap over ``values`` under x1.f0 < x2.f0, and the max gap's
    lower bound (its replayed pair's gap)."""
    q = Query(vary=("f0", "f1"), relations=(FeatureRelation("f0", 1, "<", 2),))
    exact = _brute_max_gap(ens, q, values, _Gap(lambda X: ens.proba(X)[:, 1]))
    r = max_gap_query(ens, q.with_(plan=Plan(timeout=60.0)), tolerance=TOLERANCE)
    assert r.status == "sensitive" and r.validated, (r.status, r.max_gap)
    return exact, r.max_gap["lower"]


def _oracle_values(ens: Ensemble) -> dict[int, list[float]]:
    """The regression harness's values of each feature (the least and the largest of each
    routing class of f0, under the relation)."""
    return {g: _library_values(ens, g, g == 0) for g in range(ens.n_features)}


def _zero_band_model() -> Ensemble:
    """LightGBM's reading (float64z): a missing_type Zero node sends the zero band right,
    every other value up to 100 left (leaf 0); right, f0 <= 50 leaves the band alone."""
    head = {
        "f": [0, -1, 0, -1],
        "t": [100.0, 0.0, 50.0, 0.0],
        "l": [1, -1, 4, -1],
        "r": [2, -1, 3, -1],
        "v": [[0.0]] * 4,
        "dl": [False] * 4,
        "m": [MISSING_ZERO, MISSING_NAN, MISSING_NAN, MISSING_NAN],
    }
    return _ensemble(Feature("f0", "real"), head, cast="float64z")


def test_the_oracle_takes_two_values_of_lightgbm_s_zero_band():
    ens = _zero_band_model()
    exact, lower = _exact_and_max_gap(ens, _oracle_values(ens))
    assert lower > 0.4 and abs(exact - lower) <= TOLERANCE, (exact, lower)


def test_the_oracle_takes_two_codes_past_the_last_a_split_lists():
    # c's splits list 0..3 (LightGBM's coded feature: codes from 0, no upper end): the
    # codes past 3 alone reach f1, and x1.c < x2.c needs two of them
    head = {
        "f": [0, -1],
        "t": [0.0, 0.0],
        "l": [1, -1],
        "r": [2, -1],
        "v": [[0.0]] * 2,
        "dl": [False] * 2,
        "c": (frozenset({0, 1, 2, 3}), None),
    }
    ens = _ensemble(Feature("f0", "categorical", lb=0.0), head)
    exact, lower = _exact_and_max_gap(ens, _oracle_values(ens))
    assert lower > 0.4 and abs(exact - lower) <= TOLERANCE, (exact, lower)


def test_the_oracle_takes_two_values_of_a_feature_no_tree_reads():
    # f0 (whole numbers, no declared range) is read by no split: the tree is f1's alone
    head = {"f": [], "t": [], "l": [], "r": [], "v": [], "dl": []}
    ens = _ensemble(Feature("f0", "integer"), head)
    exact, lower = _exact_and_max_gap(ens, _oracle_values(ens))
    assert lower > 0.4 and abs(exact - lower) <= TOLERANCE, (exact, lower)
