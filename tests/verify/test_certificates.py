"""Certificates of "insensitive": written by the box search, re-checked by the
independent checker (verify/), and rejected when tampered with."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.encode import ensemble_structure
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.conftest import require_shared, run_treesens, treesens_here
from treesens.tests.verify.tampering import tampered, worst_symmetry_certificate
from treesens.verify import CertificateError, verify_file

REPO = Path(__file__).resolve().parents[2]
GAP = 0.3


def _data(seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(400, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] + 0.05 * X[:, 2] > 0.7).astype(int)
    return X, y


@pytest.fixture(scope="module", params=["xgboost", "lightgbm", "sklearn", "sklearn-forest"])
def tiny(request, tmp_path_factory):
    """A small binary model file of each library, and a feature it is insensitive to
    at GAP and that some tree splits on (x2, whose effect is small)."""
    X, y = _data(0)
    path = tmp_path_factory.mktemp(request.param) / "model"
    if request.param == "xgboost":
        import xgboost

        est = xgboost.XGBClassifier(n_estimators=8, max_depth=4).fit(X, y)
        path = path.with_suffix(".json")
        est.get_booster().save_model(path)
    elif request.param == "lightgbm":
        import lightgbm

        est = lightgbm.LGBMClassifier(n_estimators=8, num_leaves=8, verbose=-1).fit(X, y)
        path = path.with_suffix(".txt")
        est.booster_.save_model(path)
    else:
        import skops.io
        from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

        if request.param == "sklearn":
            est = GradientBoostingClassifier(
                n_estimators=8, max_depth=3, learning_rate=0.5, random_state=0
            )
        else:
            est = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0)
        path = path.with_suffix(".skops")
        skops.io.dump(est.fit(X, y), path)
    return str(path)


def _insensitive_feature(path: str) -> str:
    """A feature some tree splits on (one no tree reads is proved by one ``alike`` step,
    which leaves the tampering below no box to remove or bound to change)."""
    ens = treesens.load_model(path)
    read = ensemble_structure(ens).used
    for f in (name for i, name in enumerate(ens.feature_names) if i in read):
        r = treesens.check(ens, vary=[f], gap=GAP, timeout=60)
        if r.status == "insensitive" and r.stats.get("proved_by") == "box search":
            return f
    pytest.fail("no feature of the tiny model is insensitive at the gap")


@pytest.fixture(scope="module")
def certificate(tiny, tmp_path_factory) -> Path:
    ens = treesens.load_model(tiny)
    feature = _insensitive_feature(tiny)
    out = tmp_path_factory.mktemp("cert") / "c.json"
    done = certify(ens, make_query([feature], gap=GAP), out, tiny, 60)
    assert done.written, done.message
    return out


def test_a_certificate_of_the_box_search_verifies(certificate):
    verdict = verify_file(certificate)
    assert verdict.valid, verdict.message


def test_a_certificate_with_a_box_removed_is_rejected(certificate, tmp_path):
    def drop_last_box(doc):
        proof = doc["parts"][0]["proof"]
        del proof[max(i for i, s in enumerate(proof) if s[0] == "prune")]

    assert not verify_file(tampered(certificate, tmp_path, drop_last_box)).valid


def test_a_certificate_with_a_bound_changed_is_rejected(certificate, tmp_path):
    def lower_a_bound(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
        step[2] -= 0.5

    verdict = verify_file(tampered(certificate, tmp_path, lower_a_bound))
    assert not verdict.valid and "states" in verdict.message


@pytest.mark.parametrize("column", [99, -1, "0", 1.0])
def test_a_split_on_no_column_of_the_pair_space_is_rejected_naming_its_step(
    certificate, tmp_path, column
):
    def split_elsewhere(doc):
        proof = doc["parts"][0]["proof"]
        proof[:] = [["split", column, 0.5], *proof, *proof]

    verdict = verify_file(tampered(certificate, tmp_path, split_elsewhere))
    assert not verdict.valid and "a split on no column" in verdict.message


def test_a_certificate_for_a_smaller_gap_is_rejected(certificate, tmp_path):
    def smaller_gap(doc):
        doc["question"]["claim"]["gap"] = 0.0

    assert not verify_file(tampered(certificate, tmp_path, smaller_gap)).valid


def test_a_certificate_checked_against_another_model_is_rejected(certificate, tmp_path):
    other = tmp_path / "other.json"
    other.write_bytes((REPO / "examples" / "breast_cancer_xgb.json").read_bytes())
    verdict = verify_file(certificate, str(other))
    assert not verdict.valid and "not the model" in verdict.message


def test_a_file_that_is_no_certificate_is_a_certificate_error(tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text('{"format": "something else"}')
    with pytest.raises(CertificateError):
        verify_file(bad)


def test_cli_verify_exits_0_on_valid_and_1_on_invalid(certificate, tmp_path):
    assert treesens_here("verify", certificate).returncode == 0

    def smaller_gap(doc):
        doc["question"]["claim"]["gap"] = 0.0

    p = treesens_here("verify", tampered(certificate, tmp_path, smaller_gap))
    assert p.returncode == 1 and "INVALID" in p.stdout


@pytest.mark.parametrize("library", ["xgboost", "xgboost-dump", "lightgbm", "sklearn"])
def test_a_certificate_naming_another_library_is_invalid_in_one_line(
    certificate, tmp_path, library
):
    def another_library(doc):
        named = doc["model"]["library"]
        doc["model"]["library"] = library if library != named else "catboost"

    p = treesens_here("verify", tampered(certificate, tmp_path, another_library))
    assert p.returncode == 1 and p.stdout.startswith("INVALID: cannot check this model: ")
    assert "internal error" not in p.stderr and "Stack trace" not in p.stdout + p.stderr


def test_a_lightgbm_model_whose_tree_sizes_an_edit_made_wrong_is_certified_not_aborted(
    tmp_path,
):
    """LightGBM aborts the process on a file whose tree_sizes line no longer matches its
    trees (a hand-edited leaf); treesens reads such a file, and so does the checker (in
    a process of its own here: an abort would end the test run)."""
    import lightgbm

    X, y = _data(0)
    est = lightgbm.LGBMClassifier(n_estimators=4, num_leaves=4, verbose=-1).fit(X, y)
    text = est.booster_.model_to_string()
    at = text.index("leaf_value=") + len("leaf_value=")
    first, rest = text[at:].split(" ", 1)
    path = tmp_path / "edited.txt"  # the first leaf's value, written with more digits
    path.write_text(text[:at] + format(float(first), ".30g") + " " + rest)
    out = tmp_path / "c.json"
    p = run_treesens("check", path, "--vary", "Column_3", "--gap", "0.45", "--certificate", out)
    assert p.returncode == 0, p.stderr
    assert f"certified: {out}, verified" in p.stdout


def _two_trees_verdict(tmp_path, bounds: str) -> str:
    """The checker's verdict on the two-tree dump's certificate of f1 at margin gap 0.75,
    written under the details ``bounds`` (their rows for f0 and f1)."""
    details = tmp_path / "details.csv"
    details.write_text("feature,name,lb,ub\n" + bounds)
    out = tmp_path / "c.json"
    p = treesens_here(
        "check", REPO / "examples" / "two_trees_dump.json", "--details", details,
        "--vary", "f1", "--margin-gap", "0.75", "--certificate", out,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return verify_file(out).message


def test_the_verdict_names_the_varied_features_and_the_bounds_the_proof_covers(tmp_path):
    """A certificate written with narrower bounds proves less: its verdict says so."""
    verdict = _two_trees_verdict(tmp_path, "0,f0,-inf,inf\n1,f1,3.5,4\n")
    assert "; varying f1 in [3.5, 4]; no pair reaches" in verdict


def test_the_verdict_names_each_bounded_other_feature_and_its_bounds(tmp_path):
    """'the others within their stated bounds' said neither which nor what: a proof over
    a narrowed shared feature reads as one over all its values."""
    said = (
        "varying f1 in [-inf, inf]; the others bounded as the certificate states: f0 in [0, 4.5];"
    )
    assert said in _two_trees_verdict(tmp_path, "0,f0,0,4.5\n1,f1,-inf,inf\n")


@pytest.fixture(scope="module")
def worst_symmetry(tmp_path_factory) -> Path:
    return worst_symmetry_certificate(tmp_path_factory.mktemp("cert"))


def test_the_verdict_counts_the_bounded_other_features_of_a_wide_model(worst_symmetry):
    """Breast cancer's 29 other bounded features, each listed, made a line of 1,300
    characters: the line counts them, Verdict.domain (verify --json) lists them."""
    verdict = verify_file(worst_symmetry)
    said = "the other 29 features within their stated bounds (listed by verify --json)"
    assert said in verdict.message and "mean_radius" not in verdict.message


def test_the_verdicts_domain_holds_each_features_bounds(worst_symmetry):
    verdict = verify_file(worst_symmetry)
    first = verdict.domain[0]
    assert len(verdict.domain) == 30
    assert (first["feature"], first["lb"], first["ub"], first["varied"]) == (
        "mean_radius", 6.981, 28.11, False,
    )  # fmt: skip


def test_the_verdicts_domain_writes_an_infinite_bound_as_text(tmp_path):
    _two_trees_verdict(tmp_path, "0,f0,0,4.5\n1,f1,-inf,inf\n")
    f1 = verify_file(tmp_path / "c.json").domain[1]
    assert (f1["lb"], f1["ub"], f1["varied"]) == ("-inf", "inf", True)


def test_cli_verify_json_is_the_verdict_with_every_features_bounds(worst_symmetry):
    p = treesens_here("verify", worst_symmetry, "--json")
    out = json.loads(p.stdout)
    assert p.returncode == 0 and out["valid"] is True
    assert [d["feature"] for d in out["domain"] if d["varied"]] == ["worst_symmetry"]
    assert len(out["domain"]) == 30


def test_the_verdict_shows_a_bound_exactly_where_rounding_would_widen_it(tmp_path):
    """A domain from 3.5000001 read '[3.5, 4]' named a value the proof does not cover."""
    verdict = _two_trees_verdict(tmp_path, "0,f0,-inf,inf\n1,f1,3.5000001,4\n")
    assert "; varying f1 in [3.5000001, 4]; no pair reaches" in verdict


def test_cli_verify_of_a_missing_file_is_one_line_and_exit_2(tmp_path):
    p = treesens_here("verify", tmp_path / "none.json")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1


def test_cli_check_writes_no_certificate_for_a_sensitive_answer(tmp_path):
    model = REPO / "examples" / "breast_cancer_xgb.json"
    out = tmp_path / "c.json"
    p = treesens_here(
        "check", model, "--vary", "mean_texture", "--gap", "0.2", "--certificate", out
    )
    assert p.returncode == 0 and not out.exists()
    assert "no certificate: the answer is sensitive" in p.stderr


def test_the_checker_imports_nothing_of_treesens():
    for path in (REPO / "verify").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{path.name} reaches outside verify/"
                assert not (node.module or "").startswith("treesens"), path.name
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("treesens") for a in node.names), path.name


@pytest.mark.slow
def test_the_churn_certificate_verifies_and_one_box_less_does_not(tmp_path):
    model = require_shared() / "churn" / "churn_t500_d5.json"
    out = tmp_path / "c.json"
    p = treesens_here(  # the check proves, certifies and verifies: three searches of minutes
        "check", model, "--vary", "DeviceProtection", "--gap", "0.3", "--certificate", out
    )
    assert p.returncode == 0 and "INSENSITIVE" in p.stdout, p.stderr
    assert treesens_here("verify", out).returncode == 0

    def drop_a_box(doc):
        proof = doc["parts"][0]["proof"]
        del proof[[s[0] for s in proof].index("prune")]

    assert treesens_here("verify", tampered(out, tmp_path, drop_a_box)).returncode == 1


def test_sweep_writes_a_certificate_per_insensitive_answer_that_verifies(tiny, tmp_path):
    out = tmp_path / "certs"
    p = treesens_here("sweep", tiny, "--gap", str(GAP), "--json", "--certificates", out)
    assert p.returncode == 0, p.stderr
    insensitive = [json.loads(ln) for ln in p.stdout.splitlines() if '"insensitive"' in ln]
    files = sorted(out.glob("*.json"))
    assert insensitive and len(files) == len(insensitive)
    assert all(verify_file(f).valid for f in files)
