"""Feature domains: representative values of the intervals between thresholds."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.domain import build_domain, candidates
from treesens.compiler.ensemble import IDENTITY, Ensemble, Feature, Tree
from treesens.tests.oracle import random_ensemble


def test_a_threshold_beyond_float32_range_gives_candidates_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = candidates(1e39, math.inf, Feature("x"))
    assert math.inf in out and all(not math.isnan(v) for v in out)


def test_candidates_between_two_thresholds_start_with_their_midpoint():
    assert candidates(1.0, 3.0, Feature("x"))[0] == 2.0


# a data value whose float32 rounding lies above it: XGBoost splits between the two
# values of such a column at float32(HIGH) itself, which HIGH (as float32) does not pass
LOW, HIGH = -0.044641636506989144, 0.05068011873981862


def _float32_threshold_at_the_upper_bound() -> Ensemble:
    t = float(np.float32(HIGH))
    assert t > HIGH
    tree = Tree(
        feature=[0, -1, -1],
        threshold=[t, 0.0, 0.0],
        left=[1, -1, -1],
        right=[2, -1, -1],
        default_left=[True] * 3,
        value=np.array([[0.0], [-1.0], [1.0]]),
        outputs=(0,),
    )
    return Ensemble(
        trees=(tree,),
        features=(Feature("x", "real", LOW, HIGH),),
        n_classes=0,
        intercept=(0.0,),
        link=IDENTITY,
        source="float32-threshold",
        cast="float32",
    )


def test_an_upper_bound_whose_float32_value_reaches_a_threshold_keeps_the_interval_beyond_it():
    ens = _float32_threshold_at_the_upper_bound()
    dom = build_domain(ens, 0, [tree.threshold[0] for tree in ens.trees])
    assert dom.valid == (0, 1)
    assert not ens.test_holds(dom.reps[1], dom.thresholds[0]) and LOW <= dom.reps[1] <= HIGH


def test_a_two_valued_column_split_at_its_upper_values_float32_is_sensitive_within_the_data():
    xgb = pytest.importorskip("xgboost")
    X = pd.DataFrame({"x": [LOW, HIGH] * 20, "z": [0.0, 1.0, 2.0, 3.0] * 10})
    y = np.array([0.0, 10.0] * 20)
    est = xgb.XGBRegressor(n_estimators=2, max_depth=1, nthread=1).fit(X, y)
    ens = treesens.load_model(est, data=X, bounds="data")
    high, low = est.predict(X.iloc[[1, 0]])
    change = float(high - low)
    r = treesens.check(ens, vary=["x"], delta=0.9 * change)
    assert (r.status, r.validated) == ("sensitive", True)
    largest = treesens.max_gap(ens, vary=["x"])
    assert largest.max_gap["lower"] == pytest.approx(change, rel=1e-6)


def test_a_cell_up_to_an_infinite_threshold_shows_a_value_every_library_reads():
    # scikit-learn's missing-value split "x <= inf", folded through a pipeline as x < inf:
    # the cell [1.5, inf) showed 1e308, which scikit-learn refuses (too large for float32)
    ens = random_ensemble(0, 2, 1, 1, 1, op="<", cast="float64")
    dom = build_domain(ens, 0, [1.5, math.inf])
    assert 1.5 <= dom.reps[1] <= 10.0
