"""A single scikit-learn ExtraTreeClassifier / ExtraTreeRegressor, which treesens reads
as a one-tree forest (as a DecisionTree): the checker reads it too, so its answers are
certified instead of "the checker does not read this model"."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.verify import verify_file


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_a_single_extra_trees_max_gap_bound_is_certified_and_verified(kind, tmp_path):
    import skops.io
    from sklearn.tree import ExtraTreeClassifier, ExtraTreeRegressor

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 3))
    s = X[:, 0] + 0.5 * X[:, 1] + 0.05 * X[:, 2]
    if kind == "classifier":
        est = ExtraTreeClassifier(max_depth=4, random_state=0).fit(X, (s > 0.8).astype(int))
    else:
        est = ExtraTreeRegressor(max_depth=4, random_state=0).fit(X, s)
    path = tmp_path / "tree.skops"
    skops.io.dump(est, path)
    out = tmp_path / "c.json"
    r = treesens.max_gap(str(path), vary=["x2"], certificate=out, timeout=60)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid
