"""Does a backend really load and solve? One tiny problem in its own worker process: a
backend whose packages import but whose solver library is missing or broken (python-mip
without a loadable HiGHS, say) fails here, with the solver's message."""

from __future__ import annotations

import time

from ..backends.registry import BACKENDS
from ..backends.worker import Worker
from ..compiler.ir import Linear, Problem, Var
from ..compiler.passes.base import Chain, Compiled
from ..compiler.solver import SolveOptions
from .chain import backend_chain

PROBE_SECONDS = 60.0


def backend_loads(name: str, timeout: float = PROBE_SECONDS) -> tuple[bool, str]:
    """(True, "") when backend ``name`` solves x + y >= 1, x, y binary; else (False, why)."""
    problem = Problem((Var("x"), Var("y")), (Linear((0, 1), (1.0, 1.0), ">=", 1.0),))
    try:
        chain = Chain(backend_chain(BACKENDS[name].capabilities, name))
        compiled, _ = chain.apply(Compiled(problem, None))
        worker = Worker(name)
        try:
            sol = worker.solve(compiled.problem, SolveOptions(deadline=time.time() + timeout))
        finally:
            worker.close()
    except Exception as e:  # noqa: BLE001 - any failure means the backend is not usable
        return False, f"{type(e).__name__}: {e}"
    if sol.status in ("feasible", "optimal"):
        return True, ""
    return False, sol.message or f"the test problem ended {sol.status}"
