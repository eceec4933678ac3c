"""The command line replays XGBoost witnesses through libxgboost without the Python package
(readers/formats/xgboost_capi.py): its scores must be the package's own, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.errors import InputError
from treesens.readers import libraries
from treesens.readers.formats import xgboost_saved
from treesens.readers.formats.xgboost_capi import CApiBooster, find_library, version
from treesens.readers.formats.xgboost_replay import XGBoostReplayer

xgb = pytest.importorskip("xgboost")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "breast_cancer_deep_xgb.json"


def _rows(n_features: int, n: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)) * 2.0
    X[rng.random(X.shape) < 0.1] = np.nan
    return X


def _trained(objective: str, **extra) -> bytes:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]) > 0).astype(float)
    if objective.startswith("multi"):
        y = np.digitize(np.nan_to_num(X[:, 0]), [-0.5, 0.5]).astype(float)
        extra["num_class"] = 3
    params = {"objective": objective, "max_depth": 3, "eta": 0.3, **extra}
    booster = xgb.train(params, xgb.DMatrix(X, label=y, missing=np.nan), num_boost_round=15)
    return bytes(booster.save_raw(raw_format="json"))


def _categorical() -> bytes:
    rng = np.random.default_rng(2)
    a = rng.normal(size=500)
    c = rng.integers(0, 6, 500).astype(float)
    c[rng.random(500) < 0.1] = np.nan
    y = (np.isin(c, [1, 4]) ^ (a > 0.5)).astype(float)
    dm = xgb.DMatrix(
        np.column_stack([a, c]),
        label=y,
        feature_names=["a", "c"],
        feature_types=["q", "c"],
        enable_categorical=True,
    )
    params = {"objective": "binary:logistic", "max_depth": 3, "max_cat_to_onehot": 1}
    return bytes(xgb.train(params, dm, num_boost_round=10).save_raw(raw_format="json"))


def _package_predict(blob: bytes, X: np.ndarray, margin: bool) -> np.ndarray:
    b = xgb.Booster()
    b.load_model(bytearray(blob))
    dm = xgb.DMatrix(
        X, missing=np.nan, feature_names=b.feature_names, feature_types=b.feature_types
    )
    return np.asarray(b.predict(dm, output_margin=margin), dtype=np.float64)


MODELS = {
    "binary:logistic": lambda: _trained("binary:logistic"),
    "binary:logitraw": lambda: _trained("binary:logitraw"),
    "reg:logistic": lambda: _trained("reg:logistic"),
    "multi:softprob": lambda: _trained("multi:softprob"),
    "multi:softmax": lambda: _trained("multi:softmax"),
    "categorical": _categorical,
}


@pytest.fixture(scope="module")
def lib():
    found = find_library()
    if found is None:
        pytest.skip("the xgboost package's shared library is not where the package keeps it")
    return found


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("margin", [False, True])
def test_capi_scores_are_the_python_packages_bit_for_bit(lib, name, margin):
    blob = MODELS[name]()
    booster = CApiBooster(lib, blob)
    X = _rows(len(booster.feature_names or []) or 4)
    if name == "categorical":
        X[:, 1] = np.where(np.isnan(X[:, 1]), np.nan, np.abs(np.round(X[:, 1])) % 6)
    mine = booster.predict(X, output_margin=margin)
    theirs = _package_predict(blob, X, margin)
    assert mine.shape == theirs.shape
    assert np.array_equal(mine, theirs)


def test_capi_scores_on_the_examples_model_are_the_python_packages(lib):
    blob = EXAMPLE.read_bytes()
    X = np.abs(_rows(30, n=500, seed=3)) * 50.0
    assert np.array_equal(CApiBooster(lib, blob).predict(X), _package_predict(blob, X, False))


def test_capi_booster_reads_the_models_feature_names(lib):
    assert CApiBooster(lib, _categorical()).feature_types == ["q", "c"]


def test_lean_replayer_predicts_through_the_shared_library(lib, monkeypatch):
    monkeypatch.setattr(libraries, "_lean", True)
    rep = XGBoostReplayer(_trained("binary:logistic"), "binary:logistic", 2)
    X = _rows(4, n=20)
    assert isinstance(rep.booster, CApiBooster)
    expected = _package_predict(rep.model_bytes(), X, False)
    assert np.array_equal(rep.predict_proba(X)[:, 1], expected)


def test_replayer_without_lean_imports_uses_the_python_package(monkeypatch):
    monkeypatch.setattr(libraries, "_lean", False)
    rep = XGBoostReplayer(_trained("binary:logistic"), "binary:logistic", 2)
    assert isinstance(rep.booster, xgb.Booster)


def test_lean_replayer_of_bytes_libxgboost_refuses_is_an_input_error(lib, monkeypatch):
    monkeypatch.setattr(libraries, "_lean", True)
    rep = XGBoostReplayer(b'{"learner": 1}', "binary:logistic", 2, where="m.json")
    with pytest.raises(InputError, match="xgboost cannot load this model"):
        rep.predict_proba(np.zeros((1, 4)))


# the command line's replays load a model from libxgboost's own binary save of it, kept
# by an earlier command on the same bytes (readers/formats/xgboost_saved.py)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TREESENS_MODEL_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("margin", [False, True])
def test_a_booster_from_the_librarys_saved_form_predicts_bit_for_bit_as_from_the_file(
    lib, name, margin
):
    blob = MODELS[name]()
    saved = CApiBooster(lib, blob).saved()
    X = _rows(2 if name == "categorical" else 4, n=500, seed=5)
    if name == "categorical":
        X[:, 1] = np.where(np.isnan(X[:, 1]), np.nan, np.abs(np.round(X[:, 1])) % 6)
    again = CApiBooster(lib, saved)
    assert again.feature_types == CApiBooster(lib, blob).feature_types
    assert np.array_equal(again.predict(X, margin), _package_predict(blob, X, margin))


def test_the_examples_model_from_its_saved_form_predicts_as_from_the_file(lib):
    blob = EXAMPLE.read_bytes()
    X = np.abs(_rows(30, n=500, seed=3)) * 50.0
    saved = CApiBooster(lib, blob).saved()
    assert np.array_equal(CApiBooster(lib, saved).predict(X), _package_predict(blob, X, False))


def _loads(monkeypatch) -> list[bytes]:
    seen: list[bytes] = []
    made = xgboost_saved.CApiBooster

    def recording(lib, blob):
        seen.append(bytes(blob))
        return made(lib, blob)

    monkeypatch.setattr(xgboost_saved, "CApiBooster", recording)
    return seen


def test_a_models_second_load_reads_the_saved_form_the_first_kept(lib, cache, monkeypatch):
    blob = _trained("binary:logistic")
    seen = _loads(monkeypatch)
    xgboost_saved.booster(lib, blob, version(lib))
    xgboost_saved.booster(lib, blob, version(lib))
    assert seen == [blob, CApiBooster(lib, blob).saved()]


def test_a_damaged_saved_form_is_ignored_and_written_again(lib, cache, monkeypatch):
    blob = _trained("binary:logistic")
    xgboost_saved.booster(lib, blob, version(lib))
    entry = xgboost_saved.entry_path(blob, version(lib))
    entry.write_bytes(entry.read_bytes()[:-10])  # cut short
    seen = _loads(monkeypatch)
    X = _rows(4, n=50)
    assert np.array_equal(
        xgboost_saved.booster(lib, blob, version(lib)).predict(X), _package_predict(blob, X, False)
    )
    assert seen == [blob]
    assert xgboost_saved._read(entry) == CApiBooster(lib, blob).saved()


def test_with_the_model_cache_off_no_saved_form_is_kept(lib, cache, monkeypatch):
    monkeypatch.setenv("TREESENS_MODEL_CACHE", "0")
    xgboost_saved.booster(lib, _trained("binary:logistic"), version(lib))
    assert not cache.exists()


# a process that asked for lean imports (the command line): libxgboost's model, loaded and
# asked for the scores of ROWS (JSON), then the threads the process had before and after
LEAN = """
import json, os, sys
import numpy as np
from treesens.readers import libraries
from treesens.readers.formats.xgboost_capi import CApiBooster, find_library
libraries.prefer_lean_imports()
before = len(os.listdir("/proc/self/task"))
b = CApiBooster(find_library(), open(sys.argv[1], "rb").read())
scores = b.predict(np.array(json.loads(sys.argv[2]), dtype=np.float64))
after = len(os.listdir("/proc/self/task"))
print(json.dumps({"threads": [before, after], "scores": [float(s).hex() for s in scores]}))
"""


def _lean_replay(rows: np.ndarray) -> dict:
    import json
    import os
    import subprocess
    import sys

    rows_json = json.dumps(np.where(np.isnan(rows), None, rows).tolist())
    # the library's own thread count, not the one conftest.py sets for the tests
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", LEAN, str(EXAMPLE), rows_json],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(out.stdout)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads counted in /proc")
def test_a_lean_replay_starts_no_openmp_thread(lib):
    before, after = _lean_replay(_rows(30, n=2))["threads"]
    assert after == before


def test_lean_capi_scores_are_the_python_packages_bit_for_bit(lib):
    X = _rows(30, n=50)
    lean = [float.fromhex(s) for s in _lean_replay(X)["scores"]]
    assert lean == _package_predict(EXAMPLE.read_bytes(), X, margin=False).tolist()
