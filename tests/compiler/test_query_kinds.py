"""Query kinds (compiler/kinds.py): each kind states its own condition and reduction, a
query's kind follows from its fields unless named, and the chain refuses a kind a pass is
not written for unless the pass is optional."""

from __future__ import annotations

import numpy as np
import pytest

from treesens.compiler.chain import SensitivityQuestion, sensitivity_chain
from treesens.compiler.errors import InputError
from treesens.compiler.kinds import (
    AnchoredQuestion,
    check_kind,
    kind_of,
    prepared,
    resolve_condition,
)
from treesens.compiler.passes.base import Compiled, Pass
from treesens.compiler.query import Gap, Query
from treesens.tests.oracle import random_ensemble


def _ens():
    return random_ensemble(
        np.random.default_rng(0), n_trees=3, depth=2, n_features=3, n_thresholds=3
    )


def test_a_query_with_a_delta_is_a_change_question():
    assert Query(vary=("f0",), delta=1.0).kind_name == "change"


def test_a_plain_query_is_the_pair_question():
    assert Query(vary=("f0",)).kind_name == "pair"


def test_anchored_reduction_pins_every_feature_of_x1_to_the_row():
    ens = _ens()
    q = Query(vary=("f0",), kind="anchored", params=(("anchor", (1.0, 2.0, 3.0)), ("decision", 1)))
    bounds = prepared(ens, q).bounds
    assert {(b.feature, b.lo, b.hi, b.copies) for b in bounds} == {
        (n, v, v, (1,)) for n, v in zip(ens.feature_names, (1.0, 2.0, 3.0))
    }


def test_a_kinds_reduction_is_applied_once():
    ens = _ens()
    q = Query(vary=("f0",), kind="anchored", params=(("anchor", (1.0, 2.0, 3.0)), ("decision", 0)))
    once = prepared(ens, q)
    assert prepared(ens, once) is once


def test_an_anchored_binary_question_asks_nothing_of_x1():
    ens = _ens()
    q = Query(vary=("f0",), kind="anchored", params=(("anchor", (0.0,) * 3), ("decision", 1)))
    cond = kind_of(q).condition(ens, q)
    assert cond.rows[0] == () and len(cond.rows[1]) == 1


def test_an_anchored_question_without_its_row_is_an_input_error():
    with pytest.raises(InputError, match="needs its row"):
        AnchoredQuestion().prepare(_ens(), Query(vary=("f0",), kind="anchored"))


class _PairOnly(Pass):
    name = "pair-only"
    query_kinds = frozenset({"pair"})

    def apply(self, compiled: Compiled):
        return compiled, None


class _OptionalPairOnly(_PairOnly):
    optional = True

    def apply(self, compiled: Compiled):
        raise AssertionError("an optional pass is skipped for a kind it does not take")


def _chain_with(p: Pass, q: Query):
    ens = _ens()
    chain = sensitivity_chain(q.plan.passes)
    chain.passes.append(p)
    return chain.apply(SensitivityQuestion(ens, q))


_ANCHORED = Query(
    vary=("f0",), kind="anchored", params=(("anchor", (0.0, 0.0, 0.0)), ("decision", 1))
)


def test_a_pass_refuses_a_kind_it_is_not_written_for():
    with pytest.raises(InputError, match="the pair-only pass does not take anchored queries"):
        _chain_with(_PairOnly(), _ANCHORED)


def test_an_optional_pass_skips_a_kind_it_is_not_written_for():
    compiled, _ = _chain_with(_OptionalPairOnly(), _ANCHORED)
    assert compiled.problem.constraints


def test_a_pass_takes_the_kinds_it_is_written_for():
    compiled, inverse = _chain_with(_PairOnly(), Query(vary=("f0",)))
    assert inverse[-1][0].name == "pair-only"


def test_max_gap_is_a_kind_its_runner_answers_not_one_solve():
    from treesens.driver import solve_query

    with pytest.raises(InputError, match="a max_gap query is a search over checks"):
        solve_query(_ens(), Query(vary=("f0",), kind="max_gap", gap=Gap(0.2, given=False)))


def test_the_max_gap_kind_checks_its_tolerance():
    with pytest.raises(InputError, match="tolerance 0.7 out of range"):
        check_kind(Query(vary=("f0",), kind="max_gap", params={"tolerance": 0.7}))


def test_a_kind_refuses_a_parameter_it_does_not_take():
    with pytest.raises(InputError, match="the pair kind takes no parameter 'eps'"):
        check_kind(Query(vary=("f0",), params={"eps": 1.0}))


def test_the_max_gap_kind_states_the_pair_question_at_no_gap():
    ens = _ens()
    asked = Query(vary=("f0",), kind="max_gap", gap=Gap(0.2, given=False))  # no gap given
    cond = resolve_condition(ens, asked)
    assert cond == resolve_condition(ens, Query(vary=("f0",), gap=Gap(0.0)))


def test_an_audit_asks_the_anchored_kind_of_every_row():
    from treesens.questions.audit_spec import make_spec, make_target
    from treesens.readers.data import load_data

    ens = _ens()
    rows = np.random.default_rng(1).uniform(-2, 2, size=(10, 3))
    spec = make_spec(ens, load_data(rows, ens), ["f0"], make_target(ens, 0.1))
    assert (spec.question.kind, spec.question.vary, spec.target.gap) == (
        "anchored",
        ("f0",),
        Gap(0.1),
    )
