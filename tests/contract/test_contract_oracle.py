"""Every expectation kind against brute force on tiny models: a PASS is only claimed with
a proof, a FAIL only with a pair (or rows) that the library's predict replays and that
brute force confirms (tests/oracle.py, tests/max_gap_oracle.py, tests/audit_oracle.py)."""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
import pytest

from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.compiler.audit import Target
from treesens.compiler.query import Gap, Plan, Query
from treesens.interfaces.expect_api import expect_audit
from treesens.questions.contract import (
    FAIL,
    PASS,
    UNKNOWN,
    Expectation,
    allowed_rows,
    answer,
    judge,
    reached_gap,
)
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.max_gap_oracle import exact_max_gap, exact_max_ratio
from treesens.tests.oracle import brute_force_largest_change, brute_force_sensitive, random_ensemble

EPS = 1e-3  # limits are put this far from the exact max gap (relative for ratios, changes)


def _ens(seed: int, n_classes: int = 2):
    return random_ensemble(
        seed, n_trees=4, depth=2, n_features=3, n_thresholds=3, n_classes=n_classes
    )


def _judged(ens, q, exp):
    res = answer(ens, q.planned(timeout=60.0), exp)
    verdict, message = judge(ens, exp, res)
    return verdict, message, res


def _replays(ens, q, res) -> bool:
    """The pair meets the query under the model's own evaluation (the IR's here)."""
    w = res.witness_arrays
    p1, p2 = ens.proba(w.x1[None, :])[0], ens.proba(w.x2[None, :])[0]
    g = q.gap.value
    return bool(p1[1] >= 0.5 + g and p2[1] <= 0.5 - g)


CASES = [(seed, gap) for seed in range(6) for gap in (0.05, 0.2)]


@pytest.mark.parametrize(("seed", "gap"), CASES)
def test_expect_insensitive_agrees_with_brute_force(seed, gap):
    ens = _ens(seed)
    q = Query(vary=("f0",), gap=Gap(gap))
    verdict, message, res = _judged(ens, q, Expectation("insensitive"))
    if brute_force_sensitive(ens, q):
        assert verdict == FAIL and res.validated and _replays(ens, q, res), message
    else:
        assert verdict == PASS and res.status == INSENSITIVE, message


@pytest.mark.parametrize(("seed", "gap"), CASES)
def test_expect_sensitive_agrees_with_brute_force(seed, gap):
    ens = _ens(seed)
    q = Query(vary=("f1",), gap=Gap(gap))
    verdict, message, res = _judged(ens, q, Expectation("sensitive"))
    if brute_force_sensitive(ens, q):
        assert verdict == PASS and res.validated and _replays(ens, q, res), message
    else:
        assert verdict == FAIL and res.status == INSENSITIVE, message


def test_the_cases_hold_both_answers():
    truths = {brute_force_sensitive(_ens(s), Query(vary=("f0",), gap=Gap(g))) for s, g in CASES}
    assert truths == {True, False}


@pytest.mark.parametrize("seed", range(6))
def test_expect_max_gap_fails_below_the_exact_max_gap_and_passes_above_it(seed):
    ens = _ens(seed)
    exact = exact_max_gap(ens, ["f0"])
    q = Query(vary=("f0",))
    if exact - EPS >= 0:
        verdict, message, res = _judged(ens, q, Expectation("max_gap", exact - EPS))
        assert verdict == FAIL and res.validated, message
        assert exact - EPS < reached_gap(ens, res) <= exact + 1e-9
    above = max(exact + EPS, 0.0)
    verdict, message, res = _judged(ens, q, Expectation("max_gap", above))
    assert verdict == PASS and res.status == INSENSITIVE, message


def test_the_max_gap_cases_hold_a_sensitive_feature():
    assert max(exact_max_gap(_ens(s), ["f0"]) for s in range(6)) > EPS


@pytest.mark.parametrize("seed", range(4))
def test_expect_max_gap_on_a_multiclass_ratio_agrees_with_brute_force(seed):
    ens = _ens(seed, n_classes=3)
    classes = (0, "any")
    exact = exact_max_ratio(ens, ["f0"], classes)
    q = Query(vary=("f0",), gap=Gap(1.0), classes=classes)
    if exact * (1 - EPS) >= 1:
        verdict, message, res = _judged(ens, q, Expectation("max_gap", exact * (1 - EPS)))
        assert verdict == FAIL and res.validated, message
        assert reached_gap(ens, res) > exact * (1 - EPS)
    verdict, message, _ = _judged(ens, q, Expectation("max_gap", max(exact * (1 + EPS), 1.0)))
    assert verdict == PASS, message


def test_the_multiclass_cases_hold_a_pair_above_ratio_one():
    exact = [exact_max_ratio(_ens(s, n_classes=3), ["f0"], (0, "any")) for s in range(4)]
    assert max(exact) * (1 - EPS) >= 1 and min(exact) < 1


def _regressor(seed: int):
    xgb = pytest.importorskip("xgboost")
    from treesens.readers.load import load_model

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 3))
    y = 2.0 * X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=120)
    est = xgb.XGBRegressor(n_estimators=4, max_depth=2, nthread=1).fit(X, y)
    return load_model(est)


@pytest.mark.parametrize("seed", range(3))
def test_expect_max_gap_on_a_regressors_change_agrees_with_brute_force(seed):
    ens = _regressor(seed)
    vary = (ens.feature_names[0],)
    exact = brute_force_largest_change(ens, vary)
    eps = EPS * max(1.0, abs(exact))
    q = Query(vary=vary, delta=0.0, direction="down")  # x1 the higher: the change f(x1) - f(x2)
    verdict, message, res = _judged(ens, q, Expectation("max_gap", exact - eps))
    assert verdict == FAIL and res.validated, message
    assert exact - eps < reached_gap(ens, res) <= exact + eps
    verdict, message, _ = _judged(ens, q, Expectation("max_gap", exact + eps))
    assert verdict == PASS, message


# ---- audits -----------------------------------------------------------------------------


def _audit_model():
    xgb = pytest.importorskip("xgboost")
    from treesens.readers.load import load_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] > 0).astype(int)
    m = xgb.XGBClassifier(n_estimators=8, max_depth=3, learning_rate=0.5, nthread=1).fit(X, y)
    ens = load_model(m)
    return ens, pd.DataFrame(X, columns=ens.feature_names)


@pytest.fixture(scope="module")
def audited():
    ens, frame = _audit_model()
    vary = [ens.feature_names[1]]
    flips = brute_force_flippable(ens, frame.to_numpy(), vary, Target(Gap(0.1)))
    assert 0 < sum(flips) < len(flips)
    return ens, frame, vary, flips


def test_expect_audit_passes_at_the_brute_force_count_of_flippable_rows(audited):
    ens, frame, vary, flips = audited
    out = expect_audit(ens, frame, vary, gap=0.1, max_rows=sum(flips))
    assert out.verdict == PASS


def test_expect_audit_fails_one_row_below_it_naming_a_flippable_row(audited):
    ens, frame, vary, flips = audited
    with pytest.raises(AssertionError) as e:
        expect_audit(ens, frame, vary, gap=0.1, max_rows=sum(flips) - 1)
    row = int(str(e.value).split("e.g. row ")[1].split()[0])  # counted from 1
    assert flips[row - 1]


def test_expect_audit_holds_a_percentage_on_either_side_of_the_flippable_share(audited):
    ens, frame, vary, flips = audited
    share = 100 * sum(flips) / len(flips)
    above, below = math.ceil(share * 1e6) / 1e6, math.floor(share * 1e6) / 1e6
    assert expect_audit(ens, frame, vary, gap=0.1, max_percent=above).verdict == PASS
    with pytest.raises(AssertionError):
        expect_audit(ens, frame, vary, gap=0.1, max_percent=below)


def test_a_percentage_is_taken_as_written_not_as_its_float():
    # 0.3% of 1000 rows is 3 rows; the float 0.3 times 10 is 2.9999999999999996
    assert allowed_rows(Expectation("audit", 0.3, percent=True), 1000) == 3


def test_expect_audit_by_a_column_holds_each_group_to_the_limit(audited):
    ens, frame, vary, flips = audited
    side = (frame[ens.feature_names[0]] > 0).map({True: "high", False: "low"}).rename("side")
    per = {g: [f for f, s in zip(flips, side) if s == g] for g in ("high", "low")}
    worst = max(100 * sum(v) / len(v) for v in per.values())
    above, below = math.ceil(worst * 1e6) / 1e6, math.floor(worst * 1e6) / 1e6
    assert expect_audit(ens, frame, vary, gap=0.1, max_percent=above, by=side).verdict == PASS
    with pytest.raises(AssertionError, match=r"side="):
        expect_audit(ens, frame, vary, gap=0.1, max_percent=below, by=side)


# ---- unknown ----------------------------------------------------------------------------


def test_a_time_limit_that_ran_out_is_unknown_not_a_verdict():
    ens = _ens(0)
    for kind in ("insensitive", "sensitive"):
        exp = Expectation(kind)
        q = Query(vary=("f0",), gap=Gap(0.05), plan=Plan(timeout=1.0))
        res = answer(ens, q, exp, start=time.time() - 2)  # its time limit ran out already
        assert res.status not in (SENSITIVE, INSENSITIVE)
        verdict, message = judge(ens, exp, res)
        assert verdict == UNKNOWN and "time limit" in message


def test_an_audit_with_unknown_rows_that_may_break_the_limit_is_unknown():
    from treesens.questions.audit import (
        answer_blocks,
        frame_from_results,
        make_spec,
        make_target,
        row_result,
    )
    from treesens.questions.contract import judge_audit
    from treesens.readers.data import load_data

    ens, frame = _audit_model()
    vary = [ens.feature_names[1]]
    ds = load_data(frame, ens)
    spec = make_spec(ens, ds, vary, make_target(ens, 0.1))
    rows = np.arange(10)
    # every row to the solver, with a time limit no row can be answered in
    [(idx, ans)] = list(answer_blocks(ens, ds, spec, rows, timeout_per_row=1e-9, max_candidates=0))
    lines = [row_result(ens, spec, ans, i, r, ds.X[r]) for i, r in enumerate(idx)]
    df = frame_from_results(lines, spec.vary)
    assert (df["status"] == "unknown").all()
    verdict, message = judge_audit(Expectation("audit", 0), df, vary)
    assert verdict == UNKNOWN and "10 unknown" in message
    verdict, _ = judge_audit(Expectation("audit", 10), df, vary)
    assert verdict == PASS  # every row may flip and the limit allows them all
