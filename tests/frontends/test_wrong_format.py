"""A model file read with a --format of another library is one error naming what the
file looks like and the --format that reads it, for every format given a file of every
other (the file's own format: the one that reads it without --format)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from treesens.compiler.errors import InputError
from treesens.readers import formats
from treesens.readers.load import load_model

# how each file is written: (file name, library, writer)
FILES = (
    "xgb.json",
    "xgb.ubj",
    "xgb_dump.json",
    "lgbm.txt",
    "lgbm_dump.json",
    "catboost.cbm",
    "catboost.json",
    "forest.skops",
    "forest.joblib",
    "forest.onnx",
)


def _data():
    rng = np.random.default_rng(0)
    X = rng.random((200, 3)).astype(np.float32)
    return X, (X[:, 0] + X[:, 1] > 1).astype(int)


def _write(folder: Path, name: str) -> Path:
    """The model file ``name``, trained on a small data set by its library."""
    X, y = _data()
    path = folder / name
    if name.startswith("xgb"):
        xgb = pytest.importorskip("xgboost")
        b = xgb.XGBClassifier(n_estimators=3, max_depth=2, n_jobs=1).fit(X, y)
        if name == "xgb_dump.json":
            path.write_text("[" + ",".join(b.get_booster().get_dump(dump_format="json")) + "]")
        else:
            b.save_model(path)
    elif name.startswith("lgbm"):
        lgb = pytest.importorskip("lightgbm")
        m = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, n_jobs=1, verbose=-1).fit(X, y)
        if name == "lgbm.txt":
            m.booster_.save_model(path)
        else:
            path.write_text(json.dumps(m.booster_.dump_model()))
    elif name.startswith("catboost"):
        cb = pytest.importorskip("catboost")
        m = cb.CatBoostClassifier(
            iterations=3, depth=2, verbose=0, thread_count=1, allow_writing_files=False
        ).fit(X, y)
        m.save_model(str(path), format="json" if name.endswith(".json") else "cbm")
    else:
        from sklearn.ensemble import RandomForestClassifier

        rf = RandomForestClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y)
        if name.endswith(".skops"):
            pytest.importorskip("skops.io").dump(rf, path)
        elif name.endswith(".joblib"):
            pytest.importorskip("joblib").dump(rf, path)
        else:
            skl2onnx = pytest.importorskip("skl2onnx")
            pytest.importorskip("onnxruntime")
            onx = skl2onnx.to_onnx(rf, X[:1], options={"zipmap": False})
            path.write_bytes(onx.SerializeToString())
    return path


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    cache: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in cache:
            cache[name] = _write(folder, name)
        return cache[name]

    return get


def _own_format(path: Path) -> str:
    """The format that reads the file when none is given (its source's prefix)."""
    return load_model(str(path), trust_pickle=True).source.split(":", 1)[0]


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("given", formats.format_names())
def test_a_wrong_format_names_what_the_file_looks_like(written, name, given, monkeypatch):
    monkeypatch.setenv("TREESENS_MODEL_CACHE", "0")
    path = written(name)
    own = _own_format(path)
    if given == own or (given, own) == ("xgboost", "xgboost-dump"):  # XGBoost's reads dumps
        return
    with pytest.raises(InputError) as e:
        load_model(str(path), format=given, trust_pickle=True)
    said, right = formats.by_name(given), formats.by_name(own)
    assert str(e.value) == (
        f"{path}: not {said.description}: it looks like {right.description}: give --format "
        f"{own}, or leave --format out to tell the format from the file"
    )


def test_format_onnx_on_an_xgboost_json_file_is_one_line_naming_xgboost(written, capsys):
    from treesens.interfaces.cli.main import main

    path = written("xgb.json")
    assert main(["check", str(path), "--format", "onnx", "--vary", "f0"]) == 2
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1
    assert (
        "not an ONNX model: it looks like a native XGBoost model: give --format xgboost" in lines[0]
    )


def test_a_corrupt_file_of_the_format_given_keeps_its_reader_s_message(tmp_path):
    path = tmp_path / "broken.txt"
    path.write_text("tree\nversion=v4\nnum_class=1\n")  # LightGBM's header, no trees
    with pytest.raises(InputError) as e:
        load_model(str(path), format="lightgbm")
    assert "it looks like" not in str(e.value)
