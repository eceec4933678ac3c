"""The ``treesens`` command: exit codes (0 answered, 1 error, 2 bad input) and one-line
error messages that name the file and the problem, never a traceback.

The command's ``main`` runs in this process (``treesens_here``), except where the process
itself is what is checked: what its stdout holds, and a command line with no command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from treesens.readers.load import load_model
from treesens.tests.conftest import REQUIRED_FIELDS, json_lines, run_treesens, treesens_here

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

xgb = pytest.importorskip("xgboost")

NAMES = ["radius", "texture", "perimeter", "area", "smoothness"]


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


def _one_error_line(proc) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [ln for ln in lines if "error" in ln.lower()]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def test_missing_model_file_exits_2_naming_the_file(tmp_path):
    path = tmp_path / "no_such_model.json"
    p = treesens_here("check", path, "--vary", "a")
    assert p.returncode == 2
    line = _one_error_line(p)
    assert "no_such_model.json" in line and "not found" in line


def test_garbage_json_exits_2_naming_the_file(tmp_path):
    path = tmp_path / "garbage.json"
    path.write_text("{this is not json")
    p = treesens_here("check", path, "--vary", "a")
    assert p.returncode == 2
    line = _one_error_line(p)
    assert "garbage.json" in line and "JSON" in line


def test_empty_model_file_exits_2(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("")
    p = treesens_here("check", path, "--vary", "a")
    assert p.returncode == 2
    assert "empty.json" in _one_error_line(p)


def test_json_that_is_not_a_model_exits_2(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": "world"}))
    p = treesens_here("check", path, "--vary", "a")
    assert p.returncode == 2
    assert "other.json" in _one_error_line(p)


def test_unknown_feature_exits_2_and_suggests_a_close_name(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radiuss")
    assert p.returncode == 2
    line = _one_error_line(p)
    assert "radiuss" in line and "'radius'" in line


def test_binary_gap_of_0_7_exits_2(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--gap", "0.7")
    assert p.returncode == 2
    assert "0.7" in _one_error_line(p)


def test_unknown_pass_name_exits_2_listing_the_known_ones(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--passes", "ordering,bogus")
    assert p.returncode == 2
    line = _one_error_line(p)
    assert "bogus" in line and "unaff" in line


def test_unknown_flag_exits_2(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--no-such-flag")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr


def test_no_command_exits_2():
    assert run_treesens().returncode == 2


@pytest.mark.slow  # tests/backends/test_probe.py and test_box_method.py list too
def test_backends_lists_cpsat_and_exits_0():
    p = treesens_here("backends")
    assert p.returncode == 0, p.stderr
    assert "cpsat" in p.stdout


@pytest.mark.slow  # tests/backends/test_probe.py and test_box_method.py list too
def test_backends_json_prints_one_object_per_backend():
    p = treesens_here("backends", "--json")
    assert p.returncode == 0, p.stderr
    rows = json_lines(p.stdout)
    assert {"cpsat"} <= {r["name"] for r in rows}


def test_check_json_stdout_holds_only_json_lines_with_the_spec_fields(tiny_model):
    p = run_treesens(
        "check", tiny_model, "--vary", "radius", "--gap", "0.1", "--json", "--timeout", "120"
    )
    assert p.returncode == 0, p.stderr
    rows = json_lines(p.stdout)
    assert len(rows) == 1
    r = rows[0]
    for key in REQUIRED_FIELDS:
        assert key in r, key
    assert r["status"] in ("sensitive", "insensitive")
    assert r["features"] == ["radius"] and r["gap"] == 0.1
    assert set(r["time"]) >= {"compile", "solve", "total"}


def test_check_json_records_the_time_limit_and_backend_asked_for(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--json", "--timeout", "77")
    asked = json_lines(p.stdout)[0]["stats"]["asked"]
    assert asked["ensemble"] == load_model(tiny_model).fingerprint()
    del asked["ensemble"]
    assert asked == {"backend": "cpsat", "timeout": 77.0, "data_aware": "none"}


def test_check_without_json_prints_a_verdict_and_exits_0(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--gap", "0.1", "--timeout", "120")
    assert p.returncode == 0, p.stderr
    assert "sensitive" in (p.stdout + p.stderr).lower()


def test_sensitive_witness_from_the_cli_replays_in_xgboost(tiny_model):
    p = treesens_here(
        "check",
        tiny_model,
        "--vary",
        "radius,texture",
        "--gap",
        "0.1",
        "--json",
        "--timeout",
        "120",
    )
    assert p.returncode == 0, p.stderr
    r = json_lines(p.stdout)[0]
    if r["status"] != "sensitive":
        pytest.skip(f"tiny model is {r['status']} for this query")
    booster = xgb.Booster(model_file=str(tiny_model))
    X = np.array([[r["witness"][c][n] for n in NAMES] for c in ("x1", "x2")])
    proba = booster.predict(xgb.DMatrix(X, feature_names=NAMES))
    assert proba[0] >= 0.6 and proba[1] <= 0.4
    assert np.allclose(proba, [r["outputs"]["x1"][1], r["outputs"]["x2"][1]], atol=1e-6)


def test_unknown_backend_exits_2_even_when_the_heuristic_would_answer(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--backend", "cpsatt")
    assert p.returncode == 2
    line = _one_error_line(p)
    assert "cpsatt" in line and "'cpsat'" in line


@pytest.mark.parametrize("flag", ["--threads", "--memory-mb"])
def test_a_thread_count_or_memory_limit_below_1_exits_2(tiny_model, flag):
    p = treesens_here("check", tiny_model, "--vary", "radius", flag, "0")
    assert p.returncode == 2
    assert flag in _one_error_line(p)


@pytest.mark.parametrize("value", ["1", "0", "nan"])
def test_a_base_score_outside_0_1_exits_2_naming_the_flag(tiny_model, value):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--base-score", value)
    assert p.returncode == 2
    assert "--base-score" in _one_error_line(p)


def test_none_inside_a_pass_list_exits_2_saying_it_stands_alone(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--passes", "none,aff")
    assert p.returncode == 2
    assert "stands alone" in _one_error_line(p)


def test_passes_no_obj_drops_only_the_objective_pass(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--passes", "no-obj", "--json")
    assert p.returncode == 0, p.stderr
    assert json_lines(p.stdout)[0]["passes"] == ["aff", "ordering", "unaff"]


def test_an_unknown_feature_is_reported_before_solving_starts(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "nope")
    assert p.returncode == 2
    assert "solving" not in p.stderr


def _sens_file(tmp_path, model, body: str):
    path = tmp_path / "q.sens"
    path.write_text(f'model "{model}"\n{body}\n')
    return path


def test_run_list_shows_the_time_limit_given_on_the_command_line(tiny_model, tmp_path):
    sens = _sens_file(tmp_path, tiny_model, "query r {\n  vary radius\n  timeout 10m\n}")
    p = treesens_here("run", sens, "--list", "--timeout", "7")
    assert p.returncode == 0, p.stderr
    assert "timeout 7s" in p.stdout and "600" not in p.stdout


def test_compare_asks_a_query_listing_several_backends_once(tiny_model, tmp_path):
    sens = _sens_file(tmp_path, tiny_model, "query r {\n  vary radius\n  backend cpsat, z3\n}")
    p = treesens_here("compare", sens, "--backends", "cpsat", "--json")
    assert p.returncode == 0, p.stderr
    assert [r["query"] for r in json_lines(p.stdout)] == ["r"]


def test_a_base_score_given_for_a_native_model_exits_2_saying_it_records_its_own(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--base-score", "0.3")
    assert p.returncode == 2
    assert "records its own" in _one_error_line(p)


def test_the_dump_format_given_for_a_native_model_exits_2(tiny_model):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--format", "xgboost-dump")
    assert p.returncode == 2
    assert "not an XGBoost tree dump: it looks like a native XGBoost model" in _one_error_line(p)


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_a_heuristic_effort_that_is_not_positive_exits_2(tiny_model, value):
    p = treesens_here("check", tiny_model, "--vary", "radius", "--heuristic-effort", value)
    assert p.returncode == 2
    assert "--heuristic-effort" in _one_error_line(p)


def test_a_query_flag_given_with_a_sens_file_exits_2_saying_the_file_sets_it():
    sens = str(EXAMPLES / "breast_cancer.sens")
    p = treesens_here("compare", sens, "--query", "texture", "--gap", "0.1")
    assert p.returncode == 2
    assert p.stderr == (
        f"treesens: error: {sens}: --gap is for a model file: a .sens file's queries set it "
        "themselves (with a .sens file: --query, --timeout, --memory-mb, --json)\n"
    )


def test_compare_on_a_sens_file_takes_the_time_limit_given_on_the_command_line():
    sens = str(EXAMPLES / "breast_cancer.sens")
    p = treesens_here(
        "compare", sens, "--query", "texture", "--backends", "cpsat", "--timeout", "33", "--json"
    )
    assert p.returncode == 0, p.stderr
    assert json_lines(p.stdout)[0]["stats"]["asked"]["timeout"] == 33.0


def test_a_multiclass_query_without_a_gap_exits_2_saying_there_is_no_default():
    p = treesens_here(
        "check", str(EXAMPLES / "wine_xgb.json"), "--vary", "proline", "--classes", "0,1"
    )
    assert p.returncode == 2
    assert "a multiclass gap has no default: give a probability ratio g >= 1" in p.stderr
