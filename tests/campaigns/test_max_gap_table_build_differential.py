"""A max gap whose time limit comes while the box search builds its tables keeps the
seed's replayed pair as its open bracket's lower bound (710e3e2): on the regression
harness's models (XGBoost, LightGBM, scikit-learn; categories, values missing; binary
and multiclass), every table build stopped at once, the bracket, with and without data
(whose values the box search takes as its own pair), holds the largest gap (ratio) of
the library's own predict on the harness's grid, and a pair is replayed. Hunt behind it:
86 models, one to three features varied, each with and without data (172 max gaps, 132
of them stopped in the build): no disagreement."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.encode import held_to_one_value
from treesens.search import gap_search
from treesens.search.pair_boxes import PairTablesPastDeadline
from treesens.tests.max_gap_oracle import (
    exact_max_gap,
    exact_max_ratio,
    max_gap_problems,
    max_ratio_problems,
)
from treesens.tests.regressions import harness as H

SEED = 13
CLASSES = [(0, "any"), ("any", 1), (1, 0)]


def _past_deadline(*args, **kwargs):
    raise PairTablesPastDeadline(1.0, 1)


def _problems(index: int, folder) -> list[str]:
    spec, ens, _ = H.campaign_model(index, SEED, folder)
    rng = np.random.default_rng([SEED, index])
    free = [n for f, n in enumerate(ens.feature_names) if held_to_one_value(ens, f) is None]
    k = int(rng.integers(1, min(3, len(free)) + 1))
    vary = sorted(str(v) for v in rng.choice(free, k, replace=False))
    X = H.build_grid(ens, vary).X
    data = pd.DataFrame(X[rng.choice(len(X), min(50, len(X)), replace=False)])
    data.columns = ens.feature_names
    binary = ens.n_classes == 2 and ens.n_outputs == 1
    kw = {} if binary else {"classes": CLASSES[index % len(CLASSES)]}
    if binary:
        exact = exact_max_gap(ens, vary, "library")
    else:
        exact = exact_max_ratio(ens, vary, kw["classes"], "library")
    problems = []
    for given in ({}, {"data": data}):
        r = treesens.max_gap(ens, vary, timeout=60, **kw, **given)
        found = max_gap_problems(exact, r, ens) if binary else max_ratio_problems(exact, r)
        problems += [f"{spec.family} {vary} data {bool(given)}: {p}" for p in found]
    return problems


def _holds_the_librarys_best(index: int, folder) -> None:
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mp.setattr(gap_search, "_tables_within", _past_deadline)
        assert not _problems(index, folder)


FAST = [0, 3]  # XGBoost binary and LightGBM multiclass, both stopped in the build


@pytest.mark.parametrize("index", FAST)
def test_a_max_gap_stopped_in_its_table_build_holds_the_librarys_best(index, tmp_path):
    _holds_the_librarys_best(index, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("index", [i for i in range(90) if i not in FAST])
def test_more_max_gaps_stopped_in_their_table_build_hold_the_librarys_best(index, tmp_path):
    _holds_the_librarys_best(index, tmp_path)
