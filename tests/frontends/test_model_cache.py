"""The command line's cache of parsed model files (readers/model_cache.py): a file read
again is the same model, and nothing stale or broken is ever used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from treesens.readers import libraries, model_cache
from treesens.readers.load import load_model

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SMALL, DEEP = EXAMPLES / "breast_cancer_xgb.json", EXAMPLES / "breast_cancer_deep_xgb.json"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """The command line's lean mode, with the cache in a fresh folder."""
    monkeypatch.setattr(libraries, "_lean", True)
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TREESENS_MODEL_CACHE", raising=False)
    return tmp_path / "cache" / "models"


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.pickle")) if cache.is_dir() else []


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


def test_a_model_read_again_comes_from_the_cache_and_is_the_same_model(cache):
    first = load_model(SMALL)
    assert len(_entries(cache)) == 1
    again = load_model(SMALL)
    assert again.fingerprint() == first.fingerprint()
    assert again.source == first.source
    assert again.replayer.model_bytes() == SMALL.read_bytes()


def test_a_model_from_the_cache_answers_as_the_parsed_one(cache):
    import numpy as np

    X = np.full((2, 30), 15.0)
    X[1] = 1.0
    parsed = load_model(SMALL).proba(X)
    assert np.array_equal(load_model(SMALL).proba(X), parsed)


def test_a_changed_model_file_is_parsed_again(cache, tmp_path):
    path = _copy(SMALL, tmp_path / "m.json")
    small = load_model(path)
    _copy(DEEP, path)
    deep = load_model(path)
    assert deep.fingerprint() != small.fingerprint()
    assert deep.fingerprint() == load_model(DEEP).fingerprint()


def test_a_broken_entry_is_ignored(cache):
    first = load_model(SMALL)
    (entry,) = _entries(cache)
    entry.write_bytes(b"not a pickle")
    assert load_model(SMALL).fingerprint() == first.fingerprint()


def test_the_python_api_does_not_cache(cache, monkeypatch):
    monkeypatch.setattr(libraries, "_lean", False)
    load_model(SMALL)
    assert _entries(cache) == []


def test_the_cache_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv("TREESENS_MODEL_CACHE", "0")
    load_model(SMALL)
    assert _entries(cache) == []


def test_an_edited_reader_changes_every_entrys_key(tmp_path, monkeypatch):
    for sub in ("readers", "compiler"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "m.py").write_text("x = 1\n")
    monkeypatch.setattr(model_cache, "_ROOT", tmp_path)
    before = model_cache.code_fingerprint()
    reader = tmp_path / "readers" / "m.py"
    reader.write_text("x = 2\n")
    os.utime(reader, ns=(1, 1))
    assert model_cache.code_fingerprint() != before


def test_the_load_options_are_part_of_the_key():
    from treesens.readers.formats.base import LoadOptions

    keys = {
        model_cache.entry_key("xgboost", SMALL, b"{}", LoadOptions(base_score=b))
        for b in (None, 0.3)
    }
    assert len(keys) == 2


def test_the_cache_keeps_at_most_its_number_of_entries(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(model_cache, "MAX_ENTRIES", 2)
    for i in range(3):
        load_model(_copy(SMALL, tmp_path / f"m{i}.json"))
    assert len(_entries(cache)) == 2
