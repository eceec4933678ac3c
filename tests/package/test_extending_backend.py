"""docs/extending.md, "Adding a backend": its worked example runs as written.

The backend's module is read from the document's first code block and written to a
temporary directory on PYTHONPATH (the worker imports it by name in a fresh process);
the registration block and the usage block run as they are. Its verdicts are compared
with the brute-force oracle and CP-SAT on tiny random ensembles.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from treesens.answers.result import INSENSITIVE, SENSITIVE
from treesens.backends import registry, worker
from treesens.compiler.errors import InputError
from treesens.compiler.ir import INT, REAL, ExactlyOne, Linear, Problem, Var
from treesens.compiler.solver import ERROR, INFEASIBLE, OPTIMAL, UNKNOWN, SolveOptions
from treesens.driver import solve_query
from treesens.interfaces.api import make_query
from treesens.tests.oracle import brute_force_sensitive, random_ensemble

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
MODULE = "enumerate_backend"


def _blocks(lang: str) -> list[str]:
    text = DOC.read_text()
    start = text.index("## Adding a backend\n")
    end = text.find("\n## ", start + 1)
    return re.findall(rf"```{lang}\n(.*?)```", text[start : end if end != -1 else None], re.S)


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    """The example backend's module, importable here and in workers; registered."""
    where = tmp_path_factory.mktemp("plugin")
    (where / f"{MODULE}.py").write_text(_blocks("python")[0])
    mp = pytest.MonkeyPatch()
    mp.syspath_prepend(str(where))
    mp.setenv("PYTHONPATH", f"{where}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    try:
        exec(compile(_blocks("python")[1], "docs/extending.md:register", "exec"), {})
        yield importlib.import_module(MODULE)
    finally:
        registry.unregister("enumerate")
        worker.shutdown()
        sys.modules.pop(MODULE, None)
        mp.undo()


def _options(seconds: float = 30.0) -> SolveOptions:
    return SolveOptions(deadline=time.time() + seconds)


def test_the_registry_line_is_one_entry():
    protocol, line = [b.strip() for b in _blocks("text")]
    assert protocol.startswith("solve(problem: Problem, options: SolveOptions)")
    assert line.startswith('"enumerate": BackendInfo("enumerate", "treesens.backends.')


def test_the_registered_capabilities_are_read_from_the_entry(backend):
    caps = registry.get_info("enumerate").capabilities
    assert caps.integer_coefficients and not caps.implications
    assert caps.size_limit == backend.SIZE_LIMIT


def test_the_worked_example_runs(backend, monkeypatch):
    monkeypatch.chdir(DOC.parents[1])  # the docs name files from the repository's root
    exec(compile(_blocks("python")[2], "docs/extending.md:usage", "exec"), {})


def test_a_backend_name_cannot_be_registered_twice(backend):
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get_info("enumerate"))


def test_an_unregistered_backend_is_unknown(backend):
    registry.register(replace(registry.get_info("enumerate"), name="enumerate-copy"))
    registry.unregister("enumerate-copy")
    with pytest.raises(InputError, match="unknown backend 'enumerate-copy'"):
        registry.get_info("enumerate-copy")


def _verdict(ens, backend_name: str) -> tuple[str, str | None]:
    q = make_query(["f0"], gap=0.1, backend=backend_name, timeout=60, options={"heuristic": False})
    r = solve_query(ens, q)
    return r.status, r.stats.get("found_by")


@pytest.mark.parametrize("seed", range(8))
def test_verdicts_equal_the_oracle_and_cpsat(backend, seed):
    ens = random_ensemble(seed, n_trees=3, depth=2, n_features=3, n_thresholds=3)
    status, found_by = _verdict(ens, "enumerate")
    oracle = brute_force_sensitive(ens, make_query(["f0"], gap=0.1))
    assert status == (SENSITIVE if oracle else INSENSITIVE) == _verdict(ens, "cpsat")[0]
    assert found_by == ("enumerate" if oracle else None)


def test_the_backend_runs_in_a_race_with_cpsat(backend):
    ens = random_ensemble(1, n_trees=3, depth=2, n_features=3, n_thresholds=3)
    oracle = brute_force_sensitive(ens, make_query(["f0"], gap=0.1))
    assert _verdict(ens, "race:cpsat,enumerate")[0] == (SENSITIVE if oracle else INSENSITIVE)


def test_a_problem_over_the_size_limit_is_refused_with_a_clear_error(backend):
    n = backend.SIZE_LIMIT[0] + 1
    sol = backend.solve(Problem(tuple(Var(f"x{i}") for i in range(n)), ()), _options())
    assert sol.status == ERROR
    assert sol.message.startswith(f"problem too large for enumeration: {n} variables")


def test_a_real_variable_is_refused(backend):
    sol = backend.solve(Problem((Var("r", REAL, 0.0, 1.0),), ()), _options())
    assert sol.status == ERROR and "r is real" in sol.message


def test_exactly_one_and_linear_rows_give_a_point_meeting_them(backend):
    variables = (Var("a"), Var("b"), Var("c"), Var("n", INT, 0.0, 3.0))
    rows = (ExactlyOne((0, 1, 2)), Linear((2, 3), (2.0, 1.0), ">=", 4.0))
    sol = backend.solve(Problem(variables, rows), _options())
    assert sol.status == OPTIMAL and sol.values.tolist() == [0.0, 0.0, 1.0, 2.0]


def test_infeasible_is_said_after_the_whole_enumeration(backend):
    variables = tuple(Var(f"x{i}") for i in range(12))
    rows = (Linear(tuple(range(12)), (2.0,) * 12, "==", 7.0),)  # an even sum is never 7
    sol = backend.solve(Problem(variables, rows), _options())
    assert sol.status == INFEASIBLE and sol.values is None and sol.stats["nodes"] > 12


def test_an_enumeration_cut_short_by_the_deadline_is_unknown(backend):
    variables = tuple(Var(f"x{i}") for i in range(30))
    rows = (Linear(tuple(range(30)), (2.0,) * 30, "==", 7.0),)
    sol = backend.solve(Problem(variables, rows), SolveOptions(deadline=time.time() - 1))
    assert sol.status == UNKNOWN and sol.values is None
