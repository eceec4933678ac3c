"""Sweeps: one query per feature (or per subset of k features) of one model."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.query import Query
from ..compiler.result import INSENSITIVE, SENSITIVE, UNKNOWN, Result


def feature_subsets(
    ens: Ensemble,
    k: int = 1,
    sample: int | None = None,
    seed: int = 0,
    features: Iterable[str] | None = None,
) -> list[tuple[str, ...]]:
    """The feature sets of a sweep: subsets of ``k`` of ``features`` (default: all of the
    model's), each named feature once, in the order given."""
    names = ens.feature_names if features is None else list(dict.fromkeys(features))
    if not names:
        raise InputError("no features given")
    unknown = [n for n in names if n not in ens.feature_names]
    if unknown:
        from ..compiler.errors import closest

        raise InputError(
            f"unknown feature {unknown[0]!r}"
            f"{closest(unknown[0], ens.feature_names, listing='known features')}"
        )
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


@dataclass(frozen=True)
class Question:
    """What every query of a sweep asks besides its features.

    A result recorded in a resume file is reused only when it answers the same question
    (``reuses``). A result line records the model, gap, classes, passes and backend
    itself; the rest (``asked``: the model's fingerprint, the data file's digest and the
    data-aware settings, the backend asked for and the time limit) the sweep adds as
    ``stats["asked"]`` (``record``). The model is matched by its format and fingerprint
    (trees, features, bounds), not by its path: a model file given by another path, or
    moved, is the same model; one retrained in place, or given other bounds, is not.
    """

    model: str  # Ensemble.source: format, path and a details file found beside the model
    gap: float
    gap_kind: str
    classes: list | None
    passes: list[str]
    backend: str
    timeout: float
    asked: dict = field(default_factory=dict)

    @classmethod
    def of(cls, ens: Ensemble, q: Query) -> Question:
        asked = q.asked()
        del asked["backend"], asked["timeout"]  # fields of their own
        if isinstance(asked.get("data"), (str, Path)):
            asked["data"] = file_digest(asked["data"])  # its content, wherever it is
        return cls(
            model=ens.source,
            gap=q.gap.value,
            gap_kind=q.gap.kind,
            classes=list(q.classes) if q.classes else None,
            passes=sorted(q.passes),
            backend=q.backend,
            timeout=q.timeout,
            asked={"ensemble": ens.fingerprint(), **asked},
        )

    def record(self) -> dict:
        """What the sweep records as each result's ``stats["asked"]`` (in place of the
        query's own record: the model's fingerprint and the data file's digest added); the
        backend asked for too (a result's ``backend`` is the winner of a ``race``)."""
        return {**self.asked, "backend": self.backend, "timeout": self.timeout}

    def reuses(self, line: dict) -> bool:
        """Is this recorded result (a parsed JSON line) the answer to this question?

        Sensitive and insensitive answers are reused; an unknown only when its time limit
        was at least this one; errors (and results without the record) never.
        """
        stats = line.get("stats")
        asked = stats.get("asked") if isinstance(stats, dict) else None
        asked = dict(asked) if isinstance(asked, dict) else {}
        timeout = asked.pop("timeout", None)
        backend = asked.pop("backend", None)
        same = (
            _format(line.get("model")) == _format(self.model)
            and line.get("gap") == self.gap
            and line.get("gap_kind", "prob") == self.gap_kind
            and line.get("classes") == self.classes
            and line.get("passes") == self.passes  # written sorted
            and backend == self.backend
            and asked == self.asked
        )
        if not same:
            return False
        if line.get("status") in (SENSITIVE, INSENSITIVE):
            return True
        return (
            line.get("status") == UNKNOWN
            and isinstance(timeout, (int, float))
            and timeout >= self.timeout
        )


def _format(source) -> str | None:
    """The model format an ``Ensemble.source`` names (``xgboost:m.json`` -> ``xgboost``)."""
    return source.split(":", 1)[0] if isinstance(source, str) else None


def file_digest(path: str | Path) -> str | None:
    """The sha256 of a file's bytes (None when it is not a file): a data file changed in
    place asks new questions."""
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def read_results(path: str | Path, warn: Callable[[str], None]) -> list[dict]:
    """The JSON result lines of a (possibly interrupted) sweep's file, in order.

    A line that is not a JSON result (one cut short by an interruption, or garbage) is
    reported to ``warn`` with its line number and skipped. A missing file has no results.
    """
    try:
        text = Path(path).read_text(errors="replace")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise InputError(os_error_text(e), str(path)) from None
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            d = None
        if isinstance(d, dict) and isinstance(d.get("query"), str) and "status" in d:
            out.append(d)
        else:
            warn(f"{path} line {i}: not a JSON result, ignored")
    return out


def os_error_text(e: OSError) -> str:
    text = e.strerror or str(e)
    return text[:1].lower() + text[1:]


@dataclass
class ResumePlan:
    """Which queries of a sweep a resume file already answers."""

    reused: dict[tuple[str, ...], dict]  # feature set -> its recorded result line
    todo: list[tuple[str, ...]]  # in sweep order
    rerun: int = 0  # queries of ``todo`` with a recorded result that is not reused

    def summary(self) -> str:
        new = len(self.todo) - self.rerun
        return (
            f"{len(self.reused)} result{'' if len(self.reused) == 1 else 's'} reused, "
            f"{self.rerun} rerun "
            f"(other settings, error, or unknown in less time), {new} new"
        )


def plan_resume(
    subsets: list[tuple[str, ...]], lines: list[dict], question: Question
) -> ResumePlan:
    """Reuse, for each feature set, the last recorded answer to ``question`` (an unknown
    only when no sensitive/insensitive answer is recorded); the others are to run."""
    recorded: dict[frozenset[str], list[dict]] = {}
    for d in lines:
        recorded.setdefault(frozenset(d["query"].split(",")), []).append(d)
    plan = ResumePlan({}, [])
    for s in subsets:
        seen = recorded.get(frozenset(s), [])
        usable = [d for d in seen if question.reuses(d)]
        if usable:
            best = next((d for d in reversed(usable) if d["status"] != UNKNOWN), usable[-1])
            plan.reused[s] = {**best, "query": ",".join(s)}
        else:
            plan.todo.append(s)
            plan.rerun += bool(seen)
    return plan


def result_from_line(d: dict) -> Result:
    return Result(**{k: d[k] for k in Result.__dataclass_fields__ if k in d})


def run_sweep(
    ens: Ensemble,
    subsets: list[tuple[str, ...]],
    make_query: Callable,
    *,
    skip: set[str] = frozenset(),
    on_result: Callable[[Result], None] | None = None,
    memory_mb: int | None = None,
) -> list[Result]:
    from ..driver import solve_query

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
    trust_pickle: bool = False,
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
        else load_model(model, details=details, trust_pickle=trust_pickle)
    )
    subs = feature_subsets(ens, subsets, sample, seed, features)

    def mk(vary, label):
        return make_query(vary, name=label, seed=seed, **query_kw)

    return run_sweep(ens, subs, mk, memory_mb=memory_mb)
