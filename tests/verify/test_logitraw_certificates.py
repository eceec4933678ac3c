"""XGBoost ``binary:logitraw`` models, which treesens reads as binary classifiers (P =
sigmoid(margin), the base score a margin): their answers are certified, and the checker
reads the base score as the margin XGBoost adds."""

from __future__ import annotations

import pytest

from treesens.tests.verify.small_xgboost import (
    assert_its_max_gap_is_certified_and_verified,
    assert_the_checker_reads_it_as_xgboost,
    trained_file,
)


def _above_a_line(X, _rng):
    return (X[:, 0] + 0.2 * X[:, 1] > 0.6).astype(int)


@pytest.fixture(scope="module")
def logitraw(tmp_path_factory):
    params = {"objective": "binary:logitraw", "base_score": 0.8}
    return trained_file(tmp_path_factory.mktemp("logitraw"), params, _above_a_line)


def test_the_checker_reads_a_logitraw_models_margin_as_xgboost_computes_it(logitraw):
    assert_the_checker_reads_it_as_xgboost(*logitraw, margin=True)


def test_a_logitraw_models_max_gap_bound_is_certified_and_verified(logitraw, tmp_path):
    assert_its_max_gap_is_certified_and_verified(logitraw[0], tmp_path / "c.json")
