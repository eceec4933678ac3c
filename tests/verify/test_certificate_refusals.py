"""Every refusal to write an asked-for certificate is one line saying why: an answer that
is not insensitive, a model the checker cannot read, an answer a solver proved without a
proof to write; and a max gap's upper bound gets one (check, sweep)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.tests.conftest import treesens_here
from treesens.verify import verify_file


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """``model.json`` (XGBoost over f0, f1, f2 that reads only f0), ``rows.csv`` (its
    data) and ``model.joblib`` (a pickled scikit-learn model of the same, x0 to x2)."""
    import joblib
    import pandas as pd
    import xgboost
    from sklearn.ensemble import GradientBoostingClassifier

    out = tmp_path_factory.mktemp("refusals")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2).fit(X, y)
    est.get_booster().save_model(out / "model.json")
    pd.DataFrame(X, columns=["f0", "f1", "f2"]).assign(label=y).to_csv(out / "rows.csv")
    stumps = GradientBoostingClassifier(n_estimators=4, max_depth=1).fit(X, y)
    joblib.dump(stumps, out / "model.joblib")
    return out


def _refusals(stderr: str) -> list[str]:
    return [s for s in stderr.splitlines() if "no certificate" in s]


@pytest.mark.parametrize("feature", ["f0", "f2"])  # a max gap with a pair, and with none
def test_check_max_gap_with_a_certificate_certifies_its_upper_bound(folder, tmp_path, feature):
    out = tmp_path / "c.json"
    p = treesens_here(
        "check", folder / "model.json", "--vary", feature, "--max-gap", "--certificate", out
    )
    assert p.returncode == 0, p.stderr
    assert not _refusals(p.stderr)
    assert "; certified: no pair reaches a gap of " in p.stdout
    assert verify_file(out).valid


def test_sweep_max_gap_with_certificates_writes_a_max_gap_certificate_per_feature(folder):
    out = folder / "max-gaps"
    p = treesens_here("sweep", folder / "model.json", "--max-gap", "--certificates", out)
    assert p.returncode == 0, p.stderr
    files = sorted(f.name for f in out.glob("*.json"))
    assert files == ["f0.max-gap.json", "f1.max-gap.json", "f2.max-gap.json"], p.stderr
    assert all(verify_file(out / f).valid for f in files)
    assert "certificates: 3 written to" in p.stderr


def test_a_sweep_max_gap_certificate_states_the_max_gap_claim(folder):
    out = folder / "claims"
    treesens_here(
        "sweep", folder / "model.json", "--max-gap", "--features", "f0", "--certificates", out
    )
    doc = json.loads((out / "f0.max-gap.json").read_text())
    assert doc["question"]["max_gap_upper"] is True


def test_sweep_counts_the_answers_that_are_not_insensitive_in_its_certificates_line(folder):
    p = treesens_here(
        "sweep", folder / "model.json", "--gap", "0.1", "--certificates", folder / "s"
    )
    assert p.returncode == 0, p.stderr
    (line,) = [s for s in p.stderr.splitlines() if s.startswith("certificates:")]
    assert line.startswith("certificates: 2 written")
    assert line.endswith("(none for the answers not insensitive: 1 sensitive)")


def test_a_model_the_checker_cannot_read_is_one_no_certificate_line(folder):
    out = folder / "c.json"
    p = treesens_here(
        "check", folder / "model.joblib", "--trust-pickle", "--vary", "x2", "--gap", "0.45",
        "--certificate", out,
    )  # fmt: skip
    assert p.returncode == 0 and "INSENSITIVE" in p.stdout, p.stderr
    (line,) = _refusals(p.stderr)
    assert line.startswith("no certificate: a scikit-learn model is certified from a .skops file")
    assert not out.exists()


def test_every_refusal_of_certify_says_no_certificate_and_why(folder):
    ens = treesens.load_model(folder / "model.json")
    done = certify(ens, make_query(["f2"], gap=0.2), folder / "c.json", None, 10)
    assert not done.written
    assert done.message == f"no certificate: {done.reason}"
    assert done.reason.startswith("a certificate needs the model's file")


def test_the_report_says_why_a_protected_feature_gets_no_certificate(folder):
    p = treesens_here(
        "report", folder / "model.json", "--data", folder / "rows.csv", "--features", "f0",
        "--protected", "f0", "--budget", "10", "--out", folder / "r.html",
        "--certificates", folder / "certs", "--no-progress",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    (line,) = _refusals(p.stderr)
    assert line.startswith("report: f0: no certificate: the answer is ")


@pytest.mark.parametrize("margin_gap", [0.5, 0.7])
def test_a_forests_margin_gap_of_a_half_or_more_gets_no_certificate_in_one_line(
    tmp_path, margin_gap
):
    from sklearn.ensemble import RandomForestClassifier
    from skops.io import dump

    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "forest.skops"
    dump(RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y), path)
    ens = treesens.load_model(str(path))
    done = certify(ens, make_query(["x1"], margin_gap=margin_gap), tmp_path / "c.json", path, 30)
    assert not done.written
    assert "margin gap is stated within [0, 0.5)" in done.message
    assert not (tmp_path / "c.json").exists()


def test_a_lightgbm_dump_model_json_gets_no_certificate_in_one_line(tmp_path):
    import lightgbm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    params = {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1}
    booster = lightgbm.train(params, lightgbm.Dataset(X, (X[:, 0] > 0).astype(int)), 3)
    model, out = tmp_path / "dump.json", tmp_path / "c.json"
    model.write_text(json.dumps(booster.dump_model()))
    r = treesens.check(str(model), ["Column_2"], gap=0.45, certificate=out)
    assert r.status == "insensitive" and not out.exists()
    assert r.proof.why_not.startswith("the checker reads a LightGBM model's text")


def test_a_max_gap_ratio_above_what_certificates_state_gets_no_certificate(tmp_path):
    import skops.io
    from sklearn.ensemble import ExtraTreesClassifier

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (300, 2))
    y = np.digitize(X[:, 0], [0.33, 0.66])  # three classes
    est = ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    skops.io.dump(est, tmp_path / "forest.skops")  # pure leaves: class 2 at probability 0
    out = tmp_path / "c.json"
    r = treesens.max_gap(str(tmp_path / "forest.skops"), ["x0"], classes=(0, 2), certificate=out)
    assert r.status == "sensitive" and not out.exists()
    assert r.proof.why_not.startswith("the upper bound is above 1e+06")


def test_a_pipeline_ending_in_xgboost_is_refused_for_its_final_model_not_its_file(tmp_path):
    import joblib
    import xgboost
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X = np.random.default_rng(0).normal(size=(200, 3))
    pipe = make_pipeline(StandardScaler(), xgboost.XGBClassifier(n_estimators=4, max_depth=2))
    joblib.dump(pipe.fit(X, (X[:, 0] > 0).astype(int)), tmp_path / "pipe.joblib")
    p = treesens_here(
        "check", tmp_path / "pipe.joblib", "--trust-pickle", "--vary", "x2", "--gap", "0.45",
        "--certificate", tmp_path / "c.json",
    )  # fmt: skip
    assert p.returncode == 0 and "INSENSITIVE" in p.stdout, p.stderr
    (line,) = _refusals(p.stderr)
    assert "ending in a scikit-learn model, not XGBClassifier" in line
    assert ".skops file" in line and "certified from a .skops file" not in line
