"""Sweeps: one query per feature (or per subset of k features) of one model."""

from __future__ import annotations

import itertools
import json
import math
import random
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.result import ERROR, Result


def feature_subsets(
    ens: Ensemble,
    k: int = 1,
    sample: int | None = None,
    seed: int = 0,
    features: Iterable[str] | None = None,
) -> list[tuple[str, ...]]:
    names = list(features) if features else ens.feature_names
    unknown = [n for n in names if n not in ens.feature_names]
    if unknown:
        from ..compiler.errors import closest

        raise InputError(f"unknown feature {unknown[0]!r}{closest(unknown[0], ens.feature_names)}")
    if not 1 <= k <= len(names):
        raise InputError(f"subset size {k} out of range 1..{len(names)}")
    total = math.comb(len(names), k)
    if sample is None or sample >= total:
        return list(itertools.combinations(names, k))
    if sample <= 0:
        raise InputError(f"--sample must be positive, got {sample}")
    rng = random.Random(seed)
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < sample:
        chosen.add(tuple(sorted(rng.sample(range(len(names)), k))))
    return [tuple(names[i] for i in c) for c in sorted(chosen)]


def done_labels(path: str | Path | None) -> set[str]:
    """Labels of the queries a previous (possibly interrupted) run already finished."""
    if path is None or not Path(path).exists():
        return set()
    out = set()
    for line in Path(path).read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by the interruption
        if r.get("status") != ERROR and "query" in r:
            out.add(r["query"])
    return out


def run_sweep(
    ens: Ensemble,
    subsets: list[tuple[str, ...]],
    make_query: Callable,
    *,
    skip: set[str] = frozenset(),
    on_result: Callable[[Result], None] | None = None,
    memory_mb: int | None = None,
) -> list[Result]:
    from ..compiler.pipeline import solve_query

    results = []
    for subset in subsets:
        label = ",".join(subset)
        if label in skip:
            continue
        q = make_query(list(subset), label)
        t0 = time.time()
        res = solve_query(ens, q, deadline=t0 + q.timeout, memory_mb=memory_mb)
        results.append(res)
        if on_result is not None:
            on_result(res)
    return results


def changed_features(res: Result) -> str:
    if not res.witness:
        return ""
    x1, x2 = res.witness["x1"], res.witness["x2"]
    return "; ".join(f"{n}: {_fmt(x1[n])} -> {_fmt(x2[n])}" for n in x1 if x1[n] != x2[n])


def _fmt(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def table_rows(results: list[Result]) -> list[dict]:
    rows = []
    for r in results:
        p1 = p2 = ""
        if r.outputs:
            p1 = "[" + ", ".join(f"{p:.3f}" for p in r.outputs["x1"]) + "]"
            p2 = "[" + ", ".join(f"{p:.3f}" for p in r.outputs["x2"]) + "]"
        rows.append(
            {
                "features": r.query,
                "verdict": r.status,
                "time_s": round(r.time["total"], 2),
                "p(x1)": p1,
                "p(x2)": p2,
                "changed": changed_features(r) or (r.error or ""),
            }
        )
    return rows


def results_frame(results: list[Result]):
    """The sweep as a pandas DataFrame, one row per query."""
    import pandas as pd

    return pd.DataFrame(table_rows(results))


def to_markdown(rows: list[dict]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines) + "\n"


def to_csv(rows: list[dict]) -> str:
    import csv
    import io

    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def sweep(
    model,
    *,
    subsets: int = 1,
    sample: int | None = None,
    seed: int = 0,
    features=None,
    details=None,
    memory_mb: int | None = None,
    **query_kw,
) -> list[Result]:
    """One query per feature (or per subset of ``subsets`` features) of a model.

    ``query_kw`` are those of ``treesens.check`` (gap, margin_gap, classes, passes,
    baseline, backend, timeout, threads). Use ``results_frame`` for a DataFrame.
    """
    from .api import make_query
    from .load import load_model

    ens = (
        model
        if isinstance(model, Ensemble) and details is None
        else load_model(model, details=details)
    )
    subs = feature_subsets(ens, subsets, sample, seed, features)

    def mk(vary, label):
        return make_query(vary, name=label, seed=seed, **query_kw)

    return run_sweep(ens, subs, mk, memory_mb=memory_mb)
