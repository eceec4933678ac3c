"""Model files and objects of kinds treesens does not read: one line saying what they
are and what is supported, never a library's own message."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import UnsupportedModelError
from treesens.tests.conftest import run_treesens


@pytest.fixture(scope="module")
def catboost_model(tmp_path_factory):
    catboost = pytest.importorskip("catboost")
    X = np.random.default_rng(0).uniform(size=(60, 3))
    est = catboost.CatBoostClassifier(iterations=3, verbose=0, allow_writing_files=False)
    est.fit(X, (X[:, 0] > 0.5))
    folder = tmp_path_factory.mktemp("cb")
    est.save_model(str(folder / "m.cbm"))
    est.save_model(str(folder / "m.json"), format="json")
    return est, folder


@pytest.mark.parametrize("name, kind", [("m.cbm", "a CatBoost model"), ("m.json", "CatBoost")])
def test_a_catboost_file_is_named_in_one_line(catboost_model, name, kind):
    _, folder = catboost_model
    p = run_treesens("check", folder / name, "--vary", "f0")
    assert p.returncode == 2 and kind in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "xgboost cannot" not in p.stderr


def test_an_onnx_file_is_named_in_one_line(tmp_path):
    path = tmp_path / "m.onnx"
    path.write_bytes(b"\x08\x07\x12\x07skl2onnx" + bytes(64))
    p = run_treesens("check", path, "--vary", "f0")
    assert p.returncode == 2 and "an ONNX model" in p.stderr and "treesens reads" in p.stderr


def test_an_unsupported_object_names_what_is_supported(catboost_model):
    est, _ = catboost_model
    with pytest.raises(UnsupportedModelError, match="treesens reads XGBoost"):
        treesens.load_model(est)
