"""An ensemble checks its trees against its features and outputs whenever it is made,
including every copy made with other features (details, one-hot groups, a reading)."""

from __future__ import annotations

import pytest

from treesens.compiler.ensemble import IDENTITY, Ensemble, Feature, Tree


def _tree(feature: int) -> Tree:
    return Tree(
        feature=[feature, -1, -1],
        threshold=[0.5, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True] * 3,
        value=[[0.0], [-1.0], [1.0]],
        outputs=(0,),
    )


def _ensemble(*trees: Tree, n_features: int = 2) -> Ensemble:
    return Ensemble(
        trees=trees,
        features=tuple(Feature(f"x{i}") for i in range(n_features)),
        n_classes=0,
        intercept=(0.0,),
        link=IDENTITY,
        source="hand-made",
    )


def test_a_tree_splitting_on_a_feature_the_model_lacks_is_refused():
    with pytest.raises(ValueError, match="splits on feature index 2, but the model has 2"):
        _ensemble(_tree(0), _tree(2))


def test_a_copy_with_fewer_features_than_its_trees_read_is_refused():
    ens = _ensemble(_tree(0), _tree(1))
    with pytest.raises(ValueError, match="splits on feature index 1, but the model has 1"):
        ens.with_features((Feature("x0"),))


def test_a_tree_of_leaves_only_reads_no_feature():
    stump = Tree(
        feature=[-1],
        threshold=[0.0],
        left=[-1],
        right=[-1],
        default_left=[True],
        value=[[1.0]],
        outputs=(0,),
    )
    assert stump.max_feature() == -1
    assert _ensemble(stump, n_features=1).n_features == 1
