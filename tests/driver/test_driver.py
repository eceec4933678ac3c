"""The solve driver's parts: the backend chain from capabilities, the soft group,
typed notes and statuses, the data loader hook."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treesens.answers.result import Result, Status
from treesens.backends.registry import BACKENDS, available
from treesens.compiler.dataset import Dataset
from treesens.compiler.errors import InputError
from treesens.compiler.ir import (
    BOOL,
    INT,
    REAL,
    Implication,
    Linear,
    Notes,
    Objective,
    Problem,
    Var,
    check_constraint,
)
from treesens.compiler.passes import Compiled, IntegerScaling
from treesens.compiler.passes.big_m import BigM
from treesens.compiler.plan import Plan
from treesens.compiler.query import Gap, Query
from treesens.compiler.solver import Capabilities, SolveStatus
from treesens.driver import backend_chain
from treesens.driver.chain import VariableKindCheck
from treesens.driver.clauses import learn_in_worker
from treesens.driver.data import dataset_for_query


def _names(chain) -> list[str]:
    return [type(p).__name__ for p in chain]


def test_integer_coefficients_add_integer_scaling():
    assert "IntegerScaling" in _names(backend_chain(Capabilities(integer_coefficients=True)))


def test_real_coefficients_add_no_integer_scaling():
    assert "IntegerScaling" not in _names(backend_chain(Capabilities()))


def test_backends_without_native_implications_get_big_m():
    assert "BigM" in _names(backend_chain(Capabilities(implications=False)))


def test_backends_with_native_implications_get_no_big_m():
    assert "BigM" not in _names(backend_chain(Capabilities(implications=True)))


def test_big_m_comes_before_integer_scaling():
    names = _names(backend_chain(Capabilities(integer_coefficients=True, implications=False)))
    assert names.index("BigM") < names.index("IntegerScaling")


def test_every_chain_checks_the_variable_kinds_first():
    assert _names(backend_chain(Capabilities()))[0] == "VariableKindCheck"


def test_registry_capabilities_decide_the_chains():
    assert "IntegerScaling" in _names(backend_chain(BACKENDS["cpsat"].capabilities))
    assert "BigM" in _names(backend_chain(BACKENDS["cbc"].capabilities))
    assert "BigM" in _names(backend_chain(BACKENDS["highs"].capabilities))
    assert "BigM" not in _names(backend_chain(BACKENDS["z3"].capabilities))


def test_a_variable_kind_the_backend_does_not_take_is_a_clear_input_error():
    p = Problem((Var("x", REAL, 0.0, 1.0),), ())
    with pytest.raises(InputError, match="does not take real variables"):
        VariableKindCheck((BOOL, INT), "cpsat").apply(Compiled(p, None))


def test_variable_kinds_the_backend_takes_pass_unchanged():
    p = Problem((Var("x", INT, 0.0, 3.0),), ())
    out, _ = VariableKindCheck((BOOL, INT)).apply(Compiled(p, None))
    assert out.problem is p


def _implication_problem(value: bool) -> Problem:
    vs = (Var("z"), Var("x", INT, 0.0, 10.0))
    return Problem(vs, (Implication(0, value, Linear((1,), (1.0,), ">=", 4.0)),))


@pytest.mark.parametrize("value", [True, False])
def test_big_m_rows_agree_with_the_implication_on_every_point(value):
    p = _implication_problem(value)
    out, _ = BigM().apply(Compiled(p, None))
    assert not any(isinstance(c, Implication) for c in out.problem.constraints)
    for z in (0, 1):
        for x in range(11):
            v = np.array([z, x], dtype=float)
            want = check_constraint(p.constraints[0], v)
            assert all(check_constraint(c, v) for c in out.problem.constraints) == want


def test_big_m_keeps_the_soft_group_on_the_same_rows():
    p = _implication_problem(True)
    soft_row = Linear((1,), (1.0,), "<=", 8.0, ("soft",))
    p = p.with_soft_constraints([soft_row])
    out, _ = BigM().apply(Compiled(p, None))
    assert out.problem.soft_constraints == (soft_row,)


def test_soft_constraints_are_dropped_by_without_soft():
    hard = Linear((0,), (1.0,), ">=", 0.0)
    soft = Linear((0,), (1.0,), "<=", 0.0)
    p = Problem((Var("a"),), (hard,)).with_soft_constraints([soft])
    assert p.constraints == (hard, soft) and p.soft_constraints == (soft,)
    assert p.without_soft().constraints == (hard,) and p.without_soft().soft == ()


def test_constraints_added_after_the_soft_group_are_kept_when_it_is_dropped():
    soft = Linear((0,), (1.0,), "<=", 0.0)
    cut = Linear((0,), (1.0,), ">=", 1.0, ("cut", 0))
    p = Problem((Var("a"),), ()).with_soft_constraints([soft]).with_constraints([cut])
    assert p.without_soft().constraints == (cut,)


def test_integer_scaling_keeps_the_soft_group_and_records_typed_notes():
    soft = Linear((0,), (0.5,), "<=", 0.25)
    p = Problem((Var("a"),), (), Objective("max", (0,), (0.5,))).with_soft_constraints([soft])
    out, _ = IntegerScaling().apply(Compiled(p, None))
    assert out.problem.soft == (0,)
    assert out.problem.notes.scaling_error is not None
    assert out.problem.notes.objective_scale > 0


def test_notes_are_a_typed_record_with_named_fields():
    p = Problem((), ()).with_notes(relax=1e-6)
    assert p.notes == Notes(relax=1e-6) and p.notes.scaling_error is None


def test_result_status_is_written_as_the_plain_word():
    r = Result(query="q", status=Status.SENSITIVE, backend="cpsat", features=[], gap=0.1)
    assert json.loads(r.to_json())["status"] == "sensitive"
    assert r.status == "sensitive"


def test_solver_statuses_in_stats_are_written_as_plain_words():
    r = Result(query="q", status=Status.UNKNOWN, backend="cpsat", features=[], gap=0.1)
    r.stats["solver_status"] = SolveStatus.OPTIMAL
    assert json.loads(r.to_json())["stats"]["solver_status"] == "optimal"


def test_witness_arrays_are_not_serialised():
    r = Result(query="q", status=Status.SENSITIVE, backend="cpsat", features=[], gap=0.1)
    r.witness_arrays = object()
    assert "witness_arrays" not in r.to_dict()


def test_a_query_without_data_has_no_dataset():
    assert dataset_for_query(None, Query(vary=("a",), gap=Gap(0.1))) is None


def test_an_in_memory_dataset_is_used_as_it_is():
    class Ens:
        feature_names = ["a", "b"]

    ds = Dataset(np.zeros((2, 2)), None, ("a", "b"))
    q = Query(vary=("a",), gap=Gap(0.1), plan=Plan(options=(("data", ds),)))
    assert dataset_for_query(Ens(), q) is ds


def test_a_query_naming_a_data_file_needs_the_dataset_passed_even_with_the_readers_loaded():
    import treesens.readers.data  # noqa: F401 - importing it registers nothing in the driver

    class Ens:
        feature_names = ["a", "b"]

    q = Query(vary=("a",), gap=Gap(0.1), plan=Plan(options=(("data", "train.csv"),)))
    with pytest.raises(InputError, match="names a data file that was not read"):
        dataset_for_query(Ens(), q)


def test_the_dataset_passed_for_a_data_file_is_the_one_used():
    class Ens:
        feature_names = ["a", "b"]

    ds = Dataset(np.zeros((2, 2)), None, ("a", "b"))
    q = Query(vary=("a",), gap=Gap(0.1), plan=Plan(options=(("data", "train.csv"),)))
    assert dataset_for_query(Ens(), q, ds) is ds


def test_a_dataset_of_other_features_is_one_input_error():
    class Ens:
        feature_names = ["a", "c"]

    ds = Dataset(np.zeros((2, 2)), None, ("a", "b"))
    q = Query(vary=("a",), gap=Gap(0.1), plan=Plan(options=(("data", ds),)))
    with pytest.raises(InputError, match="loaded for a model with other features"):
        dataset_for_query(Ens(), q)


def test_typed_options_give_the_table_default_when_unset():
    q = Query(vary=("a",), gap=Gap(0.1))
    assert q.plan.options.value("heuristic") is True
    assert (
        q.planned(options=q.plan.options.with_(heuristic=False)).plan.options.value("heuristic")
        is False
    )


def _data_with_a_hole():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, size=(400, 3))
    hole = (X[:, 0] >= 0.5) & (X[:, 1] >= 0.3) & (X[:, 1] < 0.7)
    return X[~hole]


@pytest.mark.skipif(not available("z3"), reason="z3 is not installed")
def test_clauses_learned_in_a_worker_equal_those_learned_in_process():
    from treesens.search.cavity_learning import learn_clauses
    from treesens.tests.driver.test_data_aware import tiny

    X = _data_with_a_hole()
    stats: dict = {}
    got = learn_in_worker(tiny(), X, width=2, max_clauses=10, time_budget=20, stats=stats)
    assert got == learn_clauses(tiny(), X, width=2, max_clauses=10, time_budget=20)
    assert "clause_learning_time" in stats


def test_senses_and_variable_kinds_are_enums_equal_to_their_strings():
    from treesens.compiler.ir import BOOL, LE, Sense, VarKind

    assert LE is Sense.LE and LE == "<=" and {"<=": 1}[LE] == 1 and str(LE) == "<="
    assert BOOL is VarKind.BOOL and BOOL == "bool" and f"{BOOL}" == "bool"
