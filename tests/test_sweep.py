"""Sweeps: subsets, sampling, streaming, resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from treesens.frontends.sweep import done_labels, feature_subsets
from treesens.tests.oracle import random_ensemble

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _ens():
    return random_ensemble(3, n_trees=4, depth=2, n_features=5, n_thresholds=2)


def test_single_feature_sweep_has_one_query_per_feature():
    assert feature_subsets(_ens(), 1) == [(f"f{i}",) for i in range(5)]


def test_subsets_of_size_two_are_all_pairs():
    assert len(feature_subsets(_ens(), 2)) == 10


def test_sampled_subsets_are_distinct_and_reproducible_with_a_seed():
    a = feature_subsets(_ens(), 2, sample=4, seed=1)
    assert len(set(a)) == 4
    assert a == feature_subsets(_ens(), 2, sample=4, seed=1)


def test_subset_size_out_of_range_is_an_input_error():
    from treesens.compiler.errors import InputError

    with pytest.raises(InputError):
        feature_subsets(_ens(), 6)


def test_done_labels_skip_errors_and_truncated_lines(tmp_path):
    f = tmp_path / "r.jsonl"
    f.write_text(
        json.dumps({"query": "a", "status": "sensitive"})
        + "\n"
        + json.dumps({"query": "b", "status": "error"})
        + "\n"
        + '{"query": "c", "sta'
    )
    assert done_labels(f) == {"a"}


def _sweep(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "treesens.frontends.cli.main", "sweep", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )


def test_resumed_sweep_answers_only_the_missing_queries(tmp_path):
    model = str(EXAMPLES / "wine_xgb.json")
    out = tmp_path / "sweep.jsonl"
    common = ["--classes", "0,any", "--gap", "2", "--timeout", "60", "--table", "none"]
    r1 = _sweep([model, "--features", "hue,alcohol", "--out", str(out), *common], tmp_path)
    assert r1.returncode == 0, r1.stderr
    assert [json.loads(x)["query"] for x in out.read_text().splitlines()] == ["hue", "alcohol"]
    r2 = _sweep(
        [model, "--features", "hue,alcohol,proline", "--resume", str(out), "--json", *common],
        tmp_path,
    )
    assert r2.returncode == 0, r2.stderr
    new = [json.loads(x)["query"] for x in r2.stdout.splitlines()]
    assert new == ["proline"]
    assert len(out.read_text().splitlines()) == 3
