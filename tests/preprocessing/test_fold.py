"""Folding a split through a column's preprocessing: the folded test ``x < b`` holds for
exactly the doubles where the model's own test on the transformed value holds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, Tree
from treesens.readers.preprocessing.fold import ColumnMap, fold, identity


def _stump(threshold: float, op: str, cast: str) -> Ensemble:
    tree = Tree(
        [0, -1, -1],
        [threshold, 0, 0],
        [1, -1, -1],
        [2, -1, -1],
        [True] * 3,
        [0.0, 1.0, -1.0],
        outputs=(0,),
    )
    return Ensemble((tree,), (Feature("z"),), 2, (0.0,), LOGISTIC, op=op, cast=cast)


def _affine(mean: float, scale: float):
    def forward(x):
        return (np.asarray(x, dtype=np.float64) - mean) / scale

    return forward


def _model_says_yes(ens: Ensemble, z: np.ndarray) -> np.ndarray:
    return ens.leaf_indices(z[:, None])[:, 0] == 1


@settings(max_examples=60, deadline=None)
@given(
    threshold=st.floats(-5, 5),
    mean=st.floats(-100, 100),
    scale=st.floats(0.01, 50),
    op=st.sampled_from(["<", "<="]),
    cast=st.sampled_from(["float32", "float64"]),
)
def test_a_folded_threshold_splits_the_user_values_where_the_model_does(
    threshold, mean, scale, op, cast
):
    ens = _stump(threshold, op, cast)
    forward = _affine(mean, scale)
    folded = fold(ens, [Feature("x")], [ColumnMap(0, forward=forward)], replayer=None, source="t")
    b = folded.trees[0].threshold[0]
    around = [b] if not np.isfinite(b) else [np.nextafter(b, -np.inf), b, np.nextafter(b, np.inf)]
    xs = np.array([*around, mean + scale * threshold, -1e9, 1e9, 0.0])
    xs = xs[np.isfinite(xs)]
    assert (folded.leaf_indices(xs[:, None])[:, 0] == 1).tolist() == _model_says_yes(
        ens, forward(xs)
    ).tolist()


def test_a_folded_ensemble_compares_float64_with_less_than():
    folded = fold(
        _stump(0.5, "<=", "float32"),
        [Feature("x")],
        [ColumnMap(0, forward=identity)],
        replayer=None,
        source="t",
    )
    assert (folded.op, folded.cast) == ("<", "float64")


def test_a_one_hot_column_becomes_a_categorical_split_on_its_category():
    folded = fold(
        _stump(0.5, "<", "float32"),
        [Feature("race", "categorical", 0, 2, ("A", "B", "C"))],
        [ColumnMap(0, values=(0.0, 1.0, 0.0))],  # the race_B column
        replayer=None,
        source="t",
    )
    assert folded.trees[0].categories[0] == frozenset({0, 2})  # race_B < 0.5: not B


def test_a_missing_value_takes_the_side_of_the_value_it_is_imputed_with():
    ens = _stump(0.0, "<", "float64")  # default_left: NaN would go left

    def impute_at_ten(x):
        return np.where(np.isnan(x), 10.0, x)

    folded = fold(
        ens, [Feature("x")], [ColumnMap(0, forward=impute_at_ten)], replayer=None, source="t"
    )
    assert not folded.trees[0].default_left[0]  # 10 < 0 fails: right
