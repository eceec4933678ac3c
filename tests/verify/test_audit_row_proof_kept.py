"""A row past the enumeration that the audit's box search proves not flippable is
certified from the proof that search recorded as it answered the row, with no second
search (questions/audit_solve.keeping_row_proofs): breast cancer's XGBoost model, five
features varied (1.2 million cells of F, past compiler.audit.MAX_CANDIDATES), 12 rows at
gap 0.45, of which 5 do not flip; every certificate still verifies. So does a ``.sens``
audit block under ``treesens test --certificates`` (interfaces/sens_contract.py), and an
audit whose blocks run on two workers (``jobs=2``), which send their proofs back with
their answers (RowAnswers.proofs). A workers' certificate is refused by verify with x1
moved to a flipped row, x2 moved off the row (outside F, or its range on F), a proof
step dropped or the claim's gap lowered (a stronger claim); with the gap raised it still
verifies, and says so: no x2 reaches that larger gap, a weaker claim its proof holds."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import treesens
from treesens.questions import audit_certificates
from treesens.tests.verify.tampering import claiming_gap, drop_last_box, tampered
from treesens.verify import verify_file

pytest.importorskip("xgboost")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODEL, ROWS = EXAMPLES / "breast_cancer_xgb.json", EXAMPLES / "breast_cancer_rows.csv"
VARY = ["mean_texture", "worst_area", "area_error", "worst_texture", "worst_concave_points"]


def _audit(folder, **jobs):
    """The API's audit with certificates, the certificates' own searches counted."""
    searches = []
    search = audit_certificates.certify
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(
            audit_certificates, "certify", lambda *a, **k: searches.append(1) or search(*a, **k)
        )
        df = treesens.audit(
            str(MODEL), str(ROWS), VARY, gap=0.45, limit=12, certificates=folder, **jobs
        )
    return df, folder, searches


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    return _audit(tmp_path_factory.mktemp("kept"))


@pytest.fixture(scope="module")
def audited_on_workers(tmp_path_factory):
    return _audit(tmp_path_factory.mktemp("workers"), jobs=2)


def test_the_rows_are_answered_by_the_box_search(audited):
    df, _, _ = audited
    assert (df.status == "not flippable").sum() >= 2


def test_a_row_the_box_search_proved_is_certified_with_no_second_search(audited):
    df, _, searches = audited
    outcome = df.attrs["certificates"]
    assert len(outcome) == (df.status == "not flippable").sum()
    assert all(why == "" for why in outcome.values()) and searches == []


def test_rows_answered_on_workers_are_certified_from_their_proofs_with_no_second_search(
    audited_on_workers,
):
    df, _, searches = audited_on_workers
    outcome = df.attrs["certificates"]
    assert (df.status == "not flippable").sum() >= 2
    assert len(outcome) == (df.status == "not flippable").sum()
    assert all(why == "" for why in outcome.values()) and searches == []


def test_each_certificate_from_a_workers_proof_verifies(audited_on_workers):
    _, folder, _ = audited_on_workers
    files = sorted(folder.glob("row-*.json"))
    assert files and all(verify_file(f).valid for f in files)


def test_each_certificate_from_a_kept_proof_verifies(audited):
    _, folder, _ = audited
    files = sorted(folder.glob("row-*.json"))
    assert files and all(verify_file(f).valid for f in files)


def test_the_audit_command_certifies_from_the_answers_own_proofs(tmp_path):
    from treesens.tests.conftest import treesens_here

    p = treesens_here(
        "audit", MODEL, "--data", ROWS, "--vary", ",".join(VARY), "--gap", "0.45",
        "--limit", "12", "--json", "--certificates", tmp_path / "certs",
    )  # fmt: skip
    kept = [
        d["row"] for d in map(json.loads, p.stdout.splitlines()) if d["status"] == "insensitive"
    ]
    written = [line for line in p.stderr.splitlines() if line.startswith("row ")]
    assert p.returncode == 0 and kept and len(written) == len(kept)
    assert all("the answer's own proof" in line for line in written)


def test_a_sens_audit_block_certifies_from_the_answers_own_proofs(tmp_path, monkeypatch, capsys):
    from treesens.interfaces.cli.main import main

    searches = []
    search = audit_certificates.certify
    monkeypatch.setattr(
        audit_certificates, "certify", lambda *a, **k: searches.append(1) or search(*a, **k)
    )
    sens = tmp_path / "c.sens"
    sens.write_text(
        f'model "{MODEL}"\nfeatures from "{EXAMPLES / "breast_cancer_details.csv"}"\n'
        f'data "{ROWS}"\naudit five {{\n  vary {", ".join(VARY)}\n  gap 0.45\n  limit 12\n'
        "  expect audit flippable <= 100%\n}\n"
    )
    assert main(["test", str(sens), "--certificates", str(tmp_path / "certs")]) == 0
    written = list((tmp_path / "certs" / "five.rows").glob("row-*.json"))
    assert len(written) >= 2 and searches == []
    assert f"certificates: {len(written)} of {len(written)} rows" in capsys.readouterr().out


def _workers_certificate(audited_on_workers) -> tuple[Path, pd.Series]:
    """The workers' certificate of most proof steps (a split proof), and a flipped row."""
    df, folder, _ = audited_on_workers
    files = sorted(folder.glob("row-*.json"))
    steps = {f: len(json.loads(f.read_text())["parts"][0]["proof"]) for f in files}
    cert = max(files, key=steps.get)
    assert steps[cert] > 1 and verify_file(cert).valid
    flipped = int(df.row[df.status == "flippable"].iloc[0])
    return cert, pd.read_csv(ROWS).iloc[flipped]


def test_a_workers_certificate_with_x1_moved_to_a_flipped_row_is_rejected(
    audited_on_workers, tmp_path
):
    cert, flipped = _workers_certificate(audited_on_workers)

    def move(doc):
        question = doc["question"]
        for name, d in zip(question["features"], question["domain"]):
            for point in (d["x1"],) if "x1" in d else (d,):
                point["lb"] = point["ub"] = float(flipped[name])

    assert not verify_file(tampered(cert, tmp_path, move)).valid


def test_a_workers_certificate_with_x2_moved_off_the_row_outside_F_is_rejected(
    audited_on_workers, tmp_path
):
    cert, flipped = _workers_certificate(audited_on_workers)

    def move(doc):
        question = doc["question"]
        for f, (name, d) in enumerate(zip(question["features"], question["domain"])):
            if "x1" not in d:
                at = float(flipped[name])
                question["domain"][f] = {"x1": d, "x2": {**d, "lb": at, "ub": at}}

    assert not verify_file(tampered(cert, tmp_path, move)).valid


def test_a_workers_certificate_with_x2_s_range_on_F_moved_is_rejected(audited_on_workers, tmp_path):
    cert, _ = _workers_certificate(audited_on_workers)

    def move(doc):
        for d in doc["question"]["domain"]:
            if "x2" in d:
                half = (d["x2"]["ub"] - d["x2"]["lb"]) / 2
                d["x2"]["lb"] += half
                d["x2"]["ub"] += half

    assert not verify_file(tampered(cert, tmp_path, move)).valid


def test_a_workers_certificate_with_a_proof_step_dropped_is_rejected(audited_on_workers, tmp_path):
    cert, _ = _workers_certificate(audited_on_workers)
    verdict = verify_file(tampered(cert, tmp_path, drop_last_box))
    assert not verdict.valid and "open" in verdict.message


def test_a_workers_certificate_claiming_a_lower_gap_is_rejected(audited_on_workers, tmp_path):
    cert, _ = _workers_certificate(audited_on_workers)
    assert not verify_file(tampered(cert, tmp_path, claiming_gap(0.2))).valid


def test_a_workers_certificate_claiming_a_higher_gap_verifies_that_weaker_claim(
    audited_on_workers, tmp_path
):
    cert, _ = _workers_certificate(audited_on_workers)
    verdict = verify_file(tampered(cert, tmp_path, claiming_gap(0.49)))
    assert verdict.valid and "with a gap of 0.49" in verdict.message
