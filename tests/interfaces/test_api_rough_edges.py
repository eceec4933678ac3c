"""What a new user of the Python API tripped over (issue 44, item 11): ``audit`` takes
``timeout`` as its whole time limit, ``treesens.summary`` keeps the audit's ``by``,
messages from the API name keywords (the CLI's name flags), a feature name differing
in case is refused with a did-you-mean, and so is a data column differing in spaces."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler import audit as core
from treesens.compiler.errors import InputError, closest
from treesens.questions.audit import LATE_WHY, answer_blocks, make_spec, make_target
from treesens.questions.audit_solve import solve_rows
from treesens.readers.data import load_data
from treesens.tests.conftest import treesens_here

REPO = Path(__file__).resolve().parents[2]
BC_MODEL = REPO / "examples" / "breast_cancer_xgb.json"
BC_ROWS = REPO / "examples" / "breast_cancer_rows.csv"
IRIS = REPO / "examples" / "iris_lgbm.txt"
IRIS_PARTS = ("sepal_length", "sepal_width", "petal_length", "petal_width")


def _rows(n: int = 20) -> pd.DataFrame:
    return pd.read_csv(BC_ROWS).head(n)


def test_audit_takes_timeout_as_its_whole_time_limit():
    df = treesens.audit(BC_MODEL, _rows(), ["mean_texture"], gap=0.1, timeout=60)
    assert len(df) == 20 and "unknown" not in set(df["status"])


def test_audit_rows_past_its_timeout_stay_unknown():
    df = treesens.audit(BC_MODEL, _rows(), ["mean_texture"], gap=0.1, timeout=1e-9)
    assert set(df["status"]) == {"unknown"}


def _solver_rows(monkeypatch):
    """Four rows, none answered by enumeration (every one left to the solver)."""
    ens = treesens.load_model(BC_MODEL, data=_rows())
    ds = load_data(_rows(), ens)
    spec = make_spec(ens, ds, ["mean_texture"], make_target(ens, 0.1))
    monkeypatch.setattr(core, "MAX_CANDIDATES", 0)
    X = ds.X[:4]
    return ens, ds, spec, X, core.audit_rows(ens, X, spec.vary, spec.target, spec.scales)


def test_rows_left_to_the_solver_past_the_audits_deadline_stay_unknown(monkeypatch):
    ens, _, spec, X, ans = _solver_rows(monkeypatch)
    assert not solve_rows(ens, spec, X, ans, 60.0, deadline=1.0)  # long gone
    assert ans.status == ["unknown"] * 4


def test_a_block_begun_past_the_audits_deadline_says_why_its_rows_are_unknown(monkeypatch):
    ens, ds, spec, _, _ = _solver_rows(monkeypatch)
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(4), deadline=1.0))
    assert ans.status == ["unknown"] * 4 and ans.note == LATE_WHY


@pytest.mark.parametrize("bad", [0, -5, float("nan"), "60"])
def test_audit_refuses_a_timeout_that_is_not_a_positive_number(bad):
    with pytest.raises(InputError, match="timeout="):
        treesens.audit(BC_MODEL, _rows(), ["mean_texture"], gap=0.1, timeout=bad)


def test_summary_is_part_of_the_package():
    df = treesens.audit(BC_MODEL, _rows(), ["mean_texture"], gap=0.1)
    assert list(treesens.summary(df)["group"])[0] == "all"


def test_summary_keeps_the_breakdown_the_audit_was_asked_for():
    df = treesens.audit(BC_MODEL, _rows(), ["mean_texture"], gap=0.1, by="label")
    table = treesens.summary(df)
    assert set(table[table["group"] == "label"]["value"]) == {"0", "1"}


def test_summary_of_a_column_the_answer_lacks_says_so_with_a_did_you_mean():
    df = treesens.audit(BC_MODEL, _rows(), ["mean_texture"], gap=0.1, by="label")
    with pytest.raises(InputError, match="did you mean 'label'"):
        treesens.summary(df, by="Label")


def test_api_multiclass_without_classes_names_the_classes_keyword():
    with pytest.raises(InputError, match=r"classes=\(C1, C2\)") as e:
        treesens.check(IRIS, vary=["petal_length_cm"], gap=1.5)
    assert "--classes" not in str(e.value)


def test_api_multiclass_without_a_gap_names_the_gap_keywords():
    with pytest.raises(InputError, match="margin_gap=D") as e:
        treesens.check(IRIS, vary=["petal_length_cm"], classes=(0, 1))
    assert "--gap" not in str(e.value)


def test_api_max_gap_without_classes_names_the_classes_keyword():
    with pytest.raises(InputError, match=r"max_gap: .*classes=\(C1, C2\)") as e:
        treesens.max_gap(IRIS, vary=["petal_length_cm"])
    assert "--" not in str(e.value)


def test_api_delta_on_a_classifier_names_the_gap_keyword():
    with pytest.raises(InputError, match=r"delta .* is for regressors; give a gap \(gap=G\)") as e:
        treesens.check(BC_MODEL, vary=["mean_texture"], delta=0.1)
    assert "--" not in str(e.value)


def test_api_audit_direction_on_a_classifier_names_the_direction_keyword():
    with pytest.raises(InputError, match=r"^direction .* is for regressors"):
        treesens.audit(BC_MODEL, _rows(), "mean_texture", direction="up")


def test_cli_multiclass_without_classes_names_the_flag():
    r = treesens_here("check", IRIS, "--vary", "petal_length_cm", "--gap", "1.5")
    assert r.returncode == 2 and "--classes C1,C2" in r.stderr and "classes=" not in r.stderr


def test_vary_differing_from_a_feature_in_case_only_is_refused_with_a_did_you_mean():
    with pytest.raises(
        InputError, match=r"unknown feature 'Mean_Texture' \(did you mean 'mean_texture'"
    ):
        treesens.check(BC_MODEL, vary="Mean_Texture", gap=0.2)


def test_data_column_differing_from_a_feature_in_spaces_gets_a_did_you_mean():
    rows = _rows().rename(columns=lambda c: c.replace("_", " "))
    with pytest.raises(InputError, match="did you mean 'mean radius' for 'mean_radius'"):
        treesens.check(BC_MODEL, vary="mean_texture", gap=0.2, data=rows)


def test_data_column_differing_from_a_feature_in_case_gets_a_did_you_mean():
    rows = _rows().rename(columns={"mean_radius": "Mean_Radius"})
    with pytest.raises(InputError, match="did you mean 'Mean_Radius' for 'mean_radius'"):
        treesens.check(BC_MODEL, vary="mean_texture", gap=0.2, data=rows)


def test_closest_puts_a_name_differing_in_case_and_separators_first():
    names = ["mean_area", "mean_radius", "radius_mean", "worst_radius"]
    assert closest("MEAN RADIUS", names).startswith(" (did you mean 'mean_radius'")


def test_max_gap_names_its_result_after_the_features_it_varies():
    assert treesens.max_gap(BC_MODEL, ["worst_symmetry"], timeout=60).query == "worst_symmetry"


def test_max_gap_keeps_the_name_it_is_given():
    assert treesens.max_gap(BC_MODEL, ["worst_symmetry"], name="sym", timeout=60).query == "sym"


def test_a_class_out_of_range_names_the_classes_keyword():
    with pytest.raises(InputError, match=r"^classes=\(0, 3\): class 3 out of range"):
        treesens.check(IRIS, vary=["petal_length_cm"], gap=2, classes=(0, 3))


def test_an_audits_class_out_of_range_names_the_classes_keyword():
    rows = pd.DataFrame([[5, 3, 1.4, 0.2]], columns=[f"{p}_cm" for p in IRIS_PARTS])
    with pytest.raises(InputError, match=r"^classes=3: class 3 out of range"):
        treesens.audit(IRIS, rows, ["petal_length_cm"], gap=2, classes=3)


def test_an_audits_class_pair_says_it_takes_x2s_class_alone():
    rows = pd.DataFrame([[5, 3, 1.4, 0.2]], columns=[f"{p}_cm" for p in IRIS_PARTS])
    with pytest.raises(InputError, match=r"^classes=\(0, 2\): an audit takes one class, x2's \(2,"):
        treesens.audit(IRIS, rows, ["petal_length_cm"], gap=2, classes=(0, 2))


@pytest.mark.parametrize("backend", [None, 1])
def test_a_backend_that_is_not_a_name_is_one_input_error(backend):
    # was AttributeError: 'NoneType' object has no attribute 'startswith'
    with pytest.raises(InputError, match=rf"^backend takes a backend's name.*not {backend}"):
        treesens.check(BC_MODEL, vary=["mean_texture"], gap=0.2, backend=backend)


def test_compare_given_backends_that_are_no_list_is_one_input_error():
    with pytest.raises(InputError, match=r"^backends: give a list of names"):
        treesens.compare(BC_MODEL, "mean_texture", gap=0.2, backends=5)


def test_three_classes_are_one_input_error():
    # was ValueError: too many values to unpack (expected 2)
    with pytest.raises(InputError, match=r"^classes: give two classes"):
        treesens.check(IRIS, vary=["petal_length_cm"], gap=2, classes=(0, 1, 2))


@pytest.mark.parametrize("c", [True, 1.5])
def test_a_class_that_is_no_whole_number_is_refused(c):
    # True and 1.5 were read as class 1
    with pytest.raises(InputError, match=rf"class {c!r} is not a class number"):
        treesens.check(IRIS, vary=["petal_length_cm"], gap=2, classes=(c, 0))


def test_a_label_that_is_no_name_is_one_input_error():
    # was AttributeError: 'int' object has no attribute 'strip'
    with pytest.raises(InputError, match=r"label"):
        treesens.load_model(BC_MODEL, data=_rows(), label=5)


def test_a_kind_that_is_no_name_is_one_input_error():
    with pytest.raises(InputError, match=r"kind"):
        treesens.check(BC_MODEL, "mean_texture", gap=0.2, kind=5)


def test_subsets_given_as_text_is_one_input_error():
    # was TypeError: '<=' not supported between instances of 'int' and 'str'
    with pytest.raises(InputError, match=r"^subsets takes a whole number.*not '2'"):
        treesens.sweep(BC_MODEL, features=["mean_texture", "worst_radius"], subsets="2", gap=0.2)


def test_an_audit_by_a_number_is_one_input_error():
    # was TypeError: 'int' object is not iterable
    with pytest.raises(InputError, match=r"^by takes a column's name.*not 5"):
        treesens.audit(BC_MODEL, _rows(5), "mean_texture", gap=0.2, by=5)


def test_a_certificate_that_is_no_path_is_one_input_error():
    # was TypeError: expected str, bytes or os.PathLike object, not int
    with pytest.raises(InputError, match=r"^certificate takes a file's path, not 5"):
        treesens.max_gap(BC_MODEL, "mean_texture", certificate=5)


def test_a_certify_budget_below_zero_is_refused_as_on_the_command_line(tmp_path):
    with pytest.raises(InputError, match=r"^certify_budget takes a positive number of seconds"):
        treesens.check(
            BC_MODEL, "mean_texture", gap=0.45, certificate=tmp_path / "c.json", certify_budget=-1
        )


@pytest.mark.parametrize("limit", [0, -1, 2.5, True])
def test_an_audit_limit_that_is_no_positive_whole_number_is_refused(limit):
    # 0 and -1 audited no row and returned an empty frame, as --limit 0 is refused
    with pytest.raises(InputError, match=r"^limit takes a whole number of rows from 1"):
        treesens.audit(BC_MODEL, _rows(5), "mean_texture", gap=0.2, limit=limit)


@pytest.mark.parametrize("jobs", [0, -1, "2", 1.5])
def test_a_sweeps_jobs_that_is_no_positive_whole_number_is_refused(jobs):
    # each ran: 0 on every core, -1 and '2' on a pool sized from them, as --jobs refuses
    with pytest.raises(InputError, match=r"^jobs takes a whole number of workers from 1"):
        treesens.sweep(BC_MODEL, features=["mean_texture"], gap=0.2, jobs=jobs)


def test_an_audits_jobs_given_as_text_is_refused():
    with pytest.raises(InputError, match=r"^jobs takes a whole number of workers from 1"):
        treesens.audit(BC_MODEL, _rows(5), "mean_texture", gap=0.2, jobs="2")


@pytest.mark.parametrize("classes", [1, 0, {0, 1}])
def test_classes_that_are_no_pair_are_one_input_error(classes):
    # 1 was TypeError: 'int' object is not iterable; 0 was read as no classes
    with pytest.raises(InputError, match=r"^classes: give two classes.*\(got "):
        treesens.check(IRIS, vary=["petal_length_cm"], gap=2, classes=classes)


@pytest.mark.parametrize("questions", ["mean_texture", {"vary": "mean_texture"}])
def test_check_many_given_one_question_not_in_a_list_says_so(questions):
    # a string was read letter by letter: "vary: unknown feature 'm'"
    with pytest.raises(InputError, match=r"^questions: give a list of questions, not one"):
        treesens.check_many(BC_MODEL, questions, gap=0.2)


def test_check_many_given_no_list_is_one_input_error():
    with pytest.raises(InputError, match=r"^questions: give a list of questions.*not 5"):
        treesens.check_many(BC_MODEL, 5, gap=0.2)


def test_results_frame_of_one_result_says_to_put_it_in_a_list():
    # was TypeError: 'Result' object is not iterable
    r = treesens.check(BC_MODEL, vary="mean_texture", gap=0.2, timeout=30)
    with pytest.raises(InputError, match=r"not one Result: results_frame\(\[r\]\)"):
        treesens.results_frame(r)


@pytest.mark.parametrize(
    ("given", "said"), [(5, "not int"), ([{"query": "a"}], "item 0 is a dict")]
)
def test_results_frame_of_no_results_is_one_input_error(given, said):
    with pytest.raises(InputError, match=said):
        treesens.results_frame(given)


@pytest.mark.parametrize("per_row", [0, -1, "60"])
def test_audit_refuses_a_timeout_per_row_that_is_no_positive_number(per_row):
    # 0 was taken (the command line's --timeout-per-row 0 is refused)
    with pytest.raises(InputError, match=r"^timeout_per_row=.*each row's solver time limit"):
        treesens.audit(BC_MODEL, _rows(3), "mean_texture", gap=0.2, timeout_per_row=per_row)


@pytest.mark.parametrize(("data", "named"), [({"mean_radius": [14.0]}, "dict"), (5, "int")])
def test_data_that_is_no_table_is_refused_naming_its_type(data, named):
    # was "got an array of shape ()", naming neither the dict nor what data takes
    with pytest.raises(InputError, match=rf"got {named}\b.*give a DataFrame, a CSV"):
        treesens.load_model(BC_MODEL, data=data)


@pytest.mark.parametrize("sample", [1.5, True])
def test_sweep_refuses_a_sample_that_is_no_whole_number(sample):
    # 1.5 ran two queries
    with pytest.raises(InputError, match=r"^sample takes a whole number of queries"):
        treesens.sweep(BC_MODEL, gap=0.2, sample=sample, progress=False)


class _Touches:
    """A pickle that creates a file as it loads: the code a pickle may run."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


@pytest.mark.parametrize("trust", ["no", "false", 0, None])
def test_trust_pickle_that_is_no_bool_is_refused_before_the_pickle_runs(tmp_path, trust):
    # "no" was truthy: the pickle was loaded and its code ran
    marker = tmp_path / "ran"
    model = tmp_path / "model.pkl"
    model.write_bytes(pickle.dumps(_Touches(marker)))
    with pytest.raises(InputError, match=r"^trust_pickle takes True or False"):
        treesens.load_model(model, trust_pickle=trust)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("call", "meant"),
    [
        (lambda: treesens.max_gap(BC_MODEL, "mean_texture", tolerence=0.1), "tolerance"),
        (lambda: treesens.check(BC_MODEL, "mean_texture", certificat="c.json"), "certificate"),
    ],
)
def test_a_misspelt_keyword_of_the_function_itself_gets_a_did_you_mean(call, meant):
    # the table's keywords got one; max_gap's tolerance and check's certificate did not
    with pytest.raises(TypeError, match=rf"did you mean '{meant}'"):
        call()
