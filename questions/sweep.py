"""Sweeps: one query per feature (or per subset of k features) of one model."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import math
import os
import random
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..answers.result import (
    INSENSITIVE,
    SENSITIVE,
    UNKNOWN,
    Result,
    error_result,
    result_from_dict,
)
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.feature_names import feature_list
from ..compiler.query import Query
from ..driver import solve_query
from ..frontends.data import dataset_for
from ..frontends.keywords import keyword_values, model_of, query_maker, takes_query_keywords
from ..frontends.query_build import require_backend
from .executors import Executor, Failure, make_executor, parse_executor
from .max_gap import (
    DEFAULT_TOLERANCE,
    check_max_gap_model,
    check_tolerance,
    max_gap_task,
    result_gap_kind,
)
from .progress import Display, silent
from .results_log import appending, read_log

STATUS_EVERY = 10.0  # seconds between two status lines of a max-gap query in flight


def feature_subsets(
    ens: Ensemble,
    k: int = 1,
    sample: int | None = None,
    seed: int = 0,
    features=None,
) -> list[tuple[str, ...]]:
    """The feature sets of a sweep: subsets of ``k`` of ``features`` (default: all of the
    model's), each named feature once, in the order given."""
    if features is None:
        names = ens.feature_names
    else:
        names = list(dict.fromkeys(feature_list(ens, features, "features")))
    if not 1 <= k <= len(names):
        raise InputError(f"subset size {k} out of range 1..{len(names)}")
    total = math.comb(len(names), k)
    if sample is None or sample >= total:
        return list(itertools.combinations(names, k))
    if sample <= 0:
        raise InputError(f"sample must be positive, got {sample}")
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
    max_gap: float | None = None  # a max-gap sweep's tolerance (questions/max_gap.py)

    @classmethod
    def of(cls, ens: Ensemble, q: Query, max_gap: float | None = None) -> Question:
        asked = q.asked()
        del asked["backend"], asked["timeout"]  # fields of their own
        if isinstance(asked.get("data"), (str, Path)):
            asked["data"] = file_digest(asked["data"])  # its content, wherever it is
        return cls(
            model=ens.source,
            gap=q.gap.value,
            # a max gap's results say what their gap holds (a regressor's: the change)
            gap_kind=q.gap.kind if max_gap is None else result_gap_kind(ens),
            classes=list(q.classes) if q.classes else None,
            passes=sorted(q.passes),
            backend=q.backend,
            timeout=q.timeout,
            asked={"ensemble": ens.fingerprint(), **asked}
            | ({} if max_gap is None else {"max_gap": max_gap}),
            max_gap=max_gap,
        )

    def record(self) -> dict:
        """What the sweep records as each result's ``stats["asked"]`` (in place of the
        query's own record: the model's fingerprint and the data file's digest added); the
        backend asked for too (a result's ``backend`` is the winner of a ``race``)."""
        return {**self.asked, "backend": self.backend, "timeout": self.timeout}

    def reuses(self, line: dict) -> bool:
        """Is this recorded result (a parsed JSON line) the answer to this question?

        Sensitive and insensitive answers are reused; an unknown only when its time limit
        was at least this one; errors (and results without the record) never. A max-gap
        result (its gap is the one found) is reused as an answer when its bounds met, else
        as an unknown.
        """
        stats = line.get("stats")
        asked = stats.get("asked") if isinstance(stats, dict) else None
        asked = dict(asked) if isinstance(asked, dict) else {}
        timeout = asked.pop("timeout", None)
        backend = asked.pop("backend", None)
        same = (
            _format(line.get("model")) == _format(self.model)
            and (self.max_gap is not None or line.get("gap") == self.gap)
            and line.get("gap_kind", "prob") == self.gap_kind
            and line.get("classes") == self.classes
            and line.get("passes") == self.passes  # written sorted
            and backend == self.backend
            and asked == self.asked
        )
        if not same:
            return False
        found = line.get("max_gap")
        answered = self.max_gap is None or (isinstance(found, dict) and found.get("proven"))
        if line.get("status") in (SENSITIVE, INSENSITIVE) and answered:
            return True
        return (
            line.get("status") in (UNKNOWN, SENSITIVE)
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
    """The JSON result lines of a (possibly interrupted) sweep's log, in order
    (results_log.py); a complete line that is not a JSON result is reported to ``warn``
    with its line number and skipped."""

    def check(d, n: int) -> dict | None:
        if isinstance(d, dict) and isinstance(d.get("query"), str) and "status" in d:
            return d
        warn(f"{path} line {n}: not a JSON result, ignored")
        return None

    return read_log(path, check)


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
    commas = any("," in n for s in subsets for n in s)
    for d in lines:
        key = recorded_features(d, commas)
        if key is not None:
            recorded.setdefault(key, []).append(d)
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


def recorded_features(line: dict, commas: bool) -> frozenset[str] | None:
    """The feature set a recorded result answers: its ``features`` (the names varied). A
    line without them is read from its query label, split at commas, only when no feature
    name of the sweep holds a comma (``commas``); otherwise it is ambiguous (None)."""
    feats = line.get("features")
    if isinstance(feats, list) and feats and all(isinstance(f, str) for f in feats):
        return frozenset(feats)
    return None if commas else frozenset(line["query"].split(","))


def result_from_line(d: dict) -> Result:
    return result_from_dict(d)


def solve_task(ens: Ensemble, task: tuple[Query, int | None]) -> Result:
    """One query of a sweep (``task`` is the query and the memory limit), on whatever
    process or machine an executor runs it: the clock starts there."""

    q, memory_mb = task
    data = dataset_for(ens, q)
    return solve_query(ens, q, deadline=time.time() + q.timeout, memory_mb=memory_mb, data=data)


def failed_result(ens: Ensemble, q: Query, message: str) -> Result:
    """The error result of a query whose task failed on every attempt."""
    return error_result(ens, q, f"task failed: {message}")


def run_sweep(
    ens: Ensemble,
    subsets: list[tuple[str, ...]],
    make_query: Callable,
    *,
    skip: set[str] = frozenset(),
    on_result: Callable[[Result], None] | None = None,
    memory_mb: int | None = None,
    executor: Executor | None = None,
    max_gap: float | None = None,
    status: Callable[[str], None] | None = None,
) -> list[Result]:
    """Answer a query per feature set: in this process one after the other, or on
    ``executor``'s workers. ``on_result`` sees each result as it ends (completion order);
    the list returned is in the order of ``subsets``. ``max_gap`` (a tolerance): each
    query asks for the largest gap instead (questions/max_gap.py). ``status``: where a
    max-gap query run in this process reports its bounds as they move (every
    ``STATUS_EVERY`` seconds at most)."""
    queries = [make_query(list(s), ",".join(s)) for s in subsets if ",".join(s) not in skip]
    if max_gap is None:
        run, tasks = solve_task, [(q, memory_mb) for q in queries]
    else:
        run, tasks = max_gap_task, [(q, memory_mb, max_gap) for q in queries]
    if executor is None and max_gap is not None and status is not None:
        outcomes = (
            (i, max_gap_task(ens, t, log=_throttled(status, queries[i].label)))
            for i, t in enumerate(tasks)
        )
    elif executor is None:
        outcomes = ((i, run(ens, t)) for i, t in enumerate(tasks))
    else:
        outcomes = executor.run(run, ens, tasks)
    results: list[Result | None] = [None] * len(tasks)
    for i, out in outcomes:
        res = failed_result(ens, queries[i], out.message) if isinstance(out, Failure) else out
        # what the result answers, as --resume matches it (whichever entry point ran it)
        res.stats["asked"] = Question.of(ens, queries[i], max_gap).record()
        results[i] = res
        if on_result is not None:
            on_result(res)
    return results


def _throttled(status: Callable[[str], None], label: str) -> Callable[[str], None]:
    """``status`` for one query's lines, prefixed with its label, at most every
    ``STATUS_EVERY`` seconds."""
    last = [-math.inf]

    def log(text: str) -> None:
        if time.time() - last[0] >= STATUS_EVERY:
            last[0] = time.time()
            status(f"{label}: {text}")

    return log


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/8"`` -> ``(2, 8)``: shard 2 of 8, counted from 0 (a job array's task id)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise InputError("expected I/N, e.g. 0/4", f"--shard {text}") from None
    if not (n >= 1 and 0 <= i < n):
        raise InputError(f"shard {i} of {n}: need 0 <= I < N", f"--shard {text}")
    return i, n


def shard_of(items: list, shard: tuple[int, int] | None) -> list:
    """The part of ``items`` shard ``(i, n)`` runs: every n-th item from the i-th. The n
    shards partition the list exactly and depend only on it (not on what has run)."""
    if shard is None:
        return list(items)
    i, n = shard
    return list(items[i::n])


@contextmanager
def opened_executor(executor: str | Executor | None, jobs: int | None) -> Iterator[Executor | None]:
    """The executor of a sweep: None (this process) for one local job; one made from a
    spec (``local``, ``dask[=ADDRESS]``, ``ray[=ADDRESS]``) is closed at the end, one
    given as an object is the caller's."""
    if executor is not None and not isinstance(executor, str):
        yield executor
        return
    kind, _ = parse_executor(executor or "local")
    if kind == "local" and (jobs or 1) == 1:
        yield None
        return
    workers = jobs or (os.cpu_count() or 1)
    made = make_executor(executor or "local", workers)
    try:
        yield made
    finally:
        made.close()


def changed_features(res: Result) -> str:
    if not res.witness:
        return ""
    x1, x2 = res.witness["x1"], res.witness["x2"]
    return "; ".join(f"{n}: {_fmt(x1[n])} -> {_fmt(x2[n])}" for n in x1 if x1[n] != x2[n])


def _fmt(v) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def max_gap_cell(r: Result) -> str:
    """The sweep table's max-gap cell: the gap, ``[lower, upper]`` when the bounds did not
    meet, ``none`` when insensitive at every gap."""
    m = r.max_gap
    if not m:
        return ""
    if m.get("lower") is None:
        return "none" if m.get("proven") else f"<= {m['upper']:.4g}"
    if m.get("proven"):
        return f"{m['lower']:.4f}"
    return f"[{m['lower']:.4f}, {m['upper']:.4f}]"


def by_max_gap(results: list[Result]) -> list[Result]:
    """Results ranked by how far the features move the decision: largest found gap first,
    insensitive and unanswered last."""

    def key(r: Result) -> float:
        lower = (r.max_gap or {}).get("lower")
        return -lower if isinstance(lower, (int, float)) else math.inf

    return sorted(results, key=key)


def table_rows(results: list[Result]) -> list[dict]:
    """One row per result for the sweep's table; the outputs' columns say what they hold:
    class probabilities (``p(x1)``) or a regressor's predictions (``f(x1)``). With an
    insensitive answer, a ``proof`` column says who proved each and whether it was
    independently checked."""
    rows = []
    with_max_gap = any(r.max_gap for r in results)
    with_proof = any(r.proof for r in results)
    out = "f" if results and all(predicts_values(r) for r in results) else "p"
    for r in results:
        p1 = p2 = ""
        if r.outputs:
            p1 = "[" + ", ".join(f"{p:.3f}" for p in r.outputs["x1"]) + "]"
            p2 = "[" + ", ".join(f"{p:.3f}" for p in r.outputs["x2"]) + "]"
        rows.append(
            {
                "features": r.query,
                "verdict": r.status,
                **({"proof": proof_cell(r)} if with_proof else {}),
                **({"max_gap": max_gap_cell(r)} if with_max_gap else {}),
                "time_s": round(r.time["total"], 2),
                f"{out}(x1)": p1,
                f"{out}(x2)": p2,
                "changed": changed_features(r) or (r.error or ""),
            }
        )
    return rows


def proof_cell(r: Result) -> str:
    """The table's proof cell: "certified", or the prover and "(unchecked)" ("cpsat
    (unchecked)"); empty for an answer that is not insensitive."""
    return r.proof.short() if r.proof is not None else ""


def predicts_values(r: Result) -> bool:
    """Whether a result is a regressor's (its outputs are predictions, not probabilities)."""
    return (
        r.threshold is not None or r.delta is not None or (r.max_gap or {}).get("kind") == "change"
    )


def results_frame(results: list[Result]):
    """Results (a sweep's, a compare's) as a pandas DataFrame, one row per result, typed
    for sorting and filtering: ``query`` (str), ``features`` (list of str), ``verdict``,
    ``backend``, ``gap`` (float), ``validated`` (bool), ``distance`` and ``time_s``
    (float, NaN when absent), ``p(x1)``, ``p(x2)`` (lists of class probabilities, a
    regressor's prediction as a list of one; None without a pair), ``changed`` (the
    features x1 and x2 differ in, a list), ``error`` (str, None without one) and
    ``proof`` (an insensitive answer's: "certified", or the prover and "(unchecked)",
    e.g. "cpsat (unchecked)"; None for the others)."""
    import pandas as pd

    rows = [
        {
            "query": r.query,
            "features": list(r.features),
            "verdict": str(r.status),
            "backend": r.backend,
            "gap": float(r.gap),
            "validated": bool(r.validated),
            "distance": math.nan if r.distance is None else float(r.distance),
            "time_s": float(r.time.get("total", math.nan)),
            "p(x1)": [float(p) for p in r.outputs["x1"]] if r.outputs else None,
            "p(x2)": [float(p) for p in r.outputs["x2"]] if r.outputs else None,
            "changed": changed_names(r),
            "error": r.error,
            "proof": r.proof.short() if r.proof is not None else None,
        }
        for r in results
    ]
    frame = pd.DataFrame(rows, columns=FRAME_COLUMNS)
    return frame.astype({"gap": float, "validated": bool, "distance": float, "time_s": float})


FRAME_COLUMNS = (
    "query",
    "features",
    "verdict",
    "backend",
    "gap",
    "validated",
    "distance",
    "time_s",
    "p(x1)",
    "p(x2)",
    "changed",
    "error",
    "proof",
)


def changed_names(res: Result) -> list[str]:
    """The features whose values differ between the pair's two inputs."""
    if not res.witness:
        return []
    x1, x2 = res.witness["x1"], res.witness["x2"]
    return [n for n in x1 if x1[n] != x2[n]]


def to_markdown(rows: list[dict]) -> str:
    if not rows:
        return ""
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]).replace("|", "\\|") for c in cols) + " |")
    return "\n".join(lines) + "\n"


def to_csv(rows: list[dict]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


@takes_query_keywords
def sweep(
    model,
    *,
    subsets: int = 1,
    sample: int | None = None,
    features=None,
    jobs: int | None = None,
    executor: str | Executor | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    progress: Display | None = None,
    max_gap: bool = False,
    max_gap_tolerance: float = DEFAULT_TOLERANCE,
    **keywords,
) -> list[Result]:
    """One query per feature (or per subset of ``subsets`` features) of a model; the
    results in the order of the features. ``results_frame`` makes them a DataFrame.

    ``features``: sweep only these (default: all). ``sample``: a random sample of that
    many subsets (drawn with ``seed``). ``out``: append each result to this JSON Lines
    file as it ends. ``resume``: reuse the results in that file that answer the same
    question, run the rest and append them to it (``out`` may only name the same file),
    as ``treesens sweep --resume`` does. ``progress``: how the progress is shown (a
    questions.progress.Display; None: silently). ``treesens.sweep`` passes the views'
    display (a bar in a notebook or a terminal, a line per query otherwise); the query
    option of that name, the compiler's log, stays off in a sweep.

    ``jobs``: queries run at once on this machine (default 1: one after the other), or
    the workers of the local cluster a ``dask``/``ray`` executor starts (default: every
    core). ``executor``: ``"local"``, ``"dask"``, ``"dask=tcp://HOST:8786"``, ``"ray"``,
    ``"ray=auto"``, or an ``executors.Executor`` (docs/distributed.md).

    ``max_gap=True``: each query asks for the largest gap instead (``treesens.max_gap``,
    within ``max_gap_tolerance``); rank the results with ``by_max_gap``.
    """
    kw = keyword_values(keywords, "sweep")
    require_backend(kw["backend"])
    if out is not None and resume is not None and Path(out) != Path(resume):
        raise InputError("resume=FILE appends the new results to FILE: give out the same file")
    ens = model_of(model, kw)
    subs = feature_subsets(ens, subsets, sample, kw["seed"], features)
    make = query_maker(kw, ens)
    tol = None
    if max_gap:
        tol = check_tolerance(max_gap_tolerance)
        check_max_gap_model(ens, make(list(subs[0])))
    question = Question.of(ens, make(list(subs[0])), tol)
    plan = ResumePlan({}, list(subs))
    with (progress or silent)(len(subs)) as shown:
        if resume is not None:
            lines = read_results(resume, lambda msg: warnings.warn(msg, stacklevel=4))
            plan = plan_resume(subs, lines, question)
            shown.note(f"resume from {resume}: {plan.summary()}")
            for s in subs:
                if s in plan.reused:
                    shown.advance(result_from_line(plan.reused[s]))
        spec, n_jobs = (executor, jobs) if plan.todo else (None, 1)  # no pool for no query
        with results_file(resume or out) as write, opened_executor(spec, n_jobs) as ex:

            def on_result(res: Result) -> None:
                write(res)
                shown.advance(res)

            new = run_sweep(
                ens,
                plan.todo,
                make,
                on_result=on_result,
                memory_mb=kw["memory_mb"],
                executor=ex,
                max_gap=tol,
                status=shown.status,
            )
    answered = dict(zip(plan.todo, new, strict=True))
    return [answered[s] if s in answered else result_from_line(plan.reused[s]) for s in subs]


@contextmanager
def results_file(path: str | Path | None) -> Iterator[Callable[[Result], None]]:
    """``write(result)``: append the result's JSON line to the log at ``path`` and flush
    it (nothing without a path)."""
    with appending(path) as append:
        yield lambda res: append(res.to_json() + "\n")
