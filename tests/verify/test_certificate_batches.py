"""Many certificates of one model in one process (an audit's rows, ``treesens verify
DIR``): the checker reads the model file once for all of them, keyed on the hash of the
bytes it reads (verify/held.py), so a file changed between two verifications is read
again and a certificate of its old bytes rejected; ``treesens verify`` takes several
certificates or a folder, one line each and a summary, exit 1 if any is rejected."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from treesens.questions.audit import answer_blocks, make_spec, make_target
from treesens.questions.audit_certificates import certify_rows
from treesens.readers.data import load_data
from treesens.readers.load import load_model
from treesens.tests.conftest import treesens_here
from treesens.tests.verify.tampering import drop_last_box
from treesens.verify import check, held, verify_file

GAP = 0.1
ROWS = 12


def _model(folder: Path, trees: int) -> Path:
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 4))
    y = (2 * X[:, 0] + X[:, 1] + 0.5 * X[:, 3] > 0).astype(int)
    path = folder / f"m{trees}.json"
    xgb.XGBClassifier(n_estimators=trees, max_depth=3, learning_rate=0.5).fit(X, y).save_model(path)
    return path


def _audited(path: Path):
    """The audit of ``path``'s rows varying feature 1: the model, its spec, the rows and
    their answer lines."""
    ens = load_model(path)
    X = np.random.default_rng(1).normal(size=(ROWS, 4))
    ds = load_data(pd.DataFrame(X, columns=ens.feature_names), ens)
    spec = make_spec(ens, ds, [ens.feature_names[1]], make_target(ens, GAP))
    [(_, ans)] = list(answer_blocks(ens, ds, spec, np.arange(ROWS)))
    lines = [
        {"row": i, "status": "insensitive" if s == "not flippable" else s, "decision": d}
        for i, (s, d) in enumerate(zip(ans.status, ans.decision))
    ]
    return ens, spec, X, lines


def _certify(path: Path, folder: Path) -> list[Path]:
    """The certificates of the audit's rows of ``path`` that do not flip (varying
    feature 1), written into ``folder``."""
    ens, spec, X, lines = _audited(path)
    outcome = certify_rows(ens, spec, X, lines, folder, path, 30.0)
    assert len(outcome) >= 3 and not any(outcome.values())
    return [folder / f"row-{row}.json" for row in outcome]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A model file and the certificates of its rows that do not flip."""
    folder = tmp_path_factory.mktemp("batches")
    path = _model(folder, 12)
    return path, _certify(path, folder / "certs")


@pytest.fixture
def reads(monkeypatch):
    """The model files the checker reads (its reader, and the library's scores), from
    no reading held."""
    held.HELD.clear()
    out: list[str] = []
    for name in ("read_model", "library_raw"):
        real = getattr(check, name)

        def counted(path, *a, _real=real, _name=name, **k):
            out.append(_name)
            return _real(path, *a, **k)

        monkeypatch.setattr(check, name, counted)
    yield out
    held.HELD.clear()


def test_verifying_two_certificates_of_one_model_reads_it_once(written, reads):
    _, certs = written
    assert all(verify_file(c).valid for c in certs[:2])
    assert reads == ["read_model", "library_raw"]


def test_an_audit_checks_its_rows_certificates_reading_the_model_once(written, reads, tmp_path):
    path, certs = written
    assert len(_certify(path, tmp_path)) == len(certs)
    assert reads == ["read_model", "library_raw"]


def test_a_model_file_changed_between_two_verifications_is_read_again(written, reads, tmp_path):
    path, certs = written
    model = tmp_path / "m.json"
    shutil.copyfile(path, model)
    old = _certify(model, tmp_path / "old")[0]
    assert verify_file(old).valid
    _model(tmp_path, 13).replace(model)  # other trees at the same path
    stale = verify_file(old)
    assert not stale.valid and "is not the model the certificate was written for" in stale.message
    new = _certify(model, tmp_path / "new")[0]
    assert verify_file(new).valid
    assert reads.count("read_model") == 2


def test_a_file_that_changes_while_it_is_read_fails_the_certificate_and_is_not_held(
    written, reads, tmp_path, monkeypatch
):
    path, certs = written
    cert = tmp_path / "c.json"  # the certificate, naming a copy of the model
    doc = json.loads(certs[0].read_text())
    doc["model"]["file"] = str(tmp_path / "m.json")
    cert.write_text(json.dumps(doc))
    shutil.copyfile(path, tmp_path / "m.json")
    real = check.read_model

    def changing(p, *a, **k):
        model = real(p, *a, **k)
        Path(p).write_bytes(Path(p).read_bytes() + b" ")  # while the checker reads it
        return model

    monkeypatch.setattr(check, "read_model", changing)
    verdict = verify_file(cert)
    assert not verdict.valid and "changed while the checker read it" in verdict.message
    shutil.copyfile(path, tmp_path / "m.json")
    monkeypatch.setattr(check, "read_model", real)
    assert verify_file(cert).valid  # read again: the reading of changed bytes not kept


def test_the_readings_of_at_most_two_model_files_are_held(tmp_path):
    h = held.Held()
    files = []
    for k in range(3):
        p = tmp_path / f"f{k}"
        p.write_bytes(bytes([k]))
        files.append((held.file_hash(p), p))
    for digest, p in [*files, files[0]]:
        h.get(digest, p, "model", lambda p=p: p.name)
    assert h.reads == 4  # the first read again, let go for the third


def test_verify_of_a_folder_prints_a_line_per_certificate_and_a_summary(written):
    _, certs = written
    p = treesens_here("verify", certs[0].parent)
    lines = p.stdout.splitlines()
    assert p.returncode == 0
    assert [ln.split(": ")[0:2] for ln in lines[:-1]] == [[str(c), "VALID"] for c in certs]
    assert lines[-1] == f"{len(certs)} certificates: {len(certs)} valid"


def test_verify_of_several_certificates_exits_1_when_one_is_rejected(written, tmp_path):
    _, certs = written
    doc = json.loads(certs[0].read_text())
    drop_last_box(doc)
    doc["model"]["file"] = str(certs[0].parent / doc["model"]["file"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    p = treesens_here("verify", certs[1], bad)
    assert p.returncode == 1
    assert p.stdout.splitlines()[1].startswith(f"{bad}: INVALID: ")
    assert p.stdout.splitlines()[-1] == "2 certificates: 1 valid, 1 invalid"


def test_verify_of_a_folder_with_a_file_that_is_no_certificate_exits_2(written, tmp_path):
    _, certs = written
    shutil.copyfile(certs[0], tmp_path / "row-0.json")
    (tmp_path / "notes.json").write_text("{}")
    p = treesens_here("verify", tmp_path)
    assert p.returncode == 2
    assert p.stdout.splitlines()[0].startswith(f"{tmp_path / 'notes.json'}: NOT CHECKED: not a")
    assert p.stdout.splitlines()[-1] == "2 certificates: 1 valid, 1 not checked"


def test_verify_of_a_folder_with_no_certificates_is_one_line_and_exit_2(tmp_path):
    p = treesens_here("verify", tmp_path)
    assert p.returncode == 2
    assert (
        p.stderr.strip()
        == f"treesens: error: {tmp_path}: a folder with no certificates (*.json) in it"
    )


def test_verify_of_a_folder_checks_the_certificates_of_its_subfolders_too(written, tmp_path):
    """``treesens test --certificates DIR`` and ``report --certificates DIR`` write an
    audit's rows into ``DIR/NAME.rows/``: ``treesens verify DIR`` checks those too, the
    folder's own files first."""
    _, certs = written
    shutil.copyfile(certs[0], tmp_path / "query.json")
    (tmp_path / "audit.rows").mkdir()
    for c in certs[1:3]:
        shutil.copyfile(c, tmp_path / "audit.rows" / c.name)
    p = treesens_here("verify", tmp_path)
    lines = p.stdout.splitlines()
    assert p.returncode == 0
    checked = [tmp_path / "query.json"] + [tmp_path / "audit.rows" / c.name for c in certs[1:3]]
    assert [ln.split(": ")[0:2] for ln in lines[:-1]] == [[str(c), "VALID"] for c in checked]
    assert lines[-1] == "3 certificates: 3 valid"


def test_verify_of_a_folder_checks_a_certificate_named_json_in_capitals(written, tmp_path):
    # check --certificate C.JSON writes one: verify DIR finds it
    _, certs = written
    shutil.copyfile(certs[0], tmp_path / "QUERY.JSON")
    p = treesens_here("verify", tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "1 certificate: 1 valid"


def test_certifying_an_audit_s_rows_again_removes_the_files_of_rows_it_no_longer_certifies(
    written, tmp_path
):
    """A folder an audit of another model (or another gap) wrote: a row the audit answers
    now and does not certify (it flips now) keeps no earlier certificate to verify."""
    path, certs = written
    ens, spec, X, lines = _audited(path)
    folder = tmp_path / "rows"
    folder.mkdir()
    for i in range(ROWS):  # every row certified by an earlier audit
        shutil.copyfile(certs[0], folder / f"row-{i}.json")
    outcome = certify_rows(ens, spec, X, lines, folder, path, 30.0)
    certified = {f"row-{row}.json" for row, why in outcome.items() if not why}
    assert len(certified) < ROWS  # some rows flip
    assert {f.name for f in folder.iterdir()} == certified
