"""An audit's row certificates within bounds the user sets, on every route: ``treesens
audit --certify-rows N --certify-timeout S``, ``treesens test FILE.sens --certify-rows N
--certify-timeout S`` for each audit block, and the API's ``certify_rows=`` /
``certify_timeout=`` (a report's: tests/report/test_report_row_certificate_bounds.py).
The line says how many rows were certified of how many, and why the rest were not tried,
with the flag that asks more; a long run says how far it got."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.interfaces.sens_contract import load_contract, run_contract
from treesens.questions import audit_certificates
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
DETAILS = EXAMPLES / "breast_cancer_details.csv"
FEATURE = "worst_concave_points"  # at gap 0.1, 2 of the first 12 rows flip

pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def kept() -> list[int]:
    """The first 12 rows that do not flip, in the data's order (the audit's own answer)."""
    df = treesens.audit(str(MODEL), str(ROWS), [FEATURE], gap=0.1, limit=12)
    return sorted(df.loc[df["status"] == "not flippable", "row"].astype(int))


def _audit_cli(folder, *extra) -> int:
    argv = ["audit", str(MODEL), "--data", str(ROWS), "--vary", FEATURE, "--gap", "0.1"]
    return main([*argv, "--limit", "12", "--json", "--certificates", str(folder), *extra])


@pytest.fixture(scope="module")
def capped_cli(tmp_path_factory, kept):
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("cli") / "certs"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = _audit_cli(folder, "--certify-rows", "3")
    return code, folder, err.getvalue()


def test_audit_certify_rows_certifies_the_first_n_rows_that_do_not_flip(capped_cli, kept):
    code, folder, _ = capped_cli
    written = sorted(int(f.stem[4:]) for f in folder.glob("row-*.json"))
    assert code == 0 and written == kept[:3]


def test_each_row_certificate_written_under_certify_rows_verifies(capped_cli):
    _, folder, _ = capped_cli
    assert all(verify_file(f).valid for f in folder.glob("row-*.json"))


def test_a_row_certificate_written_under_certify_rows_with_x1_moved_is_rejected(
    capped_cli, tmp_path
):
    _, folder, _ = capped_cli

    def move(doc):
        for d in doc["question"]["domain"]:
            for point in (d["x1"],) if "x1" in d else (d,):
                point["lb"] = point["ub"] = point["lb"] + 1.0

    cert = next(iter(folder.glob("row-*.json")))
    assert not verify_file(tampered(cert, tmp_path, move)).valid


def test_audit_s_line_says_how_many_of_how_many_and_the_flag_that_asks_more(capped_cli, kept):
    _, folder, err = capped_cli
    n = len(kept)
    assert (
        f"certificates: 3 of {n} rows that do not flip, in {folder}; {n - 3} not attempted: "
        "only the first 3 are tried (--certify-rows N tries the first N rows)"
    ) in err


def test_audit_certify_timeout_spent_leaves_every_row_untried_saying_why(tmp_path, capsys):
    assert _audit_cli(tmp_path / "certs", "--certify-timeout", "1e-9") == 0
    err = capsys.readouterr().err
    assert "not attempted: the 0.0s given to certificates were spent" in err
    assert "(--certify-timeout S gives them S seconds)" in err
    assert not list((tmp_path / "certs").glob("row-*.json"))


def test_audit_certify_rows_0_is_one_line_and_exit_2(tmp_path, capsys):
    assert _audit_cli(tmp_path / "certs", "--certify-rows", "0") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--certify-rows" in line and "must be at least 1" in line


def _sens(tmp_path) -> Path:
    sens = tmp_path / "c.sens"
    sens.write_text(
        f'model "{MODEL}"\nfeatures from "{DETAILS}"\ndata "{ROWS}"\n'
        f"audit rows12 {{\n  vary {FEATURE}\n  gap 0.1\n  limit 12\n"
        "  expect audit flippable <= 100%\n}\n"
    )
    return sens


def test_test_certify_rows_certifies_the_first_n_rows_of_an_audit_block(tmp_path, kept, capsys):
    certs = tmp_path / "certs"
    assert (
        main(["test", str(_sens(tmp_path)), "--certificates", str(certs), "--certify-rows", "2"])
        == 0
    )
    folder = certs / "rows12.rows"
    assert sorted(int(f.stem[4:]) for f in folder.glob("row-*.json")) == kept[:2]
    n = len(kept)
    assert (
        f"certificates: 2 of {n} rows that do not flip, in {folder}; {n - 2} not attempted: "
        "only the first 2 are tried (--certify-rows N tries the first N rows)"
    ) in capsys.readouterr().out


def test_run_contract_s_certify_timeout_spent_leaves_every_row_untried(tmp_path):
    sf = load_contract(_sens(tmp_path))
    (out,) = run_contract(sf, certificates=tmp_path / "certs", certify_timeout=0)
    assert "not attempted: the 0.0s given to certificates were spent" in out.certificate


def test_run_contract_s_certify_rows_0_is_an_input_error(tmp_path):
    sf = load_contract(_sens(tmp_path))
    with pytest.raises(treesens.InputError, match="certify_rows must be a positive whole"):
        run_contract(sf, certificates=tmp_path / "certs", certify_rows=0)


def test_the_api_s_audit_refuses_certify_rows_0_before_any_row(tmp_path):
    with pytest.raises(treesens.InputError, match="certify_rows must be a positive whole"):
        treesens.audit(str(MODEL), str(ROWS), [FEATURE], certificates=tmp_path, certify_rows=0)


def test_the_api_s_audit_refuses_a_negative_certify_timeout(tmp_path):
    with pytest.raises(treesens.InputError, match="certify_timeout must be a number"):
        treesens.audit(str(MODEL), str(ROWS), [FEATURE], certificates=tmp_path, certify_timeout=-1)


def test_a_long_run_of_row_certificates_says_how_far_it_got(tmp_path, monkeypatch, kept):
    monkeypatch.setattr(audit_certificates, "PROGRESS_SECONDS", 0.0)  # every row is "long"
    lines: list[str] = []
    treesens.audit(
        str(MODEL), str(ROWS), [FEATURE], gap=0.1, limit=12, certificates=tmp_path,
        certify_rows=2, certify_progress=lines.append,
    )  # fmt: skip
    n = len(kept)
    assert f"certificates: 1 of {n} rows that do not flip tried, 1 certified" in lines[1]
