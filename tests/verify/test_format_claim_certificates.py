"""Multiclass and regressor certificates of the formats the checker reads through a module
of their own: HistGradientBoosting (.skops), CatBoost (.cbm), ONNX (boosting and forests
through skl2onnx) and scikit-learn pipelines of scalers. Per format and task, a claim
just above the supremum enumeration finds (tests/verify/claims_oracle.py) gets a
certificate ``treesens verify`` accepts, and every tampered copy is rejected: a box
removed, a bound changed, the claim lowered below the supremum, another model, and (a
pipeline) a changed step."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.conftest import treesens_here
from treesens.tests.verify.claims_oracle import supremum, tiny_model
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file

VARY = ["b"]
FORMATS = ["hgb", "catboost", "onnx", "onnxforest", "pipeline"]
KINDS = [f"{f}-{task}" for f in FORMATS for task in ("multiclass", "regressor")]


def _measure(kind: str) -> tuple[str, tuple | None]:
    return ("change", None) if kind.endswith("regressor") else ("ratio", ("any", "any"))


def _query(kind: str, value: float):
    if kind.endswith("regressor"):
        return make_query(VARY, delta=value, direction="either")
    return make_query(VARY, gap=value, classes=("any", "any"))


# kind -> certified's tuple: a test parametrizing ``certified`` indirectly (below) gets a
# fixture of its own, which would certify its kind again (3.5 s a pipeline)
_CERTIFIED: dict[str, tuple] = {}


@pytest.fixture(scope="module", params=KINDS)
def certified(request, tmp_path_factory):
    """(kind, model path, supremum, certificate) of the claim 1.3 times the supremum
    (a ratio: of its distance above 1), made once per kind in this module."""
    kind = request.param
    if kind not in _CERTIFIED:
        _CERTIFIED[kind] = _certify(kind, tmp_path_factory.mktemp(kind))
    return _CERTIFIED[kind]


def _certify(kind: str, folder: Path) -> tuple:
    path = tiny_model(kind, folder)
    ens = treesens.load_model(str(path))
    sup = supremum(ens, path, VARY, *_measure(kind))
    value = 1.0 + 1.3 * (sup - 1.0) if kind.endswith("multiclass") else 1.3 * sup
    out = folder / "certificate.json"
    done = certify(ens, _query(kind, value), out, path, 60)
    assert done.written and done.verified, done.message
    return kind, path, sup, out


def _claim_key(kind: str) -> str:
    return "delta" if kind.endswith("regressor") else "gap"


def test_a_multiclass_or_regressor_certificate_verifies_with_treesens_verify(certified):
    p = treesens_here("verify", certified[3])
    assert p.returncode == 0 and "VALID" in p.stdout, p.stdout + p.stderr


def test_the_certificate_names_the_checkers_reader_of_the_format(certified):
    kind, _, _, out = certified
    library = json.loads(out.read_text())["model"]["library"]
    want = {"hgb": "sklearn", "catboost": "catboost", "onnx": "onnx", "onnxforest": "onnx"}
    assert library == want.get(kind.split("-")[0], "sklearn-pipeline")


def test_a_certificate_with_a_box_removed_is_rejected(certified, tmp_path):
    assert not verify_file(tampered(certified[3], tmp_path, drop_last_box)).valid


def test_a_certificate_with_a_bound_changed_is_rejected(certified, tmp_path):
    def lower_a_bound(doc):
        step = next(s for part in doc["parts"] for s in part["proof"] if s[0] == "prune")
        step[2] -= 0.5

    verdict = verify_file(tampered(certified[3], tmp_path, lower_a_bound))
    assert not verdict.valid and "states" in verdict.message


def test_a_certificate_with_its_claim_lowered_below_the_supremum_is_rejected(certified, tmp_path):
    """A claim enumeration shows false: some pair reaches it."""
    kind, _, sup, out = certified
    floor = 1.0 if kind.endswith("multiclass") else 0.0
    lowered = floor + 0.95 * (sup - floor)

    def below(doc):
        doc["question"]["claim"][_claim_key(kind)] = lowered

    assert not verify_file(tampered(out, tmp_path, below)).valid


@pytest.mark.parametrize("certified", [k for k in KINDS if "multiclass" in k], indirect=True)
def test_an_any_certificate_missing_a_class_pair_is_rejected(certified, tmp_path):
    kind, _, _, out = certified

    def drop_a_pair(doc):
        del doc["parts"][-1]

    verdict = verify_file(tampered(out, tmp_path, drop_a_pair))
    assert not verdict.valid and "parts" in verdict.message


def _other_model(kind: str, folder: Path) -> Path:
    """The same kind of model trained on other data."""
    return tiny_model(kind, folder / "other", seed=1)


def test_a_certificate_checked_against_another_model_file_is_rejected(certified, tmp_path):
    kind, _, _, out = certified
    (tmp_path / "other").mkdir()
    verdict = verify_file(out, str(_other_model(kind, tmp_path)))
    assert not verdict.valid and "not the model" in verdict.message


def _naming(certificate: Path, other: Path, folder: Path) -> Path:
    """The certificate rewritten to name ``other`` with its hash: the proof of the first."""

    def name_other(doc):
        doc["model"]["file"] = str(other)
        doc["model"]["sha256"] = hashlib.sha256(other.read_bytes()).hexdigest()

    return tampered(certificate, folder, name_other)


def test_a_certificate_rewritten_to_name_another_model_is_rejected(certified, tmp_path):
    kind, _, _, out = certified
    (tmp_path / "other").mkdir()
    other = _other_model(kind, tmp_path)
    assert not verify_file(_naming(out, other, tmp_path)).valid


@pytest.mark.parametrize("certified", [k for k in KINDS if "pipeline" in k], indirect=True)
def test_a_pipeline_certificate_naming_the_pipeline_with_a_changed_scaler_is_rejected(
    certified, tmp_path
):
    """The pipeline's StandardScaler given other fitted means, the certificate's hash
    updated: the transform no longer confirms the stated maps."""
    import skops.io

    kind, path, _, out = certified
    pipe = skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    scaler = pipe.named_steps["columns"].named_transformers_["std"]
    scaler.mean_ = scaler.mean_ + 0.25
    other = tmp_path / "changed.skops"
    skops.io.dump(pipe, other)
    verdict = verify_file(_naming(out, other, tmp_path))
    assert not verdict.valid and "transform does not confirm" in verdict.message


@pytest.mark.parametrize(
    "kind,asked",
    [
        ("hgb-multiclass", ["--classes", "any,any", "--gap", "1e5"]),
        ("onnx-regressor", ["--delta", "100"]),
    ],
)
def test_cli_check_writes_a_multiclass_or_regressor_certificate_verify_accepts(
    kind, asked, tmp_path
):
    path = tiny_model(kind, tmp_path)
    out = tmp_path / "cli.json"
    p = treesens_here("check", path, "--vary", "b", *asked, "--certificate", out)
    assert p.returncode == 0 and "certified: " in p.stdout, p.stdout + p.stderr
    assert treesens_here("verify", out).returncode == 0


@pytest.mark.parametrize(
    "kind,asked",
    [
        ("pipeline-regressor", {"delta": 100.0}),
        ("pipeline-multiclass", {"gap": 1e5, "classes": ("any", "any")}),
    ],
)
def test_a_report_on_a_pipeline_certifies_its_protected_feature_and_its_max_gap_bound(
    kind, asked, tmp_path
):
    """A pipeline ending in a regressor (a change of 100) or a multiclass classifier (a
    ratio of 1e5 between any two classes), both out of reach: the protected feature's answer and the ranked max
    gap's upper bound both get a verified certificate, and the page says so."""
    import numpy as np

    from treesens.questions.report import report
    from treesens.tests.verify.claims_oracle import data
    from treesens.views.report_html import render

    path = tiny_model(kind, tmp_path)
    X, s = data()
    y = 10 * s if kind.endswith("regressor") else np.digitize(s, [0.6, 1.0])
    rows = tmp_path / "rows.csv"
    X.assign(label=y).to_csv(rows, index=False)
    rep = report(
        str(path), str(rows), label="label", features=["b"], protected=["c"], budget=120,
        certificates=tmp_path / "certs", progress=False, **asked,
    )  # fmt: skip
    (ranked,) = rep.ranking
    (protected,) = rep.protected
    assert ranked.proof.checked and verify_file(ranked.proof.certificate).valid
    assert protected.check.status == "insensitive"
    assert protected.certificate is not None and verify_file(protected.certificate).valid
    assert rep.missing_certificates == []
    assert "certified: " in render(rep)
