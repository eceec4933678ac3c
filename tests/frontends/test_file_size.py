"""A skops file's trees and leaves are read from its arrays' headers, before the model is
loaded (readers/file_size.py): the memory limit refuses a model file that would pass it
before its load (questions/memory.py)."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.readers.file_size import FileSize, size_before_load

sio = pytest.importorskip("skops.io")
sk_ensemble = pytest.importorskip("sklearn.ensemble")

EXAMPLE = "breast_cancer_xgb.json"


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)


@pytest.fixture(scope="module")
def forest_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("skops") / "forest.skops"
    sio.dump(sk_ensemble.RandomForestClassifier(7, max_depth=4, random_state=0).fit(*_data()), path)
    return path


def test_a_skops_forest_s_trees_and_leaves_are_read_before_loading_it(forest_file):
    ens = treesens.load_model(forest_file)
    assert size_before_load(forest_file) == FileSize(len(ens.trees), ens.n_leaves())


def test_a_skops_hist_gradient_boosting_s_leaves_are_read_before_loading_it(tmp_path):
    path = tmp_path / "hgb.skops"
    sio.dump(sk_ensemble.HistGradientBoostingClassifier(max_iter=5).fit(*_data()), path)
    ens = treesens.load_model(path)
    assert size_before_load(path) == FileSize(len(ens.trees), ens.n_leaves())


def test_a_file_of_another_format_gives_no_size_before_its_load(tmp_path):
    path = tmp_path / "m.json"
    path.write_text("{}")
    assert size_before_load(path) is None


def test_the_cli_refuses_a_skops_file_over_the_limit_before_loading_it(
    forest_file, monkeypatch, capsys
):
    from treesens.interfaces.cli import check
    from treesens.interfaces.cli.main import main

    monkeypatch.setattr(check, "load_from_args", lambda *a: pytest.fail("loaded"))
    assert main(["check", str(forest_file), "--vary", "f0", "--memory-mb", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("treesens: error: refused: forest.skops (7 trees, ")
    assert "read before loading it" in line


def test_a_cli_sweep_refuses_a_skops_file_over_the_limit_before_loading_it(
    forest_file, monkeypatch
):
    from treesens.interfaces.cli import sweep
    from treesens.interfaces.cli.main import main

    monkeypatch.setattr(sweep, "load_from_args", lambda *a: pytest.fail("loaded"))
    assert main(["sweep", str(forest_file), "--memory-mb", "1", "--table", "none"]) == 2


def test_the_api_refuses_a_skops_file_over_the_limit_before_loading_it(forest_file, monkeypatch):
    from treesens.questions import keywords
    from treesens.questions.memory import MemoryRefused

    monkeypatch.setattr(keywords, "load_model", lambda *a, **k: pytest.fail("loaded"))
    with pytest.raises(MemoryRefused, match=r"forest\.skops \(7 trees, .*read before loading it"):
        treesens.check(forest_file, ["x0"], memory_mb=1)


def test_the_api_loads_a_skops_file_within_the_limit(forest_file):
    assert treesens.check(forest_file, ["x0"], gap=0.2, memory_mb=4000).status != "error"
