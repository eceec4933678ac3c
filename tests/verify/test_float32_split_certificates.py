"""scikit-learn casts x to the nearest float32 and compares float32(x) <= t at a double
threshold t (the midpoint of two float32 values, most often no float32 itself). The
checker parts the float32 values at a split where the library does, at the largest
float32 at most t, and maps a feature's bound onto the float32 the cast gives. It parted
real numbers at t, and took the float32 below a lower bound for the bound: a bound
whose float32 lies just above t let the leaf below t be reached, and a true certificate
was refused."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import treesens
from treesens.verify import verify_file


@pytest.fixture
def split_tree(tmp_path):
    """A decision tree with one split on x0 (x1 is noise), saved with skops, and its
    threshold."""
    import skops.io
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    x0 = np.repeat([-0.95, -0.9], 40)
    X = np.column_stack([x0, rng.uniform(0, 1, len(x0))])
    est = DecisionTreeClassifier(random_state=0).fit(X, (x0 > -0.92).astype(int))
    path = tmp_path / "tree.skops"
    skops.io.dump(est, path)
    return path, float(est.tree_.threshold[0])


def _f32_next(v: float, to: float) -> float:
    return float(np.nextafter(np.float32(v), np.float32(to)))


def test_the_split_lies_strictly_between_two_float32_values(split_tree):
    _, t = split_tree
    assert float(np.float32(t)) != t


def test_a_bound_rounding_to_the_float32_above_a_split_is_certified(split_tree, tmp_path):
    path, t = split_tree
    above = float(np.float32(t)) if np.float32(t) > t else _f32_next(t, np.inf)
    lb = float(np.nextafter(above, -np.inf))  # its nearest float32 is above, not t's below
    ens = treesens.load_model(str(path))
    bounded = tuple(replace(f, lb=lb, ub=1.0) if f.name == "x0" else f for f in ens.features)
    out = tmp_path / "c.json"
    r = treesens.check(ens.with_features(bounded), ["x0"], gap=0.1, certificate=out)
    assert r.status == "insensitive" and r.proof.checked and verify_file(out).valid
