"""The pair tables' compiled walk (search/pair_walk_jit.py), used where no leaf boxes are
recorded (a max gap's compiled search): the same tables as the Python walk, node for node
and leaf for leaf, on every feature kind; and the same limits."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.query import Gap, GapKind, Query
from treesens.search import pair_boxes
from treesens.search.pair_boxes import PairTablesTooLarge, pair_tables
from treesens.search.pair_scope import pair_encoding
from treesens.tests.feature_kinds import kinds_ensemble
from treesens.tests.oracle import random_ensemble

pytest.importorskip("numba")
FIELDS = ("values", "starts", "node_table", "node_starts", "thresholds", "sizes", "columns")


def _encoding(ens, vary):
    return pair_encoding(ens, Query(vary=tuple(vary)).with_(gap=Gap(0.0, GapKind.PROB)))


def _both(enc, monkeypatch, **kw):
    compiled = pair_tables(enc, boxes=False, **kw)
    with monkeypatch.context() as m:
        m.setattr(pair_boxes, "compiled_walk", lambda: None)
        python = pair_tables(enc, boxes=False, **kw)
    return compiled, python


def _same(a, b) -> bool:
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in FIELDS)


@pytest.mark.parametrize("i", range(16))
def test_the_compiled_walk_builds_the_python_walks_tables(i, monkeypatch):
    rng = np.random.default_rng([4760, i])
    ens = random_ensemble(
        rng,
        int(rng.integers(3, 12)),
        int(rng.integers(2, 5)),
        int(rng.integers(2, 6)),
        4,
        bounded=bool(rng.random() < 0.5),
    )
    vary = rng.choice(ens.feature_names, size=int(rng.integers(1, 3)), replace=False)
    assert _same(*_both(_encoding(ens, vary), monkeypatch))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("lightgbm_like", [True, False], ids=["lightgbm", "xgboost"])
def test_the_compiled_walk_builds_the_python_walks_tables_over_categories_and_nan(
    seed, lightgbm_like, monkeypatch
):
    ens = kinds_ensemble(seed, 4, 3, lightgbm_like=lightgbm_like)
    for vary in (("f0",), ("f1",), ("f0", "f1")):
        assert _same(*_both(_encoding(ens, vary), monkeypatch)), vary


def test_the_compiled_walk_is_used_without_leaf_boxes(monkeypatch):
    ens = random_ensemble(np.random.default_rng(4761), 6, 3, 3, 4)
    called = []
    walk = pair_boxes.compiled_walk()

    def counted(*a):
        called.append(1)
        return walk(*a)

    monkeypatch.setattr(pair_boxes, "compiled_walk", lambda: counted)
    pair_tables(_encoding(ens, ("f0",)), boxes=False)
    assert len(called) == len(ens.trees)


def test_the_compiled_walk_stops_at_the_leaf_bound(monkeypatch):
    ens = random_ensemble(np.random.default_rng(4762), 8, 3, 3, 4)
    enc = _encoding(ens, ("f0",))
    leaves = pair_tables(enc, boxes=False).values.shape[1]
    monkeypatch.setattr(pair_boxes, "MAX_TABLE_BYTES", 8 * 4 * (leaves - 1))  # 4 columns
    with pytest.raises(PairTablesTooLarge):
        pair_tables(enc, boxes=False)


def test_the_compiled_walk_builds_tables_right_at_the_leaf_bound(monkeypatch):
    ens = random_ensemble(np.random.default_rng(4762), 8, 3, 3, 4)
    enc = _encoding(ens, ("f0",))
    leaves = pair_tables(enc, boxes=False).values.shape[1]
    monkeypatch.setattr(pair_boxes, "MAX_TABLE_BYTES", 8 * 4 * leaves)
    assert pair_tables(enc, boxes=False).values.shape[1] == leaves
