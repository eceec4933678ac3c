"""A max gap under a bound on one input is directional (docs/max-gap.md): a regressor's
is the largest f(x1) - f(x2) with x1 within its bound, the prediction falling from x1 to
x2, and the other direction is the same query with the bound on x2; the answer's notes
say so, and a query that treats both inputs alike has no such note."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.plan import Plan
from treesens.compiler.query import FeatureBound, Query
from treesens.questions.max_gap import max_gap_query
from treesens.tests.regressions import harness as H

xgboost = pytest.importorskip("xgboost")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BOUND = (0.0, 0.3)  # on f0, of x1 or x2


@pytest.fixture(scope="module")
def regressor(tmp_path_factory):
    """An XGBoost regressor trained on f0 mostly, as the library saved it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 3))
    y = 3 * X[:, 0] + X[:, 0] * X[:, 1] + rng.normal(0, 0.1, 300)
    path = tmp_path_factory.mktemp("direction") / "reg.json"
    est = xgboost.XGBRegressor(n_estimators=6, max_depth=3, learning_rate=0.5)
    est.fit(X, y).get_booster().save_model(path)
    return treesens.load_model(str(path))


def _bounded(ens, copy: int, **kw):
    """The max gap of f0 with ``copy``'s f0 in BOUND."""
    q = Query(vary=("f0",), bounds=(FeatureBound("f0", *BOUND, (copy,)),), plan=Plan(timeout=60))
    return max_gap_query(ens, q, **kw)


def _brute_changes(ens) -> tuple[float, float]:
    """Brute force over one value per routing cell of each feature, x1.f0 within BOUND:
    the largest f(x1) - f(x2) (down from x1) and f(x2) - f(x1) (up)."""
    values = [H.feature_values(ens, f) for f in range(ens.n_features)]
    x1 = [v for v in values[0] + list(BOUND) if BOUND[0] <= v <= BOUND[1]]
    down = up = -np.inf
    for s in itertools.product(*values[1:]):
        p1, p2 = (ens.predict(np.array([[v, *s] for v in vs])) for vs in (x1, values[0]))
        down, up = max(down, p1.max() - p2.min()), max(up, p2.max() - p1.min())
    return float(down), float(up)


def test_a_max_gap_under_a_bound_on_x1_is_the_largest_change_down_from_x1(regressor):
    down, up = _brute_changes(regressor)
    m = _bounded(regressor, 1).max_gap
    assert m["lower"] <= down * (1 + 1e-6) and down <= m["upper"] * (1 + 1e-6)
    assert up > m["upper"]  # the rise is another question


def test_the_same_bound_on_x2_asks_the_largest_rise_from_x1_under_it(regressor):
    _, up = _brute_changes(regressor)
    m = _bounded(regressor, 2).max_gap
    assert m["lower"] <= up * (1 + 1e-6) and up <= m["upper"] * (1 + 1e-6)


def test_the_answer_notes_its_direction_and_how_to_ask_the_other(regressor):
    said = str(_bounded(regressor, 1))
    assert "the prediction falling from x1 to x2" in said
    assert "put the bounds on the other input (x2.f0 in [0, 0.3])" in said


def test_a_binary_classifier_s_note_names_which_input_is_scored_high():
    ens = treesens.load_model(str(EXAMPLES / "breast_cancer_xgb.json"))
    q = Query(
        vary=("mean_texture",),
        bounds=(FeatureBound("mean_texture", 15, 22, (1,)),),
        plan=Plan(timeout=60),
    )
    notes = max_gap_query(ens, q).notes
    assert any(
        "P(x1) high and P(x2) low" in n and "x2.mean_texture in [15, 22]" in n for n in notes
    )


def test_a_query_bounding_both_inputs_alike_has_no_direction_note(regressor):
    q = Query(vary=("f0",), bounds=(FeatureBound("f0", *BOUND),), plan=Plan(timeout=60))
    assert not any("directional" in n for n in max_gap_query(regressor, q).notes)


def test_the_partial_answer_of_an_interrupted_max_gap_notes_its_direction(regressor, monkeypatch):
    from treesens.search import gap_search

    def ctrl_c_in_the_seed(*args, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(gap_search, "seed_floor", ctrl_c_in_the_seed)
    with pytest.raises(KeyboardInterrupt) as e:
        _bounded(regressor, 1)
    partial = e.value.partial_result
    assert partial.max_gap["stopped_by"] == "interrupted"
    assert any("the prediction falling from x1 to x2" in n for n in partial.notes)
