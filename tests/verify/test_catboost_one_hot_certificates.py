"""CatBoost models with one-hot categorical features (categories named by the data):
the certificate's domain names each code's category, and the checker maps each name to
the one-hot value its hash equals with catboost itself; its model then routes every code
as catboost routes the category, insensitive answers and max-gap bounds are certified
and verified, and a certificate whose names are swapped or whose claim brute force
shows false is rejected."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.tests.oracle import brute_force_sensitive
from treesens.tests.verify.tampering import checker_raw, claiming_gap, drop_last_box, tampered
from treesens.verify import verify_file
from treesens.verify.models import ModelError, read_model
from treesens.verify.replay import library_raw

COLOURS = ["red", "green", "blue", "grey"]


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> tuple[Path, Path]:
    """(the .cbm, the data naming its categories)."""
    import catboost

    rng = np.random.default_rng(0)
    n = 300
    X = pd.DataFrame({"c": rng.choice(COLOURS, n), "x": rng.uniform(0, 1, n)})
    y = ((X["c"] == "green") * 0.3 + (X["c"] == "blue") * 0.15 + X["x"] > 0.6).astype(int)
    est = catboost.CatBoostClassifier(iterations=6, depth=2, one_hot_max_size=10, verbose=0)
    folder = tmp_path_factory.mktemp("one-hot")
    path, data = folder / "model.cbm", folder / "data.csv"
    est.fit(X, y, cat_features=["c"]).save_model(str(path))
    X.assign(label=y).to_csv(data, index=False)
    return path, data


def _ens(model):
    return treesens.load_model(str(model[0]), data=str(model[1]))


def _named(ens) -> dict[str, list[str]]:
    return {"c": list(ens.features[0].categories)}


def test_the_checkers_model_routes_each_code_as_catboost_routes_its_category(model):
    import catboost

    ens = _ens(model)
    names = _named(ens)["c"]
    m = read_model(str(model[0]), "catboost", categories=_named(ens))
    assert any(c is not None for t in m.trees for c in t.cats or ())
    xs = sorted({t.threshold[n] for t in m.trees for n, f in enumerate(t.feature) if f == 1})
    xs = [v for t in xs for v in (t, float(np.nextafter(np.float32(t), np.float32(2))))]
    codes = [[float(k), x] for k in range(len(names)) for x in [0.0, *xs, 1.0]]
    frame = pd.DataFrame([[names[int(k)], x] for k, x in codes], columns=["c", "x"])
    cb = catboost.CatBoost()
    cb.load_model(str(model[0]))
    want = cb.predict(catboost.Pool(frame, cat_features=[0]), prediction_type="RawFormulaVal")
    np.testing.assert_allclose([checker_raw(m, r) for r in codes], want, rtol=1e-9, atol=1e-9)


def test_the_replay_scores_a_code_as_catboost_scores_its_category(model):
    ens = _ens(model)
    m = read_model(str(model[0]), "catboost", categories=_named(ens))
    X = np.array([[1.0, 0.3], [4.0, 0.8]])  # green, <other>
    got = library_raw(str(model[0]), "catboost", m, categories=_named(ens))(X)[:, 0]
    np.testing.assert_allclose(got, [checker_raw(m, x) for x in X], rtol=1e-9, atol=1e-9)


def test_the_checker_refuses_the_model_without_the_codes_categories(model):
    with pytest.raises(ModelError, match="names no category per code"):
        read_model(str(model[0]), "catboost")


@pytest.fixture(scope="module")
def max_gap(model, tmp_path_factory):
    out = tmp_path_factory.mktemp("certificates") / "c.json"
    r = treesens.max_gap(_ens(model), vary=["c"], certificate=out)
    assert r.proof.checked, r.proof.why_not
    return out, r.max_gap


def test_a_max_gap_bound_over_the_categories_is_certified_and_verified(max_gap):
    out, mg = max_gap
    assert mg["lower"] > 0.05
    domain = json.loads(out.read_text())["question"]["domain"][0]
    assert domain["categories"][:4] == sorted(COLOURS) and "codes" in domain
    assert verify_file(out).valid


def test_an_insensitive_answer_above_the_max_gap_is_certified(model, max_gap, tmp_path):
    gap = round(max_gap[1]["upper"] + 0.01, 3)
    r = treesens.check(_ens(model), vary=["c"], gap=gap, certificate=tmp_path / "c.json")
    assert r.status == "insensitive" and r.proof.checked, r.proof.why_not


def test_a_certificate_with_a_box_removed_is_rejected(max_gap, tmp_path):
    assert not verify_file(tampered(max_gap[0], tmp_path, drop_last_box)).valid


def test_a_certificate_with_two_categories_swapped_is_rejected(max_gap, tmp_path):
    def swap_green_and_grey(doc):
        names = doc["question"]["domain"][0]["categories"]
        i, j = names.index("green"), names.index("grey")
        names[i], names[j] = names[j], names[i]

    assert not verify_file(tampered(max_gap[0], tmp_path, swap_green_and_grey)).valid


def test_a_certificate_claiming_a_gap_brute_force_reaches_is_rejected(model, max_gap, tmp_path):
    out, mg = max_gap
    false_gap = round(mg["lower"] * 0.999, 6)
    assert brute_force_sensitive(_ens(model), Query(vary=("c",), gap=Gap(false_gap)))

    assert not verify_file(tampered(out, tmp_path, claiming_gap(false_gap))).valid


def test_the_verdict_names_the_category_of_each_code_the_claim_covers(max_gap):
    assert "c takes the codes 0 to 3 (blue, green, grey, red)" in verify_file(max_gap[0]).message


def test_a_category_renamed_to_one_routed_alike_is_shown_renamed_in_the_verdict(max_gap, tmp_path):
    """A category the model routes as an unseen one (red: no split tests it) renamed to
    another unseen name proves the claim for that name: the verdict must show which."""

    def rename_red(doc):
        names = doc["question"]["domain"][0]["categories"]
        names[names.index("red")] = "crimson"

    verdict = verify_file(tampered(max_gap[0], tmp_path, rename_red))
    assert not verdict.valid or "(blue, green, grey, crimson)" in verdict.message
