"""SMT-LIB 2 text from the Constraint IR, solved by z3 (in a worker process).

``to_smtlib(problem)`` needs no solver: it is what ``treesens emit --format smt2`` writes
and exactly the text the z3 backend parses and solves. Coefficients are exact: every
float is a dyadic rational (``fractions.Fraction(float)``), so no scaling pass is needed.

Encoding (chosen by measurement, see docs/backends.md):
- boolean variables are SMT ``Bool`` constants;
- a row over booleans only becomes a pseudo-Boolean constraint ``((_ pbge K a1 .. an)
  b1 .. bn)`` (z3's extension; the row is multiplied by the least common denominator of
  its coefficients, which is exact), exactly-one groups become ``((_ pbeq 1 1 .. 1) ..)``;
  the text then has no ``set-logic`` (z3's default solver, with its pseudo-Boolean
  theory; the QF_FD tactic that ``(set-logic QF_FD)`` selects bit-blasts the gap rows'
  large coefficients and is far slower);
- otherwise (integer or real variables, or ``pb=False``) rows are linear arithmetic, a
  boolean entering them as ``(ite b 1 0)``, in logic QF_LIA, QF_LRA or QF_LIRA.
- implications are ``(=> b row)`` (or ``(=> (not b) row)``), no big-M.

The objective: for a "guide" objective (any feasible point answers the question) z3 is a
satisfiability check and the objective is left out; an "optimize" objective becomes a
``(maximize ..)``/``(minimize ..)`` command solved with z3's Optimize when the caller
wants the optimum (``first_solution=False``).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from ..compiler.ir import BOOL, INT, ExactlyOne, Implication, Linear, Problem
from ..compiler.solver import ERROR, FEASIBLE, INFEASIBLE, OPTIMAL, UNKNOWN, Solution, SolveOptions

# z3 is imported lazily (inside solve) so that to_smtlib works in any process.


# z3's resource count (rlimit) per second of a work budget's solver time (answers/work.py:
# 10,000 work units): about a second of z3's search on the example models (1.0 M a CPU
# second on breast cancer's five features at gap 0.499)
Z3_RLIMIT_PER_SECOND = 1_000_000


def _name(i: int) -> str:
    return f"x{i}"


def _num(x: Fraction, real: bool) -> str:
    """An exact SMT-LIB numeral of the right sort."""
    neg = x < 0
    x = -x if neg else x
    if x.denominator == 1:
        s = f"{x.numerator}.0" if real else str(x.numerator)
    else:
        if not real:
            raise ValueError("a fractional number in an integer context")
        s = f"(/ {x.numerator}.0 {x.denominator}.0)"
    return f"(- {s})" if neg else s


def _lcd(fracs) -> int:
    d = 1
    for f in fracs:
        d = d * f.denominator // math.gcd(d, f.denominator)
    return d


class _Writer:
    def __init__(self, problem: Problem, pb: bool = True):
        self.p = problem
        self.pb = pb
        kinds = {v.kind for v in problem.vars}
        self.has_int = INT in kinds
        self.has_real = "real" in kinds
        # pseudo-Boolean forms only when every variable is boolean: z3 then solves the text
        # with z3's default solver (no set-logic: arithmetic logics reject the pb functions,
        # and z3's QF_FD tactic bit-blasts the large gap coefficients, far slower).
        self.pb = pb and kinds <= {BOOL}
        # arithmetic sort used for rows mixing booleans with numbers
        self.real = self.has_real

    def logic(self) -> str:
        if self.pb:
            return "z3-pb"  # no (set-logic): z3's default solver with its pseudo-Boolean theory
        if self.has_real and self.has_int:
            return "QF_LIRA"
        if self.has_real:
            return "QF_LRA"
        return "QF_LIA"

    def term(self, v: int, k: Fraction, real: bool) -> str:
        var = self.p.vars[v]
        if var.kind == BOOL:
            x = f"(ite {_name(v)} 1.0 0.0)" if real else f"(ite {_name(v)} 1 0)"
        elif var.kind == INT and real:
            x = f"(to_real {_name(v)})"
        else:
            x = _name(v)
        if k == 1:
            return x
        return f"(* {_num(k, real)} {x})"

    def row(self, c: Linear) -> str:
        if all(float(k).is_integer() for k in c.coefs) and float(c.rhs).is_integer():
            num = int  # integral data (most rows): plain ints, much faster than Fractions
        else:
            num = Fraction
        acc: dict = {}
        for v, k in zip(c.vars, c.coefs):
            acc[v] = acc.get(v, 0) + num(k)
        acc = {v: k for v, k in acc.items() if k != 0}
        rhs = num(c.rhs)
        op = {"<=": "<=", ">=": ">=", "==": "="}[c.sense]
        if not acc:
            holds = {"<=": rhs >= 0, ">=": rhs <= 0, "==": rhs == 0}[c.sense]
            return "true" if holds else "false"
        if self.pb and all(self.p.vars[v].kind == BOOL for v in acc):
            # pseudo-Boolean: integer coefficients after multiplying by the common denominator
            d = _lcd(list(acc.values()) + [rhs])
            ks = [int(k * d) for k in acc.values()]
            r = rhs * d
            if c.sense == ">=":
                bound = math.ceil(r)
            elif c.sense == "<=":
                bound = math.floor(r)
            else:
                if r.denominator != 1:
                    return "false"
                bound = int(r)
            kind = {"<=": "pble", ">=": "pbge", "==": "pbeq"}[c.sense]
            names = " ".join(_name(v) for v in acc)
            return f"((_ {kind} {bound} {' '.join(map(str, ks))}) {names})"
        # linear arithmetic; integer-only rows stay integral when the data allow it
        real = self.real
        if (
            not real
            and any(k.denominator != 1 for k in acc.values())
            or (not real and rhs.denominator != 1)
        ):
            d = _lcd(list(acc.values()) + [rhs])
            acc = {v: k * d for v, k in acc.items()}
            rhs = rhs * d
            if rhs.denominator != 1:  # only integer variables and booleans remain: round the bound
                if c.sense == ">=":
                    rhs = Fraction(math.ceil(rhs))
                elif c.sense == "<=":
                    rhs = Fraction(math.floor(rhs))
                else:
                    return "false"
        terms = [self.term(v, k, real) for v, k in acc.items()]
        lhs = terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"
        return f"({op} {lhs} {_num(rhs, real)})"

    def constraint(self, c) -> str:
        if isinstance(c, ExactlyOne):
            if not c.vars:
                return "false"
            vs = list(dict.fromkeys(c.vars))
            if len(vs) != len(c.vars):  # a repeated variable counts twice
                return self.row(Linear(c.vars, (1.0,) * len(c.vars), "==", 1.0))
            if len(vs) == 1:
                return _name(vs[0])
            if not self.pb:
                return self.row(Linear(c.vars, (1.0,) * len(c.vars), "==", 1.0))
            return f"((_ pbeq 1 {' '.join('1' for _ in vs)}) {' '.join(_name(v) for v in vs)})"
        if isinstance(c, Implication):
            lit = _name(c.var) if c.value else f"(not {_name(c.var)})"
            return f"(=> {lit} {self.row(c.then)})"
        if isinstance(c, Linear):
            return self.row(c)
        raise TypeError(f"unknown constraint type {type(c).__name__}")

    def objective(self) -> str | None:
        obj = self.p.objective
        if obj is None or not obj.vars:
            return None
        acc: dict[int, Fraction] = {}
        for v, k in zip(obj.vars, obj.coefs):
            acc[v] = acc.get(v, Fraction(0)) + Fraction(k)
        real = self.real or any(k.denominator != 1 for k in acc.values())
        terms = [self.term(v, k, real) for v, k in acc.items() if k != 0]
        if not terms:
            return None
        e = terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"
        return f"({'maximize' if obj.sense == 'max' else 'minimize'} {e})"


def to_smtlib(
    problem: Problem,
    *,
    objective: bool | None = None,
    names: bool = True,
    check_sat: bool = True,
    get_model: bool = False,
    pb: bool = True,
) -> str:
    """SMT-LIB 2 text of the problem.

    ``pb``: use z3's pseudo-Boolean functions (and no set-logic) when every variable is
    boolean (much faster in z3; pb=False gives plain QF_LIA any SMT-LIB 2.6 solver reads).
    ``objective``: include a (maximize/minimize) command; default: only for an
    "optimize" objective. ``names``: a comment per variable with its IR name.
    ``get_model``: end with (get-model), for the standalone z3 binary.
    """
    w = _Writer(problem, pb=pb)
    out = [
        "; treesens constraint problem",
        f"; {problem.n_vars} variables, {len(problem.constraints)} constraints",
        "(set-info :smt-lib-version 2.6)",
        (
            f"(set-logic {w.logic()})"
            if not w.pb
            else "; z3 pseudo-Boolean extension ((_ pbge K a1 .. an) b1 .. bn): no set-logic, z3's default solver"
        ),
    ]
    for i, v in enumerate(problem.vars):
        comment = f" ; {v.name}" if names and v.name else ""
        if v.kind == BOOL:
            out.append(f"(declare-const {_name(i)} Bool){comment}")
            continue
        sort = "Int" if v.kind == INT else "Real"
        out.append(f"(declare-const {_name(i)} {sort}){comment}")
        real = v.kind != INT
        if math.isfinite(v.lb):
            lb = Fraction(v.lb) if real else Fraction(math.ceil(v.lb))
            out.append(f"(assert (>= {_name(i)} {_num(lb, real)}))")
        if math.isfinite(v.ub):
            ub = Fraction(v.ub) if real else Fraction(math.floor(v.ub))
            out.append(f"(assert (<= {_name(i)} {_num(ub, real)}))")
    for c in problem.constraints:
        out.append(f"(assert {w.constraint(c)})")
    want_obj = (
        objective
        if objective is not None
        else (problem.objective is not None and problem.objective.role == "optimize")
    )
    if want_obj:
        e = w.objective()
        if e:
            out.append(e)
    if check_sat:
        out.append("(check-sat)")
    if get_model:
        out.append("(get-model)")
    return "\n".join(out) + "\n"


def solve(problem: Problem, options: SolveOptions) -> Solution:
    """Solve the SMT-LIB text of the problem with z3 (runs in a worker process)."""
    import z3

    t0 = time.time()
    optimize = (
        problem.objective is not None and problem.objective.vars and not options.first_solution
    )
    text = to_smtlib(problem, objective=bool(optimize), names=False, check_sat=False)
    z3.set_param("smt.random_seed", int(options.seed))
    if options.threads and options.threads > 1 and options.work is None:
        z3.set_param("parallel.enable", True)
        z3.set_param("parallel.threads.max", int(options.threads))
    elif options.work is not None:  # a work budget: one thread, z3's own count decides
        z3.set_param("parallel.enable", False)
    if options.memory_mb:
        z3.set_param("memory_max_size", int(options.memory_mb))
    # a fresh context per query: z3's search depends on its terms' ids, which a context
    # reused by an earlier query would shift (same query and seed, another witness)
    ctx = z3.Context()
    s = z3.Optimize(ctx=ctx) if optimize else z3.Solver(ctx=ctx)
    s.from_string(text)
    build_time = time.time() - t0
    ms = int(max(0.05, options.remaining()) * 1000)
    s.set("timeout", ms)
    rlimit = None
    if options.work is not None:  # its resource count, which is the same on every run
        rlimit = max(1, int(options.work * Z3_RLIMIT_PER_SECOND))
        s.set("rlimit", rlimit)
    t1 = time.time()
    r = s.check()
    solve_time = time.time() - t1
    stats = {"logic": _Writer(problem).logic()}
    if rlimit is not None:
        count = _rlimit_count(s)
        stats["deterministic_time"] = count / Z3_RLIMIT_PER_SECOND
        stats["work_spent"] = r == z3.unknown and count >= rlimit
    if r == z3.sat:
        m = s.model()
        got = {}
        for d in m.decls():
            got[d.name()] = m[d]
        values = np.zeros(problem.n_vars, dtype=np.float64)
        for i, v in enumerate(problem.vars):
            x = got.get(_name(i))
            if x is None:  # not constrained: any value in its bounds will do
                values[i] = 0.0 if v.kind == BOOL else min(max(0.0, v.lb), v.ub)
                if v.kind == INT:
                    values[i] = float(math.ceil(values[i]))
            elif v.kind == BOOL:
                values[i] = 1.0 if z3.is_true(x) else 0.0
            elif v.kind == INT:
                values[i] = float(x.as_long())
            else:
                values[i] = float(Fraction(x.numerator_as_long(), x.denominator_as_long()))
        obj = None
        if problem.objective is not None and problem.objective.vars:
            obj = float(
                sum(
                    float(k) * values[v]
                    for v, k in zip(problem.objective.vars, problem.objective.coefs)
                )
                + problem.objective.constant
            )
        return Solution(
            OPTIMAL
            if (optimize or problem.objective is None or not problem.objective.vars)
            else FEASIBLE,
            values,
            obj,
            None,
            solve_time,
            build_time,
            stats=stats,
        )
    if r == z3.unsat:
        return Solution(INFEASIBLE, time=solve_time, build_time=build_time, stats=stats)
    reason = s.reason_unknown()
    if "memory" in reason.lower():
        return Solution(
            ERROR, time=solve_time, build_time=build_time, stats=stats, message=f"z3: {reason}"
        )
    return Solution(
        UNKNOWN,
        time=solve_time,
        build_time=build_time,
        stats=stats,
        message=_unknown_words(reason, stats.get("work_spent", False)),
    )


def _unknown_words(reason: str, work_spent: bool) -> str:
    if work_spent:
        return "work budget spent"
    return "time limit reached" if reason in ("timeout", "canceled") else f"z3: {reason}"


def _rlimit_count(s) -> int:
    """z3's resource count of the last check (its statistic "rlimit count")."""
    try:
        return int(s.statistics().get_key_value("rlimit count"))
    except Exception:  # noqa: BLE001 - a z3 that does not count it: nothing counted
        return 0
