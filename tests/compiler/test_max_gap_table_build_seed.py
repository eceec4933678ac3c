"""A max gap whose time limit comes while the box search builds its tables keeps the
heuristic's pair found before the build (the seed, replayed like every pair) as its open
bracket's lower bound and witness: on churn's 1,000-tree XGBoost model every sweep row
ended "unknown, table build" with no lower bound, the seed's pair thrown away."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.search import gap_search
from treesens.search.pair_boxes import PairTablesPastDeadline

xgboost = pytest.importorskip("xgboost")
MODEL = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_xgb.json"
FEATURE = "worst_area"  # the seed finds a pair of gap 0.44 in about 0.1 s


@pytest.fixture
def stopped_build(monkeypatch):
    """Every table build reaches its time limit after 4 trees."""

    def past_deadline(*args, **kwargs):
        raise PairTablesPastDeadline(123, 4)

    monkeypatch.setattr(gap_search, "_tables_within", past_deadline)


def _predicted_gap(witness: dict) -> float:
    """The gap the witness's pair meets by xgboost's own predict."""
    booster = xgboost.Booster(model_file=str(MODEL))
    names = booster.feature_names
    X = np.array([[witness[x][n] for n in names] for x in ("x1", "x2")], dtype=float)
    p = booster.predict(xgboost.DMatrix(X, feature_names=names))
    return float(min(max(p) - 0.5, 0.5 - min(p)))


def test_the_seed_s_pair_is_the_open_bracket_s_lower_bound(stopped_build):
    r = treesens.max_gap(str(MODEL), [FEATURE], timeout=60)
    assert r.max_gap["stopped_by"] == "table build" and not r.max_gap["proven"]
    assert r.status == "sensitive" and r.max_gap["lower"] > 0.4


def test_the_seed_s_witness_replays_to_the_lower_bound(stopped_build):
    r = treesens.max_gap(str(MODEL), [FEATURE], timeout=60)
    assert _predicted_gap(r.witness) >= r.max_gap["lower"]


def test_the_check_command_states_the_seed_s_bracket(stopped_build, capsys):
    argv = [str(MODEL), "--vary", FEATURE, "--max-gap", "--timeout", "60", "--json"]
    main(["check", *argv])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["max_gap"]["lower"] > 0.4 and line["max_gap"]["stopped_by"] == "table build"


def test_a_sweep_row_states_the_seed_s_bracket(stopped_build, capsys):
    argv = [str(MODEL), "--features", FEATURE, "--max-gap", "--timeout", "60", "--json"]
    main(["sweep", *argv, "--table", "none"])
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["max_gap"]["lower"] > 0.4 and line["max_gap"]["stopped_by"] == "table build"
