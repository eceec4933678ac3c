"""Certificates over category codes, NaN and LightGBM's zero band (version 3): on tiny
held-out models trained by the libraries themselves on a categorical feature f0 and a
feature f1 with NaN (and zeros), every insensitive answer and every max-gap bound gets a
certificate the independent checker accepts, the checker's model routes codes, NaN and
the zero band as the library does, tampered copies are rejected, and a claim brute force
shows false is rejected."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.readers.details import declare
from treesens.tests.oracle import brute_force_sensitive
from treesens.tests.verify.tampering import drop_last_box, tampered
from treesens.verify import verify_file
from treesens.verify.models import Model, read_model
from treesens.verify.pair_space import goes_left

KINDS = [
    "xgboost",
    "lightgbm-nan",
    "lightgbm-zero",
    "lightgbm-none",
    "hgb-nan",
    "forest-nan",
]
LIBRARY = {".json": "xgboost", ".txt": "lightgbm", ".skops": "sklearn"}
CODES = [0, 1, 2, 3]


def _frame(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """f0: category codes 0..3; f1: numbers in [-1, 1], a quarter of them 0.0 and a
    fifth NaN; f2: numbers in [0, 1]. The label reads all three."""
    rng = np.random.default_rng(seed)
    f0 = rng.integers(0, 4, n)
    f1 = rng.uniform(-1, 1, n)
    f1[rng.random(n) < 0.25] = 0.0
    f1[rng.random(n) < 0.2] = np.nan
    f2 = rng.uniform(0, 1, n)
    s = f2 + 0.2 * np.isin(f0, [1, 3]) + 0.2 * np.nan_to_num(f1, nan=0.9) + rng.normal(0, 0.1, n)
    frame = pd.DataFrame({"f0": pd.Categorical(f0, categories=CODES), "f1": f1, "f2": f2})
    return frame, (s > 0.8).astype(int)


def _train(kind: str, folder: Path) -> Path:
    X, y = _frame()
    if kind == "xgboost":
        import xgboost

        est = xgboost.XGBClassifier(
            n_estimators=8, max_depth=3, learning_rate=0.5, enable_categorical=True,
            tree_method="hist", max_cat_to_onehot=1,
        )  # fmt: skip
        path = folder / "xgb.json"
        est.fit(X, y).get_booster().save_model(path)
        return path
    if kind.startswith("lightgbm"):
        import lightgbm

        missing = {
            "lightgbm-zero": {"zero_as_missing": True},
            "lightgbm-none": {"use_missing": False},
        }
        est = lightgbm.LGBMClassifier(
            n_estimators=8, num_leaves=6, learning_rate=0.5, min_child_samples=5,
            min_data_per_group=5, cat_smooth=1, verbose=-1, **missing.get(kind, {}),
        )  # fmt: skip
        path = folder / f"{kind}.txt"
        est.fit(X, y).booster_.save_model(path)
        return path
    import skops.io
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier

    # scikit-learn reads f0 as a number (HGB's categorical_features: its categories)
    Xn = X.assign(f0=X["f0"].astype(float))
    if kind.startswith("hgb"):
        est = HistGradientBoostingClassifier(
            max_iter=8,
            max_depth=3,
            learning_rate=0.5,
            categorical_features=[0] if kind == "hgb-categorical" else None,
        )
    else:
        est = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0)
    path = folder / f"{kind}.skops"
    skops.io.dump(est.fit(Xn, y), path)
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("coded")
    return {kind: _train(kind, folder) for kind in KINDS}


def _model(path: Path):
    """The model as treesens reads it, with f1 declared may-be-missing."""
    return declare(treesens.load_model(str(path)), missing=["f1"])


def _library_margin(path: Path, X: pd.DataFrame) -> np.ndarray:
    if path.suffix == ".json":
        import xgboost

        booster = xgboost.Booster(model_file=str(path))
        return booster.predict(xgboost.DMatrix(X, enable_categorical=True), output_margin=True)
    if path.suffix == ".txt":
        import lightgbm

        return lightgbm.Booster(model_file=str(path)).predict(X, raw_score=True)
    import skops.io

    est = skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))
    Xn = X.assign(f0=X["f0"].astype(float))
    if hasattr(est, "decision_function"):
        return est.decision_function(Xn)
    return est.predict_proba(Xn)[:, 1]


def _checker_score(m: Model, row: list[float]) -> float:
    """A row's score as the checker's model reads it: each tree walked with
    ``goes_left``, the rule the checker routes boxes with."""
    out = m.offset
    for t in m.trees:
        n = 0
        while t.feature[n] >= 0:
            n = t.left[n] if goes_left(m, t, n, row[t.feature[n]]) else t.right[n]
        out += t.value[n]
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_the_checkers_model_routes_codes_nan_and_the_zero_band_as_the_library_does(kind, models):
    rng = np.random.default_rng(3)
    f1 = [np.nan, 0.0, -0.0, 1e-36, -1e-36, 1e-35, -1e-35, 2e-35, -2e-35, *rng.uniform(-1, 1, 20)]
    rows = [[float(c), v, float(w)] for c in CODES for v in f1 for w in (0.2, 0.6, 0.9)]
    X = pd.DataFrame(rows, columns=["f0", "f1", "f2"])
    X["f0"] = pd.Categorical(X["f0"].astype(int), categories=CODES)
    path = models[kind]
    m = read_model(str(path), LIBRARY[path.suffix])
    got = [_checker_score(m, r) for r in rows]
    np.testing.assert_allclose(got, _library_margin(path, X), rtol=1e-6, atol=1e-6)


def test_the_checkers_model_routes_hgb_categorical_splits_as_scikit_learn_does():
    """HistGradientBoosting with categorical_features (in memory: its preprocessor holds a
    functools.partial, which neither treesens nor the checker trusts in a .skops file)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from treesens.verify.models_sklearn import sklearn_model

    X, y = _frame()
    Xn = X.assign(f0=X["f0"].astype(float))
    est = HistGradientBoostingClassifier(
        max_iter=8, max_depth=3, learning_rate=0.5, categorical_features=[0]
    ).fit(Xn, y)
    m = sklearn_model(est)
    assert any(c is not None for t in m.trees for c in t.cats or ())
    rows = [[float(c), v, w] for c in CODES for v in (np.nan, -0.5, 0.0, 0.7) for w in (0.2, 0.9)]
    got = [_checker_score(m, r) for r in rows]
    want = est.decision_function(pd.DataFrame(rows, columns=["f0", "f1", "f2"]))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("task", ["multiclass", "regressor"])
def test_the_checkers_model_routes_a_multiclass_or_regressor_hgbs_categorical_splits(task):
    """A multiclass HistGradientBoosting (one predictor per class) or a regressor, with
    categorical_features: per output, the checker's raw scores are scikit-learn's."""
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor

    from treesens.verify.models_sklearn import sklearn_model

    X, y = _frame()
    Xn = X.assign(f0=X["f0"].astype(float))
    kind = HistGradientBoostingRegressor if task == "regressor" else HistGradientBoostingClassifier
    target = y + Xn["f2"].to_numpy() if task == "regressor" else y + (Xn["f2"] > 0.5)
    est = kind(max_iter=6, max_depth=3, learning_rate=0.5, categorical_features=[0])
    est.fit(Xn, target)
    m = sklearn_model(est)
    assert any(c is not None for t in m.trees for c in t.cats or ())
    rows = [[float(c), v, w] for c in CODES for v in (np.nan, -0.5, 0.0, 0.7) for w in (0.2, 0.9)]
    frame = pd.DataFrame(rows, columns=["f0", "f1", "f2"])
    want = est.predict(frame) if task == "regressor" else est.decision_function(frame)
    got = [[_checker_output(m, r, k) for k in range(m.n_outputs)] for r in rows]
    np.testing.assert_allclose(np.asarray(got).reshape(want.shape), want, rtol=1e-9, atol=1e-9)


def _checker_output(m: Model, row: list[float], k: int) -> float:
    """Output k's raw score as the checker's model reads it (``goes_left`` per node)."""
    out = m.offset_of(k)
    for t in m.trees:
        n = 0
        while t.feature[n] >= 0:
            n = t.left[n] if goes_left(m, t, n, row[t.feature[n]]) else t.right[n]
        out += t.value[n] if t.output == k else 0.0
    return out


def _certified(path: Path, vary: str, gap: float, out: Path):
    return treesens.check(_model(path), vary=[vary], gap=gap, certificate=out)


@pytest.mark.parametrize("kind", KINDS)
def test_every_insensitive_answer_gets_a_certificate_the_checker_accepts(kind, models, tmp_path):
    insensitive = 0
    for vary in ("f0", "f1", "f2"):
        for gap in (0.1, 0.25, 0.4):
            out = tmp_path / f"{vary}-{gap}.json"
            r = _certified(models[kind], vary, gap, out)
            if r.status != "insensitive":
                continue
            insensitive += 1
            assert r.proof.checked, (vary, gap, r.proof.why_not)
            assert verify_file(out).valid
            assert json.loads(out.read_text())["version"] == 3
    assert insensitive > 0


@pytest.mark.parametrize("kind", KINDS)
def test_every_max_gap_bound_gets_a_certificate_the_checker_accepts(kind, models, tmp_path):
    for vary in ("f0", "f1"):
        out = tmp_path / f"{vary}.max-gap.json"
        r = treesens.max_gap(_model(models[kind]), vary=[vary], certificate=out)
        assert r.proof.checked, (vary, r.proof.why_not)
        assert verify_file(out).valid


def test_a_domain_states_the_codes_and_that_a_feature_may_be_missing(models, tmp_path):
    out = tmp_path / "c.json"
    assert _certified(models["xgboost"], "f1", 0.4, out).proof.checked
    f0, f1, f2 = json.loads(out.read_text())["question"]["domain"]
    assert f0["codes"] == CODES and f1["missing"] is True
    assert "codes" not in f2 and "missing" not in f2
    assert "f0 takes the codes 0 to 3; f1 may be missing" in verify_file(out).message


# ---- tampering ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def coded_certificate(models, tmp_path_factory) -> Path:
    """A max-gap certificate of f1 on a LightGBM model whose proof splits on f0's codes
    and on f1's NaN."""
    out = tmp_path_factory.mktemp("tamper") / "c.json"
    r = treesens.max_gap(_model(models["lightgbm-nan"]), vary=["f1"], certificate=out)
    assert r.proof.checked
    steps = [s for p in json.loads(out.read_text())["parts"] for s in p["proof"]]
    assert any(s[0] == "split" and isinstance(s[2], dict) for s in steps)
    assert any(s[0] == "split" and s[2] == "nan" for s in steps)
    return out


def _steps(doc: dict) -> list:
    return doc["parts"][0]["proof"]


def test_a_certificate_with_a_box_removed_is_rejected(coded_certificate, tmp_path):
    assert not verify_file(tampered(coded_certificate, tmp_path, drop_last_box)).valid


def test_a_certificate_with_a_category_dropped_from_a_split_is_rejected(
    coded_certificate, tmp_path
):
    def drop_first_code(doc):
        step = next(s for s in _steps(doc) if s[0] == "split" and isinstance(s[2], dict))
        step[2]["codes"] = step[2]["codes"][1:] or [CODES[-1]]

    assert not verify_file(tampered(coded_certificate, tmp_path, drop_first_code)).valid


def test_a_certificate_with_the_nan_flag_removed_is_rejected(coded_certificate, tmp_path):
    def never_missing(doc):
        del doc["question"]["domain"][1]["missing"]

    assert not verify_file(tampered(coded_certificate, tmp_path, never_missing)).valid


def test_a_certificate_with_a_bound_changed_is_rejected(coded_certificate, tmp_path):
    def lower(doc):
        step = next(s for s in _steps(doc) if s[0] == "prune")
        step[2] -= 0.01

    assert not verify_file(tampered(coded_certificate, tmp_path, lower)).valid


def test_a_certificate_read_as_version_2_is_rejected(coded_certificate, tmp_path):
    def version_2(doc):
        doc["version"] = 2

    assert not verify_file(tampered(coded_certificate, tmp_path, version_2)).valid


def test_a_certificate_checked_against_another_model_is_rejected(
    coded_certificate, models, tmp_path
):
    verdict = verify_file(coded_certificate, model_path=str(models["lightgbm-zero"]))
    assert not verdict.valid


# ---- brute force ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["xgboost", "lightgbm-nan", "lightgbm-zero", "hgb-nan"])
def test_a_certificate_edited_to_claim_a_gap_brute_force_reaches_is_rejected(
    kind, models, tmp_path
):
    """The max-gap certificate of f1, its claim lowered below the gap a pair reaches
    (the max gap's lower bound, which brute force confirms): the checker must reject it."""
    out = tmp_path / "mg.json"
    ens = _model(models[kind])
    r = treesens.max_gap(ens, vary=["f1"], certificate=out)
    assert r.proof.checked
    false_gap = round(r.max_gap["lower"] * 0.999, 6)
    assert brute_force_sensitive(ens, Query(vary=("f1",), gap=Gap(false_gap)))

    def claim_false_gap(doc):
        doc["question"]["claim"]["gap"] = false_gap

    assert not verify_file(tampered(out, tmp_path, claim_false_gap)).valid


# ---- every claim kind -----------------------------------------------------------------
def _train_other(kind: str, folder: Path) -> Path:
    """A LightGBM three-class model or an XGBoost regressor on the same data."""
    X, _ = _frame()
    s = X["f2"].to_numpy() + 0.2 * np.isin(X["f0"].cat.codes, [1, 3])
    if kind == "lightgbm-multiclass":
        import lightgbm

        est = lightgbm.LGBMClassifier(
            n_estimators=4, num_leaves=4, learning_rate=0.5, min_child_samples=5,
            min_data_per_group=5, cat_smooth=1, verbose=-1,
        )  # fmt: skip
        path = folder / "multiclass.txt"
        est.fit(X, np.digitize(s, [0.5, 0.9])).booster_.save_model(path)
        return path
    import xgboost

    est = xgboost.XGBRegressor(
        n_estimators=6, max_depth=3, learning_rate=0.5, enable_categorical=True,
        tree_method="hist", max_cat_to_onehot=1,
    )  # fmt: skip
    path = folder / "regressor.json"
    est.fit(X, 10 * s + np.nan_to_num(X["f1"].to_numpy(), nan=2.0)).get_booster().save_model(path)
    return path


def test_a_margin_gap_just_above_the_max_gap_is_certified(models, tmp_path):
    ens = _model(models["xgboost"])
    bound = treesens.max_gap(ens, vary=["f1"], certificate=tmp_path / "mg.json").proof.bound
    margin = float(np.log((0.5 + bound) / (0.5 - bound)))
    out = tmp_path / "margin.json"
    r = treesens.check(ens, vary=["f1"], margin_gap=margin, certificate=out)
    assert r.status == "insensitive" and r.proof.checked, r.proof.why_not
    assert json.loads(out.read_text())["question"]["claim"]["gap_kind"] == "margin"


def test_a_multiclass_max_gap_and_an_any_answer_above_it_are_certified(tmp_path):
    ens = _model(_train_other("lightgbm-multiclass", tmp_path))
    mg = treesens.max_gap(ens, vary=["f0"], classes="any,any", certificate=tmp_path / "mg.json")
    assert mg.proof.checked, mg.proof.why_not
    out = tmp_path / "any.json"
    gap = mg.proof.bound * 1.01
    r = treesens.check(ens, vary=["f0"], gap=gap, classes="any,any", certificate=out)
    assert r.status == "insensitive" and r.proof.checked, r.proof.why_not
    parts = json.loads(out.read_text())["parts"]
    assert len(parts) == 6  # one proof per class pair
    assert any(isinstance(s[2], dict) for p in parts for s in p["proof"] if s[0] == "split")


def test_a_regressors_largest_change_and_a_change_above_it_are_certified(tmp_path):
    ens = _model(_train_other("xgboost-regressor", tmp_path))
    mg = treesens.max_gap(ens, vary=["f1"], certificate=tmp_path / "mg.json")
    assert mg.proof.checked, mg.proof.why_not
    out = tmp_path / "change.json"
    r = treesens.check(ens, vary=["f1"], delta=mg.proof.bound * 1.01, certificate=out)
    assert r.status == "insensitive" and r.proof.checked, r.proof.why_not
    doc = json.loads(out.read_text())
    assert doc["question"]["claim"]["kind"] == "change"
    assert doc["question"]["domain"][1]["missing"] and doc["question"]["domain"][0]["codes"]


def test_a_categorical_feature_that_may_be_missing_is_certified(tmp_path):
    """NaN among the categories (XGBoost sends it to each node's default side): a NaN-only
    part of a box passes a second categorical node on the same feature."""
    import xgboost

    X, y = _frame()
    X.loc[np.random.default_rng(5).random(len(X)) < 0.2, "f0"] = np.nan
    est = xgboost.XGBClassifier(
        n_estimators=8, max_depth=4, learning_rate=0.5, enable_categorical=True,
        tree_method="hist", max_cat_to_onehot=1,
    )  # fmt: skip
    path = tmp_path / "xgb-nan-codes.json"
    est.fit(X, y).get_booster().save_model(path)
    ens = declare(treesens.load_model(str(path)), missing=["f0", "f1"])
    for vary in ("f0", "f1"):
        out = tmp_path / f"{vary}.json"
        r = treesens.max_gap(ens, vary=[vary], certificate=out)
        assert r.proof.checked, (vary, r.proof.why_not)
        assert json.loads(out.read_text())["question"]["domain"][0]["missing"]


def test_a_nan_only_part_of_a_coded_column_passes_a_second_node_on_it():
    """Every code goes left at the root, NaN right, into a second categorical node on the
    same feature: NaN alone reaches it, and its default side's leaf is reachable."""
    from treesens.verify.box_checks import Checker
    from treesens.verify.models import Tree

    tree = Tree(
        feature=[0, -1, 0, -1, -1],
        threshold=[0.0] * 5,
        left=[1, -1, 3, -1, -1],
        right=[2, -1, 4, -1, -1],
        value=[0.0, 1.0, 0.0, 2.0, 3.0],
        default_left=[False, False, True, False, False],
        missing=["nan"] * 5,
        cats=[frozenset({0, 1}), None, frozenset({1}), None, None],
    )
    m = Model([tree], 0.0, "<", ["f0"], 1.0, reads_nan=True)
    domain = [{"lb": 0, "ub": 1, "integer": True, "codes": [0, 1], "missing": True}]
    checker = Checker(m, {"vary": ["f0"], "domain": domain}, [[0, 1], [0, 2]], 3)
    leaves = {n: nan for n, _, _, nan in checker._leaf_boxes(tree, 0)}
    assert leaves[1][0] == False and leaves[3][0] == True  # noqa: E712 - numpy bools
    assert 4 not in leaves  # NaN takes node 2's default (left) side
