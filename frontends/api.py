"""The Python API, mirroring the CLI."""

from __future__ import annotations

import math
import time

from ..backends.registry import get_info
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.options import (
    DEFAULT_BACKEND,
    DEFAULT_SEED,
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    OPTION_BY_NAME,
    OPTIONS,
    DataAwareMode,
    QueryOptions,
)
from ..compiler.query import DEFAULT_PASSES, KANT_PASSES, PASS_NAMES, Gap, Query
from ..compiler.result import Result
from ..driver import is_race, race_backends, solve_query
from .load import load_model


def parse_passes(passes=None, baseline: str | None = None) -> frozenset[str]:
    if baseline is not None:
        if baseline.lower() != "kant":
            raise InputError(f"unknown baseline {baseline!r} (known: kant)")
        return KANT_PASSES
    if passes is None:
        return DEFAULT_PASSES
    if isinstance(passes, str):
        items = [p.strip().lower() for p in passes.split(",") if p.strip()]
    else:
        items = [str(p).lower() for p in passes]
    if items in (["all"], ["default"]):
        return DEFAULT_PASSES
    if items == ["none"] or items == []:
        return frozenset()
    for whole in ("all", "default", "none"):
        if whole in items:
            raise InputError(
                f"pass list {','.join(items)!r}: {whole!r} stands alone, not in a list"
            )
    out = set()
    for p in items:
        neg = p.startswith("-") or p.startswith("no-")
        name = p.lstrip("-").removeprefix("no-")
        if name not in PASS_NAMES:
            raise InputError(f"unknown pass {name!r} (known: {', '.join(PASS_NAMES)}, all, none)")
        if neg:
            out = (out or set(DEFAULT_PASSES)) - {name}
        else:
            out.add(name)
    return frozenset(out)


def check_options(options: dict | QueryOptions | None) -> QueryOptions:
    """Query options with their values checked against the option table."""
    opts = QueryOptions.of({k: v for k, v in dict(options or {}).items() if v is not None})
    for name, value in opts:
        bad = OPTION_BY_NAME[name].check(value)
        if bad:
            raise InputError(f"option {name} {bad}, not {value!r}")
    return opts


def check_backend_name(backend: str) -> None:
    """A backend name is known (or a race of known ones) before anything runs: a query the
    heuristic answers never reaches the backend, and would otherwise report a made-up one."""
    if is_race(backend):
        race_backends(backend)
    else:
        get_info(backend)


def make_query(
    vary,
    *,
    gap: float | None = None,
    margin_gap: float | None = None,
    classes=None,
    passes=None,
    baseline: str | None = None,
    backend: str = DEFAULT_BACKEND,
    timeout: float = DEFAULT_TIMEOUT,
    threads: int = DEFAULT_THREADS,
    seed: int = DEFAULT_SEED,
    name: str = "",
    data_aware: str | DataAwareMode = DataAwareMode.NONE,
    options: dict | QueryOptions | None = None,
) -> Query:
    """A Query from the API's / the CLI's arguments, checked (names, values, modes).
    ``options``: the query options of compiler/options.py by name (None: not given)."""
    if isinstance(vary, str):
        vary = [v.strip() for v in vary.split(",") if v.strip()]
    vary = tuple(vary)
    twice = [v for i, v in enumerate(vary) if v in vary[:i]]
    if twice:
        raise InputError(f"--vary / vary: feature {twice[0]!r} listed twice")
    if gap is not None and margin_gap is not None:
        raise InputError("give either a probability gap or a margin gap, not both")
    if margin_gap is not None:
        g = Gap(float(margin_gap), "margin")
    else:
        g = Gap(0.2, "prob", given=False) if gap is None else Gap(float(gap), "prob")
    if not math.isfinite(g.value):
        raise InputError(f"gap {g.value} is not a finite number")
    if timeout is None or not 0 < timeout <= MAX_TIMEOUT:
        raise InputError(
            f"timeout must be a positive number of seconds up to {MAX_TIMEOUT:g}, got {timeout}"
        )
    if int(threads) < 1:
        raise InputError(f"threads must be at least 1, got {threads}")
    check_backend_name(backend)
    if isinstance(classes, str):
        classes = tuple(c.strip() for c in classes.split(","))
        if len(classes) != 2:
            raise InputError("--classes takes two classes: C1,C2 (C2 may be 'any')")
        classes = tuple(int(c) if c.isdigit() else c for c in classes)
    mode = DataAwareMode.parse(data_aware)
    opts = check_options(options)
    if mode != DataAwareMode.NONE and opts.data is None:
        raise InputError(f"data-aware mode {mode.value!r} needs data (--data FILE / data=...)")
    return Query(
        vary=tuple(vary),
        gap=g,
        name=name,
        classes=tuple(classes) if classes else None,
        passes=parse_passes(passes, baseline),
        backend=backend,
        timeout=float(timeout),
        threads=int(threads),
        seed=int(seed),
        data_aware=mode,
        options=opts,
    )


def check(
    model,
    vary,
    *,
    gap: float | None = None,
    margin_gap: float | None = None,
    classes=None,
    passes=None,
    baseline: str | None = None,
    backend: str = DEFAULT_BACKEND,
    timeout: float = DEFAULT_TIMEOUT,
    threads: int = DEFAULT_THREADS,
    seed: int = DEFAULT_SEED,
    details=None,
    memory_mb: int | None = None,
    name: str = "",
    data=None,
    label: str = "label",
    data_aware: str | DataAwareMode = DataAwareMode.NONE,
    clause_width: int | None = None,
    max_clauses: int | None = None,
    clause_time: float | None = None,
    clauses=None,
    clause_cache: bool | None = None,
    prob_alpha: float | None = None,
    prob_empty: str | None = None,
    stall_time: float | None = None,
    optimality_gap: float | None = None,
    heuristic: bool | None = None,
    heuristic_effort: float | None = None,
    progress: bool | None = None,
    solver_params=None,
    trust_pickle: bool = False,
) -> Result:
    """Is ``model`` sensitive to the features in ``vary``? One query, one Result.

    ``data`` (a CSV / Parquet path, a DataFrame, or a ``frontends.data.Dataset``): values
    for realistic witnesses and ``Result.distance`` to the data; ``data_aware`` ("prob",
    "clause", "probclause") also steers the search toward the data (docs/data-aware.md).
    The other keywords are the query options of compiler/options.py (None: the default).
    ``trust_pickle``: load a pickled model file (.pkl, .joblib), which runs code.

    >>> r = check("model.json", vary=["sex"], gap=0.2)   # doctest: +SKIP
    >>> r.status, r.witness
    """
    t0 = time.time()
    ens = (
        model
        if isinstance(model, Ensemble) and details is None and data is None
        else load_model(model, details=details, data=data, label=label, trust_pickle=trust_pickle)
    )
    given = locals()
    opts = {o.name: given[o.api_keyword] for o in OPTIONS if o.api_keyword}
    opts["label"] = label if data is not None else None
    opts["clauses"] = str(clauses) if clauses is not None else None
    q = make_query(
        vary,
        gap=gap,
        margin_gap=margin_gap,
        classes=classes,
        passes=passes,
        baseline=baseline,
        backend=backend,
        timeout=timeout,
        threads=threads,
        seed=seed,
        name=name,
        data_aware=data_aware,
        options=opts,
    )
    res = solve_query(ens, q, deadline=t0 + q.timeout, memory_mb=memory_mb)
    res.time["total"] = time.time() - t0
    return res
