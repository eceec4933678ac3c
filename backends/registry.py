"""Which backends exist, what they accept, and whether they are installed.

Nothing here imports a solver: availability is checked with ``find_spec``.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass


@dataclass(frozen=True)
class BackendInfo:
    name: str
    module: str  # treesens module with solve(problem, options)
    requires: tuple[str, ...]  # importable packages it needs
    integer_coefficients: bool = False  # needs integer data: IntegerScaling is added
    implications: bool = True  # accepts Implication constraints natively or by big-M
    description: str = ""
    size_limit: tuple[int, int] | None = None  # (vars, constraints) a license accepts
    variable_kinds: tuple[str, ...] = ("bool", "int", "real")  # what the solver takes

    def reductions(self):
        """Backend-specific passes, applied after the solver-agnostic ones."""
        from ..compiler.passes import IntegerScaling

        return [IntegerScaling()] if self.integer_coefficients else []

    def installed(self) -> bool:
        return all(importlib.util.find_spec(p) is not None for p in self.requires)

    def load(self):
        return importlib.import_module(self.module)


BACKENDS: dict[str, BackendInfo] = {
    "cpsat": BackendInfo(
        "cpsat",
        "treesens.backends.cpsat",
        ("ortools",),
        integer_coefficients=True,
        description="Google OR-Tools CP-SAT",
        variable_kinds=("bool", "int"),
    ),
    "cbc": BackendInfo(
        "cbc", "treesens.backends.mip_backend", ("mip",), description="COIN-OR CBC via python-mip"
    ),
    "highs": BackendInfo(
        "highs",
        "treesens.backends.mip_backend",
        ("mip", "highspy"),
        description="HiGHS via python-mip",
    ),
    "gurobi": BackendInfo(
        "gurobi",
        "treesens.backends.gurobi",
        ("gurobipy",),
        description="Gurobi via gurobipy",
        size_limit=(2000, 2000),
    ),
    "z3": BackendInfo(
        "z3",
        "treesens.backends.smtlib",
        ("z3",),
        description="SMT-LIB 2 text (pseudo-Boolean rows, exact rationals) solved by z3",
    ),
}

DEFAULT_BACKEND = "cpsat"


def get_info(name: str) -> BackendInfo:
    from ..compiler.errors import InputError, closest

    if name not in BACKENDS:
        raise InputError(
            f"unknown backend {name!r}{closest(name, BACKENDS)}; known: {', '.join(BACKENDS)}"
        )
    return BACKENDS[name]


def available(name: str) -> bool:
    return name in BACKENDS and BACKENDS[name].installed() and _module_exists(BACKENDS[name].module)


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
