"""A LightGBM ``mape`` regressor, which treesens reads (its prediction is the raw
score): its answers are certified, not labelled "the checker rejects its certificate"."""

from __future__ import annotations

import numpy as np

import treesens
from treesens.verify import verify_file


def test_a_lightgbm_mape_regressors_max_gap_bound_is_certified_and_verified(tmp_path):
    import lightgbm

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 3))
    y = 1 + X[:, 0] + 0.5 * X[:, 1] + 0.05 * X[:, 2]
    params = {"objective": "mape", "num_leaves": 4, "verbose": -1, "min_data_in_leaf": 5}
    path = tmp_path / "mape.txt"
    lightgbm.train(params, lightgbm.Dataset(X, label=y), 4).save_model(path)
    out = tmp_path / "c.json"
    r = treesens.max_gap(str(path), vary=["Column_2"], certificate=out, timeout=60)
    assert r.proof.checked, r.proof.why_not
    assert verify_file(out).valid
