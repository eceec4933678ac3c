"""The audit's rows that go past the enumeration (too many cells of F) are anchored
questions the box search answers exactly (search/anchored_boxes.py): x1 the row, every
column but x2's of F held to the row's rank. Each row's answer equals the enumeration's
(the library's predict over every cell of F, itself held equal to a brute force in
tests/frontends/test_audit.py) and, on IR ensembles with categorical features, missing
values and LightGBM's zero band, an independent brute force (tests/audit_oracle.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from treesens.backends.registry import BOXES
from treesens.compiler.audit import FLIPPABLE, Target, audit_rows
from treesens.compiler.errors import InputError
from treesens.compiler.query import Gap
from treesens.questions.ask import answer
from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.audit_solve import row_query
from treesens.readers.data import load_data
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.frontends.test_audit import TRAINERS
from treesens.tests.oracle import interval_values, random_ensemble


def _data(ens, X):
    return load_data(pd.DataFrame(X, columns=ens.feature_names), ens)


def _by_boxes(ens, X, vary, **target):
    """Every row asked as an anchored question (max_candidates=0: none enumerated)."""
    ds = _data(ens, X)
    spec = make_spec(ens, ds, vary, make_target(ens, **target))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(len(X)), max_candidates=0))
    return ans, spec


def _enumerated(ens, X, spec):
    return audit_rows(ens, X, spec.vary, spec.target, spec.scales)


def _rows_of_cells(ens, n: int, seed: int) -> np.ndarray:
    """n rows, each feature at one of its cells' values (NaN among them where the feature
    may be missing, a category code for a categorical one)."""
    rng = np.random.default_rng(seed)
    cells = [interval_values(ens, f) for f in range(ens.n_features)]
    return np.array([[c[int(rng.integers(len(c)))] for c in cells] for _ in range(n)])


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("lib", sorted(TRAINERS))
def test_every_row_the_box_search_answers_agrees_with_the_enumeration(lib, k):
    ens, X = TRAINERS[lib](k)
    X = X[:12]
    vary = [ens.feature_names[f] for f in (1, 3)]
    ans, spec = _by_boxes(ens, X, vary, gap=0.1 if k == 2 else 1.2)
    assert ans.status == _enumerated(ens, X, spec).status


@pytest.mark.parametrize("lib", sorted(TRAINERS))
def test_the_box_search_answers_every_row_itself(lib):
    ens, X = TRAINERS[lib](2)
    ans, _ = _by_boxes(ens, X[:8], [ens.feature_names[0]], gap=0.1)
    assert ans.answered_by == {i: BOXES for i in range(8)}


@pytest.mark.parametrize("lib", ["xgboost", "lightgbm"])
def test_a_flipped_row_s_x2_is_the_row_but_on_F_and_flips_by_the_library(lib):
    ens, X = TRAINERS[lib](2)
    ans, _ = _by_boxes(ens, X[:12], [ens.feature_names[0]], gap=0.1)
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit
    for i in hit:
        assert np.array_equal(np.delete(ans.x2[i], 0), np.delete(X[i], 0))
        p2 = ens.replayer.predict_proba(ans.x2[i : i + 1])[0, 1]
        assert (p2 <= 0.4) if ans.decision[i] == 1 else (p2 >= 0.6)


@pytest.mark.parametrize("direction", ["up", "down", "either"])
def test_a_regressor_s_rows_agree_with_the_enumeration(direction):
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 3))
    m = xgb.XGBRegressor(n_estimators=10, max_depth=3).fit(X, 3 * X[:, 0] + X[:, 1])
    ens, X = load_model(m), X[:12]
    ans, spec = _by_boxes(ens, X, ["f0", "f1"], delta=0.8, direction=direction)
    assert ans.status == _enumerated(ens, X, spec).status
    assert FLIPPABLE in ans.status and ans.answered_by


@pytest.mark.parametrize("seed", range(6))
def test_rows_of_every_feature_kind_agree_with_a_brute_force(seed):
    # a categorical f0, an f1 that may be missing (NaN, the zero band), a numeric f2
    ens = kinds_ensemble(seed, n_trees=6, depth=3)
    X = _rows_of_cells(ens, 10, seed)
    ans, _ = _by_boxes(ens, X, ["f0", "f1"], gap=0.1)
    expected = brute_force_flippable(ens, X, ["f0", "f1"], Target(Gap(0.1)))
    assert [s == FLIPPABLE for s in ans.status] == expected


@pytest.mark.parametrize("seed", range(4))
def test_multiclass_rows_of_every_feature_kind_agree_with_a_brute_force(seed):
    ens = kinds_ensemble(seed, n_trees=9, depth=3, n_classes=3)
    X = _rows_of_cells(ens, 8, seed)
    ans, _ = _by_boxes(ens, X, ["f1", "f2"], gap=1.1)
    expected = brute_force_flippable(ens, X, ["f1", "f2"], Target(Gap(1.1)))
    assert [s == FLIPPABLE for s in ans.status] == expected


@pytest.mark.parametrize("seed", range(4))
def test_rows_of_random_ensembles_agree_with_a_brute_force(seed):
    ens = random_ensemble(seed, 12, 3, 4, 5)
    X = _rows_of_cells(ens, 12, seed)
    ans, _ = _by_boxes(ens, X, ["f1", "f2"], gap=0.05)
    expected = brute_force_flippable(ens, X, ["f1", "f2"], Target(Gap(0.05)))
    assert [s == FLIPPABLE for s in ans.status] == expected


def test_a_row_with_a_missing_value_is_answered_not_left_unknown():
    ens = kinds_ensemble(0, n_trees=6, depth=3)
    X = _rows_of_cells(ens, 12, 0)
    X[:, 1] = math.nan  # f1 missing in every row; varied: f0 and f2
    ans, _ = _by_boxes(ens, X, ["f0", "f2"], gap=0.1)
    assert "unknown" not in ans.status


def test_a_missing_value_of_an_anchored_row_is_refused_on_a_solver_in_one_line():
    ens = kinds_ensemble(0, n_trees=6, depth=3)
    X = np.array([[0.0, math.nan, 0.0]])  # f1 missing
    spec = make_spec(ens, _data(ens, X), ["f0"], make_target(ens, 0.1))
    q = row_query(ens, spec, X[0], 1, 10)
    q = q.with_(plan=q.plan.with_(backend="cpsat"))
    with pytest.raises(InputError, match="no value of f1: a solver cannot pin x1"):
        answer(ens, q)


def test_a_row_outside_its_declared_bounds_stays_unknown_not_an_error():
    ens, X = TRAINERS["xgboost"](2)
    feats = list(ens.features)
    feats[2] = feats[2].__class__(feats[2].name, feats[2].kind, -10.0, 10.0)
    ens = ens.with_features(tuple(feats))
    X = X[:3].copy()
    X[0, 2] = 50.0  # not admissible: no rank of its own, a solver cannot take it either
    ans, _ = _by_boxes(ens, X, [ens.feature_names[0]], gap=0.1)
    assert ans.status[0] == "unknown" and ans.status[1] != "unknown"
