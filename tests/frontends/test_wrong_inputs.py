"""Inputs that fit another model: a details file of another model, data columns that do not
name the model's features, raw categories read as codes, a resume file's feature sets, a
backend that is not installed, audit files that cannot be read or written. Each is one
line naming both sides (exit 2 on the command line), never a silently wrong answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.questions.resume import ResumeKey, plan_resume
from treesens.readers.data import load_data
from treesens.tests.conftest import require_shared, treesens_here

EXAMPLES = Path(treesens.__file__).parent / "examples"
MODEL = str(EXAMPLES / "breast_cancer_xgb.json")
WINE_DETAILS = str(EXAMPLES / "wine_details.csv")


def _cli(*args, cwd=None, hide=None):
    """The CLI's main in this process; with ``hide``, in a subprocess where that package
    is made unimportable."""
    if hide is None:
        return treesens_here(*args, cwd=cwd)
    pre = f"import sys; sys.modules[{hide!r}] = None; "
    code = pre + "from treesens.interfaces.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def _one_line_error(r, *words) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and "RuntimeWarning" not in ln]
    assert len(lines) == 1, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def _xgb_model(path: Path, names=None) -> Path:
    import xgboost as xgb

    rng = np.random.default_rng(0)
    X = rng.random((80, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    b = xgb.train(
        {"max_depth": 2, "objective": "binary:logistic", "nthread": 1},
        xgb.DMatrix(X, label=y, feature_names=names),
        4,
    )
    b.save_model(path)
    return path


@pytest.fixture(scope="module")
def nameless_model(tmp_path_factory) -> Path:
    """An XGBoost model saved without feature names (f0, f1, f2)."""
    return _xgb_model(tmp_path_factory.mktemp("nameless") / "m.json")


# ---- a details file of another model ------------------------------------------------


def test_a_details_file_of_another_model_is_an_error_naming_both_sides():
    with pytest.raises(InputError) as e:
        treesens.load_model(MODEL, details=WINE_DETAILS)
    msg = str(e.value)
    assert "wine_details.csv:2" in msg and "'alcohol' here but 'mean_radius'" in msg
    assert "13 features here, 30 in the model" in msg and "breast_cancer_xgb.json" in msg


def test_cli_check_with_the_details_file_of_another_model_is_one_line_exit_2():
    r = _cli("check", MODEL, "--vary", "alcohol", "--gap", "0.2", "--details", WINE_DETAILS)
    _one_line_error(r, "wine_details.csv:2", "'alcohol'", "'mean_radius'", "13 features here")


def test_a_details_file_repeating_a_named_models_names_may_declare_some_of_them(tmp_path):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n1,mean_texture,9,40\n")
    ens = treesens.load_model(MODEL, details=d)
    assert (ens.features[1].lb, ens.features[1].ub) == (9.0, 40.0)


def test_a_details_file_names_every_feature_of_a_nameless_model(tmp_path, nameless_model):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,age,0,1\n1,income,0,1\n2,score,0,1\n")
    ens = treesens.load_model(nameless_model, details=d)
    assert ens.feature_names == ["age", "income", "score"]


def test_a_details_file_with_fewer_rows_than_a_nameless_model_has_features_is_an_error(
    tmp_path, nameless_model
):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,age,0,1\n1,income,0,1\n")
    with pytest.raises(InputError, match=r"d\.csv: 2 features here, but the model .* has 3"):
        treesens.load_model(nameless_model, details=d)


def test_a_details_file_with_more_rows_than_the_model_names_both_counts(tmp_path, nameless_model):
    d = tmp_path / "d.csv"
    d.write_text("feature,name\n0,a\n1,b\n2,c\n3,d\n")
    with pytest.raises(InputError, match=r"d\.csv:5: .* has 3 features .*this file declares 4"):
        treesens.load_model(nameless_model, details=d)


def test_data_naming_a_nameless_model_otherwise_than_its_details_file_is_an_error(
    tmp_path, nameless_model
):
    d = tmp_path / "d.csv"
    d.write_text("feature,name,lb,ub\n0,age,0,1\n1,income,0,1\n2,score,0,1\n")
    data = tmp_path / "data.csv"
    data.write_text("a,b,c,label\n0.1,0.2,0.3,1\n")
    with pytest.raises(InputError, match="no column for feature"):
        treesens.check(nameless_model, ["age"], details=d, data=data, timeout=30)


@pytest.mark.shared
def test_every_benchmark_details_file_fits_its_model():
    bench = Path(__file__).resolve().parents[2] / "bench"
    sys.path.insert(0, str(bench))
    try:
        from instances import MODELS  # bench/ is scripts, not part of the installed package
    finally:
        sys.path.remove(str(bench))

    shared = require_shared()
    for key, (model, details) in MODELS.items():
        if details is None or not key.endswith(("_t200_d5", "_robust", "_unrobust", "_t100_d5")):
            continue
        ens = treesens.load_model(shared / model, details=shared / details)
        assert ens.inputs[-1] == ("details", str(shared / details)), key


# ---- results record their input files ---------------------------------------------


def test_a_result_records_its_model_details_and_data_files(tmp_path):
    from sklearn.datasets import load_breast_cancer

    ens = treesens.load_model(MODEL)
    bc = load_breast_cancer()
    data = tmp_path / "bc.csv"
    pd.DataFrame(bc.data[:30], columns=ens.feature_names).assign(label=bc.target[:30]).to_csv(
        data, index=False
    )
    details = str(EXAMPLES / "breast_cancer_details.csv")
    r = treesens.check(MODEL, ["mean_texture"], gap=0.2, details=details, data=data, timeout=60)
    assert r.inputs == {"model": MODEL, "details": details, "data": str(data)}
    assert json.loads(r.to_json())["inputs"] == r.inputs


def test_a_result_records_a_details_file_found_beside_the_model():
    r = treesens.check(MODEL, ["mean_texture"], gap=0.2, timeout=60)
    assert r.inputs == {"model": MODEL, "details": str(EXAMPLES / "breast_cancer_details.csv")}


def test_a_sens_result_records_the_sens_file(tmp_path):
    sens = tmp_path / "q.sens"
    sens.write_text(f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  gap 0.2\n}}\n')
    (r,) = treesens.run_file(sens, timeout=60)
    assert r.inputs["sens"] == str(sens) and r.inputs["model"].endswith("breast_cancer_xgb.json")


# ---- data columns ------------------------------------------------------------------


@pytest.fixture(scope="module")
def bc_frame() -> pd.DataFrame:
    from sklearn.datasets import load_breast_cancer

    bc = load_breast_cancer()
    names = treesens.load_model(MODEL).feature_names
    return pd.DataFrame(bc.data[:40], columns=names).assign(label=bc.target[:40])


def test_data_columns_in_another_order_are_matched_by_name(tmp_path, bc_frame):
    ens = treesens.load_model(MODEL)
    straight, reversed_ = tmp_path / "a.csv", tmp_path / "b.csv"
    bc_frame.to_csv(straight, index=False)
    bc_frame[list(reversed(bc_frame.columns))].to_csv(reversed_, index=False)
    assert np.array_equal(load_data(straight, ens).X, load_data(reversed_, ens).X)


def test_data_columns_with_other_names_are_an_error_naming_both_sides(tmp_path, bc_frame):
    spaced = bc_frame.rename(columns=lambda c: c.replace("_", " "))
    path = tmp_path / "spaced.csv"
    spaced.to_csv(path, index=False)
    with pytest.raises(InputError) as e:
        load_data(path, treesens.load_model(MODEL))
    msg = str(e.value)
    assert "no column for feature(s) 'mean_radius'" in msg
    assert "not in the model: 'mean radius'" in msg
    assert "matched by name, not by position" in msg


@pytest.mark.parametrize(
    "command", [["check", MODEL, "--vary", "mean_texture"], ["sweep", MODEL]], ids=lambda c: c[0]
)
def test_cli_data_with_other_column_names_is_one_line_exit_2(tmp_path, bc_frame, command):
    path = tmp_path / "spaced.csv"
    bc_frame.rename(columns=lambda c: c.replace("_", " ")).to_csv(path, index=False)
    r = _cli(*command, "--data", str(path))
    _one_line_error(r, "spaced.csv", "mean_radius", "mean radius")


def test_a_nameless_models_data_columns_are_taken_in_order(tmp_path, nameless_model):
    ens = treesens.load_model(nameless_model, auto_details=False)
    path = tmp_path / "d.csv"
    path.write_text("c,b,a\n1,2,3\n")
    assert load_data(path, ens).X.tolist() == [[1.0, 2.0, 3.0]]


# ---- categories -------------------------------------------------------------------


@pytest.fixture(scope="module")
def hgb_raw_categories():
    """A HistGradientBoosting model whose categorical x0 takes the raw values {0,1,5,8,9}."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    x0 = rng.choice([0, 1, 5, 8, 9], 300).astype(float)
    x1 = rng.random(300)
    y = ((x0 >= 5) ^ (x1 > 0.7)).astype(int)
    est = HistGradientBoostingClassifier(categorical_features=[0], max_iter=8, random_state=0)
    est.fit(np.c_[x0, x1], y)
    return est, pd.DataFrame({"x0": x0, "x1": x1, "label": y})


def test_raw_numeric_categories_in_data_are_mapped_to_their_codes(tmp_path, hgb_raw_categories):
    est, frame = hgb_raw_categories
    path = tmp_path / "d.csv"
    frame.head(6).to_csv(path, index=False)
    ens = treesens.load_model(est)
    assert ens.features[0].categories == ("0", "1", "5", "8", "9")
    codes = {0.0: 0, 1.0: 1, 5.0: 2, 8.0: 3, 9.0: 4}
    assert load_data(path, ens).X[:, 0].tolist() == [codes[v] for v in frame.x0.head(6)]


def test_a_value_that_is_no_category_of_the_model_is_an_error_naming_file_line_column(
    tmp_path, hgb_raw_categories
):
    est, frame = hgb_raw_categories
    bad = frame.head(6).copy()
    bad.loc[3, "x0"] = 7
    path = tmp_path / "bad.csv"
    bad.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"bad\.csv:5: column 'x0': 7 is not one of"):
        load_data(path, treesens.load_model(est))


def test_a_sensitive_witness_near_raw_category_data_uses_a_real_category(
    tmp_path, hgb_raw_categories
):
    est, frame = hgb_raw_categories
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    r = treesens.check(est, ["x1"], gap=0.05, data=path, timeout=60)
    assert r.status == "sensitive" and r.distance is not None
    assert r.witness["x1"]["x0"] in ("0", "1", "5", "8", "9", 0, 1, 5, 8, 9)


def test_a_code_out_of_range_for_named_categories_is_an_error(tmp_path, nameless_model):
    from treesens.readers.details import declare

    ens = declare(treesens.load_model(nameless_model), categories={"f0": ["red", "green"]})
    path = tmp_path / "d.csv"
    path.write_text("f0,f1,f2\n1,0.5,0.5\n5,0.5,0.5\n")
    with pytest.raises(InputError, match=r"d\.csv:3: column 'f0': category code 5 is out of range"):
        load_data(path, ens)


def test_numbers_for_named_categories_are_read_as_codes_with_a_warning(tmp_path, nameless_model):
    from treesens.compiler.errors import TreesensWarning
    from treesens.readers.details import declare

    ens = declare(treesens.load_model(nameless_model), categories={"f0": ["red", "green"]})
    path = tmp_path / "coded.csv"
    path.write_text("f0,f1,f2\n1,0.5,0.5\n0,0.5,0.5\n")
    with pytest.warns(TreesensWarning, match=r"column 'f0' holds numbers .* \(0=red, 1=green\)"):
        load_data(path, ens)


# ---- sweep --resume ----------------------------------------------------------------

QUESTION = ResumeKey(
    model="xgboost:m.json",
    gap=0.3,
    gap_kind="prob",
    classes=None,
    passes=["aff", "obj", "ordering", "unaff"],
    backend="cpsat",
    timeout=60.0,
    asked={"ensemble": "abc", "data_aware": "none"},
)


def _line(query: str, features: list[str] | None) -> dict:
    line = {
        "query": query,
        "status": "insensitive",
        "model": QUESTION.model,
        "gap": QUESTION.gap,
        "gap_kind": QUESTION.gap_kind,
        "classes": None,
        "passes": QUESTION.passes,
        "backend": "cpsat",
        "stats": {"asked": {**QUESTION.record()}},
    }
    return line if features is None else {**line, "features": features}


def test_resume_reuses_the_result_of_a_feature_named_with_a_comma():
    plan = plan_resume([("a,b",)], [_line("a,b", ["a,b"])], QUESTION)
    assert list(plan.reused) == [("a,b",)] and plan.todo == []


def test_resume_does_not_reuse_a_single_features_result_for_a_pair():
    subsets = [("a,b",), ("a", "b")]
    plan = plan_resume(subsets, [_line("a,b", ["a,b"])], QUESTION)
    assert list(plan.reused) == [("a,b",)] and plan.todo == [("a", "b")]


def test_resume_reads_an_old_line_without_features_from_its_label_when_unambiguous():
    plan = plan_resume([("a", "b")], [_line("b,a", None)], QUESTION)
    assert list(plan.reused) == [("a", "b")]


def test_resume_ignores_an_old_line_without_features_when_a_name_holds_a_comma():
    plan = plan_resume([("a,b",), ("a", "b")], [_line("a,b", None)], QUESTION)
    assert plan.reused == {} and plan.todo == [("a,b",), ("a", "b")]


# ---- a backend that is not installed ----------------------------------------------

HINT = "pip install 'treesens[gurobi]'"


@pytest.mark.parametrize(
    "command",
    [
        ["check", MODEL, "--vary", "mean_texture", "--backend", "gurobi"],
        ["sweep", MODEL, "--features", "mean_texture", "--backend", "gurobi"],
        ["check", MODEL, "--vary", "mean_texture", "--backend", "race:cpsat,gurobi"],
        ["compare", MODEL, "--vary", "mean_texture", "--backends", "cpsat,gurobi"],
    ],
    ids=["check", "sweep", "race", "compare"],
)
def test_a_backend_not_installed_is_one_line_with_the_install_hint(command):
    r = _cli(*command, hide="gurobipy")
    _one_line_error(r, "backend 'gurobi'", "not installed", HINT)
    assert r.stdout == ""


def test_run_of_a_sens_file_asking_a_backend_not_installed_is_one_line(tmp_path):
    sens = tmp_path / "g.sens"
    sens.write_text(f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  backend gurobi\n}}\n')
    r = _cli("run", str(sens), "--json", hide="gurobipy")
    _one_line_error(r, "g.sens", "backend 'gurobi'", HINT)


@pytest.mark.parametrize("entry", ["check", "sweep", "run_file"])
def test_the_api_refuses_a_backend_not_installed_before_loading(entry, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "gurobipy", None)
    sens = tmp_path / "g.sens"
    sens.write_text(f'model "{MODEL}"\nquery q {{\n  vary mean_texture\n  backend gurobi\n}}\n')
    calls = {
        "check": lambda: treesens.check("no-such-model.json", ["x"], backend="gurobi"),
        "sweep": lambda: treesens.sweep("no-such-model.json", backend="gurobi"),
        "run_file": lambda: treesens.run_file(sens),
    }
    with pytest.raises(InputError, match=r"backend 'gurobi' is not installed .*treesens\[gurobi\]"):
        calls[entry]()


# ---- audit's files ----------------------------------------------------------------


@pytest.fixture(scope="module")
def audit_rows(tmp_path_factory, bc_frame) -> str:
    path = tmp_path_factory.mktemp("audit") / "rows.csv"
    bc_frame.head(5).to_csv(path, index=False)
    return str(path)


def _audit(rows: str, *extra: str):
    return _cli("audit", MODEL, "--vary", "mean_texture", "--data", rows, *extra)


@pytest.mark.parametrize(
    ("flag", "name", "words"),
    [
        ("--out", "a_dir", ["--out", "is a directory"]),
        ("--out", "a_file/x.jsonl", ["--out", "cannot make its folder"]),
        ("--resume", "a_dir", ["--resume", "is a directory"]),
        ("--plot", "a_file/p.png", ["--plot", "cannot make its folder"]),
    ],
)
def test_an_audit_file_that_cannot_be_written_is_named_before_any_row(
    tmp_path, audit_rows, flag, name, words
):
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "a_file").write_text("")
    r = _audit(audit_rows, flag, str(tmp_path / name))
    _one_line_error(r, name, *words)


def test_an_audit_out_on_a_full_disk_names_the_file(audit_rows):
    _one_line_error(_audit(audit_rows, "--out", "/dev/full"), "/dev/full", "no space left")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"\x00\xff\xfe garbage\n", ["cannot read", "not a text file"]),
        (b"[1, 2]\n", [":1: a result line without 'row'"]),
        (b"5\n", [":1: a result line without 'row'"]),
        (b'{"row": "x"}\n', [":1: 'row' is 'x', not a row number"]),
    ],
    ids=["binary", "list", "number", "row-not-int"],
)
def test_an_audit_resume_file_that_is_not_results_is_named(tmp_path, audit_rows, content, words):
    bad = tmp_path / "r.jsonl"
    bad.write_bytes(content)
    _one_line_error(_audit(audit_rows, "--resume", str(bad)), "r.jsonl", *words)


AUDIT_LINE = b'{"query": "mean_texture", "row": 0, "status": "insensitive"}\n'


def test_a_sweep_resumed_from_an_audits_file_names_it_before_anything_runs(tmp_path):
    # the sweep reused none of its rows and appended its results to them
    log = tmp_path / "rows.jsonl"
    log.write_bytes(AUDIT_LINE)
    r = _cli("sweep", MODEL, "--features", "mean_radius", "--resume", str(log))
    _one_line_error(r, "rows.jsonl", "holds an audit's rows", "give it a file of its own")
    assert log.read_bytes() == AUDIT_LINE


def test_a_sweep_out_into_an_audits_file_warns_once_and_appends(tmp_path):
    # as into another model's results: a log may mix them, a plot of it will not
    log = tmp_path / "rows.jsonl"
    log.write_bytes(AUDIT_LINE)
    r = _cli("sweep", MODEL, "--features", "mean_radius", "--out", str(log), "--table", "none")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("holds results of an audit (its lines name a 'row')") == 1
    assert log.read_bytes().startswith(AUDIT_LINE) and len(log.read_text().splitlines()) == 2


def test_the_api_sweep_resumed_from_an_audits_file_refuses_it(tmp_path):
    log = tmp_path / "rows.jsonl"
    log.write_bytes(AUDIT_LINE)
    with pytest.raises(InputError, match="holds an audit's rows"):
        treesens.sweep(MODEL, features=["mean_radius"], resume=log, progress=False)


def test_an_audit_with_unreadable_data_names_the_file(tmp_path):
    _one_line_error(_audit(str(tmp_path), "--out", str(tmp_path / "o.jsonl")), str(tmp_path))


def test_data_columns_with_spaces_match_the_underscored_names_lightgbm_gives_them():
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 2)), columns=["mean radius", "worst area"])
    clf = lgb.LGBMClassifier(n_estimators=3, max_depth=2, min_child_samples=5, verbose=-1)
    clf.fit(frame, (frame["mean radius"] > 0).astype(int))
    ens = treesens.load_model(clf)
    assert ens.feature_names == ["mean_radius", "worst_area"]
    assert load_data(frame, ens, None).X.shape == (60, 2)


def test_an_xgboost_model_with_vector_leaves_is_refused_as_unsupported_not_malformed(tmp_path):
    from treesens.compiler.errors import UnsupportedModelError

    xgb = pytest.importorskip("xgboost")
    X = np.random.default_rng(0).uniform(size=(200, 3))
    est = xgb.XGBClassifier(
        n_estimators=2, max_depth=2, multi_strategy="multi_output_tree", tree_method="hist"
    ).fit(X, (X[:, 0] * 3).astype(int))
    est.save_model(tmp_path / "m.json")
    with pytest.raises(UnsupportedModelError, match="vector leaves .* are not supported"):
        treesens.load_model(tmp_path / "m.json")
