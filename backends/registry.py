"""Which backends exist, what they accept, and whether they are installed.

Nothing here imports a solver: availability is checked with ``find_spec``. A backend
declares its capabilities only; the driver (driver/chain.py) turns them into reductions.
Adding a backend is adding its module and one entry in ``BACKENDS``; ``register`` adds
one at run time (a plugin, a test). docs/extending.md shows how. A search method that
needs no solver (the box search, search/) is an entry of ``SEARCH_METHODS`` naming its
module, which the driver loads as it loads a solver's.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from ..compiler.errors import InputError, closest
from ..compiler.ir import BOOL, INT, REAL

if TYPE_CHECKING:
    from ..compiler.solver import Capabilities


@dataclass(frozen=True)
class Entry:
    """What every entry of the registry has: its name and the module that runs it,
    imported by name where it runs (a solver's in its worker process)."""

    name: str
    module: str

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


@dataclass(frozen=True)
class BackendInfo(Entry):
    # module: a treesens module with solve(problem, options)
    requires: tuple[str, ...]  # importable packages it needs
    integer_coefficients: bool = False  # needs integer data
    implications: bool = True  # takes Implication constraints natively (else big-M rows)
    description: str = ""
    size_limit: tuple[int, int] | None = None  # (vars, constraints) a license accepts
    variable_kinds: tuple[str, ...] = (BOOL, INT, REAL)  # what the solver takes
    install: str = ""  # the command that installs what it needs
    # its module serves several backends: the worker sends solve() the backend's name
    sends_name: bool = False

    @property
    def capabilities(self) -> Capabilities:
        from ..compiler.solver import Capabilities  # (the solver layer: when one is used)

        return Capabilities(
            integer_coefficients=self.integer_coefficients,
            implications=self.implications,
            variable_kinds=self.variable_kinds,
            size_limit=self.size_limit,
        )

    def installed(self) -> bool:
        return all(importlib.util.find_spec(p) is not None for p in self.requires)


BACKENDS: dict[str, BackendInfo] = {
    "cpsat": BackendInfo(
        "cpsat",
        "treesens.backends.cpsat",
        ("ortools",),
        integer_coefficients=True,
        description="Google OR-Tools CP-SAT",
        install="pip install ortools",
        variable_kinds=(BOOL, INT),
    ),
    "cbc": BackendInfo(
        "cbc",
        "treesens.backends.mip_backend",
        ("mip",),
        implications=False,
        sends_name=True,
        description="COIN-OR CBC via python-mip",
        install="pip install 'treesens[cbc]'",
    ),
    "highs": BackendInfo(
        "highs",
        "treesens.backends.mip_backend",
        ("mip", "highspy"),
        implications=False,
        sends_name=True,
        description="HiGHS via python-mip",
        install="pip install 'treesens[highs]'",
    ),
    "gurobi": BackendInfo(
        "gurobi",
        "treesens.backends.gurobi",
        ("gurobipy",),
        description="Gurobi via gurobipy",
        install="pip install 'treesens[gurobi]'",
        size_limit=(2000, 2000),
    ),
    "z3": BackendInfo(
        "z3",
        "treesens.backends.smtlib",
        ("z3",),
        description="SMT-LIB 2 text (pseudo-Boolean rows, exact rationals) solved by z3",
        install="pip install z3-solver",
    ),
}

DEFAULT_BACKEND = "cpsat"


@dataclass(frozen=True)
class SearchMethod(Entry):
    """A search that needs no solver: the driver runs it in this process on the query's
    encoding, with the whole time left and no solver after it. It is named, raced and
    compared like a backend, and always installed. Its module has ``search_alone(ctx)``:
    it answers the query in a SolveContext (answers/context.py), writing its result there."""

    description: str = ""


# the box search's name as a backend: `--backend boxes`, and a max gap's result the
# largest-gap box search answered (no solver ran)
BOXES = "boxes"

SEARCH_METHODS: dict[str, SearchMethod] = {
    BOXES: SearchMethod(
        BOXES,
        "treesens.search.boxes",
        "the box search alone (search/box_search.py), no solver: proofs and pairs on the "
        "boxes of the pair space; a query it does not describe is an error",
    ),
}


def is_search_method(name: str) -> bool:
    return name in SEARCH_METHODS


def search_method(name: str) -> SearchMethod | None:
    """The search method called ``name``, or None: a backend (or unknown)."""
    return SEARCH_METHODS.get(name)


def register(info: BackendInfo | SearchMethod) -> None:
    """Add a backend or a search method (after the built-in ones); its name must be new."""
    if info.name in BACKENDS or info.name in SEARCH_METHODS:
        raise ValueError(f"a backend named {info.name!r} is already registered")
    if isinstance(info, SearchMethod):
        SEARCH_METHODS[info.name] = info
    else:
        BACKENDS[info.name] = info


def unregister(name: str) -> None:
    """Remove the backend or search method called ``name`` (one added with ``register``)."""
    BACKENDS.pop(name, None)
    SEARCH_METHODS.pop(name, None)


def get_info(name: str) -> BackendInfo:
    if name in SEARCH_METHODS:  # it was "unknown backend 'boxes' (did you mean 'boxes'?)"
        raise InputError(
            f"backend {name!r} is treesens' own search, not a solver: it has no solver "
            f"problem (the solvers: {', '.join(BACKENDS)})"
        )
    if name not in BACKENDS:
        known = [*BACKENDS, *SEARCH_METHODS]
        raise InputError(
            f"unknown backend {name!r}{closest(name, known)}; known: {', '.join(known)}"
        )
    return BACKENDS[name]


def install_hint(name: str) -> str:
    """How to install backend ``name``: its pip command, else the packages it needs."""
    info = get_info(name)
    return info.install or f"install {', '.join(info.requires)}"


def require_installed(name: str) -> None:
    """Backend ``name`` is known and installed; else one InputError saying how to install
    it (a query must not be answered by the heuristic under a backend that cannot run)."""
    if is_search_method(name):
        return
    info = get_info(name)
    if not available(name):
        missing = [p for p in info.requires if importlib.util.find_spec(p) is None]
        needs = f" ({', '.join(missing)} not found)" if missing else ""
        raise InputError(f"backend {name!r} is not installed{needs}: {install_hint(name)}")


def available(name: str) -> bool:
    if is_search_method(name):
        return True
    return name in BACKENDS and BACKENDS[name].installed() and _module_exists(BACKENDS[name].module)


def _module_exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False
