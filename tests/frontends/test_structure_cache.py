"""The command line keeps a model's encoding structure between commands
(readers/structure_cache.py): a structure read back is the one computed, and an answer
from it is the same answer; nothing stale, broken or of another model is used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from treesens.compiler import encode
from treesens.readers import libraries
from treesens.readers.load import load_model
from treesens.readers.structure_cache import StructureFiles, keep_structures

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SMALL, DEEP = EXAMPLES / "breast_cancer_xgb.json", EXAMPLES / "breast_cancer_deep_xgb.json"


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    """The command line's lean mode, structures kept in a fresh folder (forgotten after)."""
    monkeypatch.setattr(libraries, "_lean", True)
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TREESENS_MODEL_CACHE", raising=False)
    keep_structures()
    yield tmp_path / "cache" / "structures"
    encode.keep_structures_in(None)


def _fresh(path: Path):
    """The model loaded anew: an ensemble whose structure this process has not computed."""
    return load_model(path)


def test_a_structure_read_back_is_the_one_computed(store):
    computed = encode.ensemble_structure(_fresh(SMALL))
    assert len(list(store.glob("*.pickle"))) == 1
    read = encode.ensemble_structure(_fresh(SMALL))
    assert read is not computed
    assert (read.domains, read.used, read.zero_mode, read.leaves) == (
        computed.domains,
        computed.used,
        computed.zero_mode,
        computed.leaves,
    )


def test_another_models_structure_is_its_own(store):
    encode.ensemble_structure(_fresh(SMALL))
    deep = encode.ensemble_structure(_fresh(DEEP))
    encode.keep_structures_in(None)
    assert deep.domains == encode.ensemble_structure(_fresh(DEEP)).domains
    assert len(list(store.glob("*.pickle"))) == 2


def test_a_model_with_other_bounds_has_another_entry(store):
    ens = _fresh(SMALL)
    encode.ensemble_structure(ens)
    first, *rest = ens.features
    narrower = ens.with_features((replace(first, ub=first.lb + 1.0), *rest))
    assert StructureFiles(store).entry(narrower) != StructureFiles(store).entry(ens)


def test_a_damaged_entry_is_computed_again(store):
    computed = encode.ensemble_structure(_fresh(SMALL))
    (entry,) = store.glob("*.pickle")
    entry.write_bytes(entry.read_bytes()[:-20])
    assert encode.ensemble_structure(_fresh(SMALL)).domains == computed.domains


def test_with_the_cache_off_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(libraries, "_lean", True)
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TREESENS_MODEL_CACHE", "0")
    keep_structures()
    encode.ensemble_structure(_fresh(SMALL))
    assert not (tmp_path / "cache").exists()


def test_outside_the_command_line_nothing_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(libraries, "_lean", False)
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    keep_structures()
    encode.ensemble_structure(_fresh(SMALL))
    assert not (tmp_path / "cache").exists()


COMMAND = """
import sys, json
from treesens.interfaces.cli.main import console_main
sys.argv = ["treesens", *json.loads(sys.argv[1])]
console_main()
"""


def _check(cache: Path, *argv: str) -> dict:
    env = dict(os.environ, TREESENS_CACHE=str(cache))
    env.pop("TREESENS_MODEL_CACHE", None)
    out = subprocess.run(
        [sys.executable, "-c", COMMAND, json.dumps(["check", *argv, "--json"])],
        capture_output=True,
        text=True,
        env=env,
    )
    res = json.loads(out.stdout)
    return {k: res[k] for k in ("status", "witness", "outputs", "validated")}


@pytest.mark.parametrize("gap", ["0.3", "0.49"])
def test_a_check_from_a_kept_structure_gives_the_same_answer(tmp_path, gap):
    argv = (str(SMALL), "--vary", "worst_area", "--gap", gap)
    first = _check(tmp_path / "cache", *argv)
    assert len(list((tmp_path / "cache" / "structures").glob("*.pickle"))) == 1
    assert _check(tmp_path / "cache", *argv) == first
