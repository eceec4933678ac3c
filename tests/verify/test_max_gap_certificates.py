"""A max gap's upper bound U, certified: the box search's proof that no pair reaches the
gap U' (U plus a margin, rounded up), re-checked by the independent checker, above the
exact max gap found by enumeration, and rejected when tampered with."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.answers.proof import TRIVIAL_BOUND
from treesens.answers.result import result_from_dict
from treesens.questions.certify import certified_bound, certify_answer
from treesens.questions.query_build import make_query
from treesens.tests.conftest import treesens_here
from treesens.tests.max_gap_oracle import exact_max_gap
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file

FEATURE = "f1"  # a feature the model reads, with a max gap well above 0


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    """A binary XGBoost model of a few shallow trees over f0, f1, f2."""
    import xgboost

    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(300, 3))
    y = (X[:, 0] + 0.6 * X[:, 1] > 0.8).astype(int)
    est = xgboost.XGBClassifier(n_estimators=4, max_depth=2, learning_rate=0.5)
    est.fit(X, y)
    est.get_booster().feature_names = ["f0", "f1", "f2"]
    path = tmp_path_factory.mktemp("max_gap_cert") / "model.json"
    est.get_booster().save_model(path)
    return path


@pytest.fixture(scope="module")
def checked(model, tmp_path_factory):
    """``treesens check MODEL --vary f1 --max-gap --certificate c.json --json``: the
    process, its result (a dict) and the certificate."""
    out = tmp_path_factory.mktemp("cert") / "c.json"
    p = treesens_here(
        "check", model, "--vary", FEATURE, "--max-gap", "--certificate", out, "--json"
    )
    assert p.returncode == 0, p.stderr
    return p, json.loads(p.stdout), out


def test_a_max_gap_certificate_verifies_with_treesens_verify(checked):
    _, _, out = checked
    p = treesens_here("verify", out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("VALID: ")


def test_the_checker_says_the_certificate_bounds_a_max_gap(checked):
    _, res, out = checked
    bound = res["proof"]["bound"]
    assert verify_file(out).message.endswith(
        f"; a max gap's upper bound: no pair reaches a gap of {bound:g}"
    )


def test_the_certificate_states_its_gap_and_its_claim(checked):
    _, res, out = checked
    question = json.loads(out.read_text())["question"]
    claim = question["claim"]["gap"]
    assert claim == res["proof"]["bound"] == certified_bound(res["max_gap"]["upper"])
    assert question["max_gap_upper"] is True


def test_the_certified_gap_is_above_the_exact_max_gap(model, checked):
    _, res, _ = checked
    exact = exact_max_gap(treesens.load_model(str(model)), [FEATURE])
    assert exact > 0.05  # the model is sensitive: the test is not vacuous
    assert res["proof"]["bound"] > res["max_gap"]["upper"] >= exact


def test_the_proof_record_says_the_upper_bound_is_certified_and_verified(checked):
    _, res, out = checked
    assert res["proof"]["checked"] and res["proof"]["certificate"] == str(out)


def test_the_verdict_line_says_which_gap_no_pair_reaches(model, tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here("check", model, "--vary", FEATURE, "--max-gap", "--certificate", out)
    assert p.returncode == 0, p.stderr
    bound = json.loads(out.read_text())["question"]["claim"]["gap"]
    assert f"; certified: no pair reaches a gap of {bound:g} ({out}, verified)" in p.stdout


def test_a_certificate_with_its_gap_lowered_below_the_exact_max_gap_is_rejected(
    model, checked, tmp_path
):
    _, _, out = checked
    exact = exact_max_gap(treesens.load_model(str(model)), [FEATURE])

    def below_the_max_gap(doc):
        doc["question"]["claim"]["gap"] = exact - 0.01

    verdict = verify_file(tampered(out, tmp_path, below_the_max_gap))
    assert not verdict.valid


def test_a_max_gap_certificate_with_a_bound_changed_is_rejected(checked, tmp_path):
    _, _, out = checked

    def lower_a_bound(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
        step[2] -= 0.5

    verdict = verify_file(tampered(out, tmp_path, lower_a_bound))
    assert not verdict.valid and "states" in verdict.message


def test_a_max_gap_read_back_from_json_keeps_its_proof_record(checked):
    _, res, _ = checked
    assert result_from_dict(res).proof.bound == res["proof"]["bound"]


def test_a_box_search_out_of_budget_leaves_the_bound_not_certified_with_why(model, tmp_path):
    ens = treesens.load_model(str(model))
    res = treesens.max_gap(ens, vary=FEATURE)
    q = make_query([FEATURE], gap=0.0)
    done = certify_answer(ens, q, res, tmp_path / "c.json", str(model), 1e-9)
    assert not done.written and not (tmp_path / "c.json").exists()
    assert not res.proof.checked
    assert res.proof.why_not.startswith("the box search did not finish within its budget")


def test_a_max_gap_of_a_pickled_model_is_refused_in_one_line(tmp_path):
    import joblib
    from sklearn.ensemble import GradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    joblib.dump(
        GradientBoostingClassifier(n_estimators=4, max_depth=1).fit(X, y), tmp_path / "m.joblib"
    )
    out = tmp_path / "c.json"
    p = treesens_here(
        "check",
        tmp_path / "m.joblib",
        "--trust-pickle",
        "--vary",
        "x0",
        "--max-gap",
        "--certificate",
        out,
    )
    assert p.returncode == 0, p.stderr
    (line,) = [s for s in p.stderr.splitlines() if "no certificate" in s]
    assert (
        line == "no certificate: a scikit-learn model is certified from a .skops file "
        "(the checker loads no pickle)"
    )
    assert "; not certified: a scikit-learn model is certified from a .skops file" in p.stdout
    assert not out.exists()


@pytest.mark.parametrize(
    ("upper", "bound"),
    [
        (0.3498, 0.35),
        (0.35, 0.351),
        (0.0920238, 0.0921),
        (0.0001, 0.000101),
        (3e-12, 1.01e-6),
        (0.499, 0.4991),
    ],
)
def test_the_certified_bound_rounds_up_above_the_upper_bound(upper, bound):
    assert certified_bound(upper) == pytest.approx(bound, rel=1e-12)
    assert certified_bound(upper) > upper


@pytest.fixture(scope="module")
def sharp(tmp_path_factory) -> Path:
    """A binary XGBoost model whose trees, unregularised at learning rate 1, take P to 0
    and 1 on f0: its max gap over f0 is 0.5, the largest there is."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 3))
    y = (X[:, 0] > 0.5).astype(int)
    est = xgboost.XGBClassifier(
        n_estimators=30, max_depth=2, learning_rate=1.0, reg_lambda=0, min_child_weight=0
    )
    est.fit(X, y)
    est.get_booster().feature_names = ["f0", "f1", "f2"]
    path = tmp_path_factory.mktemp("sharp") / "sharp.json"
    est.get_booster().save_model(path)
    return path


def test_a_max_gap_of_0_5_s_proof_record_says_it_needs_no_certificate(sharp, tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here("check", sharp, "--vary", "f0", "--max-gap", "--certificate", out, "--json")
    res = json.loads(p.stdout)
    assert res["max_gap"]["upper"] == 0.5 and not res["proof"]["checked"]
    assert res["proof"]["why_not"] == TRIVIAL_BOUND and not out.exists()


def test_a_sweep_s_table_says_a_max_gap_of_0_5_needs_no_certificate(sharp, tmp_path):
    p = treesens_here(
        "sweep", sharp, "--features", "f0", "--max-gap", "--certificates", tmp_path / "certs"
    )
    (row,) = [line for line in p.stdout.splitlines() if " f0 " in line]
    assert "not needed" in row and "not certified" not in p.stdout
    assert "(none for the max gaps without one: 1 not needed)" in p.stdout + p.stderr


def test_check_announces_no_search_for_a_max_gap_that_needs_no_certificate(sharp, tmp_path):
    out = tmp_path / "c.json"
    p = treesens_here("check", sharp, "--vary", "f0", "--max-gap", "--certificate", out)
    assert "no certificate: the upper bound is 0.5" in p.stderr
    assert "searching for its proof" not in p.stderr


# ---- the kernels made ready: the search's, and a rebuild's only where one runs ----------
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _kernels_asked(monkeypatch, vary: str, tmp_path) -> list[bool]:
    """Per gap_kernel.prepare call of a max gap of breast_cancer_xgb.json with a
    certificate: whether it makes a proof's rebuild kernels ready."""
    from treesens.search import gap_kernel

    asked, real = [], gap_kernel.prepare

    def prepare(log=None, rebuild=None):
        asked.append(rebuild is not None)
        return real(log, rebuild)

    monkeypatch.setattr(gap_kernel, "prepare", prepare)
    r = treesens.max_gap(
        str(EXAMPLES / "breast_cancer_xgb.json"), [vary], certificate=tmp_path / "mg.json"
    )
    assert r.proof is not None and r.proof.certificate is not None, r.proof
    return asked


def test_a_max_gap_s_search_makes_its_own_kernel_ready_and_its_rebuild_the_rebuild_s(
    monkeypatch, tmp_path
):
    # mean_texture's certificate is rebuilt from the 162 boxes its search kept: the
    # search's first prepare asks its kernel alone, the rebuild's kernels are asked once
    asked = _kernels_asked(monkeypatch, "mean_texture", tmp_path)
    assert asked[0] is False and asked.count(True) == 1, asked
