"""Every file in examples/ runs from a fresh clone, with nothing beside it: each example is
run from a copy of examples/ in a temporary folder (so no ../shared is reachable), in a
fresh interpreter, as a user would run it."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from treesens.language import load_queries
from treesens.tests.conftest import json_lines, run_treesens

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SENS = sorted(EXAMPLES.glob("*.sens"))
SCRIPTS = sorted(p for p in EXAMPLES.glob("*.py") if p.name != "train_examples.py")

pytest.importorskip("xgboost")


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    """examples/ copied into an empty folder: nothing but its own files around it."""
    dest = tmp_path_factory.mktemp("clone") / "examples"
    shutil.copytree(EXAMPLES, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_there_are_examples_of_each_kind():
    names = {p.name for p in EXAMPLES.iterdir()}
    assert {"breast_cancer.sens", "wine.sens", "iris.sens", "diabetes.sens"} <= names
    assert "diabetes_data_aware.sens" in names and "sklearn_forest.py" in names


@pytest.mark.parametrize("path", SENS, ids=lambda p: p.name)
def test_no_example_names_a_path_outside_examples(path):
    assert "../" not in path.read_text(), f"{path.name} names a file outside examples/"


@pytest.mark.parametrize("path", SENS, ids=lambda p: p.name)
def test_every_example_loads_from_a_copy_of_examples(copy, path):
    sf = load_queries(copy / path.name)
    assert sf.queries
    assert sf.model_path.resolve().is_relative_to(copy.resolve())


@pytest.mark.parametrize("path", SENS, ids=lambda p: p.name)
def test_every_example_runs_from_a_copy_of_examples(copy, path):
    proc = run_treesens("run", path.name, "--json", cwd=copy, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json_lines(proc.stdout)
    assert results
    for r in results:
        assert r["status"] in ("sensitive", "insensitive"), (r["query"], r["status"], r["error"])
        if r["status"] == "sensitive":
            assert r["validated"], r["query"]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_every_example_script_runs_from_a_copy_of_examples(copy, path):
    proc = subprocess.run(
        [sys.executable, path.name], cwd=copy, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip()


@pytest.mark.slow
def test_train_examples_recreates_the_shipped_models(tmp_path):
    """The shipped models are what train_examples.py makes (with this machine's libraries)."""
    dest = tmp_path / "examples"
    dest.mkdir()
    shutil.copy(EXAMPLES / "train_examples.py", dest)
    proc = subprocess.run(
        [sys.executable, "train_examples.py"], cwd=dest, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = sorted(p.name for p in dest.iterdir() if p.suffix in (".json", ".txt", ".csv"))
    assert made
    for name in made:
        assert filecmp.cmp(dest / name, EXAMPLES / name, shallow=False), name
