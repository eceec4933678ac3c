"""A tree dump declares no number of features: the largest index it splits on is bounded
by the file's size, so a few bytes cannot make treesens build a million features."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.readers.formats.xgboost_dump import DUMP_FEATURES_FLOOR, dump_feature_bound


def _stumps(feature: int, n_trees: int = 3) -> list[dict]:
    return [
        {
            "nodeid": 0,
            "depth": 0,
            "split": f"f{feature}",
            "split_condition": 0.5,
            "yes": 1,
            "no": 2,
            "missing": 1,
            "children": [{"nodeid": 1, "leaf": 0.3}, {"nodeid": 2, "leaf": -0.3}],
        }
        for _ in range(n_trees)
    ]


def _write(tmp_path, trees) -> str:
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(trees))
    return str(path)


def test_a_small_dump_splitting_on_feature_999999_is_an_input_error_naming_tree_and_node(
    tmp_path,
):
    path = _write(tmp_path, _stumps(999_999))
    with pytest.raises(InputError, match=r"tree 0 node 0 splits on feature 999999") as e:
        treesens.load_model(path)
    assert path in str(e.value)
    assert "num_feature" in str(e.value)


def test_a_dump_index_within_the_floor_loads():
    trees = _stumps(DUMP_FEATURES_FLOOR - 1)
    ens = treesens.readers.formats.xgboost_dump.from_dump(trees, "d.json", file_bytes=100)
    assert ens.n_features == DUMP_FEATURES_FLOOR


def test_the_dump_feature_bound_grows_with_the_file_size():
    assert dump_feature_bound(10) == DUMP_FEATURES_FLOOR
    assert dump_feature_bound(3 * DUMP_FEATURES_FLOOR) == 3 * DUMP_FEATURES_FLOOR


def test_the_text_dump_is_bounded_too(tmp_path):
    path = tmp_path / "dump.txt"
    path.write_text("booster[0]:\n0:[f999999<0.5] yes=1,no=2,missing=1\n1:leaf=0.3\n2:leaf=-0.3\n")
    with pytest.raises(InputError, match="splits on feature 999999"):
        treesens.load_model(path)


def test_the_oversized_dump_exits_2_with_one_line_naming_the_file(tmp_path):
    path = _write(tmp_path, _stumps(999_999))
    r = subprocess.run(
        [sys.executable, "-m", "treesens.interfaces.cli.main", "check", path]
        + ["--vary", "f999999", "--gap", "0.2", "--timeout", "20"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and path in lines[0], r.stderr
