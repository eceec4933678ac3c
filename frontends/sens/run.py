"""Running the queries of a ``.sens`` file."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ...compiler.errors import InputError
from ...compiler.query import Query
from ...compiler.result import ERROR, Result
from ...driver import solve_query
from .resolve import SensFile, load_queries


def _error_result(sf: SensFile, q: Query, msg: str) -> Result:
    return Result(
        query=q.label,
        status=ERROR,
        backend=q.backend,
        features=list(q.vary),
        gap=q.gap.value,
        gap_kind=q.gap.kind,
        model=getattr(sf.ensemble, "source", ""),
        passes=sorted(q.passes),
        classes=list(q.classes) if q.classes else None,
        error=msg,
    )


def run_query(sf: SensFile, q: Query, *, memory_mb: int | None = None) -> Result:
    """Answer one query of a file; problems with this query become an "error" result."""
    t0 = time.time()
    try:
        res = solve_query(sf.ensemble, q, deadline=t0 + q.timeout, memory_mb=memory_mb)
    except InputError as e:
        res = _error_result(sf, q, str(e))
    except Exception as e:  # noqa: BLE001 - one query's bug must not lose the others' answers
        res = _error_result(sf, q, f"internal error: {type(e).__name__}: {e}")
    res.time["total"] = time.time() - t0
    return res


def run_file(
    path: str | Path,
    query: str | None = None,
    *,
    timeout: float | None = None,
    memory_mb: int | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Answer every query of a ``.sens`` file (or those of one query/sweep block).

    A bad file raises :class:`InputError` before anything is solved; a query that fails
    becomes an "error" result and the others still run. ``on_result(result)`` is called
    as each query ends. ``timeout`` (seconds) overrides every query's own limit.
    """
    if timeout is not None and not timeout > 0:
        raise InputError(f"timeout must be positive, got {timeout}")
    sf = load_queries(path)
    results = []
    for q in sf.select(query):
        if timeout is not None:
            q = q.with_(timeout=timeout)
        res = run_query(sf, q, memory_mb=memory_mb)
        results.append(res)
        if on_result is not None:
            on_result(res)
    return results
