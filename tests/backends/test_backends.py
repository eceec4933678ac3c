"""Backends at the Constraint-IR level, the worker's isolation, and the text formats.

Every solver runs in a worker process (never imported here: python-mip's CBC and
OR-Tools cannot share a process); file formats are read back by solvers in subprocesses.
"""

from __future__ import annotations

import dataclasses
import itertools
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from treesens.backends.linearize import big_m_rows, rows
from treesens.backends.lpformat import to_lp, to_mps
from treesens.backends.registry import BACKENDS, BackendInfo, available
from treesens.backends.smtlib import to_smtlib
from treesens.backends.worker import Worker, WorkerStopped, thread_key, worker_for
from treesens.compiler.ir import (
    INT,
    REAL,
    ExactlyOne,
    Implication,
    Linear,
    Objective,
    Problem,
    Var,
    check_constraint,
)
from treesens.compiler.solver import SolveOptions
from treesens.driver import backend_chain

INSTALLED = [b for b in BACKENDS if available(b)]
MISSING = [b for b in BACKENDS if not available(b)]
REAL_OK = [b for b in INSTALLED if "real" in BACKENDS[b].variable_kinds]  # not CP-SAT


def _solve(backend: str, problem: Problem, timeout: float = 20.0, first: bool = True):
    """Solve on one backend in a fresh worker (the backend's reductions applied)."""
    from treesens.compiler.passes import Chain, Compiled

    chain = Chain(backend_chain(BACKENDS[backend].capabilities, backend))
    compiled, inv = chain.apply(Compiled(problem, None))
    w = worker_for(backend)  # pooled: one process per backend for the whole session
    sol = w.solve(
        compiled.problem, SolveOptions(deadline=time.time() + timeout, first_solution=first)
    )
    values = chain.invert(sol.values, inv) if sol.values is not None else None
    return sol, values


def _feasible(problem: Problem, values) -> bool:
    return all(check_constraint(c, values, 1e-6) for c in problem.constraints) and all(
        v.lb - 1e-6 <= x <= v.ub + 1e-6 for v, x in zip(problem.vars, values)
    )


# --- small problems with known answers -------------------------------------------------
def _bools(n):
    return tuple(Var(f"b{i}") for i in range(n))


def p_exactly_one_conflict() -> Problem:
    """exactly one of a, b; a + b >= 2: infeasible."""
    return Problem(_bools(2), (ExactlyOne((0, 1)), Linear((0, 1), (1.0, 1.0), ">=", 2.0)))


def p_fractional_pb() -> Problem:
    """0.1 a + 0.2 b + 0.3 c >= 0.45 with at most two: feasible (b, c), objective guides."""
    cons = (
        Linear((0, 1, 2), (0.1, 0.2, 0.3), ">=", 0.45),
        Linear((0, 1, 2), (1.0, 1.0, 1.0), "<=", 2.0),
    )
    return Problem(_bools(3), cons, Objective("max", (0,), (1.0,)))


def p_implication(value: bool, feasible: bool) -> Problem:
    """z forced to ``value``; z == value => a + b >= 2; a + b <= 1 (when feasible=False)."""
    cons = [
        Linear((2,), (1.0,), "==", 1.0 if value else 0.0),
        Implication(2, value, Linear((0, 1), (1.0, 1.0), ">=", 2.0)),
    ]
    if not feasible:
        cons.append(Linear((0, 1), (1.0, 1.0), "<=", 1.0))
    return Problem(_bools(3), tuple(cons))


def p_int(feasible: bool) -> Problem:
    """3 <= 2 y + b, y in [-3, 5] integer; and 2y + b == 4 (feasible: y=2,b=0) or == 7 with y <= 2."""
    vs = (Var("y", INT, -3.0, 5.0), Var("b"))
    cons = [Linear((0, 1), (2.0, 1.0), ">=", 3.0)]
    cons.append(Linear((0, 1), (2.0, 1.0), "==", 4.0 if feasible else 7.0))
    if not feasible:
        cons.append(Linear((0,), (1.0,), "<=", 2.0))
    return Problem(vs, tuple(cons))


def p_real_implication(feasible: bool) -> Problem:
    """r in [-1.5, 2.5] real; z => r >= 2.25; not z => r <= -1.25; z + w == 1; w => r >= 0."""
    vs = (Var("r", REAL, -1.5, 2.5), Var("z"), Var("w"))
    cons = [
        Implication(1, True, Linear((0,), (1.0,), ">=", 2.25)),
        Implication(1, False, Linear((0,), (1.0,), "<=", -1.25)),
        Linear((1, 2), (1.0, 1.0), "==", 1.0),
        Implication(2, True, Linear((0,), (1.0,), ">=", 0.0)),
    ]
    if not feasible:
        cons.append(
            Linear((0,), (1.0,), "<=", 2.0)
        )  # z needs r >= 2.25, w needs r >= 0 (z off: r <= -1.25)
    return Problem(vs, tuple(cons))


CASES = {
    "exactly-one-conflict": (p_exactly_one_conflict, False, False),
    "fractional-pb": (p_fractional_pb, True, False),
    "implication-true-sat": (lambda: p_implication(True, True), True, False),
    "implication-true-unsat": (lambda: p_implication(True, False), False, False),
    "implication-false-unsat": (lambda: p_implication(False, False), False, False),
    "int-sat": (lambda: p_int(True), True, False),
    "int-unsat": (lambda: p_int(False), False, False),
    "real-implication-sat": (lambda: p_real_implication(True), True, True),
    "real-implication-unsat": (lambda: p_real_implication(False), False, True),
}


@pytest.mark.parametrize("backend", INSTALLED)
@pytest.mark.parametrize("case", list(CASES))
def test_known_answer_problems_on_every_backend(backend, case):
    make, feasible, has_real = CASES[case]
    if has_real and backend not in REAL_OK:
        pytest.skip(f"{backend} takes no real variables")
    problem = make()
    sol, values = _solve(backend, problem)
    if feasible:
        assert sol.status in ("feasible", "optimal"), (sol.status, sol.message)
        assert _feasible(problem, values), values
    else:
        assert sol.status == "infeasible", (sol.status, sol.message)


@pytest.mark.parametrize("backend", [b for b in INSTALLED if b in ("cbc", "highs", "gurobi", "z3")])
def test_optimize_objective_reaches_the_optimum(backend):
    # max a + 2b + 3c subject to a + b + c <= 2: optimum 5 (b, c)
    p = Problem(
        _bools(3),
        (Linear((0, 1, 2), (1.0, 1.0, 1.0), "<=", 2.0),),
        Objective("max", (0, 1, 2), (1.0, 2.0, 3.0), role="optimize"),
    )
    sol, values = _solve(backend, p, first=False)
    assert sol.status == "optimal", sol.message
    assert list(values) == [0.0, 1.0, 1.0]


# --- big-M rows are exact -------------------------------------------------------------
@pytest.mark.parametrize("sense", ["<=", ">=", "=="])
@pytest.mark.parametrize("value", [True, False])
def test_big_m_rows_equal_the_implication_on_every_point(sense, value):
    vs = (Var("a"), Var("b"), Var("y", INT, -2.0, 3.0), Var("z"))
    then = Linear((0, 1, 2), (0.5, -1.25, 0.75), sense, 0.25)
    imp = Implication(3, value, then)
    p = Problem(vs, (imp,))
    rs = big_m_rows(p, imp)
    for a, b, y, z in itertools.product((0, 1), (0, 1), range(-2, 4), (0, 1)):
        x = [a, b, y, z]
        want = check_constraint(imp, x, 0.0)
        got = all(check_constraint(Linear(r.vars, r.coefs, r.sense, r.rhs), x, 0.0) for r in rs)
        assert got == want, (x, rs)


def test_big_m_refuses_unbounded_variables():
    p = Problem(
        (Var("r", REAL, 0.0, float("inf")), Var("z")),
        (Implication(1, True, Linear((0,), (1.0,), "<=", 1.0)),),
    )
    with pytest.raises(ValueError, match="unbounded"):
        rows(p)


def test_redundant_implication_rows_are_dropped():
    p = Problem(_bools(3), (Implication(2, True, Linear((0, 1), (1.0, 1.0), "<=", 5.0)),))
    assert rows(p) == []


# --- the worker: crashes, hangs and errors stay inside one query -----------------------
@pytest.fixture
def fake_backend(monkeypatch):
    info = BackendInfo(
        "fake",
        "treesens.tests.fake_backend",
        ("ortools",),
        integer_coefficients=True,
        description="test backend",
    )
    monkeypatch.setitem(BACKENDS, "fake", info)
    return "fake"


def _fake(what: str | None) -> Problem:
    p = p_int(True)
    return _asking(p, what) if what else p


def _asking(p: Problem, what: str) -> Problem:
    """The problem with a free variable whose name asks the fake backend to misbehave."""
    return dataclasses.replace(p, vars=p.vars + (Var(f"fake:{what}"),))


@pytest.mark.skipif(
    not available("cpsat"), reason="the fake backend solves with CP-SAT (ortools missing)"
)
@pytest.mark.parametrize(
    "what,status,says",
    [
        ("crash", "error", "died"),
        ("raise", "error", "fake backend asked to fail"),
        ("hang", "unknown", "time limit"),
    ],
)
def test_a_misbehaving_solver_ends_only_its_query(fake_backend, what, status, says):
    w = Worker(fake_backend)
    try:
        # start the process first: under load, start-up alone can take a second
        warm = w.solve(_fake(None), SolveOptions(deadline=time.time() + 30.0))
        assert warm.status in ("feasible", "optimal"), warm
        t0 = time.time()
        limit = 1.0 if what == "hang" else 20.0
        bad = w.solve(_fake(what), SolveOptions(deadline=time.time() + limit))
        assert bad.status == status, bad
        assert says in bad.message
        assert time.time() - t0 < 10
        good = w.solve(_fake(None), SolveOptions(deadline=time.time() + 20.0))
        assert good.status in ("feasible", "optimal"), good
    finally:
        w.close()


@pytest.mark.skipif(
    not available("cpsat"), reason="the fake backend solves with CP-SAT (ortools missing)"
)
def test_killing_one_threads_solve_leaves_the_other_threads_solve_running(fake_backend):
    w = Worker(fake_backend)
    keys, got = {}, {}

    def solve(name: str, what: str | None) -> None:
        keys[name] = thread_key()
        got[name] = w.solve(_fake(what), SolveOptions(deadline=time.time() + 60.0))

    try:
        hung = threading.Thread(target=solve, args=("hung", "hang"))
        hung.start()
        end = time.time() + 30.0
        while keys.get("hung") not in w._procs and time.time() < end:
            time.sleep(0.05)
        time.sleep(1.0)  # its process has taken the problem (and sleeps)
        t0 = time.time()
        w.kill_thread(keys["hung"])
        hung.join(20.0)
        assert not hung.is_alive() and got["hung"].status == "error"
        assert time.time() - t0 < 10
        solve("other", None)  # the worker goes on serving the other threads
        assert got["other"].status in ("feasible", "optimal"), got["other"]
    finally:
        w.close()


@pytest.mark.skipif(not available("cpsat"), reason="CP-SAT (ortools) missing")
def test_a_thread_whose_solve_was_stopped_starts_no_other_until_allowed():
    w = Worker("cpsat")
    try:
        w.kill_thread(thread_key())
        with pytest.raises(WorkerStopped):
            w.solve(p_int(True), SolveOptions(deadline=time.time() + 30.0))
        w.allow_thread(thread_key())
        assert w.solve(p_int(True), SolveOptions(deadline=time.time() + 30.0)).status in (
            "feasible",
            "optimal",
        )
    finally:
        w.close()


@pytest.mark.skipif(
    not available("cpsat"), reason="the fake backend solves with CP-SAT (ortools missing)"
)
def test_a_raising_solver_reports_one_line_and_keeps_the_traceback_in_stats(fake_backend):
    w = Worker(fake_backend)
    try:
        bad = w.solve(_fake("raise"), SolveOptions(deadline=time.time() + 30.0))
    finally:
        w.close()
    assert bad.message == "RuntimeError: fake backend asked to fail"
    assert "Traceback" in bad.stats["traceback"]


@pytest.mark.skipif(
    not available("cpsat"), reason="the fake backend solves with CP-SAT (ortools missing)"
)
def test_a_crash_is_an_error_result_and_the_next_query_is_answered(fake_backend, monkeypatch):
    from treesens.compiler.query import Gap, Plan, Query
    from treesens.driver import compile as driver_compile
    from treesens.driver import solve_query
    from treesens.tests.oracle import subset_sum_ensemble

    ens = subset_sum_ensemble([3, 5, 7], 12)
    q = Query(
        vary=("f'",),
        gap=Gap(0.25, "margin"),
        plan=Plan(backend=fake_backend, timeout=30.0, options=(("heuristic", False),)),
    )
    real_for_backend = driver_compile.for_backend

    def crashing(cq, backend):  # the first query's problem asks the fake solver to crash
        compiled, chain, inv = real_for_backend(cq, backend)
        return compiled.with_problem(_asking(compiled.problem, "crash")), chain, inv

    monkeypatch.setattr(driver_compile, "for_backend", crashing)
    r = solve_query(ens, q)
    assert r.status == "error" and "died" in r.error
    monkeypatch.setattr(driver_compile, "for_backend", real_for_backend)
    r = solve_query(ens, q)
    assert r.status == "sensitive" and r.validated


def test_an_unknown_backend_is_bad_input():
    from treesens.compiler.errors import InputError

    with pytest.raises(InputError, match="unknown backend"):
        Worker("nosuchsolver")


@pytest.mark.skipif(not available("gurobi"), reason="gurobipy is not installed")
def test_gurobi_size_limit_is_reported_with_the_sizes():
    n = 2100
    p = Problem(_bools(n), (Linear(tuple(range(n)), (1.0,) * n, ">=", 1.0),))
    sol, _ = _solve("gurobi", p)
    if sol.status != "error":
        pytest.skip("this Gurobi license is not size-limited")
    assert (
        "license refused" in sol.message
        and "2100 variables" in sol.message
        and "2000" in sol.message
    )


@pytest.mark.skipif(not available("gurobi"), reason="gurobipy is not installed")
def test_gurobi_native_indicators_on_a_tiny_model():
    sol, _ = _solve("gurobi", p_real_implication(False))
    assert sol.status == "infeasible"


# --- text formats, read back by other programs ------------------------------------------
FORMAT_CASES = [
    "exactly-one-conflict",
    "fractional-pb",
    "implication-true-unsat",
    "int-sat",
    "int-unsat",
    "real-implication-sat",
    "real-implication-unsat",
]


def _run_py(code: str, timeout: float = 60.0) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(not available("z3"), reason="z3-solver is not installed")
@pytest.mark.parametrize("pb", [True, False], ids=["z3-pb", "plain"])
@pytest.mark.parametrize("case", FORMAT_CASES)
def test_smtlib_text_solves_in_z3_to_the_known_status(case, pb, tmp_path):
    make, feasible, _ = CASES[case]
    f = tmp_path / "q.smt2"
    f.write_text(to_smtlib(make(), pb=pb))
    got = _run_py(f"import z3; s = z3.Solver(); s.from_file({str(f)!r}); print(s.check())")
    assert got == ("sat" if feasible else "unsat")


def test_smtlib_is_exact_for_float_coefficients():
    # 0.1 + 0.2 == 0.30000000000000004 in floats, but the exact (dyadic) values of 0.1 and
    # 0.2 sum to less than the exact value of 0.30000000000000004: no point satisfies it
    p = Problem(_bools(2), (Linear((0, 1), (0.1, 0.2), ">=", 0.30000000000000004),))
    text = to_smtlib(p)
    assert "((_ pbge 10808639105689192 3602879701896397 7205759403792794) x0 x1)" in text
    assert "(set-logic" not in text  # z3's pb functions: its default solver
    plain = to_smtlib(p, pb=False)
    assert "(set-logic QF_LIA)" in plain and "pbge" not in plain


def test_smtlib_logic_follows_the_variable_kinds():
    assert "(set-logic QF_LIA)" in to_smtlib(p_int(True))
    assert "(set-logic QF_LRA)" in to_smtlib(p_real_implication(True))
    mixed = Problem(
        (Var("y", INT, 0, 3), Var("r", REAL, 0, 1)), (Linear((0, 1), (1.0, 0.5), ">=", 1.0),)
    )
    assert "(set-logic QF_LIRA)" in to_smtlib(mixed)


_HIGHS_READ = """
import highspy, sys
h = highspy.Highs(); h.setOptionValue("output_flag", False)
assert h.readModel(sys.argv[1]) == highspy.HighsStatus.kOk, "readModel failed"
h.run()
print(h.modelStatusToString(h.getModelStatus()))
"""


@pytest.mark.skipif(not available("highs"), reason="highspy is not installed")
@pytest.mark.parametrize("fmt", ["lp", "mps"])
@pytest.mark.parametrize("case", FORMAT_CASES)
def test_lp_and_mps_files_read_by_highs_to_the_known_status(case, fmt, tmp_path):
    make, feasible, _ = CASES[case]
    f = tmp_path / f"q.{fmt}"
    f.write_text((to_lp if fmt == "lp" else to_mps)(make()))
    out = subprocess.run(
        [sys.executable, "-c", _HIGHS_READ, str(f)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("Optimal" if feasible else "Infeasible"), f.read_text()


def test_lp_writes_exact_coefficients():
    text = to_lp(p_fractional_pb())
    assert "0.1 x0 + 0.2 x1 + 0.3 x2 >= 0.45" in text
    assert "Binaries" in text and "Maximize" in text


def test_registry_lists_all_five_backends_and_the_missing_ones_say_so():
    assert {"cpsat", "cbc", "highs", "gurobi", "z3"} <= set(BACKENDS)
    for b in MISSING:
        assert not BACKENDS[b].installed()


def test_importing_the_whole_library_loads_no_solver_module():
    # a fresh interpreter: other tests of this process may load z3 on purpose
    code = (
        "import pkgutil, sys, treesens\n"
        "SOLVER_MODULES = {'cpsat', 'gurobi', 'mip_backend'}  # each imports its solver\n"
        "for m in pkgutil.walk_packages(treesens.__path__, 'treesens.'):\n"
        "    solver_module = m.name.rsplit('.', 1)[-1] in SOLVER_MODULES\n"
        "    if '.tests' not in m.name and not solver_module:\n"
        "        __import__(m.name)\n"
        "bad = sorted({'mip', 'ortools', 'gurobipy', 'z3'} & set(sys.modules))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_values_helper_on_a_known_point():
    assert _feasible(p_int(True), np.array([2.0, 0.0]))
