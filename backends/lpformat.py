"""CPLEX LP and free MPS text from the Constraint IR (no solver needed).

Implications are written as big-M rows (``linearize.big_m_rows``), exactly-one groups as
equalities. Numbers are printed with ``repr``, which round-trips every float exactly.
Variables are named ``x<i>`` and rows ``c<i>`` after their index in the IR (a comment
block maps them back to the IR's names). An objective's constant term is left out of
the file (noted in a comment): it does not change which points are optimal.
"""

from __future__ import annotations

import math

from ..compiler.ir import BOOL, INT, Problem
from .linearize import Row, rows
from .smtlib import to_smtlib

_LINE = 200  # LP readers limit line length; wrap long rows well before any limit


def _num(x: float) -> str:
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _unique_names(rs: list[Row]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for r in rs:
        base = r.name or "r"
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.append(base if n == 0 else f"{base}_{n}")
    return out


def _terms(vars, coefs) -> list[str]:
    out = []
    for i, (v, k) in enumerate(zip(vars, coefs)):
        sign = "-" if k < 0 else "+"
        a = abs(float(k))
        coef = "" if a == 1.0 else f"{_num(a)} "
        if i == 0:
            out.append(f"{'-' if k < 0 else ''}{coef}x{v}")
        else:
            out.append(f"{sign} {coef}x{v}")
    return out


def _wrap(head: str, parts: list[str], tail: str = "") -> list[str]:
    lines, cur = [], head
    for p in parts + ([tail] if tail else []):
        if len(cur) + 1 + len(p) > _LINE and cur.strip():
            lines.append(cur)
            cur = "   " + p
        else:
            cur = f"{cur} {p}" if cur else p
    lines.append(cur)
    return lines


def _name_comments(problem: Problem, prefix: str) -> list[str]:
    return [f"{prefix} x{i} = {v.name}" for i, v in enumerate(problem.vars) if v.name]


def to_lp(problem: Problem, names: bool = True) -> str:
    rs = rows(problem)
    rnames = _unique_names(rs)
    out = [
        f"\\ treesens constraint problem: {problem.n_vars} variables, {len(rs)} rows (CPLEX LP format)"
    ]
    if names:
        out += _name_comments(problem, "\\")
    obj = problem.objective
    if obj is not None and obj.vars:
        if obj.constant:
            out.append(f"\\ objective constant {obj.constant!r} left out")
        out.append("Maximize" if obj.sense == "max" else "Minimize")
        out += _wrap(" obj:", _terms(obj.vars, obj.coefs))
    else:
        out.append("Minimize")
        out.append(" obj: 0 x0" if problem.n_vars else " obj:")
    out.append("Subject To")
    for r, name in zip(rs, rnames):
        op = {"<=": "<=", ">=": ">=", "==": "="}[r.sense]
        parts = _terms(r.vars, r.coefs) if r.vars else ["0 x0"]
        out += _wrap(f" {name}:", parts, f"{op} {_num(r.rhs)}")
    out.append("Bounds")
    bins, gens = [], []
    for i, v in enumerate(problem.vars):
        if v.kind == BOOL:
            bins.append(f"x{i}")
            continue
        if v.kind == INT:
            gens.append(f"x{i}")
        lo = _num(v.lb) if math.isfinite(v.lb) else "-inf"
        hi = _num(v.ub) if math.isfinite(v.ub) else "+inf"
        if lo == "-inf" and hi == "+inf":
            out.append(f" x{i} free")
        else:
            out.append(f" {lo} <= x{i} <= {hi}")
    if bins:
        out.append("Binaries")
        out += _wrap("", bins)
    if gens:
        out.append("Generals")
        out += _wrap("", gens)
    out.append("End")
    return "\n".join(out) + "\n"


def to_mps(problem: Problem, names: bool = True) -> str:
    """Free MPS (names without spaces, fields separated by blanks)."""
    rs = rows(problem)
    rnames = _unique_names(rs)
    out = [f"* treesens constraint problem: {problem.n_vars} variables, {len(rs)} rows (free MPS)"]
    if names:
        out += _name_comments(problem, "*")
    obj = problem.objective
    has_obj = obj is not None and bool(obj.vars)
    if has_obj and obj.constant:
        out.append(f"* objective constant {obj.constant!r} left out")
    out.append("NAME treesens")
    if has_obj and obj.sense == "max":
        out += ["OBJSENSE", "    MAX"]
    out.append("ROWS")
    out.append(" N obj")
    for r, name in zip(rs, rnames):
        out.append(f" {'L' if r.sense == '<=' else 'G' if r.sense == '>=' else 'E'} {name}")
    cols: list[list[tuple[str, float]]] = [[] for _ in problem.vars]
    if has_obj:
        acc: dict[int, float] = {}
        for v, k in zip(obj.vars, obj.coefs):
            acc[v] = acc.get(v, 0.0) + float(k)
        for v, k in acc.items():
            if k != 0.0:
                cols[v].append(("obj", k))
    for r, name in zip(rs, rnames):
        for v, k in zip(r.vars, r.coefs):
            if k != 0.0:
                cols[v].append((name, k))
    out.append("COLUMNS")
    in_int = False
    for i, v in enumerate(problem.vars):
        integral = v.kind in (BOOL, INT)
        if integral and not in_int:
            out.append(" MARKER 'MARKER' 'INTORG'")
            in_int = True
        elif not integral and in_int:
            out.append(" MARKER 'MARKER' 'INTEND'")
            in_int = False
        entries = cols[i] or [("obj", 0.0)]  # every column is listed, even if unused
        for rname, k in entries:
            out.append(f" x{i} {rname} {_num(k)}")
    if in_int:
        out.append(" MARKER 'MARKER' 'INTEND'")
    out.append("RHS")
    for r, name in zip(rs, rnames):
        if r.rhs != 0.0:
            out.append(f" RHS {name} {_num(r.rhs)}")
    out.append("BOUNDS")
    for i, v in enumerate(problem.vars):
        if v.kind == BOOL:
            out.append(f" BV BND x{i}")
            continue
        lo_f, hi_f = math.isfinite(v.lb), math.isfinite(v.ub)
        lt, ut = ("LI", "UI") if v.kind == INT else ("LO", "UP")
        if not lo_f and not hi_f:
            out.append(f" FR BND x{i}")
            continue
        if lo_f:
            out.append(f" {lt} BND x{i} {_num(v.lb)}")
        else:
            out.append(f" MI BND x{i}")
        if hi_f:
            out.append(f" {ut} BND x{i} {_num(v.ub)}")
        else:
            out.append(f" PL BND x{i}")
    out.append("ENDATA")
    return "\n".join(out) + "\n"


FORMATS = {"lp": to_lp, "mps": to_mps}


def write(problem: Problem, fmt: str) -> str:
    """The problem as text in ``fmt``: ``smt2``, ``lp`` or ``mps``."""
    if fmt == "smt2":
        return to_smtlib(problem, get_model=False)
    return FORMATS[fmt](problem)
