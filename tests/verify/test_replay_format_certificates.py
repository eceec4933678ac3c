"""Replayed boxes (near misses, ``["replay", x1, x2]``) on scikit-learn GradientBoosting
and HistGradientBoosting models and a Pipeline (``.skops``), CatBoost (``.cbm``) and ONNX
(skl2onnx): the checker confirms each with the library's own raw scores
(``decision_function``, ``RawFormulaVal``, onnxruntime's scores), and rejects a replayed
pair moved out of its box or a claim the library's scores meet."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import treesens
from treesens.questions.certify import certify
from treesens.questions.query_build import make_query
from treesens.search.box_search import FOUND, box_search
from treesens.search.pair_boxes import pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.verify.tampering import tampered
from treesens.verify import verify_file
from treesens.verify.models import read_model
from treesens.verify.replay import library_raw

KINDS = ["gradient-boosting", "hist-gradient-boosting", "pipeline", "catboost", "onnx"]
FEATURES = ["f0", "f1", "f2", "f3"]


def _data() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 4)).astype(np.float32)
    y = (X[:, 0] + 0.3 * X[:, 1] + 0.05 * X[:, 2] > 0.7).astype(int)
    return pd.DataFrame(X, columns=FEATURES), y


def _train(kind: str, folder: Path) -> Path:
    import skops.io
    from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier

    X, y = _data()
    gb = GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=0)
    if kind == "catboost":
        import catboost

        path = folder / "model.cbm"
        catboost.CatBoostClassifier(iterations=6, depth=3, verbose=0).fit(X, y).save_model(path)
        return path
    if kind == "onnx":
        from skl2onnx import to_onnx

        X32 = X.to_numpy()
        path = folder / "model.onnx"
        onx = to_onnx(gb.fit(X32, y), X32[:1], options={"zipmap": False})
        path.write_bytes(onx.SerializeToString())
        return path
    if kind == "pipeline":
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler

        est = Pipeline([("scale", StandardScaler()), ("model", gb)])
    elif kind == "hist-gradient-boosting":
        est = HistGradientBoostingClassifier(max_iter=4, max_depth=3, learning_rate=0.5)
    else:
        est = gb
    path = folder / f"{kind}.skops"
    skops.io.dump(est.fit(X, y), path)
    return path


def _pair_found(ens, gap: float) -> tuple[bool, float]:
    enc = pair_encoding(ens, make_query(["f0"], margin_gap=gap))
    out = box_search(enc, pair_tables(enc), time.time() + 60, [])
    return out.status == FOUND, enc.relax


def _near_miss(kind: str, folder: Path):
    """The model, and a certificate of a margin gap just above the largest one a pair
    reaches: within the relaxation, so its boxes on the edge are replayed."""
    model = _train(kind, folder)
    ens = treesens.load_model(str(model))
    lo, hi = 0.0, 10.0  # the edge: the largest gap the relaxed search still finds
    for _ in range(45):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _pair_found(ens, mid)[0] else (lo, mid)
    relax = _pair_found(ens, lo)[1]
    path = folder / "certificate.json"
    done = certify(ens, make_query(["f0"], margin_gap=lo - relax / 2), path, model, 60)
    return model, path, done


@pytest.fixture(scope="module", params=KINDS)
def near_miss(request, tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skl2onnx's deprecations
        return _near_miss(request.param, tmp_path_factory.mktemp(request.param))


def _replays(path: Path) -> list:
    return [s for s in json.loads(path.read_text())["parts"][0]["proof"] if s[0] == "replay"]


def test_a_near_miss_box_is_certified_as_a_replayed_box_the_checker_accepts(near_miss):
    _, path, done = near_miss
    assert done.verified, done.message
    assert _replays(path)
    assert verify_file(path).valid


def test_the_checkers_replay_gives_the_trees_raw_scores(near_miss):
    """The library's scores of a replayed pair are the checker's model's own sum of
    leaves (the units the rows are in)."""
    model_file, path, _ = near_miss
    library = json.loads(path.read_text())["model"]["library"]
    doc = json.loads(path.read_text())
    m = read_model(str(model_file), library, test=doc["model"]["test"], maps=doc.get("maps"))
    _, x1, x2 = _replays(path)[0]
    X = np.array([x1, x2], dtype=np.float64)
    got = library_raw(str(model_file), library, m, doc.get("maps"))(X)[:, 0]
    want = [_checker_raw(m, x) for x in X]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _checker_raw(m, x) -> float:
    from treesens.verify.pair_space import goes_left

    out = m.offset
    for t in m.trees:
        n = 0
        while t.feature[n] >= 0:
            n = t.left[n] if goes_left(m, t, n, float(x[t.feature[n]])) else t.right[n]
        out += t.value[n]
    return out


def test_the_checker_rejects_a_replayed_pair_outside_its_box(near_miss, tmp_path):
    def move_x1(doc):
        step = next(s for s in doc["parts"][0]["proof"] if s[0] == "replay")
        step[1][0] = -1e6  # f0, the varied feature, far below every threshold

    verdict = verify_file(tampered(near_miss[1], tmp_path, move_x1))
    assert not verdict.valid and "outside the box" in verdict.message


def test_the_checker_rejects_a_replayed_pair_the_library_scores_as_meeting_the_gap(
    near_miss, tmp_path, monkeypatch
):
    from treesens.answers.verdict import NearMiss
    from treesens.questions import certify as certify_module

    # a replay that wrongly calls every pair a near miss, at a gap the pairs do reach
    monkeypatch.setattr(certify_module, "check_pair", lambda e, q, enc, w: NearMiss(w, (0,)))
    model_file, path, _ = near_miss
    gap = json.loads(path.read_text())["question"]["claim"]["gap"] * 0.5
    ens = treesens.load_model(str(model_file))
    out = tmp_path / "c.json"
    done = certify(ens, make_query(["f0"], margin_gap=gap), out, model_file, 60)
    assert done.written and not done.verified
    assert "meet every row" in done.reason


def test_a_lightgbm_replay_gives_the_raw_score_before_its_sigmoid(tmp_path):
    """A LightGBM model trained with ``sigmoid:2``: its raw score (the rows' units) is the
    sum of the leaves, not that sum over the sigmoid's scale."""
    import lightgbm

    X, y = _data()
    params = {"objective": "binary", "sigmoid": 2.0, "num_leaves": 4, "verbose": -1}
    booster = lightgbm.train(params, lightgbm.Dataset(X, y), num_boost_round=4)
    path = tmp_path / "sigmoid.txt"
    booster.save_model(path)
    m = read_model(str(path), "lightgbm")
    assert m.margin_per_logit == 2.0
    X2 = X.to_numpy()[:2].astype(np.float64)
    got = library_raw(str(path), "lightgbm", m)(X2)[:, 0]
    np.testing.assert_allclose(got, [_checker_raw(m, x) for x in X2], rtol=1e-9)


# ---- the replay's scores per output, on more shapes of model ---------------------------
def _three_classes() -> tuple[pd.DataFrame, np.ndarray]:
    X, _ = _data()
    return X, np.digitize(X["f0"] + 0.3 * X["f1"], [0.5, 0.9])


def _other(kind: str, folder: Path) -> tuple[Path, str, list | None]:
    """(model file, the checker's library, a pipeline's maps) of a forest, a multiclass
    model or a pipeline with a one-hot input."""
    import skops.io
    from sklearn import ensemble as E

    X, y = _data()
    if kind in ("forest", "forest-multiclass", "boosting-multiclass", "hgb-multiclass"):
        if kind.endswith("multiclass"):
            X, y = _three_classes()
        est = {
            "forest": E.RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
            "forest-multiclass": E.RandomForestClassifier(n_estimators=3, max_depth=3),
            "boosting-multiclass": E.GradientBoostingClassifier(n_estimators=3, max_depth=2),
            "hgb-multiclass": E.HistGradientBoostingClassifier(max_iter=3, max_depth=2),
        }[kind]
        path = folder / f"{kind}.skops"
        skops.io.dump(est.fit(X, y), path)
        return path, "sklearn", None
    if kind in ("catboost-multiclass", "catboost-absent-class"):
        import catboost

        X, y = _three_classes()
        path = folder / "multiclass.cbm"
        est = catboost.CatBoostClassifier(iterations=3, depth=2, loss_function="MultiClass")
        if kind == "catboost-absent-class":  # label 2 absent: catboost scores it -inf
            est.set_params(class_names=[0, 1, 2, 3])
            y = np.where(y == 2, 3, y)
        est.fit(X, y, verbose=0).save_model(path)
        return path, "catboost", None
    if kind == "onnx-multiclass":
        from skl2onnx import to_onnx

        X, y = _three_classes()
        X32 = X.to_numpy()
        est = E.GradientBoostingClassifier(n_estimators=3, max_depth=2).fit(X32, y)
        path = folder / "multiclass.onnx"
        path.write_bytes(to_onnx(est, X32[:1], options={"zipmap": False}).SerializeToString())
        return path, "onnx", None
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    from treesens.questions.certify_pipeline import pipeline_maps

    colour = np.array(["red", "green", "blue"])[(X["f3"].to_numpy() * 3).astype(int)]
    frame = X.assign(f3=colour)
    y = (X["f0"] + 0.4 * (colour == "green") > 0.7).astype(int)
    columns = ColumnTransformer(
        [("hot", OneHotEncoder(), ["f3"]), ("num", "passthrough", ["f0", "f1", "f2"])]
    )
    pipe = Pipeline([("columns", columns), ("model", E.GradientBoostingClassifier(n_estimators=4))])
    path = folder / "one-hot.skops"
    skops.io.dump(pipe.fit(frame, y), path)
    return path, "sklearn-pipeline", pipeline_maps(treesens.load_model(str(path)), str(path))


OTHERS = [
    "forest",
    "forest-multiclass",
    "boosting-multiclass",
    "hgb-multiclass",
    "catboost-multiclass",
    "catboost-absent-class",
    "onnx-multiclass",
    "one-hot-pipeline",
]


@pytest.mark.parametrize("kind", OTHERS)
def test_the_replay_gives_every_outputs_raw_score_as_the_checkers_model_sums_it(kind, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path, library, maps = _other(kind, tmp_path)
    m = read_model(str(path), library, maps=maps)
    rng = np.random.default_rng(2)
    X = rng.uniform(0, 1, size=(2, len(m.features)))
    if library == "sklearn-pipeline":  # the one-hot input takes codes 0..2
        coded = next(iter(m.known_codes))
        X[:, coded] = [0.0, 2.0]
    got = library_raw(str(path), library, m, maps)(X)
    want = [[_checker_output(m, x, k) for k in range(m.n_outputs)] for x in X]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _checker_output(m, x, k: int) -> float:
    from treesens.verify.pair_space import goes_left

    out = m.offset_of(k)
    for t in m.trees:
        n = 0
        while t.feature[n] >= 0:
            n = t.left[n] if goes_left(m, t, n, float(x[t.feature[n]])) else t.right[n]
        out += t.values[n][k] if t.values is not None else (t.value[n] if t.output == k else 0.0)
    return out


def test_the_checker_replays_a_forest_fitted_with_two_jobs_on_one_thread(tmp_path, monkeypatch):
    # on several threads a forest adds its trees in the order they finish: an ulp apart
    # from run to run, a box on the claim's boundary verifying in one run and not the next
    import skops.io
    from sklearn.ensemble import RandomForestClassifier

    X, y = _data()
    path = tmp_path / "forest.skops"
    forest = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0, n_jobs=2)
    skops.io.dump(forest.fit(X.to_numpy(), y), path)
    asked = []
    own = RandomForestClassifier.predict_proba
    monkeypatch.setattr(
        RandomForestClassifier,
        "predict_proba",
        lambda self, rows: asked.append(self.n_jobs) or own(self, rows),
    )
    m = read_model(str(path), "sklearn")
    library_raw(str(path), "sklearn", m)(np.zeros((2, 4)))
    assert asked == [1]


def test_the_checker_replays_an_onnx_model_on_one_thread(tmp_path, monkeypatch):
    # as treesens' own replay: onnxruntime splits the trees' float32 sum over its threads,
    # so another number of threads can sum a pair on the claim's boundary otherwise
    import onnxruntime

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skl2onnx's deprecations
        path = _train("onnx", tmp_path)
    threads = []
    own = onnxruntime.InferenceSession

    def session(blob, options=None, **kw):
        threads.append(None if options is None else options.intra_op_num_threads)
        return own(blob, options, **kw)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    library_raw(str(path), "onnx", read_model(str(path), "onnx"))
    assert threads == [1]
