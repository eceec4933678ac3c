"""A ranking whose max gaps stayed open says what budget gives them more time, and takes
a protected feature's audited flips as its max gap's lower bound: a production model of
1,500 trees ranked under --budget 120 stopped every feature's search while it built its
tables and said neither, though its audits flipped rows at gaps up to 0.21."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from treesens.answers.result import UNKNOWN
from treesens.compiler.audit import FLIPPABLE
from treesens.questions import report as report_module
from treesens.questions.audit import audit
from treesens.questions.report_ranking import best_flip, raise_lower
from treesens.readers.data import load_data
from treesens.readers.load import load_model
from treesens.tests.report.conftest import MODEL, ROWS

xgboost = pytest.importorskip("xgboost")
FEATURE = "worst_texture"  # its audit at gap 0.2 flips 5 confident rows
BUDGET = 20.0


def _opened(r):
    """``r`` as a search stopped in its table build leaves it: no pair, the upper bound."""
    r.status, r.witness, r.outputs = UNKNOWN, None, {}
    r.max_gap = {**r.max_gap, "lower": None, "proven": False, "stopped_by": None}
    return r


@pytest.fixture(scope="module")
def opened_report():
    """The report of worst_texture, its ranked max gap left open with no lower bound."""
    rank = report_module._rank

    def open_ranking(*args, **kwargs):
        return [_opened(r) for r in rank(*args, **kwargs)]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(report_module, "_rank", open_ranking)
        return report_module.report(
            str(MODEL), str(ROWS), features=[FEATURE], protected=[FEATURE],
            gap=0.2, budget=BUDGET, progress=False,
        )  # fmt: skip


def _gap(p1: float, p2: float) -> float:
    return min(max(p1, p2) - 0.5, 0.5 - min(p1, p2))


def _largest_flip_gap() -> float:
    """The largest gap an audited row and its x2 meet, by xgboost's own predict."""
    df = audit(str(MODEL), str(ROWS), [FEATURE], gap=0.2)
    rows = pd.read_csv(ROWS).drop(columns="label")
    booster = xgboost.Booster(model_file=str(MODEL))
    gaps = []
    for _, hit in df[df["status"] == FLIPPABLE].iterrows():
        row = rows.iloc[[int(hit["row"])]]
        x2 = row.assign(**{FEATURE: float(hit[f"x2_{FEATURE}"])})
        gaps.append(_gap(*(float(booster.inplace_predict(r)[0]) for r in (row, x2))))
    return max(gaps)


def test_an_open_max_gap_takes_the_largest_gap_of_its_audited_flips(opened_report):
    (r,) = opened_report.ranking
    assert r.max_gap["lower"] == pytest.approx(_largest_flip_gap(), abs=1e-6)
    assert r.max_gap["lower"] <= r.max_gap["upper"]


def test_the_audited_pair_of_the_lower_bound_is_its_witness_by_the_library(opened_report):
    (r,) = opened_report.ranking
    booster = xgboost.Booster(model_file=str(MODEL))
    p1, p2 = (float(booster.inplace_predict(pd.DataFrame([r.witness[k]]))[0]) for k in ("x1", "x2"))
    assert _gap(p1, p2) == pytest.approx(r.max_gap["lower"], abs=1e-6)
    differ = [k for k in r.witness["x1"] if r.witness["x1"][k] != r.witness["x2"][k]]
    assert differ == [FEATURE]


def test_a_flip_whose_row_lies_outside_the_searched_bounds_is_no_lower_bound(opened_report):
    ens = load_model(str(MODEL))
    X = load_data(str(ROWS), ens, "label").X
    df = audit(str(MODEL), str(ROWS), [FEATURE], gap=0.2)
    flip = best_flip(ens, df, FEATURE)
    other = next(f for f in range(ens.n_features) if ens.feature_names[f] != FEATURE)
    below = float(X[flip["row"], other]) + 1.0  # the row's value below the feature's bound
    features = list(ens.features)
    features[other] = replace(features[other], lb=below, ub=max(below, features[other].ub))
    (r,) = opened_report.ranking
    fresh = _opened(replace(r, max_gap=dict(r.max_gap), notes=[], stats={}))
    assert not raise_lower(replace(ens, features=tuple(features)), X, fresh, flip)
    assert fresh.max_gap["lower"] is None


def test_an_open_ranking_says_the_budget_that_gives_it_more_time(opened_report):
    (line,) = [s for s in opened_report.unanswered if s.startswith("Ranking the feature")]
    advised = float(re.search(r"--budget (\d+)", line).group(1))
    assert advised >= 2 * BUDGET
    assert np.isfinite(advised)


def test_a_closed_ranking_advises_no_budget(small_report):
    assert not [s for s in small_report.unanswered if "--budget" in s]
