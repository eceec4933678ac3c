"""XGBoost computes P = sigmoid(margin) in float32: from a margin of 16.7 on it reads
P = 1.0, where the exact sigmoid is 1 - 6e-8. A probability claim is of P as the library
computes it, so the checker's rows ask that rounding less of P (verify/claims.py) and a
replayed pair is judged on the library's own probabilities; it judged both in exact
raw-margin arithmetic, and a claim lowered onto a gap XGBoost's predict reaches verified
VALID."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import treesens
from treesens.compiler.ensemble import LOGISTIC, Ensemble, Feature, ModelOrigin
from treesens.readers.formats.xgboost_replay import native_model
from treesens.tests.oracle import _stump
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file
from treesens.verify.models import read_model
from treesens.verify.replay import library_proba

LOW, HIGH = -20.0, 16.7  # the stump's leaves: f0 < 0.5, and the rest
TRUE_GAP = 0.4999999999  # no pair's P(x2) reaches 1e-10: sigmoid(-20) is 2.06e-9
REACHED = 0.49999999  # XGBoost's predict puts (0.9, 0.1) at P = 1.0 and 2.06e-9


def stump_model(low: float, high: float) -> dict:
    """XGBoost's JSON of one stump on f0 < 0.5 (leaves ``low`` and ``high``) reading two
    features, binary:logistic from a base score of 0.5."""
    stump = Ensemble(
        trees=(_stump(0, 0.5, high, low),),
        features=(Feature("f0", "real"), Feature("f1", "real")),
        n_classes=2,
        intercept=(0.0,),
        link=LOGISTIC,
        op="<",
        cast="float32",
        origin=ModelOrigin("stump", f"{low}, {high}"),
        replayer=None,
    )
    return native_model(stump)


@pytest.fixture(scope="module")
def saturated(tmp_path_factory):
    """The stump, and treesens' certificate of the gap no pair reaches."""
    folder = tmp_path_factory.mktemp("saturated")
    model = folder / "model.json"
    model.write_text(json.dumps(stump_model(LOW, HIGH)))
    path = folder / "certificate.json"
    r = treesens.check(str(model), ["f0"], gap=TRUE_GAP, certificate=str(path))
    assert r.status == "insensitive"
    doc = json.loads(path.read_text())
    doc["model"]["file"] = str(model)  # absolute: a tampered copy lies in another folder
    path.write_text(json.dumps(doc))
    return model, path


def _lowered(doc: dict) -> None:
    doc["question"]["claim"]["gap"] = REACHED


def test_xgboost_s_predict_puts_a_pair_at_the_lowered_gap(saturated):
    import xgboost

    booster = xgboost.Booster(model_file=str(saturated[0]))
    p = booster.predict(xgboost.DMatrix(np.array([[0.9, 0.5], [0.1, 0.5]]))).astype(float)
    assert p[0] >= 0.5 + REACHED and p[1] <= 0.5 - REACHED


def test_the_certificate_of_a_gap_no_pair_reaches_verifies(saturated):
    assert verify_file(saturated[1]).valid


def test_a_claim_lowered_onto_a_gap_the_library_reaches_is_refused(saturated, tmp_path):
    verdict = verify_file(tampered(saturated[1], tmp_path, _lowered))
    assert not verdict.valid and "library's probabilities" in verdict.message


def test_a_box_pruned_within_the_library_s_rounding_of_the_claim_is_refused(saturated, tmp_path):
    """The replayed box (x1 at 16.7, x2 at -20) pruned on x1's row instead: 16.7 lies
    below the exact logit of 0.99999999 (18.42), not below what XGBoost's P = 1.0 asks."""

    def pruned(doc: dict) -> None:
        _lowered(doc)
        proof = doc["parts"][0]["proof"]
        k = next(i for i, s in enumerate(proof) if s[0] == "replay")
        proof[k] = ["prune", "x1", HIGH]

    verdict = verify_file(tampered(saturated[1], tmp_path, pruned))
    assert not verdict.valid and "does not reach below" in verdict.message


# a three-class softprob model of a stump per class: x1 (f0 >= 0.5) at margins X1, x2 at
# X2; XGBoost's float32 softmax reads P_1 / P_0 of x1 2.7e-7 above exp(raw_1 - raw_0)
X1, X2 = (-2.980773448944092, 2.3179476261138916, -8.0), (3.0, -3.0, -8.0)


def softprob_model() -> dict:
    doc = stump_model(0.0, 0.0)
    model = doc["learner"]["gradient_booster"]["model"]
    one = model["trees"][0]
    model["trees"] = [
        {**one, "id": k, "split_conditions": [0.5, lo, hi], "base_weights": [0.0, lo, hi]}
        for k, (hi, lo) in enumerate(zip(X1, X2, strict=True))
    ]
    model["tree_info"], model["iteration_indptr"] = [0, 1, 2], [0, 3]
    model["gbtree_model_param"]["num_trees"] = "3"
    doc["learner"]["learner_model_param"]["num_class"] = "3"
    doc["learner"]["objective"] = {
        "name": "multi:softprob",
        "softmax_multiclass_param": {"num_class": "3"},
    }
    return doc


@pytest.fixture(scope="module")
def softprob(tmp_path_factory):
    """The model, the ratio its predict gives x1 (class 1 over 0) and exp of its raw
    scores' difference, and treesens' certificate of a ratio just above the library's."""
    import xgboost

    folder = tmp_path_factory.mktemp("softprob")
    model = folder / "model.json"
    model.write_text(json.dumps(softprob_model()))
    booster = xgboost.Booster(model_file=str(model))
    p = booster.predict(xgboost.DMatrix(np.array([[0.9, 0.5]]))).astype(float)[0]
    raw = booster.predict(xgboost.DMatrix(np.array([[0.9, 0.5]])), output_margin=True)[0]
    library, exact = p[1] / p[0], math.exp(float(raw[1]) - float(raw[0]))
    path = folder / "certificate.json"
    r = treesens.check(
        str(model), ["f0"], gap=library * (1 + 1e-7), classes=(1, 0), certificate=str(path)
    )
    assert r.status == "insensitive"
    doc = json.loads(path.read_text())
    doc["model"]["file"] = str(model)  # absolute: a tampered copy lies in another folder
    path.write_text(json.dumps(doc))
    return path, library, exact


def test_xgboost_s_softmax_reads_a_ratio_above_the_exact_one(softprob):
    _, library, exact = softprob
    assert library > exact * (1 + 2e-7)


def test_the_certificate_of_a_ratio_just_above_the_library_s_verifies(softprob):
    assert verify_file(softprob[0]).valid


def test_a_ratio_lowered_between_the_exact_and_the_library_s_is_refused(softprob, tmp_path):
    path, _, exact = softprob

    def lowered(doc: dict) -> None:
        doc["question"]["claim"]["gap"] = exact * (1 + 1e-7)

    verdict = verify_file(tampered(path, tmp_path, lowered))
    assert not verdict.valid and "library's probabilities" in verdict.message


@pytest.fixture(scope="module")
def stumps(tmp_path_factory):
    """Six unregularised stumps on f0 > 0.5 (margins of +-7.2: XGBoost's P of the best
    pair sits on the float32 grid near 1), and the gap its predict gives that pair."""
    import xgboost

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    est = xgboost.XGBClassifier(
        n_estimators=6, max_depth=1, learning_rate=1.0, reg_lambda=0.0, min_child_weight=0.0
    )
    booster = est.set_params(n_jobs=1).fit(X, (X[:, 0] > 0.5).astype(int)).get_booster()
    folder = tmp_path_factory.mktemp("stumps")
    booster.save_model(folder / "model.json")
    p = booster.predict(xgboost.DMatrix(np.array([[0.99, 0.5], [0.01, 0.5]]))).astype(float)
    return folder, min(p[0] - 0.5, 0.5 - p[1])


@pytest.mark.parametrize("above", [2**-30, 2**-27, 2**-25, 2**-24, 2**-22, 2**-20])
def test_a_certificate_of_a_gap_just_above_the_library_s_best_verifies(stumps, above):
    folder, best = stumps
    path = folder / "certificate.json"
    r = treesens.check(str(folder / "model.json"), ["f0"], gap=best + above, certificate=path)
    assert r.status == "insensitive" and verify_file(path).valid


@pytest.fixture(scope="module", params=["binary", "multiclass"])
def onnx_gb(request, tmp_path_factory):
    """A GradientBoosting classifier as skl2onnx writes it (P by onnxruntime's float32
    LOGISTIC or SOFTMAX), its first rows, and the question's keywords (classes)."""
    from skl2onnx import to_onnx
    from sklearn.ensemble import GradientBoostingClassifier

    X = np.random.default_rng(0).uniform(0, 1, size=(400, 4)).astype(np.float32)
    y = (X[:, 0] + 0.3 * X[:, 1] > 0.7).astype(int)
    if request.param == "multiclass":
        y = y + (X[:, 3] > 0.5)
    gb = GradientBoostingClassifier(n_estimators=6, max_depth=3, learning_rate=1.0)
    path = tmp_path_factory.mktemp("onnx") / "model.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skl2onnx's deprecations
        onx = to_onnx(gb.fit(X, y), X[:1], options={"zipmap": False})
    path.write_bytes(onx.SerializeToString())
    return path, X[:2], {"classes": (1, 0)} if request.param == "multiclass" else {}


def test_the_checker_reads_onnxruntime_s_own_probabilities(onnx_gb):
    import onnxruntime

    path, X, _ = onnx_gb
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    own = session.run(None, {session.get_inputs()[0].name: X})[1]
    proba = library_proba(str(path), "onnx", read_model(str(path), "onnx"))(X.astype(float))
    assert np.array_equal(proba, own if own.shape[1] > 2 else own[:, 1:])


def test_a_replayed_box_of_a_gap_just_above_onnx_s_best_verifies(onnx_gb, tmp_path):
    path, _, classes = onnx_gb
    best = treesens.max_gap(str(path), ["f0"], **classes).max_gap["lower"]
    above = best * (1 + 2.0**-22) if classes else best + 2.0**-27
    out = tmp_path / "certificate.json"
    r = treesens.check(str(path), ["f0"], gap=above, certificate=out, **classes)
    replayed = [s for p in json.loads(out.read_text())["parts"] for s in p["proof"]]
    assert r.status == "insensitive" and any(s[0] == "replay" for s in replayed)
    assert verify_file(out).valid


def test_a_replayed_pair_xgboost_reads_under_the_gap_verifies(tmp_path):
    """Two stumps whose best pair XGBoost's float32 sigmoid reads below the exact one (P =
    0.99986768 against 0.99986771), certified at a gap between the two: the pair meets
    the exact rows and misses XGBoost's P, which the checker asked of neither."""
    import xgboost

    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, (400, 3))
    est = xgboost.XGBClassifier(
        n_estimators=2, max_depth=1, learning_rate=3.0, reg_lambda=0.0, min_child_weight=0.0
    )
    booster = est.set_params(n_jobs=1).fit(X, (X[:, 0] > 0.5).astype(int)).get_booster()
    booster.save_model(tmp_path / "model.json")
    pair = xgboost.DMatrix(np.array([[0.99, 0.5, 0.5], [0.01, 0.5, 0.5]]))
    p1 = float(booster.predict(pair)[0])
    exact = 1.0 / (1.0 + math.exp(-float(booster.predict(pair, output_margin=True)[0])))
    path = tmp_path / "certificate.json"
    r = treesens.check(
        str(tmp_path / "model.json"), ["f0"], gap=(p1 + exact) / 2 - 0.5, certificate=path
    )
    assert r.status == "insensitive" and verify_file(path).valid
