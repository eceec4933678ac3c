"""Row-level audit: every row's answer equals an independent per-row brute force
(F's threshold cells from tests/oracle.py, scored with the library's predict)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from treesens.compiler.audit import FLIPPABLE, NOT_FLIPPABLE, Target, audit_rows
from treesens.compiler.query import Gap
from treesens.questions.audit import audit, summary, wilson
from treesens.readers.load import load_model
from treesens.tests.audit_oracle import brute_force_flippable
from treesens.tests.conftest import json_lines, treesens_here

REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
BC_MODEL = REPO / "examples" / "breast_cancer_xgb.json"
BC_DETAILS = REPO / "examples" / "breast_cancer_details.csv"


def _agrees(ens, X, vary, target):
    ans = audit_rows(ens, X, vary, target, {})
    expected = brute_force_flippable(ens, X, vary, target)
    got = [s == FLIPPABLE for s in ans.status]
    assert got == expected
    assert any(expected) and not all(expected)  # both answers are exercised
    return ans


def _toy(seed=0, n=40, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] > 0).astype(int)
    if k == 3:
        y = y + (X[:, 2] > 0.5)
    return X, y


def _xgb(k):
    xgb = pytest.importorskip("xgboost")
    X, y = _toy(k=k)
    m = xgb.XGBClassifier(n_estimators=8, max_depth=3, learning_rate=0.5).fit(X, y)
    return load_model(m), X


def _lgb(k):
    lgb = pytest.importorskip("lightgbm")
    X, y = _toy(k=k)
    m = lgb.LGBMClassifier(n_estimators=8, num_leaves=6, min_child_samples=3, verbose=-1)
    return load_model(m.fit(X, y)), X


def _skl(k):
    ens_mod = pytest.importorskip("sklearn.ensemble")
    X, y = _toy(k=k)
    m = ens_mod.GradientBoostingClassifier(n_estimators=8, max_depth=2).fit(X, y)
    return load_model(m), X


def _rf(k):
    ens_mod = pytest.importorskip("sklearn.ensemble")
    X, y = _toy(k=k)
    m = ens_mod.RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    return load_model(m), X


TRAINERS = {"xgboost": _xgb, "lightgbm": _lgb, "sklearn-gb": _skl, "sklearn-rf": _rf}


@pytest.mark.parametrize("lib", sorted(TRAINERS))
@pytest.mark.parametrize("n_features", [1, 2])
def test_binary_rows_agree_with_brute_force(lib, n_features):
    ens, X = TRAINERS[lib](2)
    vary = [ens.feature_names[f] for f in ((1,), (2, 3))[n_features - 1]]
    _agrees(ens, X, vary, Target(Gap(0.1)))


@pytest.mark.parametrize("lib", sorted(TRAINERS))
def test_multiclass_rows_agree_with_brute_force(lib):
    ens, X = TRAINERS[lib](3)
    _agrees(ens, X, [ens.feature_names[f] for f in (1, 3)], Target(Gap(1.2)))


def test_multiclass_named_class_agrees_with_brute_force():
    ens, X = _xgb(3)
    _agrees(ens, X, [ens.feature_names[f] for f in (2, 3)], Target(Gap(1.0), cls=2))


def test_flippable_x2_differs_from_row_only_on_F():
    ens, X = _xgb(2)
    ans = audit_rows(ens, X, ens.feature_names[:1], Target(Gap(0.0)), {})
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit
    for i in hit:
        assert np.array_equal(ans.x2[i, 1:], X[i, 1:])


def test_smallest_change_is_the_distance_to_the_nearest_flipping_cell():
    ens, X = _xgb(2)
    ans = audit_rows(ens, X, ens.feature_names[:1], Target(Gap(0.0)), {0: 1.0})
    for i, s in enumerate(ans.status):
        if s == FLIPPABLE:
            assert ans.change[i] == pytest.approx(abs(ans.x2[i, 0] - X[i, 0]))
        else:
            assert math.isnan(ans.change[i])


def _breast_cancer_frame(ens):
    datasets = pytest.importorskip("sklearn.datasets")
    b = datasets.load_breast_cancer()
    df = pd.DataFrame(b.data, columns=ens.feature_names)
    df["label"] = b.target
    return df


@pytest.mark.parametrize("feature", ["worst_texture", "worst_area", "mean_concave_points"])
def test_shipped_model_real_rows_agree_with_brute_force(feature):
    ens = load_model(BC_MODEL, details=BC_DETAILS)
    df = _breast_cancer_frame(ens)
    X = df[ens.feature_names].to_numpy(dtype=float)
    X = np.clip(X, [f.lb for f in ens.features], [f.ub for f in ens.features])
    _agrees(ens, X, [feature], Target(Gap(0.1)))


def test_api_returns_typed_frame():
    ens = load_model(BC_MODEL, details=BC_DETAILS)
    df = audit(ens, _breast_cancer_frame(ens), ["worst_texture"], gap=0.1)
    assert list(df["row"]) == list(range(569))
    assert isinstance(df["status"].dtype, pd.CategoricalDtype)
    assert set(df["status"].cat.categories) == {"flippable", "not flippable", "unknown"}
    for col in ("p_row", "p_x2", "change"):
        assert df[col].dtype == np.float64
    assert (df["status"] == "flippable").any() and (df["status"] == NOT_FLIPPABLE).any()


def test_a_binary_audits_summary_names_the_class_each_decision_flips_to():
    ens = load_model(BC_MODEL, details=BC_DETAILS)
    df = audit(ens, _breast_cancer_frame(ens).head(40), ["worst_texture"], gap=0.1)
    directions = set(summary(df).query("group == 'decision'")["value"])
    assert directions == {"0 -> 1", "1 -> 0"}


def test_wilson_interval_known_values():
    assert wilson(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-5)
    assert wilson(5, 10) == pytest.approx((0.23659, 0.76341), abs=1e-5)


def test_summary_breaks_down_by_column_and_direction():
    df = pd.DataFrame(
        {
            "row": range(6),
            "decision": [0, 0, 1, 1, 1, 0],
            "status": pd.Categorical(["flippable", "not flippable"] * 3),
            "g": ["a", "a", "a", "b", "b", "b"],
        }
    )
    t = summary(df, by="g").set_index(["group", "value"])
    assert t.loc[("all", "all"), "flippable"] == 3
    assert t.loc[("decision", "1 -> other"), "rows"] == 3
    assert t.loc[("g", "a"), "flippable"] == 2
    assert t.loc[("g", "a"), "fraction"] == pytest.approx(2 / 3)


def _bc_csv(tmp_path):
    ens = load_model(BC_MODEL, details=BC_DETAILS)
    path = tmp_path / "bc.csv"
    _breast_cancer_frame(ens).head(30).to_csv(path, index=False)
    return path


def test_cli_prints_one_json_line_per_row(tmp_path):
    data = _bc_csv(tmp_path)
    args = ["audit", BC_MODEL, "--details", BC_DETAILS, "--data", data, "--vary", "worst_radius"]
    p = treesens_here(*args, "--json")
    assert p.returncode == 0, p.stderr
    lines = json_lines(p.stdout)
    assert [d["row"] for d in lines] == list(range(30))
    assert {d["status"] for d in lines} <= {"sensitive", "insensitive"}
    assert all(d["witness"]["x1"]["worst_radius"] is not None for d in lines if d["witness"])


def test_each_row_line_records_the_model_details_and_data_files(tmp_path):
    data = _bc_csv(tmp_path)
    args = ["audit", BC_MODEL, "--details", BC_DETAILS, "--data", data, "--vary", "worst_radius"]
    first = json_lines(treesens_here(*args, "--json", "--limit", "1").stdout)[0]
    assert first["inputs"] == {
        "model": str(BC_MODEL),
        "details": str(BC_DETAILS),
        "data": str(data),
    }


def test_cli_bad_feature_exits_2(tmp_path):
    data = _bc_csv(tmp_path)
    p = treesens_here("audit", BC_MODEL, "--data", data, "--vary", "nosuch")
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0


def test_cli_without_data_exits_2():
    p = treesens_here("audit", BC_MODEL, "--vary", "worst_radius")
    assert p.returncode == 2


def test_cli_resume_answers_only_missing_rows(tmp_path):
    data = _bc_csv(tmp_path)
    out = tmp_path / "a.jsonl"
    base = ["audit", BC_MODEL, "--data", data, "--vary", "worst_radius", "--resume", out]
    assert treesens_here(*base, "--limit", "10").returncode == 0
    first = out.read_text()
    assert treesens_here(*base).returncode == 0
    text = out.read_text()
    assert text.startswith(first)
    rows = [json.loads(x)["row"] for x in text.splitlines()]
    assert rows == list(range(30))


def test_cli_resume_from_another_audits_file_is_one_line_and_exit_2(tmp_path):
    """Its rows' verdicts answered another question: reusing them would be wrong."""
    data = _bc_csv(tmp_path)
    out = tmp_path / "a.jsonl"
    base = ["audit", BC_MODEL, "--data", data, "--limit", "3", "--resume", out]
    assert treesens_here(*base, "--vary", "worst_radius").returncode == 0
    p = treesens_here(*base, "--vary", "mean_texture")
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "holds the answers of another audit (row 0: vary worst_radius" in lines[0]


def test_cli_out_into_another_audits_file_appends_with_a_note(tmp_path):
    data = _bc_csv(tmp_path)
    out = tmp_path / "a.jsonl"
    base = ["audit", BC_MODEL, "--data", data, "--limit", "3", "--out", out]
    assert treesens_here(*base, "--vary", "worst_radius").returncode == 0
    p = treesens_here(*base, "--vary", "mean_texture")
    assert p.returncode == 0
    assert f"note: {out} holds the answers of another audit" in p.stderr
    assert len(out.read_text().splitlines()) == 6


def _three_rows_audit(tmp_path) -> list:
    """An audit of worst_radius over three rows of the breast-cancer data."""
    data = _bc_csv(tmp_path)
    return ["audit", BC_MODEL, "--data", data, "--limit", "3", "--vary", "worst_radius"]


def test_cli_out_into_a_file_that_is_not_json_lines_is_refused_and_left_as_it_was(tmp_path):
    """A .sens file or a CSV given as --out by a slip: its lines were appended to it."""
    sens = tmp_path / "contract.sens"
    sens.write_text('model "m.json"\nquery q {\n  vary f0\n}\n')
    base = _three_rows_audit(tmp_path)
    p = treesens_here(*base, "--out", sens)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert f"--out {sens}: its first line is not a JSON line" in lines[0]
    assert sens.read_text() == 'model "m.json"\nquery q {\n  vary f0\n}\n'


def test_cli_out_into_a_file_of_other_json_lines_names_it_once_in_its_note(tmp_path):
    out = tmp_path / "sweep.jsonl"
    out.write_text('{"features": ["worst_radius"]}\n')
    base = _three_rows_audit(tmp_path)
    p = treesens_here(*base, "--out", out)
    assert p.returncode == 0
    assert f"note: {out}:1: a result line without 'row': this audit's lines" in p.stderr


def test_cli_out_into_its_own_audits_file_gives_no_note(tmp_path):
    out = tmp_path / "a.jsonl"
    base = _three_rows_audit(tmp_path)
    assert treesens_here(*base, "--out", out).returncode == 0
    p = treesens_here(*base, "--out", out)
    assert p.returncode == 0 and "another audit" not in p.stderr


def _resumed(tmp_path, data, model=BC_MODEL, *more):
    """Audit 3 rows of ``data`` into a.jsonl (resumed), returning the process."""
    out = tmp_path / "a.jsonl"
    args = ["audit", model, "--data", data, "--vary", "worst_radius", "--limit", "3"]
    return treesens_here(*args, "--resume", out, *more)


def test_cli_resume_with_another_data_file_is_one_line_and_exit_2(tmp_path):
    """Rows are reused by index: another file's row 0 is another row."""
    data = _bc_csv(tmp_path)
    other = tmp_path / "other.csv"
    pd.read_csv(data).iloc[::-1].to_csv(other, index=False)
    assert _resumed(tmp_path, data).returncode == 0
    p = _resumed(tmp_path, other)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and len(lines) == 1, p.stderr
    assert "(row 0: other data (30 rows, sha256 " in lines[0]


def test_cli_resume_with_its_data_file_changed_in_place_is_refused(tmp_path):
    data = _bc_csv(tmp_path)
    assert _resumed(tmp_path, data).returncode == 0
    df = pd.read_csv(data)
    df.loc[0, "worst_texture"] += 1.0
    df.to_csv(data, index=False)
    p = _resumed(tmp_path, data)
    assert p.returncode == 2 and "other data" in p.stderr, p.stderr


def test_cli_resume_from_a_copy_of_its_data_reuses_the_rows(tmp_path):
    """The data are matched by their rows' content, not their path."""
    data = _bc_csv(tmp_path)
    copy = tmp_path / "copy" / "bc.csv"
    copy.parent.mkdir()
    copy.write_bytes(data.read_bytes())
    assert _resumed(tmp_path, data).returncode == 0
    first = (tmp_path / "a.jsonl").read_text()
    assert _resumed(tmp_path, copy).returncode == 0
    assert (tmp_path / "a.jsonl").read_text() == first  # nothing answered again


def test_cli_resume_with_the_model_file_replaced_in_place_is_refused(tmp_path):
    """Same path, other trees: the model is matched by its fingerprint."""
    data = _bc_csv(tmp_path)
    model = tmp_path / "breast_cancer_xgb.json"
    model.write_bytes(BC_MODEL.read_bytes())
    assert _resumed(tmp_path, data, model).returncode == 0
    model.write_bytes((REPO / "examples" / "breast_cancer_deep_xgb.json").read_bytes())
    p = _resumed(tmp_path, data, model)
    assert p.returncode == 2 and "(row 0: another model (fingerprint " in p.stderr, p.stderr


def test_cli_resume_answers_again_a_row_whose_line_has_no_record(tmp_path):
    """A line an earlier treesens wrote (no stats.asked) cannot say its data: its row is
    answered again, and said so, rather than reused or refused."""
    data = _bc_csv(tmp_path)
    assert _resumed(tmp_path, data).returncode == 0
    out = tmp_path / "a.jsonl"
    old = [json.loads(x) for x in out.read_text().splitlines()]
    for d in old[:2]:
        del d["stats"]["asked"]
    out.write_text("".join(json.dumps(d) + "\n" for d in old))
    p = _resumed(tmp_path, data)
    assert p.returncode == 0, p.stderr
    assert "2 rows' lines record no model and data fingerprint" in p.stderr
    rows = [json.loads(x)["row"] for x in out.read_text().splitlines()]
    assert rows == [0, 1, 2, 0, 1]


def _made_unknown(out, rows, timeout_per_row, message="solver timed out"):
    """The file's lines of ``rows`` rewritten as unknowns that had ``timeout_per_row`` s."""
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    for d in lines:
        if d["row"] in rows:
            d.update(status="unknown", witness=None, message=message)
            d["stats"]["asked"]["timeout_per_row"] = timeout_per_row
    out.write_text("".join(json.dumps(d) + "\n" for d in lines))


def test_cli_resume_with_more_time_per_row_asks_its_unknown_rows_again(tmp_path):
    data = _bc_csv(tmp_path)
    assert _resumed(tmp_path, data).returncode == 0
    out = tmp_path / "a.jsonl"
    answer = json.loads(out.read_text().splitlines()[1])["status"]
    _made_unknown(out, {1}, 0.5)
    p = _resumed(tmp_path, data, BC_MODEL, "--timeout-per-row", "2")
    assert p.returncode == 0, p.stderr
    assert "1 unknown rows had less time per row than 2 s" in p.stderr
    last = json.loads(out.read_text().splitlines()[-1])
    assert (last["row"], last["status"]) == (1, answer)
    assert last["stats"]["asked"]["timeout_per_row"] == 2.0


def test_cli_resume_keeps_an_unknown_row_that_had_as_much_time(tmp_path):
    data = _bc_csv(tmp_path)
    assert _resumed(tmp_path, data).returncode == 0
    out = tmp_path / "a.jsonl"
    _made_unknown(out, {1}, 2.0)
    before = out.read_text()
    p = _resumed(tmp_path, data, BC_MODEL, "--timeout-per-row", "2")
    assert p.returncode == 0, p.stderr
    assert out.read_text() == before


def test_resume_asks_again_the_rows_of_a_failed_task():
    from treesens.questions.audit_run import reusable

    record = {"ensemble": "e", "data": {}, "timeout_per_row": 60.0}
    failed = {"row": 0, "status": "unknown", "message": "task failed: worker died"}
    timed_out = {"row": 1, "status": "unknown", "message": "solver timed out"}
    lines = [{**d, "stats": {"asked": record}} for d in (failed, timed_out)]
    reuse = reusable(lines, 2, timeout_per_row=60.0)
    assert [d["row"] for d in reuse.lines] == [1] and reuse.retried == 1


def test_resume_asks_again_an_unknown_row_whose_line_records_no_time():
    """Lines written before rows recorded their time per row: their unknowns are asked."""
    from treesens.questions.audit_run import reusable

    line = {"row": 0, "status": "unknown", "stats": {"asked": {"ensemble": "e", "data": {}}}}
    assert reusable([line], 1, timeout_per_row=1.0).retried == 1


def test_cli_resume_of_a_file_two_runs_appended_to_counts_each_row_once(tmp_path):
    """Two --out runs into one file hold every row twice; the summary's counts (and its
    interval) are of the rows audited."""
    data = _bc_csv(tmp_path)
    out = tmp_path / "a.jsonl"
    base = ["audit", BC_MODEL, "--data", data, "--vary", "worst_radius", "--limit", "3"]
    for _ in range(2):
        assert treesens_here(*base, "--out", out).returncode == 0
    p = treesens_here(*base, "--resume", out)
    assert p.returncode == 0, p.stderr
    table = {line.split()[0]: line.split() for line in p.stdout.splitlines()[2:]}
    assert table["all"][2] == "3", p.stdout


def test_cli_resume_for_another_class_is_refused(tmp_path):
    """A multiclass audit's verdicts depend on the class a flip must reach."""
    datasets = pytest.importorskip("sklearn.datasets")
    wine = datasets.load_wine(as_frame=True).frame
    wine.columns = [c.replace("/", "_") for c in wine.columns[:-1]] + ["label"]
    data = tmp_path / "wine.csv"
    wine.head(5).to_csv(data, index=False)
    base = ["audit", REPO / "examples" / "wine_xgb.json", "--data", data, "--vary", "proline"]
    base += ["--resume", tmp_path / "w.jsonl"]
    assert treesens_here(*base, "--classes", "1").returncode == 0
    p = treesens_here(*base, "--classes", "2")
    assert p.returncode == 2 and "flip to class 1 (this audit: class 2)" in p.stderr, p.stderr


def test_cli_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    data = _bc_csv(tmp_path)
    png = tmp_path / "a.png"
    p = treesens_here("audit", BC_MODEL, "--data", data, "--vary", "worst_radius", "--plot", png)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.shared
def test_adult_sex_first_200_rows_agree_with_brute_force(shared_dir):
    adult = shared_dir / "adult"
    ens = load_model(adult / "adult_t200_d5.json", details=adult / "details.csv")
    df = pd.read_csv(adult / "test.csv").head(200)
    X = df[ens.feature_names].to_numpy(dtype=float)
    _agrees(ens, X, ["sex"], Target(Gap(0.1)))


def test_package_exports_audit():
    import treesens

    assert treesens.audit is audit


def test_cli_binary_gap_out_of_range_exits_2(tmp_path):
    data = _bc_csv(tmp_path)
    p = treesens_here("audit", BC_MODEL, "--data", data, "--vary", "worst_radius", "--gap", "0.7")
    assert p.returncode == 2
    assert "gap" in p.stderr


def test_solver_fallback_agrees_with_brute_force(monkeypatch):
    from treesens.compiler import audit as core
    from treesens.questions.audit import answer_blocks, make_spec, make_target
    from treesens.readers.data import load_data

    ens = load_model(BC_MODEL, details=BC_DETAILS)
    ds = load_data(_breast_cancer_frame(ens), ens)
    target = Target(Gap(0.1))
    expected = brute_force_flippable(ens, ds.X, ["worst_texture"], target)
    rows = np.array(
        [i for i, e in enumerate(expected) if e][:4]
        + [i for i, e in enumerate(expected) if not e][:4]
    )
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1))
    monkeypatch.setattr(core, "MAX_CANDIDATES", 0)  # every row goes to the solver
    [(idx, ans)] = list(answer_blocks(ens, ds, spec, rows, timeout_per_row=60))
    assert [s == FLIPPABLE for s in ans.status] == [expected[i] for i in idx]


@pytest.fixture(scope="module")
def solver_row():
    """A row the solver answered: the line of it, given its answers as ``replace`` changes
    them (``line(**changes)``)."""
    from treesens.questions.audit import row_result

    ens = load_model(BC_MODEL, details=BC_DETAILS)
    X = _breast_cancer_frame(ens).drop(columns="label").to_numpy()[:2]
    idx, ans, spec = _solver_answers(ens, X, ["worst_texture"], 0.1)
    return lambda **changes: row_result(ens, spec, replace(ans, **changes), 0, int(idx[0]), X[0])


def test_a_row_the_solver_answers_names_its_backend_and_an_enumerated_row_enumerate(solver_row):
    solved, enumerated = solver_row(), solver_row(answered_by={})
    assert solved["backend"] not in ("enumerate", None) and enumerated["backend"] == "enumerate"


def test_a_row_the_solver_answers_records_the_solver_s_time(solver_row):
    """Its line's ``time`` is the solver query's (an enumerated row's stays 0)."""
    solved, enumerated = solver_row(), solver_row(times={})
    assert solved["time"]["total"] > 0 and enumerated["time"]["total"] == 0


def test_summary_by_label_column():
    ens = load_model(BC_MODEL, details=BC_DETAILS)
    df = audit(ens, _breast_cancer_frame(ens), ["worst_texture"], gap=0.1, by="label")
    t = summary(df, by="label")
    assert set(t[t["group"] == "label"]["value"]) == {"0", "1"}


def _dataset(ens, X):
    from treesens.readers.data import load_data

    return load_data(pd.DataFrame(X, columns=ens.feature_names), ens)


def _solver_answers(ens, X, vary, gap, classes=None, rows=None):
    """Every row answered by the solver path (no row is enumerated)."""
    from treesens.questions.audit import answer_blocks, make_spec, make_target

    ds = _dataset(ens, X)
    spec = make_spec(ens, ds, vary, make_target(ens, gap, classes=classes))
    rows = np.arange(len(X)) if rows is None else np.asarray(rows)
    [(idx, ans)] = list(answer_blocks(ens, ds, spec, rows, timeout_per_row=60, max_candidates=0))
    return idx, ans, spec


@pytest.mark.parametrize("lib", ["xgboost", "sklearn-rf"])
def test_multiclass_solver_path_agrees_with_brute_force(lib):
    ens, X = TRAINERS[lib](3)
    vary = [ens.feature_names[f] for f in (1, 3)]
    expected = brute_force_flippable(ens, X, vary, Target(Gap(1.2)))
    rows = [i for i, e in enumerate(expected) if e][:3] + [
        i for i, e in enumerate(expected) if not e
    ][:3]
    idx, ans, _ = _solver_answers(ens, X, vary, 1.2, rows=rows)
    assert [s == FLIPPABLE for s in ans.status] == [expected[i] for i in idx]
    assert "unknown" not in ans.status


def test_multiclass_solver_path_named_class_agrees_with_brute_force():
    ens, X = _xgb(3)
    vary = [ens.feature_names[f] for f in (2, 3)]
    expected = brute_force_flippable(ens, X, vary, Target(Gap(1.0), cls=2))
    rows = [i for i, e in enumerate(expected) if e][:3] + [
        i for i, e in enumerate(expected) if not e
    ][:3]
    idx, ans, _ = _solver_answers(ens, X, vary, 1.0, classes="2", rows=rows)
    assert [s == FLIPPABLE for s in ans.status] == [expected[i] for i in idx]


def test_multiclass_solver_x2_differs_from_row_only_on_F():
    ens, X = _xgb(3)
    vary = [ens.feature_names[1]]
    idx, ans, _ = _solver_answers(ens, X, vary, 1.0, rows=range(8))
    hit = [i for i, s in enumerate(ans.status) if s == FLIPPABLE]
    assert hit
    for i in hit:
        keep = [f for f in range(ens.n_features) if f != 1]
        assert np.array_equal(ans.x2[i, keep], X[idx[i], keep])


def test_audit_with_two_jobs_gives_the_answers_of_one_job():
    ens = load_model(BC_MODEL, details=BC_DETAILS)
    df = _breast_cancer_frame(ens).head(40)
    one = audit(ens, df, ["worst_texture"], gap=0.1)
    two = audit(ens, df, ["worst_texture"], gap=0.1, jobs=2)
    pd.testing.assert_frame_equal(one, two)


def test_a_failed_block_comes_back_unknown_with_its_reason():
    from treesens.questions.audit import answer_blocks, make_spec, make_target
    from treesens.questions.executors import Failure

    class Failing:
        workers = 2

        def run(self, fn, shared, items):
            for i, _ in enumerate(items):
                yield i, Failure("its worker process died (twice)")

    ens = load_model(BC_MODEL, details=BC_DETAILS)
    ds = _dataset(ens, _breast_cancer_frame(ens)[ens.feature_names].to_numpy()[:6])
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1))
    out = list(answer_blocks(ens, ds, spec, np.arange(6), 3, executor=Failing()))
    assert sorted(int(r) for idx, _ in out for r in idx) == list(range(6))
    assert all(s == "unknown" for _, ans in out for s in ans.status)
    assert all("task failed" in ans.note for _, ans in out)


def test_cli_two_jobs_write_every_row_once_to_out(tmp_path):
    data = _bc_csv(tmp_path)
    out = tmp_path / "a.jsonl"
    base = ["audit", BC_MODEL, "--data", data, "--vary", "worst_radius"]
    p = treesens_here(*base, "--jobs", "2", "--out", out)
    assert p.returncode == 0, p.stderr
    rows = sorted(json.loads(x)["row"] for x in out.read_text().splitlines())
    assert rows == list(range(30))
    one = treesens_here(*base, "--json")
    by_row = {d["row"]: d["status"] for d in json_lines(one.stdout)}
    assert {
        json.loads(x)["row"]: json.loads(x)["status"] for x in out.read_text().splitlines()
    } == by_row


def test_cli_unknown_executor_exits_2(tmp_path):
    data = _bc_csv(tmp_path)
    p = treesens_here(
        "audit", BC_MODEL, "--data", data, "--vary", "worst_radius", "--executor", "nosuch"
    )
    assert p.returncode == 2


def test_wilson_interval_of_no_successes_starts_at_exactly_zero():
    from treesens.questions.audit import wilson

    assert wilson(0, 200)[0] == 0.0
    assert wilson(200, 200)[1] == 1.0


def test_a_row_outside_its_declared_bounds_is_unknown_on_the_solver_path_not_an_error():
    from treesens.questions.audit import answer_blocks, make_spec, make_target
    from treesens.readers.data import load_data

    ens = load_model(BC_MODEL, details=BC_DETAILS)
    df = _breast_cancer_frame(ens).head(3).copy()
    df.loc[1, "mean_radius"] = 1.0  # below the declared [6.981, 28.11]
    ds = load_data(df, ens)
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1))
    blocks = answer_blocks(ens, ds, spec, np.arange(3), timeout_per_row=60, max_candidates=0)
    [(_, ans)] = list(blocks)
    assert ans.status[1] == "unknown" and "mean_radius" in ans.note
    assert ans.status[0] != "unknown" and ans.status[2] != "unknown"


def test_an_audit_whose_time_limit_leaves_solver_rows_unasked_says_so(monkeypatch):
    from treesens.questions import audit as audit_mod
    from treesens.questions.audit import BUDGET_WHY, answer_blocks, make_spec, make_target
    from treesens.readers.data import load_data

    ens = load_model(BC_MODEL, details=BC_DETAILS)
    ds = load_data(_breast_cancer_frame(ens).head(3), ens)
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1))
    monkeypatch.setattr(audit_mod, "solve_rows", lambda *a, **k: False)  # the limit ran out
    blocks = answer_blocks(ens, ds, spec, np.arange(3), max_candidates=0, deadline=4e9)
    [(_, ans)] = list(blocks)
    assert ans.status == ["unknown"] * 3 and ans.note == BUDGET_WHY


def test_a_bound_just_under_a_float32_threshold_keeps_the_cell_above_it():
    # the data's largest value 1.94 is XGBoost's threshold float32(1.94) = 1.94000006:
    # the row 1.94 lies above it (float32(1.94) is not < it), though its float32 value is
    # past the bound 1.94; the audit crashed on that cell (no admissible value in it)
    xgb = pytest.importorskip("xgboost")
    a = np.repeat([0.0, 1.94], 20)
    b = np.random.default_rng(0).normal(size=40)
    y = (a > 1).astype(int)
    est = xgb.XGBClassifier(n_estimators=2, max_depth=1).fit(np.column_stack([a, b]), y)
    rows = audit(est, pd.DataFrame({"a": a, "b": b, "label": y}), ["a"], gap=0.1)
    assert list(rows["status"]) == ["flippable"] * 40
    assert set(rows["x2_a"][:20]) == {1.94}  # rows at 0 flip to the bound, in that cell


def test_rows_the_solver_answers_come_one_block_each_so_progress_and_out_follow_them():
    from treesens.questions.audit_run import AuditRun, run_audit
    from treesens.questions.audit_spec import make_spec, make_target
    from treesens.readers.data import load_data

    ens = load_model(BC_MODEL)
    ds = load_data(str(REPO / "examples" / "breast_cancer_rows.csv"), ens, "label")
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1, None, None))
    blocks = []
    # max_candidates=1: the enumeration leaves every row to the solver, seconds a row
    run = AuditRun(n_rows=3, timeout_per_row=10, max_candidates=1)
    run_audit(ens, ds, spec, run, on_block=lambda new, answered: blocks.append(len(new)))
    assert blocks == [1, 1, 1]


def _enumerated_blocks(n_rows: int, monkeypatch, visits_per_block=None) -> list[int]:
    from treesens.questions import audit as audit_module
    from treesens.questions.audit_run import AuditRun, run_audit
    from treesens.questions.audit_spec import make_spec, make_target
    from treesens.readers.data import load_data

    ens = load_model(BC_MODEL)
    ds = load_data(str(REPO / "examples" / "breast_cancer_rows.csv"), ens, "label")
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1, None, None))
    if visits_per_block is not None:
        row = audit_module._candidates(ens, spec) * len(ens.trees)  # one row's tree visits
        monkeypatch.setattr(audit_module, "BLOCK_TREE_VISITS", visits_per_block(row))
    blocks = []
    run_audit(
        ens, ds, spec, AuditRun(n_rows=n_rows), on_block=lambda new, _: blocks.append(len(new))
    )
    return blocks


def test_enumerated_rows_come_in_blocks_of_at_most_the_block_s_tree_visits(monkeypatch):
    # churn's 1,000-tree LightGBM (18,288 x2 a row, 0.6 CPU s) said nothing for 250 rows
    assert _enumerated_blocks(5, monkeypatch, lambda row: 2 * row + 1) == [2, 2, 1]


def test_a_row_past_the_block_s_tree_visits_is_a_block_of_its_own(monkeypatch):
    assert _enumerated_blocks(3, monkeypatch, lambda row: row // 2) == [1, 1, 1]


def test_a_small_model_s_enumerated_rows_stay_in_blocks_of_up_to_250(monkeypatch):
    assert _enumerated_blocks(200, monkeypatch) == [200]


def test_a_slow_audits_rate_reads_in_seconds_per_row():
    import time

    from treesens.questions.audit_run import rate_text

    assert "(10.0 s/row, " in rate_text(time.time() - 30, 3, 600, 3)


def test_an_audits_rate_line_says_the_time_its_rows_left_take():
    # was "audit: 5/1409 rows (2 rows/s)" on churn lgbm_t1000_l63: the 11 minutes unsaid
    import time

    from treesens.questions.audit_run import rate_text

    assert rate_text(time.time() - 30, 3, 600, 3).endswith(", about 1h 40m left)")
    assert rate_text(time.time() - 10, 20, 70, 20).endswith("(2.0 rows/s, about 25s left)")


def test_an_audits_last_rate_line_says_nothing_left():
    import time

    from treesens.questions.audit_run import rate_text

    assert rate_text(time.time() - 10, 70, 70, 70).endswith("(7.0 rows/s)")


def test_an_audit_between_one_and_two_rows_a_second_reads_its_tenths():
    # was "(1 rows/s, ...)" for anything from 1.0 to 1.5 rows a second
    import time

    from treesens.questions.audit_run import rate_text

    assert "(1.4 rows/s, " in rate_text(time.time() - 10, 14, 70, 14)


def test_a_fast_audits_rate_reads_in_whole_rows_a_second():
    import time

    from treesens.questions.audit_run import rate_text

    assert "(250 rows/s, " in rate_text(time.time() - 2, 500, 1000, 500)


class _InProcess:
    """An executor that runs each task here, in order (for what an audit says around it)."""

    workers = 2

    def run(self, fn, shared, items):
        for i, item in enumerate(items):
            yield i, fn(shared, item)


def test_an_audit_on_workers_says_they_are_starting_before_the_first_block():
    from treesens.questions.audit import make_spec, make_target
    from treesens.questions.audit_run import run_audit
    from treesens.questions.audit_spec import AuditRun

    ens = load_model(BC_MODEL, details=BC_DETAILS)
    ds = _dataset(ens, _breast_cancer_frame(ens)[ens.feature_names].to_numpy()[:8])
    spec = make_spec(ens, ds, ["worst_texture"], make_target(ens, 0.1))
    said: list[str] = []
    run = AuditRun(n_rows=8, executor=_InProcess())
    run_audit(ens, ds, spec, run, on_block=lambda *_: said.append("block"), status=said.append)
    assert said[0] == "starting 2 workers (each reads the model once)..."
    assert said[1:] == ["block"] * (len(said) - 1)


def test_summary_of_something_else_than_an_audits_frame_says_what_it_takes():
    from treesens.compiler.errors import InputError

    with pytest.raises(InputError, match="summary takes the DataFrame treesens.audit returns"):
        summary([1, 2])


def test_a_multiclass_audit_is_said_to_ask_a_probability_ratio():
    assert Target(Gap(2.0)).words() == "probability ratio 2 to another class"
    assert Target(Gap(1.5), cls=1).words() == "probability ratio 1.5 to class 1"


def test_a_binary_audit_is_said_to_ask_a_probability_gap():
    assert Target(Gap(0.1)).words() == "prob gap 0.1"
