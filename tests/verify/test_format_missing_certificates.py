"""Certificates over features that may be missing on XGBoost dumps (JSON and text),
CatBoost (.cbm, nan_mode Min and Max) and ONNX tree ensembles (onnxmltools' XGBoost
and skl2onnx's HistGradientBoosting, with ``nodes_missing_value_tracks_true``, one of
them splitting NaN from every number at inf): the
checker's model routes NaN, thresholds and the values next to them as the library's own
predict does (xgboost, catboost, onnxruntime), every insensitive answer and max-gap bound
gets a certificate the checker accepts, and tampered or brute-force-false claims are
rejected. What treesens does not read is refused in one line (a dump's categorical
split)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.compiler.query import Gap, Query
from treesens.readers.details import declare
from treesens.tests.frontends.onnx_models import onnx_thresholds
from treesens.tests.oracle import brute_force_sensitive
from treesens.tests.verify.tampering import checker_raw, drop_last_box, tampered
from treesens.verify import verify_file
from treesens.verify.models import Model, ModelError, read_model
from treesens.verify.pair_space import goes_left

KINDS = [
    "dump-json",
    "dump-text",
    "catboost-min",
    "catboost-max",
    "onnx-xgboost",
    "onnx-hgb",
    "onnx-hgb-inf",
]
LIBRARY = {"dump": "xgboost-dump", "catboost": "catboost", "onnx": "onnx"}


def _data(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    """f0, f2: numbers in [-1, 1]; f1: numbers in [-1, 1], a fifth of them NaN, which the
    label reads as a high value."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
    X[rng.random(n) < 0.2, 1] = np.nan
    y = (X[:, 0] + 0.5 * np.nan_to_num(X[:, 1], nan=0.8) + 0.2 * X[:, 2] > 0.2).astype(int)
    return X, y


def _train(kind: str, folder: Path) -> Path:
    X, y = _data()
    if kind.startswith("dump") or kind == "onnx-xgboost":
        import xgboost

        est = xgboost.XGBClassifier(n_estimators=4, max_depth=2, learning_rate=0.5, base_score=0.5)
        est.fit(X, y)
        if kind == "dump-json":
            path = folder / "dump.json"
            path.write_text("[" + ",".join(est.get_booster().get_dump(dump_format="json")) + "]")
            return path
        if kind == "dump-text":
            path = folder / "dump.txt"
            est.get_booster().dump_model(str(path))
            return path
        from onnxmltools import convert_xgboost
        from onnxmltools.convert.common.data_types import FloatTensorType

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            onx = convert_xgboost(est, initial_types=[("input", FloatTensorType([None, 3]))])
        path = folder / "xgboost.onnx"
        path.write_bytes(onx.SerializeToString())
        return path
    if kind.startswith("catboost"):
        import catboost

        mode = "Min" if kind == "catboost-min" else "Max"
        est = catboost.CatBoostClassifier(iterations=4, depth=2, nan_mode=mode, verbose=0)
        path = folder / f"{kind}.cbm"
        est.fit(X, y).save_model(str(path))
        return path
    from skl2onnx import to_onnx
    from sklearn.ensemble import HistGradientBoostingClassifier

    if kind == "onnx-hgb-inf":  # f1 by NaN alone: a split of NaN from every number at inf
        y = (X[:, 0] + 0.8 * np.isnan(X[:, 1]) + 0.2 * X[:, 2] > 0.5).astype(int)
    est = HistGradientBoostingClassifier(max_iter=4, max_depth=2, learning_rate=0.5).fit(X, y)
    path = folder / f"{kind}.onnx"
    path.write_bytes(to_onnx(est, X[:1], options={"zipmap": False}).SerializeToString())
    assert (np.inf in [t for _, t in onnx_thresholds(path.read_bytes())]) == kind.endswith("inf")
    return path


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("missing")
    return {kind: _train(kind, folder) for kind in KINDS}


def _library(kind: str) -> str:
    return LIBRARY[kind.split("-")[0]]


def _model(path: Path):
    """The model as treesens reads it, with f1 declared may-be-missing."""
    fmt = "xgboost-dump" if path.suffix in (".json", ".txt") else None
    ens = treesens.load_model(str(path), format=fmt) if fmt else treesens.load_model(str(path))
    return declare(ens, missing=[ens.feature_names[1]])


def _library_raw(kind: str, path: Path, X: np.ndarray) -> np.ndarray:
    """The library's own raw score of each row: XGBoost's margin (the booster the dump
    was written from), CatBoost's RawFormulaVal, onnxruntime's score with post_transform
    NONE."""
    if kind.startswith("dump"):
        import xgboost

        est = xgboost.XGBClassifier(n_estimators=4, max_depth=2, learning_rate=0.5, base_score=0.5)
        booster = est.fit(*_data()).get_booster()  # the same seed and data: the same trees
        return booster.predict(xgboost.DMatrix(X), output_margin=True)
    if kind.startswith("catboost"):
        import catboost

        model = catboost.CatBoost()
        model.load_model(str(path))
        return model.predict(X, prediction_type="RawFormulaVal")
    import onnx
    import onnxruntime

    model = onnx.load_model(str(path))
    op = next(n for n in model.graph.node if n.op_type.startswith("TreeEnsemble"))
    for a in op.attribute:
        if a.name == "post_transform":
            a.s = b"NONE"
    session = onnxruntime.InferenceSession(model.SerializeToString())
    scores = np.asarray(session.run(None, {session.get_inputs()[0].name: X})[1])
    return scores[:, -1]  # a binary classifier's one score


def _rows_around_thresholds(m: Model) -> np.ndarray:
    """Every threshold of the model, the float32 numbers on either side of it and NaN,
    in every feature, crossed with a few values of the others."""
    values = [np.nan, -2.0, 0.0, 2.0]
    for t in m.trees:
        for n, f in enumerate(t.feature):
            if f >= 0:
                th = np.float32(t.threshold[n])
                values += [float(th), float(np.nextafter(th, np.float32(-9))), float(np.nextafter(th, np.float32(9)))]  # fmt: skip
    values = sorted(set(values), key=lambda v: (np.isnan(v), v))
    rng = np.random.default_rng(1)
    rows = [[rng.choice(values), rng.choice(values), rng.choice(values)] for _ in range(600)]
    rows += [[a, b, c] for a in values[::5] for b in values for c in values[::7]]
    return np.array(rows, dtype=np.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_the_checkers_model_routes_nan_and_thresholds_as_the_library_does(kind, models):
    m = read_model(str(models[kind]), _library(kind), test="<" if "xgboost" in kind else "<=")
    assert m.reads_nan
    X = _rows_around_thresholds(m)
    got = [checker_raw(m, r) for r in X.astype(np.float64)]
    # float32 sums (XGBoost, ONNX) in another order: a few float32 ulps
    np.testing.assert_allclose(got, _library_raw(kind, models[kind], X), rtol=0, atol=2e-6)


@pytest.mark.parametrize("kind", KINDS)
def test_every_insensitive_answer_gets_a_certificate_the_checker_accepts(kind, models, tmp_path):
    ens = _model(models[kind])
    insensitive = 0
    for gap in (0.1, 0.2, 0.3):
        out = tmp_path / f"{gap}.json"
        r = treesens.check(ens, vary=[ens.feature_names[1]], gap=gap, certificate=out)
        if r.status != "insensitive":
            continue
        insensitive += 1
        assert r.proof.checked, (gap, r.proof.why_not)
        doc = json.loads(out.read_text())
        assert doc["version"] == 3 and doc["question"]["domain"][1]["missing"] is True
        assert verify_file(out).valid
    assert insensitive > 0


@pytest.fixture(scope="module")
def max_gaps(models, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Per kind, the max-gap certificate of f1 (may be missing) and the max gap."""
    folder = tmp_path_factory.mktemp("max-gaps")
    out = {}
    for kind in KINDS:
        ens = _model(models[kind])
        path = folder / f"{kind}.json"
        r = treesens.max_gap(ens, vary=[ens.feature_names[1]], certificate=path)
        assert r.proof.checked, (kind, r.proof.why_not)
        out[kind] = (path, r.max_gap)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_every_max_gap_bound_gets_a_certificate_the_checker_accepts(kind, max_gaps):
    verdict = verify_file(max_gaps[kind][0])
    assert verdict.valid and "may be missing" in verdict.message


@pytest.mark.parametrize("kind", KINDS)
def test_a_certificate_with_a_box_removed_is_rejected(kind, max_gaps, tmp_path):
    assert not verify_file(tampered(max_gaps[kind][0], tmp_path, drop_last_box)).valid


@pytest.mark.parametrize("kind", ["dump-json", "catboost-max", "onnx-xgboost"])
def test_a_certificate_with_a_bound_changed_is_rejected(kind, max_gaps, tmp_path):
    def lower(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "prune")
        step[2] -= 0.01

    assert not verify_file(tampered(max_gaps[kind][0], tmp_path, lower)).valid


@pytest.mark.parametrize("kind", KINDS)
def test_a_certificate_edited_to_claim_a_gap_brute_force_reaches_is_rejected(
    kind, models, max_gaps, tmp_path
):
    """The max-gap certificate, its claim lowered below the gap a pair reaches (brute
    force, over NaN too, confirms it): the checker must reject it."""
    path, mg = max_gaps[kind]
    ens = _model(models[kind])
    false_gap = round(mg["lower"] * 0.999, 6)
    assert brute_force_sensitive(ens, Query(vary=(ens.feature_names[1],), gap=Gap(false_gap)))

    def claim_false_gap(doc):
        doc["question"]["claim"]["gap"] = false_gap

    assert not verify_file(tampered(path, tmp_path, claim_false_gap)).valid


def test_a_catboost_certificate_checked_against_the_other_nan_mode_is_rejected(max_gaps, models):
    verdict = verify_file(max_gaps["catboost-min"][0], model_path=str(models["catboost-max"]))
    assert not verdict.valid


# ---- what treesens does not read: refused in one line ---------------------------------
def test_the_checker_refuses_a_dumps_categorical_split_in_one_line(tmp_path):
    node = {"nodeid": 0, "split": "f0", "split_condition": [0, 2], "yes": 1, "no": 2}
    node["children"] = [{"nodeid": 1, "leaf": 0.5}, {"nodeid": 2, "leaf": -0.5}]
    path = tmp_path / "categorical.json"
    path.write_text(json.dumps([node]))
    with pytest.raises(ModelError, match="categorical split in an XGBoost dump"):
        read_model(str(path), "xgboost-dump")


def test_the_checker_refuses_a_text_dumps_categorical_split_in_one_line(tmp_path):
    path = tmp_path / "categorical.txt"
    path.write_text("booster[0]:\n0:[f0:{0,2}] yes=1,no=2,missing=1\n\t1:leaf=0.5\n\t2:leaf=-0.5\n")
    with pytest.raises(ModelError, match="line 2 of the text dump is not a numeric split"):
        read_model(str(path), "xgboost-dump")


def test_a_hand_written_dump_without_missing_sends_nan_yes_as_treesens_does(tmp_path):
    """examples/two_trees_dump.json names no NaN child: NaN goes ``yes``, as treesens
    reads it, and f1 declared may-be-missing is certified."""
    dump = Path(__file__).resolve().parents[2] / "examples" / "two_trees_dump.json"
    m = read_model(str(dump), "xgboost-dump")
    assert all(goes_left(m, t, 0, float("nan")) for t in m.trees)
    ens = declare(treesens.load_model(str(dump)), missing=["f1"])
    out = tmp_path / "c.json"
    r = treesens.check(ens, vary=["f1"], margin_gap=0.75, certificate=out)
    assert r.status == "insensitive" and r.proof.checked, r.proof.why_not


def test_an_onnx_model_with_an_equality_mode_gets_a_certificate_the_checker_accepts(
    models, tmp_path
):
    """onnxmltools' XGBoost model with its first node made BRANCH_EQ (as onnxmltools
    writes LightGBM's categorical splits): the checker reads the equality as treesens
    does (tests/verify/test_onnx_equality_certificates.py), and certifies f1's max gap."""
    import onnx

    model = onnx.load_model(str(models["onnx-xgboost"]))
    op = next(n for n in model.graph.node if n.op_type == "TreeEnsembleClassifier")
    modes = next(a for a in op.attribute if a.name == "nodes_modes")
    modes.strings[0] = b"BRANCH_EQ"
    path = tmp_path / "equality.onnx"
    path.write_bytes(model.SerializeToString())
    ens = _model(path)
    r = treesens.max_gap(ens, vary=["f1"], certificate=tmp_path / "c.json")
    assert r.proof.checked, r.proof.why_not
    assert verify_file(tmp_path / "c.json").valid


def test_the_checker_refuses_a_split_of_every_number_at_inf_under_the_strict_test(models):
    # x <= inf holds for inf too: no x < b states it
    with pytest.raises(ModelError, match="inf under the test '<'"):
        read_model(str(models["onnx-hgb-inf"]), "onnx", test="<")
