"""A sigmoid of a margin far below zero is 0 (exp overflows to inf there), without the
RuntimeWarning numpy raises for that overflow: a scikit-learn GradientBoosting whose
init is DummyClassifier(strategy="most_frequent") starts every row at such a margin, and
the warning reached the user's terminal in the middle of a max gap's answer."""

from __future__ import annotations

import warnings

import numpy as np

from treesens.compiler.ensemble import LOGISTIC, SIGMOID, raw_to_prediction, raw_to_proba


def test_a_logistic_margin_far_below_zero_is_probability_0_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = raw_to_proba(np.array([[-1000.0], [1000.0]]), LOGISTIC, 2)
    np.testing.assert_array_equal(p, [[1.0, 0.0], [0.0, 1.0]])


def test_a_sigmoid_regressor_far_below_zero_predicts_0_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = raw_to_prediction(np.array([-1000.0, 1000.0]), SIGMOID)
    np.testing.assert_array_equal(y, [0.0, 1.0])
