"""Certificates of models whose one-hot columns treesens folds into one feature
(``--groups``, groups inferred from data): the certificate states each group's model
columns and each code's image, the checker folds the model's own columns the same way
and routes every image through the trees; a tampered copy is rejected, and every
certified claim agrees with a brute force over the library's own predict."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.tests.conftest import treesens_here
from treesens.tests.oracle import binary_gap_reached, cell_grid
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file

RACE = ["race_A", "race_B", "race_C"]
GROUPS = {"race": RACE}
GAPS = (0.1, 0.2, 0.3, 0.4)


def _rows(seed: int, n: int = 400) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    race = rng.integers(0, 3, n)
    X = pd.DataFrame(np.eye(3)[race], columns=RACE).assign(
        x=rng.uniform(0, 1, n), z=rng.normal(size=n)
    )
    y = (X["x"] + 0.35 * (race == 1) - 0.25 * (race == 2) + 0.2 * X["z"] > 0.55).astype(int)
    return X, y.to_numpy()


@pytest.fixture(scope="module")
def xgb(tmp_path_factory) -> Path:
    import xgboost

    X, y = _rows(0)
    path = tmp_path_factory.mktemp("groups") / "grouped.json"
    xgboost.XGBClassifier(n_estimators=6, max_depth=3).fit(X, y).get_booster().save_model(path)
    return path


@pytest.fixture(scope="module")
def certified(xgb) -> dict[float, Path]:
    """Per gap whose "insensitive" about race was certified and verified, its file."""
    out = {}
    for gap in GAPS:
        c = xgb.parent / f"race-{gap}.json"
        r = treesens.check(str(xgb), vary=["race"], gap=gap, groups=GROUPS, certificate=c)
        if r.status == "insensitive":
            assert r.proof.checked, r.proof.why_not
            out[gap] = c
    assert out, "no gap certified"
    return out


@pytest.fixture(scope="module")
def certificate(certified) -> Path:
    """The certificate of the smallest gap certified (the largest proof)."""
    return certified[min(certified)]


def test_a_grouped_models_insensitive_answer_is_certified_and_verifies(certificate):
    p = treesens_here("verify", certificate)
    assert p.returncode == 0 and "VALID" in p.stdout, p.stdout + p.stderr
    assert "race takes the codes 0, 1, 2 (one-hot over race_A, race_B, race_C)" in p.stdout


def test_the_certificate_states_each_groups_columns_and_each_codes_image(certificate):
    doc = json.loads(certificate.read_text())
    (group,) = doc["groups"]
    assert group["feature"] == "race" and group["columns"] == RACE
    assert group["images"] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert doc["question"]["features"] == ["race", "x", "z"]


def test_every_certified_gap_is_one_the_brute_force_does_not_reach(xgb, certified):
    ens = treesens.load_model(str(xgb), groups=GROUPS)
    for gap in certified:
        assert not binary_gap_reached(ens, "race", gap), gap


def test_a_gap_the_brute_force_reaches_is_not_certified(xgb, certified, tmp_path):
    """The smallest certificate's claim moved to a gap some pair reaches: rejected."""
    ens = treesens.load_model(str(xgb), groups=GROUPS)
    reached = next(g for g in (0.05, 0.02, 0.01) if binary_gap_reached(ens, "race", g))

    def reached_gap(doc):
        doc["question"]["claim"]["gap"] = reached

    changed = tampered(certified[min(certified)], tmp_path, reached_gap)
    assert not verify_file(changed).valid


def test_a_certificate_with_a_groups_column_list_changed_is_rejected(certificate, tmp_path):
    def drop_a_column(doc):
        g = doc["groups"][0]
        g["columns"] = g["columns"][:2]
        g["images"] = [row[:2] for row in g["images"][:2]]

    verdict = verify_file(tampered(certificate, tmp_path, drop_a_column))
    assert not verdict.valid and "features are not the model's" in verdict.message


def test_a_certificate_whose_group_names_a_column_the_model_lacks_is_rejected(
    certificate, tmp_path
):
    def rename(doc):
        doc["groups"][0]["columns"][2] = "race_D"

    verdict = verify_file(tampered(certificate, tmp_path, rename))
    assert not verdict.valid and "race_D" in verdict.message


def test_a_certificate_with_a_codes_image_changed_is_rejected(certificate, tmp_path):
    def no_column_set(doc):
        doc["groups"][0]["images"][1] = [0.0, 0.0, 0.0]

    verdict = verify_file(tampered(certificate, tmp_path, no_column_set))
    assert not verdict.valid and "image" in verdict.message


def test_a_certificate_with_two_codes_images_swapped_is_rejected(certificate, tmp_path):
    def swap(doc):
        images = doc["groups"][0]["images"]
        images[0], images[1] = images[1], images[0]

    assert not verify_file(tampered(certificate, tmp_path, swap)).valid


def test_a_grouped_certificate_with_a_box_removed_is_rejected(certificate, tmp_path):
    assert not verify_file(tampered(certificate, tmp_path, drop_last_box)).valid


def test_a_grouped_certificate_stating_the_group_may_be_missing_is_rejected(certificate, tmp_path):
    def may_be_missing(doc):
        doc["question"]["domain"][0]["missing"] = True

    assert not verify_file(tampered(certificate, tmp_path, may_be_missing)).valid


def test_check_with_groups_on_the_command_line_writes_a_verified_certificate(
    xgb, certified, tmp_path
):
    gap = max(certified)
    out = tmp_path / "cli.json"
    p = treesens_here(
        "check", xgb, "--groups", "race=" + ",".join(RACE), "--vary", "race",
        "--gap", str(gap), "--certificate", out,
    )  # fmt: skip
    assert p.returncode == 0 and f"certified: {out}, verified" in p.stdout, p.stdout + p.stderr
    assert verify_file(out).valid


def test_a_grouped_max_gaps_upper_bound_is_certified_above_the_brute_force(xgb, tmp_path):
    ens = treesens.load_model(str(xgb), groups=GROUPS)
    r = treesens.max_gap(ens, vary=["race"], certificate=tmp_path / "mg.json")
    assert r.proof.checked, r.proof.why_not
    X, ns, nv = cell_grid(ens, ["race"])
    p = ens.replayer.predict_proba(X)[:, 1].reshape(ns, nv)
    best = float(np.max(np.minimum(p.max(axis=1) - 0.5, 0.5 - p.min(axis=1))))
    assert best <= r.max_gap["upper"] < r.proof.bound
    assert verify_file(tmp_path / "mg.json").valid


@pytest.fixture(scope="module")
def dropped(tmp_path_factory) -> tuple[Path, dict]:
    """A LightGBM model over race_B, race_C (race A dropped: both 0) and x, z."""
    import lightgbm

    X, y = _rows(1)
    X = X.drop(columns=["race_A"])
    est = lightgbm.LGBMClassifier(n_estimators=6, num_leaves=6, min_child_samples=5, verbose=-1)
    path = tmp_path_factory.mktemp("dropped") / "dropped.txt"
    est.fit(X, y).booster_.save_model(path)
    return path, {"race": {"columns": ["race_B", "race_C"], "dropped": "A"}}


def test_a_dropped_categorys_code_is_the_all_zero_image_and_verifies(dropped, tmp_path):
    path, groups = dropped
    out = tmp_path / "d.json"
    r = treesens.max_gap(str(path), vary=["race"], groups=groups, certificate=out)
    assert r.proof.checked, r.proof.why_not
    (group,) = json.loads(out.read_text())["groups"]
    assert group["images"] == [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    assert "code 2: all of them 0" in verify_file(out).message


def test_a_grouped_lightgbm_certificate_states_the_test_lightgbm_compares(dropped, tmp_path):
    """Its splits are at the model's own thresholds, which LightGBM compares with '<='
    (the folded trees' '<' is treesens's own restatement)."""
    path, groups = dropped
    out = tmp_path / "d.json"
    treesens.max_gap(str(path), vary=["race"], groups=groups, certificate=out)
    assert json.loads(out.read_text())["model"]["test"] == "<="


def test_a_dropped_categorys_image_removed_is_rejected(dropped, tmp_path):
    """Without the all-zero image the group has two codes, and the domain lists three."""
    path, groups = dropped
    out = tmp_path / "d.json"
    treesens.max_gap(str(path), vary=["race"], groups=groups, certificate=out)

    def no_dropped(doc):
        doc["groups"][0]["images"].pop()

    assert not verify_file(tampered(out, tmp_path, no_dropped)).valid


def test_a_report_on_one_hot_data_certifies_its_inferred_groups_answers(xgb, tmp_path):
    """Groups inferred from the data (race_A, race_B, race_C): the protected race's
    answer and its max gap's bound are certified, and the page says so."""
    from treesens.questions.report import report
    from treesens.views.report_html import render

    X, y = _rows(0)
    rows = tmp_path / "rows.csv"
    X.assign(label=y).to_csv(rows, index=False)
    rep = report(
        str(xgb), str(rows), label="label", features=["race"], protected=["race"],
        gap=0.4, budget=60, certificates=tmp_path / "certs", progress=False,
    )  # fmt: skip
    (finding,) = rep.protected
    assert finding.check.proof.checked, finding.check.proof
    (ranked,) = rep.ranking
    assert ranked.proof.checked, ranked.proof
    assert rep.missing_certificates == [] and "verified" in render(rep)


def _walk(model, row: list[float]) -> float:
    """A row's raw score as the checker's model reads it: each tree walked with
    ``goes_left``, the rule it routes boxes with."""
    from treesens.verify.pair_space import goes_left

    out = model.offset
    for t in model.trees:
        n = 0
        while t.feature[n] >= 0:
            n = t.left[n] if goes_left(model, t, n, row[t.feature[n]]) else t.right[n]
        out += t.value[n]
    return out


@pytest.mark.parametrize("which", ["xgboost", "lightgbm"])
def test_the_checkers_folded_model_scores_each_code_as_the_library_scores_its_image(
    which, xgb, dropped, certificate, tmp_path
):
    """Every code of the group (the dropped one too), at a few values of the others:
    the folded model's walk equals the library's raw score of the row ``to_model`` makes
    (the row a replayed pair is scored on)."""
    from treesens.verify.models import read_model
    from treesens.verify.models_groups import folded, read_groups

    if which == "xgboost":
        path, stated = xgb, json.loads(certificate.read_text())["groups"]
    else:
        path, groups = dropped
        out = tmp_path / "d.json"
        treesens.max_gap(str(path), vary=["race"], groups=groups, certificate=out)
        stated = json.loads(out.read_text())["groups"]
    model = folded(read_model(str(path), which), read_groups(stated))
    n_codes = len(stated[0]["images"])
    rows = [[float(c), x, z] for c in range(n_codes) for x in (0.1, 0.5, 0.9) for z in (-1, 0, 1)]
    X = model.to_model(np.array(rows))
    if which == "xgboost":
        import xgboost

        booster = xgboost.Booster(model_file=str(path))
        data = xgboost.DMatrix(X, feature_names=booster.feature_names)
        library = booster.predict(data, output_margin=True)
    else:
        import lightgbm

        library = lightgbm.Booster(model_file=str(path)).predict(X, raw_score=True)
    k = len(stated[0]["columns"])  # the group's columns come first, then x and z
    assert X.shape[1] == k + 2 and set(X[:, :k].sum(axis=1)) <= {0.0, 1.0}
    got = [_walk(model, r) for r in rows]
    np.testing.assert_allclose(got, library, rtol=1e-5, atol=1e-5)


def test_a_sweep_with_groups_writes_a_verified_certificate_per_insensitive_answer(xgb, tmp_path):
    p = treesens_here(
        "sweep", xgb, "--groups", "race=" + ",".join(RACE), "--gap", "0.4",
        "--certificates", tmp_path / "certs",
    )  # fmt: skip
    assert p.returncode == 0, p.stdout + p.stderr
    assert verify_file(tmp_path / "certs" / "race.json").valid
