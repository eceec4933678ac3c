"""The domain an answer names ("within the data's range", ...) says what it was proved
over: with no bounds and no feature that may be missing, missing values are not in it."""

from __future__ import annotations

from treesens.compiler.ensemble import IDENTITY, Ensemble, Feature, Tree


def _ensemble(missing: bool) -> Ensemble:
    tree = Tree(
        feature=[0, -1, -1],
        threshold=[0.5, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True] * 3,
        value=[[0.0], [-1.0], [1.0]],
        outputs=(0,),
    )
    return Ensemble(
        trees=(tree,),
        features=(Feature("x0", may_be_missing=missing), Feature("x1")),
        n_classes=0,
        intercept=(0.0,),
        link=IDENTITY,
        source="hand-made",
    )


def test_an_unbounded_domain_without_missing_features_says_missing_values_are_out():
    assert _ensemble(missing=False).domain.startswith("over all feature values but missing ones")


def test_an_unbounded_domain_with_a_possibly_missing_feature_is_all_feature_values():
    assert _ensemble(missing=True).domain == "over all feature values (no bounds declared)"
