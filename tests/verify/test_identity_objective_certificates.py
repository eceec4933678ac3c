"""XGBoost ``reg:quantileerror`` (one quantile_alpha) and ``reg:squaredlogerror`` models,
whose prediction is the raw score (the base score a prediction): their answers are
certified, and the checker reads their predictions as XGBoost computes them."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.tests.verify.small_xgboost import (
    assert_its_max_gap_is_certified_and_verified,
    assert_the_checker_reads_it_as_xgboost,
    trained_file,
)

OBJECTIVES = {
    "reg:quantileerror": {"quantile_alpha": 0.7},
    "reg:squaredlogerror": {},
}


def _positive_target(X, rng):
    return np.exp(X[:, 0] + 0.2 * X[:, 1]) + 0.1 * rng.uniform(size=len(X))


@pytest.fixture(scope="module", params=sorted(OBJECTIVES))
def regressor(request, tmp_path_factory):
    params = {"objective": request.param, **OBJECTIVES[request.param]}
    return trained_file(tmp_path_factory.mktemp("identity"), params, _positive_target)


def test_the_checker_reads_the_prediction_as_xgboost_computes_it(regressor):
    assert_the_checker_reads_it_as_xgboost(*regressor, margin=False)


def test_the_largest_change_is_certified_and_verified(regressor, tmp_path):
    assert_its_max_gap_is_certified_and_verified(regressor[0], tmp_path / "c.json")
