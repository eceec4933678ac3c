"""The max-gap search (questions/max_gap.py), piece by piece."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import treesens
from treesens.answers.result import Result
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature
from treesens.compiler.errors import InputError
from treesens.compiler.options import QueryOptions
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.questions import max_gap as M
from treesens.questions.ask import answer
from treesens.tests.max_gap_oracle import exact_max_gap, max_gap_problems
from treesens.tests.oracle import random_ensemble
from treesens.views.result_view import max_gap_outcome

# the bisection over checks, which the box search replaces where it applies
BISECT = QueryOptions.of({"box_search": False})


def _bisect(timeout: float = 60.0, vary=("f0",)) -> Query:
    return Query(vary=vary, plan=Plan(timeout=timeout, options=BISECT))


def _ens(seed: int = 3) -> Ensemble:
    return random_ensemble(np.random.default_rng(seed), 3, 2, 3, 2, leaf_scale=1.0)


def _fake_result(status: str, p1: float | None = None, p2: float | None = None) -> Result:
    r = Result(query="f0", status=status, backend="fake", features=["f0"], gap=0.0)
    if p1 is not None:
        r.outputs = {"x1": [1 - p1, p1], "x2": [1 - p2, p2]}
        r.witness = {"x1": {"f0": 1.0}, "x2": {"f0": 2.0}}
        r.validated = True
    return r


def test_achieved_gap_is_the_smaller_side():
    assert M.achieved_gap({"x1": [0.2, 0.8], "x2": [0.6, 0.4]}) == pytest.approx(0.1)


def test_achieved_gap_is_met_by_its_pair_in_floating_point():
    for p1, p2 in [(0.9, 0.1), (0.7000001, 0.123456789), (0.5, 0.5), (0.75, 0.0000001)]:
        g = M.achieved_gap({"x1": [1 - p1, p1], "x2": [1 - p2, p2]})
        assert p1 >= 0.5 + g and p2 <= 0.5 - g


def test_score_bound_is_at_least_the_exact_max_gap():
    for seed in range(8):
        ens = _ens(seed)
        assert M.score_bound(ens, ("f0",)) >= exact_max_gap(ens, ("f0",))


def test_score_bound_is_at_most_one_half():
    ens = random_ensemble(np.random.default_rng(0), 3, 2, 3, 2, leaf_scale=50.0)
    assert M.score_bound(ens, ("f0",)) <= 0.5


def test_check_max_gap_model_asks_a_multiclass_query_for_its_classes():
    ens = random_ensemble(np.random.default_rng(0), 3, 2, 3, 2, n_classes=3)
    with pytest.raises(InputError, match="give the two classes"):
        M.check_max_gap_model(ens, Query(vary=("f0",), gap=Gap(0.2, given=False)))


def test_check_max_gap_model_accepts_a_multiclass_query_with_classes():
    ens = random_ensemble(np.random.default_rng(0), 3, 2, 3, 2, n_classes=3)
    M.check_max_gap_model(ens, Query(vary=("f0",), gap=Gap(0.2, given=False), classes=(0, "any")))


def test_check_max_gap_model_refuses_a_given_gap():
    with pytest.raises(InputError, match="searches the gap itself"):
        M.check_max_gap_model(_ens(), Query(vary=("f0",), gap=Gap(0.1)))


def test_check_max_gap_model_accepts_the_default_gap():
    M.check_max_gap_model(_ens(), Query(vary=("f0",), gap=Gap(0.2, given=False)))


@pytest.mark.parametrize("tol", [0.0, -1.0, 1e-9, 0.5, math.nan, math.inf])
def test_check_tolerance_refuses_out_of_range(tol):
    with pytest.raises(InputError):
        M.check_tolerance(tol)


@pytest.mark.parametrize("tol", [True, False])
def test_check_tolerance_refuses_a_boolean_as_no_number(tol):
    with pytest.raises(InputError, match=f"must be a number, got {tol}"):
        M.check_tolerance(tol)


def test_max_gap_line_says_proven():
    m = M.MaxGap(0.25, 0.25005, 1e-4, True, 5)
    assert M.max_gap_line(m).startswith("max gap 0.25 (proven")


def test_max_gap_line_of_a_pair_reaching_its_bound_says_no_pair_reaches_more():
    line = M.max_gap_line(M.MaxGap(0.5, 0.5, 1e-3, True, 0))  # pure leaves: P = 1 and 0
    assert line == "max gap 0.5 (proven: no pair reaches more; tolerance 0.001)"


def test_bounds_are_shown_rounded_outward_so_the_bracket_still_holds():
    from treesens.answers.phrases import lower_text, upper_text

    assert lower_text(0.49996) == "0.4999" and upper_text(0.49951) == "0.4996"
    assert lower_text(0.499996, ".4f") == "0.4999" and upper_text(0.12341, ".4f") == "0.1235"


def test_a_bound_shown_in_exponent_form_is_rounded_outward_too():
    # a report's 'at most 7.988e-06' of an upper bound 7.98849e-06; a regressor's largest
    # change 123456.7 shown at least '1.235e+05', its progress line's upper 122910.07 at
    # most '1.229e+05': each rounded to the nearest, past what was proven
    from treesens.answers.phrases import lower_text, upper_text

    assert upper_text(7.98849e-06) == "7.989e-06" and lower_text(7.98849e-06) == "7.988e-06"
    assert lower_text(123456.7) == "1.234e+05" and upper_text(122910.07) == "1.23e+05"
    assert lower_text(1234567.8, ".6g") == "1.23456e+06"


def test_a_lower_bound_just_below_half_is_not_shown_as_half():
    line = M.max_gap_line(M.MaxGap(0.4999996, 0.5, 1e-3, True, 0))
    assert line.startswith("max gap 0.499999 (proven")


def test_a_sweep_cell_shows_a_lower_bound_below_its_value():
    from treesens.questions.sweep import max_gap_cell

    r = Result("f", "sensitive", "cpsat", ["f"], 0.49996)
    r.max_gap = {"lower": 0.49996, "upper": 0.5, "proven": True}
    assert max_gap_cell(r) == "0.4999"


def test_a_results_repr_of_a_max_gap_its_pair_reaches_says_no_more():
    from sklearn.tree import DecisionTreeClassifier

    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    tree = DecisionTreeClassifier().fit(X, [0, 0, 1, 1])
    r = treesens.max_gap(treesens.load_model(tree, data=X), "x0")
    assert "max gap 0.5 (proven: no more)" in repr(r)


def test_a_multiclass_ratio_its_pair_makes_unbounded_reads_unbounded():
    from sklearn.tree import DecisionTreeClassifier

    X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    tree = DecisionTreeClassifier().fit(X, [0, 0, 1, 1, 2, 2])  # pure leaves
    r = treesens.max_gap(treesens.load_model(tree, data=X), "x0", classes=("any", "any"))
    assert r.max_gap["lower"] == sys.float_info.max  # the JSON's number for it
    assert "max gap unbounded: the pair gives a class probability 0" in repr(r)
    assert r.message.startswith("max gap unbounded")


def test_a_lightgbm_softmax_whose_class_probability_underflows_reads_unbounded():
    import re

    lgb = pytest.importorskip("lightgbm")
    from treesens.tests.max_gap_oracle import exact_max_ratio

    rng = np.random.default_rng(1)
    X = rng.random((600, 3))
    m = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, min_child_samples=5, verbose=-1)
    text = m.fit(X, (X[:, 0] * 3).astype(int)).booster_.model_to_string()
    # scores 1,000 times the trained ones: a class's softmax probability underflows to 0
    scaled = re.sub(
        r"leaf_value=([^\n]*)",
        lambda mo: "leaf_value=" + " ".join(repr(1000 * float(v)) for v in mo.group(1).split()),
        re.sub(r"tree_sizes=[^\n]*\n", "", text),
    )
    ens = treesens.load_model(lgb.Booster(model_str=scaled))
    vary = (ens.feature_names[0],)
    exact = exact_max_ratio(ens, vary, (0, 1), source="library")
    assert exact == sys.float_info.max  # the library's predict gives class 1 probability 0
    r = treesens.max_gap(ens, vary[0], classes=(0, 1), timeout=120)
    assert r.max_gap["lower"] == r.max_gap["upper"] == exact


def test_max_gap_line_says_insensitive_to_within_the_tolerance():
    line = M.max_gap_line(M.MaxGap(None, 1e-4, 1e-4, True, 1))
    assert "insensitive to within the tolerance" in line


def test_the_verdict_line_of_no_pair_at_the_tolerance_names_the_gap_as_the_tolerance():
    # a feature the trees split on, whose pairs reach no gap of the tolerance (one no tree
    # splits on has a max gap of 0 exactly: test_unread_feature_note.py)
    r = Result(query="f0", status="insensitive", backend="boxes", features=["f0"], gap=1e-3)
    r.max_gap = M.MaxGap(None, 4e-4, 1e-3, True, 0, method="boxes").to_dict()
    first = str(r).splitlines()[0]
    assert "max gap below the tolerance 0.001" in first
    assert "g=" not in first


def test_the_verdict_line_of_no_change_names_the_proven_bound_not_a_smaller_tolerance():
    """A regressor's tolerance is relative to the change: with no pair, the line says
    the bound that was proven (1e-3 of the leaf values'), not "below the tolerance"."""
    bounds = {"lower": None, "upper": 1e-5, "tolerance": 1e-8, "proven": True}
    res = Result("q", "insensitive", "cpsat", ["f0"], 1e-8, max_gap={**bounds, "kind": "change"})
    first = str(res).splitlines()[0]
    assert "largest change below 1e-05," in first and "tolerance" not in first


def test_max_gap_line_says_not_proven():
    assert "not proven" in M.max_gap_line(M.MaxGap(0.1, 0.3, 1e-4, False, 3))


def test_search_matches_the_exact_max_gap_within_the_tolerance():
    ens = _ens(3)
    r = M.max_gap_query(ens, Query(vary=("f0",), plan=Plan(timeout=60.0)))
    assert not max_gap_problems(exact_max_gap(ens, ("f0",)), r, ens)
    assert r.max_gap["proven"]


def test_search_with_a_coarse_tolerance_takes_fewer_steps():
    ens = _ens(3)
    fine = M.max_gap_query(ens, _bisect(60.0), tolerance=1e-4)
    coarse = M.max_gap_query(ens, _bisect(60.0), tolerance=0.05)
    assert coarse.max_gap["steps"] < fine.max_gap["steps"]
    assert coarse.max_gap["upper"] - coarse.max_gap["lower"] <= 0.05


def test_insensitive_model_reports_no_gap_above_the_tolerance():
    ens = _ens(0)  # the oracle's max gap is negative here
    assert exact_max_gap(ens, ("f0",)) < 0
    r = M.max_gap_query(ens, Query(vary=("f0",), plan=Plan(timeout=60.0)))
    assert r.status == "insensitive" and r.gap == M.DEFAULT_TOLERANCE
    assert r.max_gap["lower"] is None and r.max_gap["upper"] <= M.DEFAULT_TOLERANCE
    assert r.max_gap["proven"]


def test_feature_no_tree_uses_is_insensitive_at_once():
    ens = _ens(3)
    free = Feature("unused", "real")
    wide = Ensemble(
        trees=ens.trees,
        features=ens.features + (free,),
        n_classes=2,
        intercept=ens.intercept,
        link=ens.link,
        op=ens.op,
        cast=ens.cast,
        source="wide",
    )
    r = M.max_gap_query(wide, _bisect(60.0, ("unused",)))
    assert r.status == "insensitive" and r.max_gap["steps"] == 1


def test_result_gap_is_the_witness_achieved_gap():
    ens = _ens(3)
    r = M.max_gap_query(ens, Query(vary=("f0",), plan=Plan(timeout=60.0)))
    assert r.gap == r.max_gap["lower"] == M.achieved_gap(r.outputs)


def test_steps_are_recorded_in_stats():
    r = M.max_gap_query(_ens(3), _bisect(60.0))
    assert len(r.stats["max_gap_steps"]) == r.max_gap["steps"]
    assert r.stats["max_gap_steps"][0]["gap"] == M.DEFAULT_TOLERANCE


def test_asked_records_the_tolerance():
    q = Query(vary=("f0",), kind="max_gap", params={"tolerance": 1e-3}, plan=Plan(timeout=60.0))
    r = answer(_ens(3), q)
    assert r.stats["asked"]["max_gap"] == 1e-3


def _scripted(monkeypatch, answers):
    asked = []

    def fake(ens, q, **kw):
        asked.append(q.gap.value)
        return answers.pop(0)

    monkeypatch.setattr(M, "solve_query", fake)
    return asked


def test_time_limit_without_witness_is_unknown(monkeypatch):
    _scripted(monkeypatch, [_fake_result("unknown")])
    r = M.max_gap_query(_ens(3), _bisect(5.0))
    assert r.status == "unknown" and r.max_gap["lower"] is None and not r.max_gap["proven"]


def test_time_limit_after_a_witness_keeps_its_bounds(monkeypatch):
    _scripted(monkeypatch, [_fake_result("sensitive", 0.6, 0.4), _fake_result("unknown")])
    r = M.max_gap_query(_ens(3), _bisect(5.0))
    assert r.status == "sensitive"
    assert r.max_gap["lower"] == pytest.approx(0.1) and not r.max_gap["proven"]


def test_search_bisects_between_witness_and_proof(monkeypatch):
    asked = _scripted(
        monkeypatch,
        [_fake_result("sensitive", 0.6, 0.4), _fake_result("insensitive")]
        + [_fake_result("insensitive") for _ in range(40)],
    )
    r = M.max_gap_query(_ens(3), _bisect(5.0), tolerance=0.01)
    assert asked[0] == 0.01
    assert asked[1] == pytest.approx((0.1 + M.score_bound(_ens(3), ("f0",))) / 2)
    assert r.max_gap["proven"] and r.max_gap["upper"] - r.max_gap["lower"] <= 0.01


def test_error_in_a_step_is_the_answer(monkeypatch):
    err = _fake_result("error")
    err.error = "boom"
    _scripted(monkeypatch, [_fake_result("sensitive", 0.6, 0.4), err])
    r = M.max_gap_query(_ens(3), _bisect(5.0))
    assert r.status == "error" and r.error == "boom" and r.max_gap is not None


def test_a_bisection_an_error_ended_says_so_not_the_time_limit(monkeypatch):
    err = _fake_result("error")
    err.error = "the Gurobi license refused the model as too large"
    _scripted(monkeypatch, [err])
    r = M.max_gap_query(_ens(3), _bisect(60.0))
    assert r.max_gap["stopped_by"] == "error"
    assert max_gap_outcome(r.max_gap).endswith("; a check ended in error)")


def test_result_json_has_max_gap_only_when_set():
    plain = _fake_result("unknown")
    assert "max_gap" not in plain.to_dict()
    plain.max_gap = M.MaxGap(0.1, 0.2, 1e-4, False, 2).to_dict()
    assert plain.to_dict()["max_gap"]["upper"] == 0.2


def test_api_max_gap_matches_the_exact_max_gap():
    ens = _ens(9)
    r = treesens.max_gap(ens, ["f0"], timeout=60)
    assert not max_gap_problems(exact_max_gap(ens, ("f0",)), r, ens)


def test_api_max_gap_refuses_a_gap():
    with pytest.raises(InputError, match="drop gap"):
        treesens.max_gap(_ens(), ["f0"], gap=0.1)


def test_api_max_gap_refuses_a_bad_tolerance():
    with pytest.raises(InputError, match="tolerance"):
        treesens.max_gap(_ens(), ["f0"], tolerance=0.0)


def test_forest_probability_model_matches_the_exact_max_gap():
    base = _ens(5)
    trees = tuple(t for t in base.trees)
    forest = Ensemble(
        trees=tuple(
            t.__class__(
                feature=t.feature,
                threshold=t.threshold,
                left=t.left,
                right=t.right,
                default_left=t.default_left,
                value=np.clip(np.abs(t.value) / 3.0, 0.0, 1.0),
                outputs=t.outputs,
            )
            for t in trees
        ),
        features=base.features,
        n_classes=2,
        intercept=(0.0,),
        link="proba",
        op=base.op,
        cast=base.cast,
        scale=1.0 / len(trees),
        source="forest",
    )
    assert forest.link != LOGISTIC
    r = M.max_gap_query(forest, Query(vary=("f0",), plan=Plan(timeout=60.0)))
    assert not max_gap_problems(exact_max_gap(forest, ("f0",)), r, forest)


def test_witness_above_a_proof_is_an_error(monkeypatch):
    _scripted(
        monkeypatch,
        [_fake_result("sensitive", 0.6, 0.4), _fake_result("insensitive")]
        + [_fake_result("sensitive", 0.95, 0.05)],
    )
    r = M.max_gap_query(_ens(3), _bisect(5.0), tolerance=1e-4)
    assert r.status == "error" and "proven out of reach" in r.error


def test_witness_above_the_leaf_value_bound_drops_that_bound(monkeypatch):
    monkeypatch.setattr(M, "score_bound", lambda ens, vary, deadline=None: 0.05)
    _scripted(monkeypatch, [_fake_result("sensitive", 0.6, 0.4), _fake_result("unknown")])
    r = M.max_gap_query(_ens(3), _bisect(5.0))
    assert r.max_gap["upper"] == 0.5 and not r.max_gap["proven"]


def test_sensitive_step_without_outputs_ends_the_search(monkeypatch):
    _scripted(monkeypatch, [_fake_result("sensitive")])
    r = M.max_gap_query(_ens(3), _bisect(5.0))
    assert r.max_gap["lower"] is None and not r.max_gap["proven"]


def test_a_ratio_over_a_class_of_probability_zero_is_the_largest_float():
    from treesens.search.gap_units import _ratio

    assert _ratio(0.7, 0.0) == np.finfo(float).max
    assert _ratio(0.7, 0.35) == 2.0


def test_a_ratio_bound_past_the_largest_float_is_stated_as_the_largest_float():
    from types import SimpleNamespace

    from treesens.search.gap_units import shown_gap

    multiclass = SimpleNamespace(n_outputs=3)
    assert shown_gap(multiclass, 5e22) == np.finfo(float).max
    assert shown_gap(multiclass, 0.0) == 1.0


def _interrupted_in_the_seed(monkeypatch, offer_first: bool):
    """A max gap by the box search, Ctrl-C coming in its seed (after the seed's pairs when
    ``offer_first``): the KeyboardInterrupt raised, with its partial result."""
    from treesens.search import gap_search

    real = gap_search.seed_floor

    def seed_then_ctrl_c(*args, **kw):
        if offer_first:
            real(*args, **kw)
        raise KeyboardInterrupt

    monkeypatch.setattr(gap_search, "seed_floor", seed_then_ctrl_c)
    q = Query(vary=("f0",), kind="max_gap", plan=Plan(timeout=60.0))
    with pytest.raises(KeyboardInterrupt) as e:
        answer(_ens(3), q)
    return e.value.partial_result


def test_ctrl_c_in_the_seed_keeps_its_replayed_pair_under_the_leaf_values_bound(monkeypatch):
    r = _interrupted_in_the_seed(monkeypatch, offer_first=True)
    exact = exact_max_gap(_ens(3), ("f0",))
    mg = r.max_gap
    assert r.status == "sensitive" and r.validated
    assert mg["stopped_by"] == "interrupted" and not mg["proven"]
    assert mg["lower"] <= exact <= mg["upper"]
    assert mg["upper"] == M.score_bound(_ens(3), ("f0",))


def test_ctrl_c_before_any_pair_leaves_the_leaf_values_bound_alone(monkeypatch):
    r = _interrupted_in_the_seed(monkeypatch, offer_first=False)
    assert r.status == "unknown" and r.max_gap["lower"] is None
    assert r.max_gap["stopped_by"] == "interrupted"
    assert "max gap: unknown (at most" in r.message and "interrupted" in r.message


def test_ctrl_c_in_a_bisection_step_keeps_the_bounds_of_the_steps_answered(monkeypatch):
    first = _fake_result("sensitive", 0.6, 0.4)

    def fake(ens, q, **kw):
        if q.gap.value > M.DEFAULT_TOLERANCE:  # the second step: Ctrl-C in its solve
            raise KeyboardInterrupt
        return first

    monkeypatch.setattr(M, "solve_query", fake)
    with pytest.raises(KeyboardInterrupt) as e:
        M.max_gap_query(_ens(3), _bisect(60.0))
    r = e.value.partial_result
    assert r.status == "sensitive" and r.max_gap["lower"] == pytest.approx(0.1)
    assert r.max_gap["upper"] == M.score_bound(_ens(3), ("f0",))
    assert r.max_gap["stopped_by"] == "interrupted" and "interrupted" in r.message


def test_ctrl_c_in_the_first_bisection_step_has_no_bounds_to_keep(monkeypatch):
    def fake(ens, q, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(M, "solve_query", fake)
    with pytest.raises(KeyboardInterrupt) as e:
        M.max_gap_query(_ens(3), _bisect(60.0))
    assert getattr(e.value, "partial_result", None) is None


def test_a_multiclass_lower_bound_is_a_ratio_its_pair_meets():
    # a leaf at 12/21 for class 1 against 4/21 for class 3: the pair meets a ratio of
    # exactly 3, and e^ln 3 is 3.0000000000000004, which it does not meet
    from sklearn.tree import DecisionTreeClassifier

    X = np.array([[0.0]] * 21 + [[1.0]] * 5)
    y = np.array([0] * 3 + [1] * 12 + [2] * 2 + [3] * 4 + [0] * 5)
    est = DecisionTreeClassifier(max_depth=1).fit(X, y)
    r = treesens.max_gap(est, vary="x0", classes=(1, 0))
    g, p = r.max_gap["lower"], np.array(r.outputs["x1"])
    assert r.status == "sensitive" and g == r.gap == 3.0
    assert all(p[1] >= g * p[k] for k in (0, 2, 3))
    assert treesens.check(est, vary="x0", classes=(1, 0), gap=g).status == "sensitive"
