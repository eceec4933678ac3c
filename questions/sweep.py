"""Sweeps: one query per feature (or per subset of k features) of one model."""

from __future__ import annotations

import csv
import io
import itertools
import math
import numbers
import random
import warnings
from pathlib import Path

from ..answers.phrases import lower_text, proof_brief, upper_text
from ..answers.result import Result
from ..compiler.encode import held_to_one_value
from ..compiler.ensemble import Ensemble, held_reason
from ..compiler.errors import InputError, TreesensWarning, spelled
from ..compiler.feature_names import feature_list, refuse_repeats
from ..compiler.kinds import resolve_condition
from .ask import refuse_query
from .campaign import Campaign, sweep_campaign
from .executors import Executor
from .keywords import keyword_values, model_of, query_maker, takes_query_keywords
from .max_gap import DEFAULT_TOLERANCE
from .progress import Display
from .query_build import require_backend
from .sweep_budget import budget_advice, check_budget


def held_features(ens: Ensemble) -> list[str]:
    """The features a sweep of every feature leaves out: their bounds hold them to one
    value (a column constant in the data the bounds come from), so no pair differs in
    them."""
    return [n for f, n in enumerate(ens.feature_names) if held_to_one_value(ens, f) is not None]


def not_held_by_where(ens: Ensemble, subs: list, where) -> list:
    """The feature sets of a sweep over every feature that its ``where`` constraints do
    not hold to one value for both inputs (``where="sex == 1"``: no pair differs in
    sex), as a .sens sweep and ``treesens sweep --where`` leave them out, saying so."""
    held = [s for s in subs if where.held(s)]
    if len(held) == len(subs):
        raise InputError("no feature to sweep: the where constraints hold each to one value")
    if held:
        names = ", ".join("+".join(s) for s in held)
        warnings.warn(
            f"sweep leaves out (its where constraints hold them to one value for both "
            f"inputs): {names}",
            TreesensWarning,
            stacklevel=4,
        )
    return [s for s in subs if s not in held]


class OtherModelResults(TreesensWarning):
    """The sweep's results log holds another model's results (or this model's name with
    other trees): legitimate, but no longer one sweep's log (a plot of it refuses them).
    A report, whose logs are its own, says it in its own words and ignores this."""


def feature_subsets(
    ens: Ensemble,
    k: int = 1,
    sample: int | None = None,
    seed: int = 0,
    features=None,
) -> list[tuple[str, ...]]:
    """The feature sets of a sweep: subsets of ``k`` of ``features`` (default: all of the
    model's but those its bounds hold to one value, e.g. a column constant in the data
    the bounds come from: no pair differs in them), in the order given; a feature named
    twice is an InputError, as in ``vary``."""
    if features is None:
        held = set(held_features(ens))
        names = [n for n in ens.feature_names if n not in held]
        if not names:
            raise InputError(f"no feature to sweep: each holds {held_reason(ens)}")
    else:
        names = list(feature_list(ens, features, "features"))
        refuse_repeats(names, "features")  # as --vary: a slip, not a second query
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InputError(f"subsets takes a whole number from 1 to {len(names)}, not {k!r}")
    if not 1 <= k <= len(names):
        raise InputError(
            f"subsets {k} out of range 1..{len(names)} (the features of each query, of the "
            f"{len(names)} swept)"
        )
    total = math.comb(len(names), k)
    if sample is not None and (
        isinstance(sample, bool) or not isinstance(sample, numbers.Integral)
    ):
        raise InputError(f"sample takes a whole number of queries from 1, not {sample!r}")
    _refuse_too_many(total if sample is None else min(sample, total), total, len(names), k)
    if sample is None or sample >= total:
        return list(itertools.combinations(names, k))
    if sample <= 0:
        raise InputError(f"sample must be positive, got {sample}")
    rng = random.Random(seed)
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < sample:
        chosen.add(tuple(sorted(rng.sample(range(len(names)), k))))
    return [tuple(names[i] for i in c) for c in sorted(chosen)]


# the most queries a sweep lists: 30 features choose 12 (86 million) took 13.6 GB and two
# minutes before its first query
MAX_SWEEP_QUERIES = 1_000_000


def _refuse_too_many(asked: int, total: int, n: int, k: int) -> None:
    if asked <= MAX_SWEEP_QUERIES:
        return
    raise InputError(
        f"subsets {k} of {n} features are {total:,} queries, more than a sweep lists "
        f"({MAX_SWEEP_QUERIES:,}): {spelled('sample=N', '--sample N')} asks N of them at "
        "random, or sweep fewer features"
    )


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


def changed_features(res: Result) -> str:
    if not res.witness:
        return ""
    x1, x2 = res.witness["x1"], res.witness["x2"]
    return "; ".join(f"{n}: {_fmt(x1[n])} -> {_fmt(x2[n])}" for n in x1 if x1[n] != x2[n])


def _fmt(v) -> str:
    if v is None:  # a missing value (NaN), as the witness table shows it
        return "missing"
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def max_gap_cell(r: Result) -> str:
    """The sweep table's max-gap cell: the gap, ``[lower, upper]`` when the bounds did not
    meet, ``none`` when insensitive at every gap."""
    m = r.max_gap
    if not m:
        return ""
    if m.get("unsplit"):  # no tree splits on it within its bounds: one prediction for both
        return "1 (never split)" if m.get("kind") == "ratio" else "0 (never split)"
    if m.get("lower") is None:
        return "none" if m.get("proven") else f"<= {upper_text(m['upper'])}"
    if m.get("proven"):
        return lower_text(m["lower"], ".4f")
    return f"[{lower_text(m['lower'], '.4f')}, {upper_text(m['upper'], '.4f')}]"


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
    independently checked. With data, a ``distance`` column: each pair's distance to it."""
    rows = []
    with_max_gap = any(r.max_gap for r in results)
    with_distance = any(r.distance is not None for r in results)
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
                **({"distance": _distance_cell(r)} if with_distance else {}),
                "changed": changed_features(r) or (r.error or ""),
            }
        )
    return rows


def _distance_cell(r: Result) -> str:
    return "" if r.distance is None else f"{r.distance:.4f}"


def proof_cell(r: Result) -> str:
    """The table's proof cell: "certified", or the prover and "(unchecked)" ("cpsat
    (unchecked)"); empty for an answer that is not insensitive."""
    return proof_brief(r.proof) if r.proof is not None else ""


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

    results = _results_of(results)
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
            "proof": proof_brief(r.proof) if r.proof is not None else None,
        }
        for r in results
    ]
    frame = pd.DataFrame(rows, columns=FRAME_COLUMNS)
    return frame.astype({"gap": float, "validated": bool, "distance": float, "time_s": float})


def _results_of(results) -> list[Result]:
    """``results_frame``'s argument as a list of Results, or one InputError saying what it
    takes (a Result alone, a number and a list of dicts used to escape as TypeError or
    AttributeError)."""
    if isinstance(results, Result):
        raise InputError(
            "results_frame takes a list of Results (what sweep, check_many or compare return), "
            "not one Result: results_frame([r])"
        )
    try:
        results = list(results)
    except TypeError:
        raise InputError(
            "results_frame takes a list of Results (what sweep, check_many or compare return), "
            f"not {type(results).__name__}"
        ) from None
    for i, r in enumerate(results):
        if not isinstance(r, Result):
            raise InputError(f"results_frame: item {i} is a {type(r).__name__}, not a Result")
    return results


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


class SweepResults(list):
    """A sweep's results (a list, in the order of the features), with ``budget_advice``:
    where a sweep within a ``budget`` left queries open at their time limits, the line
    that says how many and what ``budget=`` gives each of them more time (as ``treesens
    sweep --budget`` ends); None otherwise (no budget, or none left open)."""

    def __init__(self, results: list[Result], budget_advice: str | None = None) -> None:
        super().__init__(results)
        self.budget_advice = budget_advice


def _again(out, resume) -> str:
    """How the API's sweep run again keeps what this one settled (budget_advice's last
    words)."""
    kept = out or resume
    if kept is not None:
        return f"a sweep run again with resume={str(kept)!r} reuses the answers this one settled"
    return "with out=FILE, a sweep run again with resume=FILE reuses the answers settled"


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
    budget: float | None = None,
    **keywords,
) -> SweepResults:
    """One query per feature (or per subset of ``subsets`` features) of a model; the
    results in the order of the features (a ``SweepResults`` list). ``results_frame``
    makes them a DataFrame.

    ``features``: sweep only these (default: all). ``sample``: a random sample of that
    many subsets (drawn with ``seed``). ``out``: append each result to this JSON Lines
    file as it ends (what the file holds stays: ``resume`` goes on from it; a new sweep
    wants a new file; one that holds another model's results is warned of, once).
    ``resume``: reuse the results in that file that answer the same question, run the
    rest and append them to it (``out`` may only name the same file), as ``treesens
    sweep --resume`` does. ``progress``: how the progress is shown (a
    questions.progress.Display; None: silently). ``treesens.sweep`` passes the views'
    display (a bar in a notebook or a terminal, a line per query otherwise); the query
    option of that name, the compiler's log, stays off in a sweep.

    A model whose estimated memory passes ``memory_mb`` (default: 3/4 of the memory
    available, at most 2,000 MB) raises MemoryRefused (an InputError) before any query,
    in one line naming its size (questions/memory.py).

    ``jobs``: queries run at once on this machine (default 1: one after the other), or
    the workers of the local cluster a ``dask``/``ray`` executor starts (default: every
    core). ``executor``: ``"local"``, ``"dask"``, ``"dask=tcp://HOST:8786"``, ``"ray"``,
    ``"ray=auto"``, or an ``executors.Executor`` (docs/distributed.md).

    ``max_gap=True``: each query asks for the largest gap instead (``treesens.max_gap``,
    within ``max_gap_tolerance``); rank the results with ``by_max_gap``.

    ``budget``: the seconds the sweep's queries take in all (each still within
    ``timeout``): a first pass gives each a short time, and those it leaves open (a max
    gap not proven, an unknown) are asked again with the time left
    (questions/sweep_budget.py). Where queries stay open, the list's ``budget_advice``
    says what budget gives each of them twice the time it had.
    """
    kw = keyword_values(keywords, "sweep", ("out", "resume", "features", "max_gap", "budget"))
    require_backend(kw["backend"])
    check_budget(budget, "budget=")
    if out is not None and resume is not None and Path(out) != Path(resume):
        raise InputError("resume=FILE appends the new results to FILE: give out the same file")
    ens = model_of(model, kw)
    subs = feature_subsets(ens, subsets, sample, kw["seed"], features)
    if kw["where"] is not None and features is None:
        subs = not_held_by_where(ens, subs, kw["where"].read(ens))
    if max_gap:  # each query asks for the largest gap: the max_gap kind
        kw |= {"kind": "max_gap", "params": {"tolerance": max_gap_tolerance}}
    make = query_maker(kw, ens)
    if max_gap:
        resolve_condition(ens, make(list(subs[0])))  # the model and classes take it
    refuse_query(ens, make(list(subs[0])), kw["memory_mb"])  # once, before any query
    results = sweep_campaign(
        ens,
        subs,
        make,
        Campaign(executor, jobs, out, resume),
        memory_mb=kw["memory_mb"],
        display=progress,
        warn=lambda msg: warnings.warn(msg, TreesensWarning, stacklevel=5),
        warn_other=lambda msg: warnings.warn(msg, OtherModelResults, stacklevel=5),
        budget=budget,
    )
    if budget is None:
        return SweepResults(results)
    again = _again(out, resume)
    return SweepResults(results, budget_advice(results, budget, 1.0, again, "budget={:.0f}"))
