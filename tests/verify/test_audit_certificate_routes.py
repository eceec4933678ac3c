"""Every way to ask an audit writes its rows' certificates the same way
(questions/audit_certificates.py, as ``treesens audit --certificates``): the API's
``treesens.audit(..., certificates=DIR)``, a ``.sens`` audit block under ``treesens test
--certificates DIR`` (``DIR/NAME.rows/row-N.json``) and ``treesens report
--certificates DIR`` for each protected feature (``DIR/FEATURE.rows``): one file per row
that does not flip, each accepted by the checker, none for a flipped row."""

from __future__ import annotations

from pathlib import Path

import pytest

import treesens
from treesens.interfaces.cli.main import main
from treesens.verify import verify_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL = EXAMPLES / "breast_cancer_xgb.json"
ROWS = EXAMPLES / "breast_cancer_rows.csv"
DETAILS = EXAMPLES / "breast_cancer_details.csv"

pytest.importorskip("xgboost")


def _rows_in(folder: Path) -> set[int]:
    return {int(f.stem[4:]) for f in folder.glob("row-*.json")}


def test_the_api_s_audit_certifies_each_row_that_does_not_flip(tmp_path):
    df = treesens.audit(
        str(MODEL), str(ROWS), ["worst_concave_points"], gap=0.1, limit=12,
        certificates=tmp_path / "certs",
    )  # fmt: skip
    kept = set(df.loc[df["status"] == "not flippable", "row"].astype(int))
    assert kept and len(kept) < 12  # some rows flip
    assert df.attrs["certificates"] == {row: "" for row in sorted(kept)}
    assert _rows_in(tmp_path / "certs") == kept
    assert all(verify_file(f).valid for f in (tmp_path / "certs").glob("*.json"))


def test_the_api_s_audit_refuses_a_certificates_folder_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(treesens.InputError, match="a file, not a folder"):
        treesens.audit(str(MODEL), str(ROWS), ["worst_concave_points"], certificates=tmp_path / "f")


def test_a_sens_audit_block_s_rows_are_certified_under_test_certificates(tmp_path, capsys):
    sens = tmp_path / "c.sens"
    sens.write_text(
        f'model "{MODEL}"\nfeatures from "{DETAILS}"\ndata "{ROWS}"\n'
        "audit concave_rows {\n  vary worst_concave_points\n  gap 0.1\n  limit 12\n"
        "  expect audit flippable <= 100%\n}\n"
    )
    certs = tmp_path / "certs"
    assert main(["test", str(sens), "--certificates", str(certs)]) == 0
    out = capsys.readouterr().out
    folder = certs / "concave_rows.rows"
    kept = _rows_in(folder)
    assert kept and all(verify_file(f).valid for f in folder.glob("*.json"))
    assert f"certificates: {len(kept)} of {len(kept)} rows that do not flip, in {folder}" in out
    df = treesens.audit(str(MODEL), str(ROWS), ["worst_concave_points"], gap=0.1, limit=12)
    assert kept == set(df.loc[df["status"] == "not flippable", "row"].astype(int))


def test_a_report_certifies_each_protected_feature_s_rows_that_do_not_flip(tmp_path):
    from treesens.questions.report import report
    from treesens.views.report_html import render

    rows = tmp_path / "rows.csv"
    rows.write_text("".join(ROWS.read_text().splitlines(keepends=True)[:13]))  # 12 rows
    rep = report(
        str(MODEL), str(rows), label="label", features=["worst_concave_points"],
        protected=["worst_concave_points"], gap=0.1, budget=60, certificates=tmp_path / "certs",
        certify_rows=12, progress=False,
    )  # fmt: skip  # every row asked: a cold compile under load can spend the budget
    (finding,) = rep.protected
    folder = tmp_path / "certs" / "worst_concave_points.rows"
    assert finding.audit_certificates and set(finding.audit_certificates) == _rows_in(folder)
    assert all(verify_file(f).valid for f in folder.glob("*.json"))
    n = len(finding.audit_certificates)
    assert f"{n} of the {n} rows that do not flip are certified" in render(rep)
