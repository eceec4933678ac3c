"""``treesens check --max-gap`` and ``treesens sweep --max-gap`` from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from treesens.tests.conftest import json_lines, treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

xgb = pytest.importorskip("xgboost")

NAMES = ["radius", "texture", "perimeter", "area", "smoothness"]
TOL = ("--max-gap-tolerance", "0.01")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 5-tree depth-2 XGBoost model on five named breast_cancer columns."""
    import pandas as pd
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    df = pd.DataFrame(X[:, :5], columns=NAMES)
    clf = xgb.XGBClassifier(n_estimators=5, max_depth=2, n_jobs=1, random_state=0)
    clf.fit(df, y)
    path = tmp_path_factory.mktemp("cli") / "tiny.json"
    clf.get_booster().save_model(str(path))
    return path


@pytest.fixture(scope="module")
def checked(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "area", "--max-gap", *TOL, "--json")
    assert p.returncode == 0, p.stderr
    return json_lines(p.stdout)


def test_check_max_gap_json_has_the_bounds(checked):
    (r,) = checked
    assert set(r["max_gap"]) >= {"lower", "upper", "tolerance", "proven"}
    assert r["max_gap"]["tolerance"] == 0.01


def test_check_max_gap_json_gap_is_the_witness_achieved_gap(checked):
    (r,) = checked
    assert r["status"] == "sensitive" and r["validated"]
    assert r["gap"] == r["max_gap"]["lower"]
    assert r["outputs"]["x1"][1] >= 0.5 + r["gap"] and r["outputs"]["x2"][1] <= 0.5 - r["gap"]


def test_check_max_gap_prints_one_max_gap_line(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "area", "--max-gap", *TOL)
    assert p.returncode == 0, p.stderr
    assert sum(line.startswith("max gap ") for line in p.stdout.splitlines()) == 1


def test_check_max_gap_with_a_gap_exits_2(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "area", "--max-gap", "--gap", "0.1")
    assert (
        p.returncode == 2 and "searches the gap itself" in p.stderr and "Traceback" not in p.stderr
    )


def test_check_max_gap_on_a_multiclass_model_without_classes_exits_2_in_one_line():
    p = treesens_here("check", EXAMPLES / "wine_xgb.json", "--vary", "hue", "--max-gap")
    assert p.returncode == 2 and "give the two classes" in p.stderr
    assert "solving" not in p.stderr and "Traceback" not in p.stderr


def test_check_max_gap_tolerance_out_of_range_exits_2(tiny_model):
    p = treesens_here(
        "check", tiny_model, "--vary", "area", "--max-gap", "--max-gap-tolerance", "0.7"
    )
    assert p.returncode == 2 and "tolerance" in p.stderr


SWEEP = ("--features", "radius,texture,area", "--max-gap", *TOL, "--table", "csv")


@pytest.fixture(scope="module")
def swept(tiny_model, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s.jsonl"
    p = treesens_here("sweep", tiny_model, *SWEEP, "--out", out)
    assert p.returncode == 0, p.stderr
    return p, out


def test_sweep_max_gap_ranks_features_by_their_gap(swept):
    p, out = swept
    rows = [line.split(",") for line in p.stdout.splitlines()[1:] if line]
    lowers = {r["query"]: r["max_gap"]["lower"] for r in json_lines(out.read_text())}
    ranked = sorted(lowers, key=lambda k: -(lowers[k] if lowers[k] is not None else -1))
    assert [r[0] for r in rows] == ranked
    assert "max_gap" in p.stdout.splitlines()[0]


def test_sweep_max_gap_resumes_from_its_own_results(tiny_model, swept):
    p = treesens_here("sweep", tiny_model, *SWEEP, "--resume", swept[1])
    assert p.returncode == 0 and "3 results reused" in p.stderr


def test_a_tolerance_below_the_float32_allowance_ends_saying_so_not_time_limit():
    # the search empties in about a second, its bounds still 3e-6 apart: the allowance a
    # resolved box's bound keeps for the library's float32 sums
    model = EXAMPLES / "breast_cancer_xgb.json"
    args = ("--vary", "mean_texture", "--max-gap", "--max-gap-tolerance", "1e-6")
    p = treesens_here("check", model, *args, "--timeout", "60", "--json")
    (r,) = json_lines(p.stdout)
    assert not r["max_gap"]["proven"] and r["max_gap"]["stopped_by"] == "rounding"
    assert "rounding allowance wider than the tolerance" in r["message"]


def test_check_max_gap_tolerance_without_max_gap_exits_2(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "area", *TOL)
    assert p.returncode == 2 and "add --max-gap" in p.stderr and "solving" not in p.stderr
