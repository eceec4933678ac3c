"""What the stages of one solve share (the driver's and the searches'): the compiled query
(driver/compile.py makes it), the deadline, the hint, the result under construction."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..compiler.dataset import Dataset
from ..compiler.encode import Encoding
from ..compiler.ensemble import Ensemble
from ..compiler.invert import Witness
from ..compiler.kinds import kind_of
from ..compiler.passes import Chain, Compiled
from ..compiler.query import Query
from ..compiler.question import result_gap
from .result import UNKNOWN, Result
from .stats import DataStats, Stats

Pair = tuple[np.ndarray, np.ndarray]  # (x1, x2) as the heuristic returns them


@dataclass
class CompiledQuery:
    compiled: Compiled  # after the solver-agnostic passes
    chain: Chain  # encode first: inverting it gives the Witness
    inverse: Any
    compile_time: float
    data: Dataset | None = None  # the query's data set when it names data
    data_stats: DataStats = field(default_factory=dict)

    @property
    def encoding(self) -> Encoding:
        return self.compiled.encoding


@dataclass
class SolveContext:
    """``cq`` is the compiled query; a context made with ``compile_later`` (its maker)
    and ``light`` (the Encoding without its Problem, driver/solve.py) compiles it only
    when a stage first asks for it: the heuristic and the box search read ``light``, so a
    query one of them answers never builds the encoding's Problem."""

    ens: Ensemble
    q: Query
    compiled_query: CompiledQuery | None
    result: Result  # under construction
    deadline: float  # absolute time.time()
    t_start: float
    data: Dataset | None = None
    prefer: Any = None  # per feature, values to prefer in witnesses (the data's)
    log: bool = False
    note: Callable[[str], None] | None = None  # a progress line (the CLI's stderr); None: none
    memory_mb: int | None = None  # a limit given: the solver process's address space
    # the query's memory limit, given or the default (MB): the box search's tables fit
    # what it leaves above the model's estimate (None: no limit)
    tables_mb: float | None = None
    solve_time: float = 0.0  # heuristic and solver seconds so far
    hint: np.ndarray | None = None  # starting values of every variable for the solver
    heuristic_pair: Pair | None = None  # the heuristic's pair, short of the gap
    heuristic_ran: bool = False  # before this solve (a race's): not run again
    fallback: Pair | None = None  # data-aware: a pair meeting the gap, if the solver has none
    witness: Witness | None = None  # the accepted pair
    cuts: int = 0  # near-miss pairs excluded
    stop: Any = None  # a threading.Event a race sets when another backend has answered
    boxes: Any = None  # the box search its first turn left unfinished (boxes.BoxStage)
    light: Encoding | None = None  # before compiling: the encoding without its Problem
    compile_later: Callable[[], CompiledQuery] | None = None
    work: Any = None  # the query's work budget (answers/work.Work), None: none

    @property
    def cq(self) -> CompiledQuery:
        if self.compiled_query is None:
            assert self.compile_later is not None, "a context needs a compiled query or its maker"
            self.compiled_query = self.compile_later()
        return self.compiled_query

    @property
    def enc(self) -> Encoding:
        if self.compiled_query is None and self.light is not None:
            return self.light
        return self.cq.encoding

    @property
    def stats(self) -> Stats:
        return self.result.stats

    def time_left(self) -> float:
        return self.deadline - time.time()


def new_result(ens: Ensemble, q: Query) -> Result:
    """The result of a query before any answer."""
    return Result(
        query=q.label,
        status=UNKNOWN,
        backend=q.plan.backend,
        features=[],
        gap=result_gap(q.gap, q.delta, q.threshold)[0],
        gap_kind=result_gap(q.gap, q.delta, q.threshold)[1],
        model=ens.source,
        passes=sorted(q.plan.passes),
        classes=list(q.classes) if q.classes else None,
        **kind_of(q).result_fields(q),
    )
