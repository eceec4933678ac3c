"""A data-aware query asks the same question over all inputs first: a proof there is its
answer, a pair there leaves the pair to the data-aware search (search/boxes.py,
``proof_only``; docs/data-aware.md, "A proof first")."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from tests.driver.test_data_aware import tiny
from treesens.answers.context import new_result
from treesens.answers.result import SENSITIVE
from treesens.answers.verdict import Accepted
from treesens.compiler.ensemble import IDENTITY, SOFTMAX
from treesens.compiler.invert import Witness
from treesens.compiler.query import Query
from treesens.driver.data_fallback import use_fallback
from treesens.interfaces.api import check
from treesens.search.boxes import HEURISTIC_PAIR


@pytest.fixture
def data_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    X = np.random.default_rng(1).uniform(0, 1, size=(200, 3)).round(2)
    p = tmp_path / "d.csv"
    pd.DataFrame(X, columns=["a", "b", "s"]).to_csv(p, index=False)
    return p


@pytest.mark.parametrize("mode", ["prob", "clause", "probclause"])
def test_a_data_aware_query_proven_over_all_inputs_is_insensitive_before_its_compile(
    data_file, mode
):
    # varying a moves the margin by 1 at most: no pair reaches a probability gap of 0.2
    r = check(tiny(), ["a"], gap=0.2, data=data_file, data_aware=mode, timeout=60)
    assert r.status == "insensitive"
    assert r.stats["proved_by"] == "box search"
    assert "the data's restrictions aside" in r.message
    assert "clauses" not in r.stats  # no clause was learned: the proof came first


def test_a_data_aware_query_with_a_pair_over_all_inputs_leaves_the_pair_to_its_search(
    data_file,
):
    r = check(tiny(), ["s"], gap=0.2, data=data_file, data_aware="prob", timeout=60)
    assert r.status == "sensitive" and r.validated
    assert r.stats["box_search"]["pair"] == HEURISTIC_PAIR
    assert r.stats["found_by"] not in ("heuristic", "box search")
    assert r.stats["objective"] is not None  # the utility the solver optimised


def _pair_ctx(fallback=None):
    ens = tiny()
    x = np.array([0.1, 0.1, 0.9]), np.array([0.1, 0.1, 0.1])
    pair = Accepted(Witness(*x, ({}, {}), (np.zeros(4), np.zeros(4))), {"x1": [], "x2": []})
    return SimpleNamespace(
        ens=ens,
        result=new_result(ens, Query(vary=("s",))),
        fallback=fallback,
        boxes=SimpleNamespace(pair=pair, pair_found_by="box search"),
        witness=None,
        work=None,  # no work budget: the optimiser's time ended it
    )


def test_the_pair_found_over_all_inputs_answers_when_the_solver_has_no_point():
    ctx = _pair_ctx()
    assert use_fallback(ctx)
    assert ctx.result.status == SENSITIVE
    assert ctx.result.stats["found_by"] == "box search (over all inputs)"
    assert ctx.result.witness["x1"]["s"] == 0.9


def test_a_data_aware_insensitive_answer_is_certified_as_the_question_over_all_inputs(
    shared_dir, tmp_path, monkeypatch
):
    monkeypatch.setenv("TREESENS_CACHE", str(tmp_path / "cache"))
    pima = shared_dir / "pimadiabetes"
    cert = tmp_path / "c.json"
    r = check(
        pima / "pimadiabetes_t200_d5.json",
        ["BloodPressure"],
        gap=0.432,
        data=pima / "train.csv",
        data_aware="prob",
        timeout=60,
        certificate=cert,
    )
    assert r.status == "insensitive"
    assert r.proof.checked, r.proof
    claim = json.loads(cert.read_text())["question"]["claim"]
    assert claim == {"kind": "gap", "gap": 0.432, "gap_kind": "prob"}


def test_a_max_gap_pair_with_data_takes_values_seen_in_the_data(tmp_path):
    from treesens.interfaces.api import max_gap

    # values no interval's own representative (the shortest decimal in it) takes
    X = np.random.default_rng(2).integers(0, 1000, size=(200, 3)) * 0.001 + 0.0003
    data_file = tmp_path / "odd.csv"
    pd.DataFrame(X.round(4), columns=["a", "b", "s"]).to_csv(data_file, index=False)
    seen = pd.read_csv(data_file)
    r = max_gap(tiny(), ["s"], data=data_file, timeout=60)
    assert r.status == "sensitive" and r.max_gap["method"] == "boxes"
    for x in ("x1", "x2"):
        for name in ("a", "b"):
            assert r.witness[x][name] in set(seen[name].tolist()), (x, name, r.witness)


def test_a_max_gap_pair_with_data_has_its_distance_to_the_data(data_file):
    from treesens.interfaces.api import max_gap

    r = max_gap(tiny(), ["s"], data=data_file, timeout=60)
    assert r.distance is not None and r.stats["nearest_row"]["index"] >= 0


def _multiclass():
    # three classes, tree i adding to class i % 3: s moves class 0 against class 1
    trees = [replace(t, outputs=(i % 3,)) for i, t in enumerate(tiny().trees)]
    return replace(tiny(), trees=tuple(trees), n_classes=3, intercept=(0.0,) * 3, link=SOFTMAX)


def test_a_multiclass_max_gap_with_data_has_its_pair_near_the_data(data_file):
    from treesens.interfaces.api import max_gap

    r = max_gap(_multiclass(), ["s"], classes=(0, 1), data=data_file, timeout=60)
    assert r.status == "sensitive" and r.distance is not None


def test_a_regressor_max_gap_with_data_has_its_pair_near_the_data(data_file):
    from treesens.interfaces.api import max_gap

    regressor = replace(tiny(), n_classes=0, link=IDENTITY)
    r = max_gap(regressor, ["s"], data=data_file, timeout=60)
    assert r.status == "sensitive" and r.distance is not None


def test_a_data_aware_max_gap_has_the_bounds_of_the_question_over_all_inputs(data_file):
    from treesens.interfaces.api import max_gap

    plain = max_gap(tiny(), ["s"], data=data_file, timeout=60)
    steered = max_gap(tiny(), ["s"], data=data_file, data_aware="prob", optimise_time=2, timeout=60)
    assert steered.max_gap["method"] == "boxes" and steered.max_gap["proven"]
    assert steered.max_gap["upper"] == plain.max_gap["upper"]
    assert steered.max_gap["lower"] >= plain.max_gap["lower"]


def test_a_data_aware_max_gaps_pair_is_the_data_aware_searchs(data_file):
    from treesens.interfaces.api import max_gap

    r = max_gap(tiny(), ["s"], data=data_file, data_aware="prob", optimise_time=2, timeout=60)
    assert r.status == "sensitive" and r.validated
    assert r.stats["found_by"] not in ("box search (largest gap)", "heuristic")
    assert r.stats["objective"] is not None and r.distance is not None


def test_a_data_aware_multiclass_max_gap_has_the_bounds_over_all_inputs_and_its_own_pair(
    data_file,
):
    from treesens.interfaces.api import max_gap

    plain = max_gap(_multiclass(), ["s"], classes=(0, 1), data=data_file, timeout=60)
    steered = max_gap(
        _multiclass(), ["s"], classes=(0, 1), data=data_file, data_aware="prob",
        optimise_time=2, timeout=60,
    )  # fmt: skip
    assert steered.max_gap["upper"] == plain.max_gap["upper"] and steered.validated
    assert steered.max_gap["lower"] >= plain.max_gap["lower"]
    assert steered.stats["found_by"] not in ("box search (largest gap)", "heuristic")


def _pure_leaves(y):
    """A depth-2 tree on a, b in {0, 1} whose leaves are pure (P = 1 and P = 0)."""
    from sklearn.tree import DecisionTreeClassifier

    X = pd.DataFrame({"a": [0.0, 0.0, 1.0, 1.0] * 5, "b": [0.0, 1.0, 0.0, 1.0] * 5})
    return DecisionTreeClassifier(max_depth=2).fit(X, np.array(y * 5)), X


def test_a_data_aware_max_gap_of_one_half_answers_with_the_pair_over_all_inputs(tmp_path):
    # the largest gap is 0.5, which no check asks (0 <= g < 0.5): it was refused as input
    from treesens.interfaces.api import max_gap

    est, X = _pure_leaves([0, 0, 1, 1])
    r = max_gap(est, "a", data=X, data_aware="prob", optimise_time=2, timeout=60)
    assert r.status == "sensitive" and r.validated and r.max_gap["lower"] == 0.5
    assert any("no check asks a gap of 0.5" in n for n in r.notes)


def test_a_data_aware_unbounded_multiclass_ratio_answers_with_the_pair_over_all_inputs():
    # a class at probability 0 makes the ratio the largest float, past any check's 1e6
    from treesens.interfaces.api import max_gap

    est, X = _pure_leaves([0, 1, 2, 2])
    r = max_gap(est, "a", classes=(0, 2), data=X, data_aware="prob", optimise_time=2, timeout=60)
    assert r.status == "sensitive" and r.validated
    assert r.max_gap["lower"] == np.finfo(float).max
