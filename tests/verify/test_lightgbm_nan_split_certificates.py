"""A LightGBM split of the numbers from NaN: its threshold is inf in the model's text
(every number goes left), and dump_model() writes it as 1e300. The checker reads the
text's threshold: read as 1e300, numbers above it went right, to NaN's leaf, and the
checker refused a true certificate of a feature that is never missing."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

import treesens
from treesens.verify import verify_file


@pytest.fixture(scope="module")
def nan_split(tmp_path_factory):
    """Two trees of one split, the first of f0's numbers (0, 1, 2 or 3) from NaN, the
    second on f1; f0 then declared never missing: no change of f0 moves the prediction."""
    import lightgbm

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 2))
    X[:, 0] = np.round(X[:, 0] * 3)
    missing = rng.random(300) < 0.3
    X[missing, 0] = np.nan
    y = (missing ^ (X[:, 1] > 0.8)).astype(int)
    params = dict(objective="binary", num_leaves=2, learning_rate=1.0, verbose=-1, seed=0)
    data = lightgbm.Dataset(X, y, feature_name=["f0", "f1"])
    booster = lightgbm.train(params | {"num_threads": 1, "min_data_in_leaf": 5}, data, 2)
    path = tmp_path_factory.mktemp("nan_split") / "model.txt"
    booster.save_model(str(path))
    ens = treesens.load_model(str(path))
    never = tuple(replace(f, may_be_missing=False) if f.name == "f0" else f for f in ens.features)
    return path, ens.with_features(never)


def test_the_model_splits_the_numbers_from_nan_at_an_infinite_threshold(nan_split):
    path, _ = nan_split
    assert re.findall(r"(?m)^threshold=(.*)$", path.read_text())[0] == "inf"


def test_a_feature_never_missing_is_certified_insensitive_through_a_nan_split(nan_split, tmp_path):
    _, ens = nan_split
    out = tmp_path / "c.json"
    r = treesens.check(ens, ["f0"], gap=0.1, certificate=out)
    assert r.status == "insensitive" and r.proof.checked and verify_file(out).valid
