"""Compile a query: encode, the solver-agnostic passes, then one backend's reductions."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..answers.context import CompiledQuery
from ..backends.registry import get_info
from ..compiler.chain import SensitivityQuestion, sensitivity_chain
from ..compiler.dataset import Dataset
from ..compiler.ensemble import Ensemble
from ..compiler.passes import Chain, Compiled
from ..compiler.passes.data_aware import check_data_mode, data_passes, needs_clauses
from ..compiler.query import Query
from ..compiler.readings import read_for
from .chain import backend_chain
from .clauses import query_clauses
from .data import dataset_for_query


def compile_query(
    ens: Ensemble,
    q: Query,
    progress: bool = False,
    prefer: Mapping[int, Sequence[float]] | None = None,
    deadline: float | None = None,
    data: Dataset | None = None,
) -> CompiledQuery:
    """Encode the query and apply its solver-agnostic passes (learning the data's cavity
    clauses first when the query's data-aware mode uses them). Inverting the chain gives
    the Witness; its values are ``prefer``'s (default: values seen in the query's data)
    where they fit the chosen intervals. Clause learning stops by ``deadline`` (absolute
    time.time()), leaving the solver its share of the time. ``data``: the Dataset read
    from the path or DataFrame the query names (driver/data.py). A probability model is
    read as the query asks (compiler/readings.py)."""
    t0 = time.time()
    ens = read_for(ens, q)
    data = dataset_for_query(ens, q, data)
    if prefer is None and data is not None:
        prefer = data.prefer()
    dstats: dict = {}
    clauses: list = []
    if check_data_mode(q, data) and needs_clauses(q):
        clauses = query_clauses(ens, q, data, dstats, progress=progress, deadline=deadline)
    chain = sensitivity_chain(q.plan.passes, data_passes(q, data, clauses), prefer)
    compiled, inverse = chain.apply(SensitivityQuestion(ens, q))
    return CompiledQuery(compiled, chain, inverse, time.time() - t0, data, dstats)


def for_backend(cq: CompiledQuery, backend: str) -> tuple[Compiled, Chain, Any]:
    """The compiled query reduced to what ``backend`` accepts, with the chain to invert."""
    chain = Chain(backend_chain(get_info(backend).capabilities, backend))
    compiled, inv = chain.apply(cq.compiled)
    return compiled, chain, inv
