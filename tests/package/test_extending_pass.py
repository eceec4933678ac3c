"""docs/extending.md, "Adding a pass": its worked example runs as written.

The pass's module is read from the document's first code block; the usage block runs on
examples/breast_cancer_xgb.json; the pass is checked on a hand-built problem and, added
to the chain a query runs, against the verdicts without it and the brute-force oracle.
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.compiler import chain as chain_module
from treesens.compiler.ir import BOOL, INT, ExactlyOne, Linear, Objective, Problem, Var
from treesens.compiler.passes.base import Compiled
from treesens.driver import solve_query
from treesens.driver.compile import compile_query
from treesens.interfaces.api import make_query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"


def _blocks(lang: str) -> list[str]:
    text = DOC.read_text()
    start = text.index("## Adding a pass\n")
    end = text.find("\n## ", start + 1)
    return re.findall(rf"```{lang}\n(.*?)```", text[start : end if end != -1 else None], re.S)


@pytest.fixture(scope="module")
def example():
    """The example pass's module, imported as ``merge_equal_example``."""
    module = types.ModuleType("merge_equal_example")
    sys.modules[module.__name__] = module
    try:
        exec(
            compile(_blocks("python")[0], "docs/extending.md:merge_equal", "exec"), module.__dict__
        )
        yield module
    finally:
        del sys.modules[module.__name__]


def _hand_built() -> Compiled:
    """x0 = x1 = x2 tied by two rows, exactly one of x2, x3, a row over x0 and x3,
    a soft row, and an objective over x1."""
    variables = tuple(Var(f"x{i}") for i in range(4))
    rows = (
        Linear((0, 1), (1.0, -1.0), "==", 0.0, ("tie",)),
        Linear((1, 2), (2.0, -2.0), "==", 0.0, ("tie",)),
        ExactlyOne((2, 3), ("one",)),
        Linear((0, 3), (1.0, 1.0), "<=", 1.0, ("row",)),
        Linear((3,), (1.0,), ">=", 0.0, ("soft",)),
    )
    problem = Problem(variables, rows, Objective("max", (1,), (1.0,)), soft=(4,))
    return Compiled(problem, encoding=None)


def test_the_registry_line_is_one_line():
    [line] = [b.strip() for b in _blocks("text")]
    assert line == "chain.append(MergeEqualVariables())"


def test_the_worked_example_runs_on_breast_cancer(example, monkeypatch):
    monkeypatch.chdir(ROOT)  # the docs name files from the repository's root
    usage = _blocks("python")[1]
    exec(compile(usage, "docs/extending.md:usage", "exec"), dict(example.__dict__))


def test_tie_rows_are_dropped_and_the_tied_variables_substituted(example):
    merged, rep = example.MergeEqualVariables().apply(_hand_built())
    p = merged.problem
    assert rep.tolist() == [0, 0, 0, 3]
    assert [c.tag for c in p.constraints] == [("one",), ("row",), ("soft",)]
    assert p.constraints[0] == ExactlyOne((0, 3), ("one",))
    assert p.objective.vars == (0,)


def test_the_soft_group_follows_the_rows_it_held(example):
    merged, _ = example.MergeEqualVariables().apply(_hand_built())
    assert merged.problem.soft_constraints == (Linear((3,), (1.0,), ">=", 0.0, ("soft",)),)


def test_invert_restores_the_whole_variable_vector(example):
    p = example.MergeEqualVariables()
    merged, rep = p.apply(_hand_built())
    assert merged.problem.n_vars == 4  # the numbering is kept
    assert p.invert(np.array([1.0, 0.0, 0.0, 0.0]), rep).tolist() == [1.0, 1.0, 1.0, 0.0]


def test_a_tie_row_in_the_soft_group_is_kept(example):
    c = _hand_built()
    c = c.with_problem(Problem(c.problem.vars, c.problem.constraints[:1], soft=(0,)))
    assert not example.MergeEqualVariables().accepts(c)


def test_variables_of_different_bounds_are_not_merged(example):
    variables = (Var("b", BOOL), Var("n", INT, 0.0, 3.0))
    c = Compiled(Problem(variables, (Linear((0, 1), (1.0, -1.0), "==", 0.0),)), None)
    assert not example.MergeEqualVariables().accepts(c)


def test_an_exactly_one_over_two_tied_variables_becomes_an_infeasible_row(example):
    variables = (Var("a"), Var("b"))
    rows = (Linear((0, 1), (1.0, -1.0), "==", 0.0), ExactlyOne((0, 1)))
    merged, _ = example.MergeEqualVariables().apply(Compiled(Problem(variables, rows), None))
    assert merged.problem.constraints == (Linear((0,), (2.0,), "==", 1.0),)


@pytest.fixture
def with_the_pass(example, monkeypatch):
    """The chain every query runs, with the example pass appended."""
    original = chain_module.passes_for

    def passes_for(enabled, data_passes=()):
        return [*original(enabled, data_passes), example.MergeEqualVariables()]

    monkeypatch.setattr(chain_module, "passes_for", passes_for)


def _verdict(ens, vary, gap) -> str:
    q = make_query(vary, gap=gap, timeout=60, options={"heuristic": False})
    return solve_query(ens, q).status


def test_the_pass_is_in_the_chain_when_added(with_the_pass):
    ens = random_ensemble(0, n_trees=3, depth=2, n_features=3, n_thresholds=3)
    cq = compile_query(ens, make_query(["f0"], gap=0.1))
    assert "merge-equal" in [p.name for p, _ in cq.inverse]


@pytest.mark.parametrize("seed", range(6))
def test_verdicts_with_the_pass_equal_those_without_and_the_oracle(seed, monkeypatch, example):
    ens = random_ensemble(seed, n_trees=4, depth=2, n_features=3, n_thresholds=3)
    vary, gap = ["f0"], 0.05 + 0.05 * (seed % 3)
    without = _verdict(ens, vary, gap)
    original = chain_module.passes_for
    monkeypatch.setattr(
        chain_module,
        "passes_for",
        lambda enabled, data=(): [*original(enabled, data), example.MergeEqualVariables()],
    )
    with_pass = _verdict(ens, vary, gap)
    oracle = SENSITIVE if brute_force_sensitive(ens, make_query(vary, gap=gap)) else INSENSITIVE
    assert with_pass == without == oracle
