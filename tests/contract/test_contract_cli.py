"""`treesens test`: the shipped contract passes on the shipped model and fails on the deep
one, naming the pair; exit codes 0 / 1 / 2; the JUnit XML's shape; --model, --data,
--certificates; an UNKNOWN fails unless the file allows it."""

from __future__ import annotations

import json
import math
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from treesens.interfaces.cli.main import main
from treesens.language import load_queries
from treesens.tests.conftest import treesens_here
from treesens.tests.contract.junit_schema import schema_problems

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONTRACT = EXAMPLES / "contract.sens"
DEEP = EXAMPLES / "breast_cancer_deep_xgb.json"
BC = EXAMPLES / "breast_cancer_xgb.json"
BC_DETAILS = EXAMPLES / "breast_cancer_details.csv"

pytest.importorskip("xgboost")


def _run(tmp_path, *args):
    xml = tmp_path / "out.xml"
    proc = treesens_here("test", CONTRACT, "--junit", xml, *args, cwd=tmp_path)
    return proc, ET.parse(xml).getroot()


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("shipped"))


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("deep"), "--model", DEEP)


def _expectations() -> int:
    return len(load_queries(CONTRACT, load_model=True).expectations)


def test_the_shipped_model_meets_the_shipped_contract(shipped):
    proc, root = shipped
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert root.get("failures") == "0" and root.get("errors") == "0"


def test_with_junit_stdout_holds_only_the_summary_line(shipped):
    proc, _ = shipped
    (line,) = proc.stdout.splitlines()
    assert line.startswith(f"{CONTRACT}: ok: {_expectations()} expectations")


def test_the_junit_report_has_one_testcase_per_expectation(shipped):
    _, root = shipped
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == _expectations() == int(suite.get("tests")) == int(root.get("tests"))
    assert len({c.get("name") for c in cases}) == len(cases)


def test_the_junit_report_has_the_attributes_ci_systems_read(shipped):
    _, root = shipped
    assert root.tag == "testsuites"
    for el in [root, *root.findall("testsuite")]:
        for attr in ("tests", "failures", "errors"):
            assert int(el.get(attr)) >= 0
        assert float(el.get("time")) > 0
    assert int(root.find("testsuite").get("skipped")) == 0
    for case in root.iter("testcase"):
        assert case.get("classname") == "contract" and float(case.get("time")) >= 0
        assert case.find("system-out").text  # the proof or the pair behind the PASS


def test_the_testcase_names_are_the_query_and_the_expectation(shipped):
    _, root = shipped
    names = [c.get("name") for c in root.iter("testcase")]
    assert "radius_error: expect insensitive" in names
    assert "standard_errors/texture_error: expect max gap <= 0.1" in names
    assert "worst_texture: expect audit flippable <= 5% by label" in names


@pytest.mark.parametrize("model", ["shipped", "deep"])
def test_the_junit_report_is_valid_against_the_common_junit_schema(model, request):
    _, root = request.getfixturevalue(model)
    assert schema_problems(ET.tostring(root, encoding="unicode")) == []


def test_the_junit_report_has_a_duration_per_testcase_within_the_suites(shipped):
    _, root = shipped
    (suite,) = root.findall("testsuite")
    times = [float(c.get("time")) for c in suite.iter("testcase")]
    assert all(t > 0 for t in times)
    assert sum(times) <= float(suite.get("time")) + 1e-3 * len(times)


def test_the_deep_model_fails_the_contract_with_exit_code_1(deep):
    proc, root = deep
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert root.get("failures") == "1"


def test_the_failure_names_the_replay_checked_pair(deep):
    _, root = deep
    (failed,) = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed.get("name") == "radius_error: expect insensitive"
    failure = failed.find("failure")
    assert failure.get("type") == "expectation"
    assert "replay-checked pair: x1.radius_error = " in failure.get("message")
    assert "x2.radius_error = " in failure.get("message")


def test_with_junit_a_failing_line_goes_to_stderr(deep):
    proc, _ = deep
    assert "FAIL    radius_error: expect insensitive" in proc.stderr
    assert "FAIL" not in proc.stdout.replace("FAILED", "")


def test_without_junit_every_expectation_has_a_line(tmp_path, capsys):
    assert main(["test", str(CONTRACT), "--query", "radius_error"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("PASS    radius_error: expect insensitive: proven insensitive")
    assert "1 passed" in out[-1]


def test_data_replaces_the_files_data_for_its_audits(tmp_path, capsys):
    rows = tmp_path / "rows.csv"
    lines = (EXAMPLES / "breast_cancer_rows.csv").read_text().splitlines()
    rows.write_text("\n".join(lines[:41]) + "\n")  # the header and 40 rows
    assert main(["test", str(CONTRACT), "--query", "worst_texture", "--data", str(rows)]) == 0
    out = capsys.readouterr().out
    counted = [w for w in out.split(";") if "rows flippable" in w]
    assert sum(int(w.split(" of ")[1].split()[0]) for w in counted) == 40


def test_data_gives_the_bounds_of_a_file_that_takes_them_from_data(tmp_path, capsys):
    # the rows where worst_concave_points >= 0.18: within their range it flips nothing
    rows = (EXAMPLES / "breast_cancer_rows.csv").read_text().splitlines()
    col = rows[0].split(",").index("worst_concave_points")
    high = tmp_path / "high.csv"
    high.write_text("\n".join(r for r in rows if r == rows[0] or float(r.split(",")[col]) >= 0.18))
    body = "query q {\n  vary worst_concave_points\n  gap 0.2\n  expect sensitive\n}\n"
    path = _sens(
        tmp_path, f'data "{EXAMPLES / "breast_cancer_rows.csv"}"\nbounds from data\n{body}'
    )
    assert main(["test", str(path), "--data", str(high)]) == 1
    assert "expect sensitive: proven insensitive at gap 0.2" in capsys.readouterr().out


def test_certificates_of_passing_insensitive_expectations_verify(tmp_path, capsys):
    certs = tmp_path / "certs"
    argv = ["test", str(CONTRACT), "--query", "radius_error", "--certificates", str(certs)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["verify", str(certs / "radius_error.json")]) == 0


def test_a_certificate_comes_from_the_answer_s_own_proof_without_a_second_search(
    tmp_path, capsys, monkeypatch
):
    from treesens.questions import certify

    def second_search(*args, **kwargs):
        raise AssertionError("a second search for a proof the answer recorded")

    monkeypatch.setattr(certify, "pair_tables", second_search)
    certs = tmp_path / "certs"
    argv = ["test", str(CONTRACT), "--query", "radius_error", "--certificates", str(certs)]
    assert main(argv) == 0
    assert f"certificate: {certs / 'radius_error.json'}" in capsys.readouterr().out


def test_the_verbose_answer_of_a_certified_expectation_says_it_was_verified(tmp_path, capsys):
    certs = tmp_path / "certs"
    argv = ["test", str(CONTRACT), "--query", "radius_error", "--certificates", str(certs), "-v"]
    assert main(argv) == 0
    assert f"certified: {certs / 'radius_error.json'}, verified" in capsys.readouterr().out


def test_a_rerun_into_the_same_folder_leaves_no_certificate_of_a_model_it_no_longer_holds_for(
    tmp_path, capsys
):
    """radius_error is proven insensitive on the shipped model, and fails on the deep one:
    the shipped model's certificate does not stay in the folder to verify after it."""
    certs = tmp_path / "certs"
    argv = ["test", str(CONTRACT), "--query", "radius_error", "--certificates", str(certs)]
    assert main(argv) == 0
    assert (certs / "radius_error.json").is_file()
    assert main([*argv, "--model", str(DEEP)]) == 1
    capsys.readouterr()
    assert not (certs / "radius_error.json").exists()


def _sens(tmp_path, body: str) -> Path:
    path = tmp_path / "c.sens"
    path.write_text(f'model "{BC}"\nfeatures from "{BC_DETAILS}"\n{body}')
    return path


def test_certificates_of_passing_max_gap_expectations_verify(tmp_path, capsys):
    body = "sweep errors {\n  vary each of texture_error\n  expect max gap <= 0.1\n}\n"
    certs = tmp_path / "certs"
    assert main(["test", str(_sens(tmp_path, body)), "--certificates", str(certs)]) == 0
    assert "certificate: " in capsys.readouterr().out
    cert = certs / "errors_texture_error.json"
    assert main(["verify", str(cert)]) == 0
    # its proof is at the smallest gap above the limit: no pair's gap exceeds 0.1
    assert json.loads(cert.read_text())["question"]["claim"]["gap"] == math.nextafter(0.1, 1)


def test_an_unknown_fails_by_default(tmp_path, capsys):
    path = _sens(tmp_path, "query t {\n  vary radius_error\n  gap 0.1\n  expect insensitive\n}\n")
    assert main(["test", str(path), "--timeout", "0.001"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("UNKNOWN t: expect insensitive: unknown: the time limit")
    assert "1 unknown" in out


def test_an_unknown_the_file_allows_passes_as_skipped(tmp_path, capsys):
    body = "query t {\n  vary radius_error\n  gap 0.1\n  expect insensitive or unknown\n}\n"
    path, xml = _sens(tmp_path, body), tmp_path / "o.xml"
    assert main(["test", str(path), "--timeout", "0.001", "--junit", str(xml)]) == 0
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite.get("skipped") == "1" and suite.get("failures") == "0"
    assert suite.find("testcase/skipped") is not None


def test_an_unknown_is_a_failure_of_type_unknown_in_junit(tmp_path):
    path = _sens(tmp_path, "query t {\n  vary radius_error\n  gap 0.1\n  expect insensitive\n}\n")
    xml = tmp_path / "o.xml"
    assert main(["test", str(path), "--timeout", "0.001", "--junit", str(xml)]) == 1
    failure = ET.parse(xml).getroot().find("testsuite/testcase/failure")
    assert failure.get("type") == "unknown" and "time limit" in failure.get("message")


def test_a_file_that_expects_nothing_is_bad_input(tmp_path, capsys):
    path = _sens(tmp_path, "query t {\n  vary radius_error\n}\n")
    assert main(["test", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expects nothing" in err


def test_a_missing_model_is_bad_input(tmp_path, capsys):
    assert main(["test", str(CONTRACT), "--model", str(tmp_path / "nope.json")]) == 2
    assert "--model" in capsys.readouterr().err


def test_a_model_from_the_model_flag_that_does_not_load_is_placed_at_the_flag(tmp_path, capsys):
    bad = tmp_path / "bad.pkl"
    bad.write_text("not a pickle\n")
    assert main(["test", str(CONTRACT), "--model", str(bad)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"treesens: error: --model: cannot load the model: {bad}: ")


@pytest.fixture
def pickled_model(tmp_path):
    """A scikit-learn forest pickled with joblib, over the contract's features."""
    joblib = pytest.importorskip("joblib")
    ensemble = pytest.importorskip("sklearn.ensemble")
    import pandas as pd

    names = pd.read_csv(BC_DETAILS)["name"].tolist()
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, (60, len(names))), columns=names)
    y = (X[names[0]] > 0.5).astype(int)
    est = ensemble.RandomForestClassifier(n_estimators=2, max_depth=2, random_state=0)
    path = tmp_path / "forest.pkl"
    joblib.dump(est.fit(X, y), path)
    return path


def test_a_pickled_model_from_the_model_flag_is_refused_without_trust_pickle(pickled_model, capsys):
    assert main(["test", str(CONTRACT), "--model", str(pickled_model)]) == 2
    assert "not loaded: a pickled model" in capsys.readouterr().err


def test_trust_pickle_lets_the_test_run_on_a_pickled_model(pickled_model, capsys):
    argv = ["test", str(CONTRACT), "--model", str(pickled_model), "--trust-pickle"]
    assert main(argv) in (0, 1), capsys.readouterr().err  # every expectation answered


def test_data_from_the_data_flag_that_cannot_be_used_is_placed_at_the_flag(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("mean_radius,label\n")
    assert main(["test", str(CONTRACT), "--data", str(empty)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("treesens: error: --data: cannot use the data: ")


def test_an_audit_counted_by_a_column_the_data_flag_s_file_lacks_names_that_file(tmp_path, capsys):
    rows = (EXAMPLES / "breast_cancer_rows.csv").read_text().replace(",label\n", ",target\n", 1)
    other = tmp_path / "target.csv"
    other.write_text(rows)
    assert main(["test", str(CONTRACT), "--data", str(other)]) == 2
    line = capsys.readouterr().err.splitlines()[0]
    assert line.endswith(
        f"by 'label': not a column of the data {other} (its columns other than the "
        "model's features: target)"
    )


def test_a_bad_expectation_is_bad_input_at_its_place(tmp_path, capsys):
    path = _sens(tmp_path, "query t {\n  vary radius_error\n  expect sometimes\n}\n")
    assert main(["test", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"{path}:5:10: unknown expectation 'sometimes'")


def test_the_contract_runs_from_a_copy_of_examples(tmp_path):
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    proc = treesens_here("test", "contract.sens", "--query", "radius_error", cwd=copy)
    assert proc.returncode == 0, proc.stderr


def test_a_block_that_expects_nothing_asked_by_name_is_bad_input(tmp_path, capsys):
    body = (
        "query t {\n  vary radius_error\n}\nquery u {\n  vary radius_error\n  expect sensitive\n}\n"
    )
    assert main(["test", str(_sens(tmp_path, body)), "--query", "t"]) == 2
    assert "this block expects nothing" in capsys.readouterr().err


def _killed_after(n: int, monkeypatch) -> None:
    """The contract's run ends as if killed once ``n`` expectations have finished."""
    from treesens.interfaces.cli import contract_cmd

    real = contract_cmd.run_contract

    def killed(sf, **kw):
        seen = kw["on_outcome"]
        done = []

        def one_more(out):
            seen(out)
            done.append(out)
            if len(done) == n:
                raise KeyboardInterrupt

        return real(sf, **{**kw, "on_outcome": one_more})

    monkeypatch.setattr(contract_cmd, "run_contract", killed)


def test_a_killed_contract_run_leaves_the_junit_report_of_what_finished(tmp_path, monkeypatch):
    _killed_after(2, monkeypatch)
    xml = tmp_path / "out.xml"
    assert main(["test", str(CONTRACT), "--junit", str(xml)]) == 130
    text = xml.read_text(encoding="utf-8")
    assert len(ET.fromstring(text).findall(".//testcase")) == 2
    assert schema_problems(text) == []


def test_a_contract_run_killed_before_any_expectation_leaves_an_empty_junit_report(
    tmp_path, monkeypatch
):
    from treesens.interfaces.cli import contract_cmd

    def killed(sf, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(contract_cmd, "run_contract", killed)
    xml = tmp_path / "out.xml"
    assert main(["test", str(CONTRACT), "--junit", str(xml)]) == 130
    text = xml.read_text(encoding="utf-8")
    assert ET.fromstring(text).findall(".//testcase") == [] and schema_problems(text) == []


def test_a_folder_given_as_the_model_is_named_a_folder(tmp_path, capsys):
    code = main(["test", str(CONTRACT), "--model", str(tmp_path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert err.strip() == f"treesens: error: --model {tmp_path}: a folder, not a file"


def test_with_junit_a_certificate_not_written_is_said_on_the_terminal_without_verbose(
    tmp_path, capsys, monkeypatch
):
    from treesens.interfaces import sens_contract

    why = "no certificate: a reason the checker gives"
    monkeypatch.setattr(sens_contract, "_certificate", lambda *a, **k: why)
    certs, xml = tmp_path / "certs", tmp_path / "out.xml"
    argv = ["test", str(CONTRACT), "--query", "radius_error", "--certificates", str(certs)]
    assert main([*argv, "--junit", str(xml)]) == 0
    err = capsys.readouterr().err
    assert f"radius_error: expect insensitive: certificate: {why}" in err


def test_with_junit_a_certificate_written_adds_no_line(tmp_path, capsys):
    certs, xml = tmp_path / "certs", tmp_path / "out.xml"
    argv = ["test", str(CONTRACT), "--query", "radius_error", "--certificates", str(certs)]
    assert main([*argv, "--junit", str(xml)]) == 0
    assert "certificate" not in capsys.readouterr().err
    assert (certs / "radius_error.json").is_file()


BUDGETED = (
    "sweep errors {\n  vary each of texture_error, smoothness_error\n  budget 10s\n"
    "  expect max gap <= 0.1\n}\n"
)


def test_a_sweep_with_a_budget_whose_expectations_are_asked_is_bad_input(tmp_path, capsys):
    assert main(["test", str(_sens(tmp_path, BUDGETED))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sweep errors: budget 10s shares seconds out" in err
