"""Loaded models pickle with the standard library and answer in another process.

An Ensemble carries what replay needs (the model file's bytes, or the fitted library
object's serialised bytes); the library's model is rebuilt on first use after unpickling,
so a query answers on a machine that never saw the model file.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import treesens
from treesens.readers.load import load_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_XGB_PARAMS = {"max_depth": 2, "nthread": 1, "objective": "binary:logistic"}


def _rows(ens, n: int = 30) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, ens.n_features)) * 3


def _data(n: int = 300, d: int = 5):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    return X, y


def _assert_round_trip(ens) -> None:
    back = pickle.loads(pickle.dumps(ens))
    X = _rows(ens)
    assert back.fingerprint() == ens.fingerprint()
    assert back.replayer is not None and back.replayer is not ens.replayer
    assert np.allclose(back.replayer.predict_proba(X), ens.replayer.predict_proba(X))
    assert np.allclose(back.replayer.predict_raw(X), ens.replayer.predict_raw(X))
    assert np.allclose(back.raw(X), ens.raw(X))


def test_xgboost_json_model_pickles():
    _assert_round_trip(load_model(EXAMPLES / "breast_cancer_xgb.json"))


def test_xgboost_ubj_model_pickles(tmp_path):
    xgb = pytest.importorskip("xgboost")
    path = tmp_path / "m.ubj"
    xgb.Booster(model_file=str(EXAMPLES / "wine_xgb.json")).save_model(str(path))
    _assert_round_trip(load_model(path))


def test_xgboost_in_memory_booster_pickles():
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    booster = xgb.train(_XGB_PARAMS, xgb.DMatrix(X, label=y), 5)
    ens = load_model(booster)
    # the replayer holds the Booster until it is pickled: then the Booster's saved bytes
    _assert_round_trip(ens)


def test_xgboost_dump_pickles(tmp_path):
    xgb = pytest.importorskip("xgboost")
    X, y = _data()
    booster = xgb.train(_XGB_PARAMS, xgb.DMatrix(X, label=y), 5)
    path = tmp_path / "dump.json"
    path.write_text("[" + ",".join(booster.get_dump(dump_format="json")) + "]")
    _assert_round_trip(load_model(path))


def test_lightgbm_text_and_in_memory_models_pickle(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    booster = lgb.train(
        {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1},
        lgb.Dataset(X, label=y),
        5,
    )
    path = tmp_path / "m.txt"
    booster.save_model(str(path))
    _assert_round_trip(load_model(path))
    _assert_round_trip(load_model(booster))


def test_lightgbm_dump_model_json_pickles(tmp_path):
    lgb = pytest.importorskip("lightgbm")
    X, y = _data()
    booster = lgb.train(
        {"objective": "binary", "num_leaves": 4, "verbose": -1, "num_threads": 1},
        lgb.Dataset(X, label=y),
        5,
    )
    path = tmp_path / "m.json"
    path.write_text(json.dumps(booster.dump_model()))
    _assert_round_trip(load_model(path))


@pytest.mark.parametrize("kind", ["forest", "boosting", "hist"])
def test_sklearn_models_pickle(kind):
    ensemble = pytest.importorskip("sklearn.ensemble")
    make = {
        "forest": lambda: ensemble.RandomForestClassifier(4, max_depth=3, random_state=0),
        "boosting": lambda: ensemble.GradientBoostingClassifier(n_estimators=4, max_depth=2),
        "hist": lambda: ensemble.HistGradientBoostingClassifier(max_iter=4, max_depth=2),
    }[kind]
    X, y = _data()
    _assert_round_trip(load_model(make().fit(X, y)))


def test_unpickled_trees_stay_read_only():
    ens = pickle.loads(pickle.dumps(load_model(EXAMPLES / "breast_cancer_xgb.json")))
    assert not ens.trees[0].threshold.flags.writeable
    with pytest.raises(ValueError):
        ens.trees[0].threshold[0] = 1.0


def test_fingerprint_is_computed_once_and_survives_pickling():
    ens = load_model(EXAMPLES / "breast_cancer_xgb.json")
    first = ens.fingerprint()
    assert ens.fingerprint() is first
    assert pickle.loads(pickle.dumps(ens)).fingerprint() == first


_CHILD = textwrap.dedent(
    """
    import pickle, sys
    import treesens

    ens = pickle.loads(open(sys.argv[1], "rb").read())
    r = treesens.check(ens, ["mean_texture"], gap=0.2, timeout=120)
    rebuilt = ens.replayer._booster is not None  # xgboost's own model replayed the witness
    print(r.status, r.validated, rebuilt, r.error)
    """
)


def test_model_answers_in_another_process_after_its_file_is_deleted(tmp_path):
    model = tmp_path / "breast_cancer_xgb.json"
    shutil.copy(EXAMPLES / "breast_cancer_xgb.json", model)
    ens = load_model(model, details=EXAMPLES / "breast_cancer_details.csv")
    blob = tmp_path / "ens.pickle"
    blob.write_bytes(pickle.dumps(ens))
    model.unlink()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(blob)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["sensitive", "True", "True", "None"], out.stdout


def test_check_answers_on_an_unpickled_model_in_this_process():
    ens = pickle.loads(pickle.dumps(load_model(EXAMPLES / "breast_cancer_xgb.json")))
    r = treesens.check(ens, ["mean_texture"], gap=0.2, timeout=120)
    assert (r.status, r.validated) == ("sensitive", True)
