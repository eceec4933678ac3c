"""The batch path (questions/campaign.py ``ask_many``, the API's ``check_many``): many
queries of one model, loaded once, answered as the single-query path answers each."""

from __future__ import annotations

import numpy as np
import pytest

import treesens
from treesens.compiler.errors import InputError
from treesens.questions.ask import answer
from treesens.questions.campaign import ask_many
from treesens.questions.query_build import make_query
from treesens.tests.oracle import random_ensemble

QUESTIONS = [(f, g) for f in ("f0", "f1", "f2") for g in (0.05, 0.2, 0.35)]


def _same_answer(a, b) -> bool:
    pair = (a.witness is None) == (b.witness is None) and (
        a.witness is None
        or (a.witness["x1"] == b.witness["x1"] and a.witness["x2"] == b.witness["x2"])
    )
    return (a.status, a.validated, a.query, a.gap) == (
        b.status,
        b.validated,
        b.query,
        b.gap,
    ) and pair


@pytest.mark.parametrize("seed", [3, 8])
def test_ask_many_gives_the_single_query_paths_answers(seed):
    ens = random_ensemble(seed, 12, 3, 3, 4, leaf_scale=0.3)
    queries = [make_query([f], gap=g, timeout=60) for f, g in QUESTIONS]
    batch = ask_many(ens, queries)
    single = [answer(ens, q) for q in queries]
    assert all(_same_answer(a, b) for a, b in zip(batch, single, strict=True))
    assert {r.status for r in batch} == {"sensitive", "insensitive"}  # both kinds compared


def test_ask_many_gives_the_results_in_the_order_of_the_queries():
    ens = random_ensemble(4, 6, 2, 3, 3)
    queries = [make_query([f], gap=g, timeout=60) for f, g in QUESTIONS]
    assert [(r.query, r.gap) for r in ask_many(ens, queries)] == [(f, g) for f, g in QUESTIONS]


def test_ask_many_makes_a_failing_query_its_error_result_and_answers_the_others():
    ens = random_ensemble(4, 6, 2, 3, 3)
    queries = [make_query(["nope"], gap=0.1), make_query(["f0"], gap=0.1, timeout=60)]
    bad, good = ask_many(ens, queries)
    assert bad.status == "error" and "unknown feature 'nope'" in bad.error
    assert good.status in ("sensitive", "insensitive")


def test_check_many_gives_checks_answers():
    ens = random_ensemble(8, 12, 3, 3, 4, leaf_scale=1.0)
    many = treesens.check_many(ens, [["f0"], "f1", ["f2"]], gap=0.2, timeout=60)
    one = [treesens.check(ens, f, gap=0.2, timeout=60) for f in ("f0", "f1", "f2")]
    assert all(_same_answer(a, b) for a, b in zip(many, one, strict=True))


def test_check_many_takes_a_questions_own_keywords_over_the_calls():
    ens = random_ensemble(8, 6, 2, 3, 3)
    rs = treesens.check_many(ens, [{"vary": ["f0"], "gap": 0.3, "name": "mine"}, ["f1"]], gap=0.1)
    assert [r.gap for r in rs] == [0.3, 0.1]
    assert rs[0].query == "mine"


def test_check_many_refuses_a_model_keyword_in_a_question():
    ens = random_ensemble(8, 6, 2, 3, 3)
    with pytest.raises(InputError, match="details is the call's keyword"):
        treesens.check_many(ens, [{"vary": ["f0"], "details": "d.csv"}])


def test_check_many_refuses_a_question_without_vary():
    ens = random_ensemble(8, 6, 2, 3, 3)
    with pytest.raises(InputError, match="a question without vary"):
        treesens.check_many(ens, [{"gap": 0.2}])


def test_check_many_names_the_question_an_unknown_feature_is_in():
    ens = random_ensemble(8, 6, 2, 3, 3)
    with pytest.raises(InputError, match=r"^check_many questions\[1\] \['f9x'\]: vary: unknown"):
        treesens.check_many(ens, [["f0"], ["f9x"]], gap=0.2)


def test_check_many_names_the_question_an_unknown_keyword_is_in():
    ens = random_ensemble(8, 6, 2, 3, 3)
    with pytest.raises(TypeError, match=r"^check_many questions\[1\] .*'gapp'"):
        treesens.check_many(ens, [["f0"], {"vary": ["f1"], "gapp": 0.1}])


def test_a_batchs_witness_is_replay_checked():
    ens = random_ensemble(3, 12, 3, 3, 4, leaf_scale=1.0)
    rs = ask_many(ens, [make_query([f], gap=0.05, timeout=60) for f in ("f0", "f1", "f2")])
    found = [r for r in rs if r.status == "sensitive"]
    assert found and all(r.validated for r in found)
    for r in found:
        x = np.array([[r.witness[k][n] for n in ens.feature_names] for k in ("x1", "x2")])
        p = 1 / (1 + np.exp(-ens.raw(x)[:, 0]))
        assert p[0] - p[1] >= r.gap - 1e-9 or p[1] - p[0] >= r.gap - 1e-9
