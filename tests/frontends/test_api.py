"""The Python API as a notebook uses it: check, sweep and compare take the same keywords
(one table); bounds from data; details as a DataFrame; sweep's out / resume / progress;
results_frame's typed columns."""

from __future__ import annotations

import inspect
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.interfaces.api import API_KEYWORDS
from treesens.tests.oracle import random_ensemble
from treesens.views.progress import Lines, NotebookBar, sweep_progress

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
QUICK = {"gap": 0.1, "timeout": 30}


@pytest.fixture(scope="module")
def ens():
    return random_ensemble(5, n_trees=4, depth=2, n_features=4, n_thresholds=2)


@pytest.fixture(scope="module")
def frame(ens):
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.uniform(-2, 2, size=(40, 4)), columns=ens.feature_names)


def _keywords(fn) -> set[str]:
    sig = inspect.signature(fn)
    return {n for n, p in sig.parameters.items() if p.kind is p.KEYWORD_ONLY}


@pytest.mark.parametrize(
    "fn", [treesens.check, treesens.sweep, treesens.compare], ids=lambda f: f.__name__
)
def test_check_sweep_and_compare_take_every_keyword_of_the_table(fn):
    assert set(API_KEYWORDS) <= _keywords(fn)


@pytest.mark.parametrize(
    "fn", [treesens.check, treesens.sweep, treesens.compare], ids=lambda f: f.__name__
)
def test_the_docstring_lists_every_keyword_of_the_table(fn):
    assert all(f"``{name}``" in fn.__doc__ for name in API_KEYWORDS if name != "progress")


def test_an_unknown_keyword_is_a_type_error_naming_the_closest(ens):
    with pytest.raises(
        TypeError, match=r"sweep\(\) got an unexpected keyword argument 'gapp'.*'gap'"
    ):
        treesens.sweep(ens, gapp=0.2)


def test_a_fix_keyword_says_constraints_are_given_with_where(ens):
    with pytest.raises(TypeError, match=r"'fix': constraints are given with where="):
        treesens.check(ens, ["f0"], fix="x1.f0 = 1")


def test_sweep_takes_data(ens, frame):
    rows = treesens.sweep(ens, data=frame, features=["f0"], progress=False, **QUICK)
    assert rows[0].stats["asked"]["data"]["rows"] == 40


def test_a_result_with_data_in_memory_is_written_as_json(ens, frame):
    r = treesens.check(ens, ["f0"], data=frame, **QUICK)
    assert json.loads(r.to_json())["stats"]["asked"]["data"]["rows"] == 40


def test_compare_answers_once_per_backend(ens):
    rows = treesens.compare(ens, ["f0"], backends=["cpsat", "highs"], **QUICK)
    assert [r.backend for r in rows] == ["cpsat", "highs"]


def test_compare_backends_agree_on_the_verdict(ens):
    rows = treesens.compare(ens, ["f1"], backends="cpsat,highs", **QUICK)
    assert len({r.status for r in rows}) == 1


def test_bounds_from_data_are_each_columns_min_and_max(ens, frame):
    model = treesens.load_model(ens, data=frame, bounds="data")
    assert [f.lb for f in model.features] == list(frame.min())
    assert [f.ub for f in model.features] == list(frame.max())


def test_bounds_from_an_array_in_model_order(ens, frame):
    model = treesens.load_model(ens, data=frame.to_numpy(), bounds="data")
    assert model.features[2].ub == frame.iloc[:, 2].max()


def test_bounds_from_data_are_recorded_in_the_result(ens, frame):
    r = treesens.check(ens, ["f0"], data=frame, bounds="data", **QUICK)
    assert "bounds from data <DataFrame>, 40 rows" in r.model


def test_the_default_keeps_the_bounds_of_a_loaded_model(ens, frame):
    model = treesens.load_model(ens, data=frame)
    assert all(math.isinf(f.lb) and math.isinf(f.ub) for f in model.features)


def test_the_default_takes_bounds_from_data_given_with_a_model_object(frame):
    from sklearn.tree import DecisionTreeClassifier

    est = DecisionTreeClassifier(max_depth=2).fit(frame, frame.iloc[:, 0] > 0)
    model = treesens.load_model(est, data=frame)
    assert [f.lb for f in model.features] == frame.min().to_list()
    assert "bounds from data" in model.source


def test_details_keep_their_bounds_by_default(frame, tmp_path):
    from sklearn.tree import DecisionTreeClassifier

    est = DecisionTreeClassifier(max_depth=2).fit(frame, frame.iloc[:, 0] > 0)
    rows = [f"{i},{n},-5,5" for i, n in enumerate(frame.columns)]
    (tmp_path / "d.csv").write_text("feature,name,lb,ub\n" + "\n".join(rows) + "\n")
    model = treesens.load_model(est, data=frame, details=tmp_path / "d.csv")
    assert [f.lb for f in model.features] == [-5.0] * 4


def test_an_insensitive_answer_names_the_domain_it_was_proved_over(frame):
    from sklearn.tree import DecisionTreeClassifier

    est = DecisionTreeClassifier(max_depth=2, random_state=0)
    est.fit(frame, frame.iloc[:, 0] > 0)
    model = treesens.load_model(est, data=frame)
    unused = next(n for n, imp in zip(frame.columns, est.feature_importances_) if imp == 0)
    r = treesens.check(model, vary=unused, gap=0.1)
    assert r.status == "insensitive" and "within the data's range" in r.message


def test_bounds_none_keeps_all_reals_even_with_data(ens, frame):
    model = treesens.load_model(ens, data=frame, bounds="none")
    assert all(math.isinf(f.lb) for f in model.features)


def test_bounds_from_data_need_data(ens):
    with pytest.raises(InputError, match='bounds="data" takes the bounds from data'):
        treesens.load_model(ens, bounds="data")


def test_an_unknown_bounds_choice_is_an_input_error(ens, frame):
    with pytest.raises(InputError, match="bounds='rows': use one of 'auto', 'data', 'none'"):
        treesens.load_model(ens, data=frame, bounds="rows")


def test_data_outside_declared_bounds_is_an_input_error(ens, frame):
    details = pd.DataFrame(
        {
            "feature": [0, 1, 2, 3],
            "name": ["f0", "f1", "f2", "f3"],
            "lb": [0.0, -1e9, -1e9, -1e9],
            "ub": [1.0, 1e9, 1e9, 1e9],
        }
    )
    with pytest.raises(InputError, match="feature 'f0': the data's values"):
        treesens.load_model(ens, data=frame, details=details, bounds="data")


def test_a_column_with_no_value_keeps_its_bounds(ens, frame):
    declared = ens.with_features(
        tuple(f.__class__(f.name, may_be_missing=True) for f in ens.features)
    )
    holes = frame.assign(f3=np.nan)
    model = treesens.load_model(declared, data=holes, bounds="data")
    assert math.isinf(model.features[3].ub) and model.features[0].ub == frame["f0"].max()


def test_details_as_a_dataframe_declare_names_and_bounds(ens):
    details = pd.DataFrame(
        {
            "feature": [0, 1, 2, 3],
            "name": ["age", "pay", "debt", "term"],
            "lb": [0.0, -1.0, None, None],
            "ub": [99.0, None, None, None],
        }
    )
    model = treesens.load_model(ens, details=details)
    assert model.feature_names[:2] == ["age", "pay"]
    assert (model.features[0].lb, model.features[0].ub) == (0.0, 99.0)
    assert math.isinf(model.features[1].ub)


def test_a_details_dataframe_problem_names_the_dataframe(ens):
    details = pd.DataFrame({"feature": [9], "name": ["x"]})
    with pytest.raises(InputError, match="<details DataFrame>"):
        treesens.load_model(ens, details=details)


def test_details_of_another_type_is_a_clear_input_error(ens):
    with pytest.raises(InputError, match="details takes a CSV path or a pandas DataFrame"):
        treesens.load_model(ens, details={"age": (0, 99)})


def test_sweep_out_writes_one_json_line_per_query(ens, tmp_path):
    out = tmp_path / "r.jsonl"
    treesens.sweep(ens, features=["f0", "f1"], out=out, progress=False, **QUICK)
    assert [json.loads(line)["query"] for line in out.read_text().splitlines()] == ["f0", "f1"]


def test_sweep_resume_reuses_the_answers_and_runs_the_rest(ens, tmp_path):
    out = tmp_path / "r.jsonl"
    treesens.sweep(ens, features=["f0"], out=out, progress=False, **QUICK)
    rows = treesens.sweep(ens, features=["f0", "f2"], resume=out, progress=False, **QUICK)
    assert [r.query for r in rows] == ["f0", "f2"]
    assert len(out.read_text().splitlines()) == 2  # only f2 was run and appended


def test_sweep_resume_reuses_answers_about_the_same_data_in_memory(ens, frame, tmp_path):
    out = tmp_path / "r.jsonl"
    treesens.sweep(ens, features=["f0"], data=frame, out=out, progress=False, **QUICK)
    treesens.sweep(ens, features=["f0"], data=frame.copy(), resume=out, progress=False, **QUICK)
    assert len(out.read_text().splitlines()) == 1


def test_sweep_resume_reruns_a_query_about_other_data_in_memory(ens, frame, tmp_path):
    out = tmp_path / "r.jsonl"
    treesens.sweep(ens, features=["f0"], data=frame, out=out, progress=False, **QUICK)
    treesens.sweep(ens, features=["f0"], data=frame * 2, resume=out, progress=False, **QUICK)
    assert len(out.read_text().splitlines()) == 2


def test_sweep_resume_says_what_it_reused(ens, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    treesens.sweep(ens, features=["f0"], out=out, progress=False, **QUICK)
    treesens.sweep(ens, features=["f0"], resume=out, **QUICK)
    assert "1 result reused, 0 rerun" in capsys.readouterr().err


def test_sweep_out_and_resume_must_name_one_file(ens, tmp_path):
    with pytest.raises(InputError, match="give out the same file"):
        treesens.sweep(ens, out=tmp_path / "a.jsonl", resume=tmp_path / "b.jsonl")


def test_sweep_progress_prints_a_line_per_query_without_a_terminal(ens, capsys):
    treesens.sweep(ens, features=["f0", "f1"], **QUICK)
    err = capsys.readouterr().err
    assert "[1/2] f0:" in err and "[2/2] f1:" in err


def test_a_progress_line_of_a_query_in_error_says_why():
    from treesens.answers.result import Result

    r = Result(query="f0", status="error", backend="gurobi", features=["f0"], gap=0.2)
    r.error = "the Gurobi license refused the model as too large\n(details)"
    out = io.StringIO()
    Lines(2, out).advance(r)
    assert out.getvalue().startswith(
        "[1/2] f0: error: the Gurobi license refused the model as too large ("
    )


def test_sweep_without_progress_is_silent(ens, capsys):
    treesens.sweep(ens, features=["f0"], progress=False, **QUICK)
    assert capsys.readouterr().err == ""


class _Handle:
    def __init__(self, shown):
        self.views = [shown._repr_html_()]

    def update(self, shown):
        self.views.append(shown._repr_html_())


def test_the_notebook_bar_updates_its_html_in_place(ens):
    handles = []

    def display(obj, display_id=False):
        handles.append(_Handle(obj))
        return handles[-1]

    bar = NotebookBar(2, display)
    bar.advance(treesens.check(ens, ["f0"], **QUICK))
    assert len(handles) == 1 and '<progress value="1" max="2"' in handles[0].views[-1]


def test_sweep_progress_uses_the_notebook_bar_in_a_kernel(monkeypatch):
    monkeypatch.setattr(
        "treesens.views.progress.notebook_display", lambda: lambda obj, display_id: None
    )
    with sweep_progress(3) as shown:
        assert isinstance(shown, NotebookBar)


def test_sweep_progress_writes_lines_to_a_stream_that_is_no_terminal(tmp_path):
    with open(tmp_path / "log", "w") as fh, sweep_progress(3, stream=fh) as shown:
        assert isinstance(shown, Lines)


def test_results_frame_columns_are_typed_for_sorting(ens):
    rows = treesens.sweep(ens, progress=False, **QUICK)
    df = treesens.results_frame(rows).sort_values(["verdict", "distance"])
    assert df["gap"].dtype == float and df["time_s"].dtype == float
    assert df["validated"].dtype == bool and df["distance"].isna().all()
    assert all(isinstance(f, list) for f in df["features"])


def test_results_frame_has_probabilities_as_lists_of_floats():
    r = treesens.check(str(EXAMPLES / "breast_cancer_xgb.json"), ["mean_texture"], **QUICK)
    row = treesens.results_frame([r]).iloc[0]
    assert row["p(x1)"] == pytest.approx(r.outputs["x1"]) and row["changed"] == ["mean_texture"]


def test_results_frame_has_nan_distance_and_none_probabilities_without_a_pair():
    from treesens.answers.result import Result

    row = treesens.results_frame([Result("a", "insensitive", "cpsat", ["a"], 0.2)]).iloc[0]
    assert math.isnan(row["distance"]) and row["p(x1)"] is None and row["changed"] == []


def test_results_frame_has_one_row_per_result_with_its_distance(ens, frame):
    rows = treesens.sweep(ens, data=frame, progress=False, **QUICK)
    df = treesens.results_frame(rows)
    assert len(df) == ens.n_features and "distance" in df
