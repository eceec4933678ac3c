"""A pair found without data says where its features ranged: over all reals when no
bounds are declared, else each within its bounds on its own; either way it may lie far
from any real row, and the note suggests the data (issue 44, item 6)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.tests.conftest import treesens_here

xgb = pytest.importorskip("xgboost")

QUICK = {"timeout": 60}


def _model():
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 10.0, size=(200, 3))
    y = (X[:, 0] + 0.3 * X[:, 1] > 6.0).astype(int)
    est = xgb.XGBClassifier(n_estimators=5, max_depth=2, nthread=1).fit(X, y)
    return est, pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y)


def _details(rows: pd.DataFrame) -> pd.DataFrame:
    names = ["f0", "f1", "f2"]
    return pd.DataFrame(
        {
            "feature": range(3),
            "name": names,
            "lb": [rows[n].min() for n in names],
            "ub": [rows[n].max() for n in names],
        }
    )


def test_a_pair_without_bounds_or_data_says_its_features_range_over_all_reals():
    est, _ = _model()
    r = treesens.check(est, vary=["f0"], gap=0.1, **QUICK)
    assert r.status == "sensitive"
    assert any("features range over all reals" in n and "--data" in n for n in r.notes)


def test_the_note_on_all_reals_is_printed_under_the_witness():
    est, _ = _model()
    r = treesens.check(est, vary=["f0"], gap=0.1, **QUICK)
    assert "note: features range over all reals" in str(r)


def test_a_pair_within_declared_bounds_without_data_says_each_feature_ranged_on_its_own():
    est, rows = _model()
    r = treesens.check(est, vary=["f0"], gap=0.1, details=_details(rows), **QUICK)
    note = " ".join(r.notes)
    assert "within the declared bounds" in note and "may lie far from any real row" in note


def test_a_pair_found_with_data_has_no_free_range_note():
    est, rows = _model()
    r = treesens.check(est, vary=["f0"], gap=0.1, data=rows, **QUICK)
    assert r.status == "sensitive" and r.distance is not None
    assert not any("may lie far from any real row" in n for n in r.notes)


def test_a_largest_gap_pair_without_data_carries_the_note():
    est, _ = _model()
    r = treesens.max_gap(est, vary=["f0"], **QUICK)
    assert r.status == "sensitive"
    assert any("features range over all reals" in n for n in r.notes)


def test_cli_check_without_data_prints_the_note_naming_the_data_flag(tmp_path):
    est, _ = _model()
    est.save_model(tmp_path / "m.json")
    r = treesens_here("check", "m.json", "--vary", "f0", "--gap", "0.1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "note: features range over all reals" in r.stdout and "--data ROWS.csv" in r.stdout


def test_a_model_loaded_with_data_but_asked_without_it_says_the_query_had_none():
    est, rows = _model()
    model = treesens.load_model(est, data=rows)
    r = treesens.check(model, vary=["f0"], gap=0.1, **QUICK)
    note = " ".join(r.notes)
    assert "within the data's range" in note and "no data given to the query" in note


def test_a_model_every_feature_of_which_is_bounded_says_no_feature_ranges_over_all_reals():
    est, rows = _model()
    model = treesens.load_model(est, data=rows)
    r = treesens.check(model, vary=["f0"], gap=0.1, **QUICK)
    assert "may lie far from any real row" in " ".join(r.notes)
    assert not any("all reals" in n for n in r.notes)


def test_a_sens_query_without_data_names_the_file_s_data_line(tmp_path):
    est, _ = _model()
    est.save_model(tmp_path / "m.json")
    (tmp_path / "q.sens").write_text('model "m.json"\nquery q {\n  vary f0\n  gap 0.1\n}\n')
    r = treesens_here("run", tmp_path / "q.sens")
    assert r.returncode == 0, r.stderr
    assert 'give the data (a line  data "ROWS.csv"  in the .sens file)' in r.stdout
