"""Cavity clauses for a query: from a clause file, the disk cache, or learned.

Clauses are cached on disk, keyed by hashes of the model's thresholds, the data and the
parameters (``cache_dir()``), and can be written to / read from a JSON file. Clauses
read from a file are re-checked against the data: a box that holds a row is discarded.
Learning (z3) is search/cavity_learning.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..backends.registry import BackendInfo
from ..backends.worker import Worker
from ..compiler.cavities import (
    Clause,
    check_clause_features,
    check_clauses,
    clauses_document,
    clauses_from_document,
    model_key,
)
from ..compiler.dataset import Dataset
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, TreesensError
from ..compiler.query import Query
from ..compiler.solver import UNKNOWN, Solution, SolveOptions
from ..search.cavity_learning import BoxSearch, FoundBoxes, learn_clauses

# the learner runs in a worker process like every solver; it is not a query backend
CAVITY_LEARNER = BackendInfo(
    "cavity-learning",
    "treesens.search.cavity_learning",
    ("z3",),
    description="z3 learning data cavities",
)
LEARNING_GRACE = 30.0  # seconds past the learning budget before the worker is stopped
# with a query deadline, learning takes at most this share of the time left, so that the
# solver has the rest to use the clauses
LEARNING_SHARE = 0.5
STOPPED = "stopped at the time limit"  # stats["clause_learning"] when the worker was stopped


class _LearnerWorker(Worker):
    """A worker process running the cavity learner instead of a registry backend."""

    def __init__(self) -> None:
        super().__init__("z3")
        self.info = CAVITY_LEARNER


def learn_in_worker(
    ens: Ensemble, X: np.ndarray, *, deadline: float | None = None, **learning
) -> list[Clause]:
    """Cavity clauses of the rows X, learned by z3 in a worker process (``learning``:
    the keywords of search/cavity_learning.py's ``learn_clauses``). The worker is stopped
    at ``deadline`` (absolute time.time()) if it has not answered: then no clause is
    returned and ``stats["clause_learning"]`` says so."""

    def in_worker(search: BoxSearch, stats: dict) -> list:
        return _boxes_in_worker(search, stats, deadline)

    return learn_clauses(ens, X, learn=in_worker, **learning)


def _boxes_in_worker(search: BoxSearch, stats: dict, deadline: float | None) -> list:
    now = time.time()
    search = replace(search, deadline=now + search.time_budget)
    stop = now + search.time_budget + LEARNING_GRACE
    if deadline is not None:
        stop = min(stop, deadline)
    worker = _LearnerWorker()
    try:
        found = worker.solve(search, SolveOptions(deadline=stop))
    finally:
        worker.close()
    if isinstance(found, Solution) and found.status == UNKNOWN:  # stopped at `stop`
        stats.update({"clause_learning": STOPPED, "clause_budget_reached": True})
        return []
    if isinstance(found, Solution) or not isinstance(found, FoundBoxes):
        why = found.message if isinstance(found, Solution) else repr(found)
        raise TreesensError(f"learning the data's cavity clauses failed: {why}")
    stats.update(found.stats)
    return found.boxes


def cache_dir() -> Path:
    """Where learned clauses are cached: $TREESENS_CACHE, else ~/.cache/treesens."""
    env = os.environ.get("TREESENS_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "treesens"


def save_clauses(path: str | Path, clauses: list[Clause], meta: dict | None = None) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = clauses_document(clauses, meta)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    tmp.replace(path)


def load_clauses(path: str | Path) -> list[Clause]:
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError("clauses file not found", str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"cannot read clauses: {e}", str(path)) from None
    return clauses_from_document(doc, str(path))


def clauses_for(
    ens: Ensemble,
    data: Dataset,
    *,
    width: int = 2,
    max_clauses: int = 50,
    time_budget: float = 60.0,
    file: str | Path | None = None,
    cache: bool = True,
    progress: bool = False,
    seed: int = 0,
    stats: dict | None = None,
    deadline: float | None = None,
) -> list[Clause]:
    """The cavity clauses for a model and a Dataset: from ``file`` if it exists (re-checked
    against the data), else from the disk cache, else learned (and written to ``file`` /
    the cache). With a ``deadline`` (absolute time.time()), learning takes at most
    ``LEARNING_SHARE`` of the time left and its worker is stopped at the deadline; clauses
    learned in less than ``time_budget`` are not cached (the cache keys on the budget)."""
    if file is not None and not Path(file).exists():
        parent = Path(file).parent
        if not parent.is_dir():  # checked before minutes of learning, and never created
            raise InputError(f"cannot write the clauses: no directory {parent}", str(file))
    if file is not None and Path(file).exists():
        clauses = load_clauses(file)
        check_clause_features(ens, clauses, str(file))
        kept = check_clauses(ens, clauses, data.X)
        if stats is not None:
            stats.update(
                {"clauses_source": str(file), "clauses_discarded": len(clauses) - len(kept)}
            )
        return kept[:max_clauses] if max_clauses else kept
    key = f"{model_key(ens)}-{data.digest()}-w{width}-n{max_clauses}-t{time_budget:g}-s{seed}"
    cpath = cache_dir() / "cavities" / f"{key}.json" if cache else None
    cached = _from_cache(cpath, file, key, stats, lambda cs: check_clauses(ens, cs, data.X))
    if cached is not None:
        return cached
    budget = _learning_budget(time_budget, deadline)
    st: dict = {}
    clauses = []
    if budget > 0:
        clauses = learn_in_worker(
            ens,
            data.X,
            width=width,
            max_clauses=max_clauses,
            time_budget=budget,
            seed=seed,
            progress=progress,
            stats=st,
            deadline=deadline,
        )
    else:
        st.update({"clause_learning": "no time left", "clause_budget_reached": True})
    if budget < time_budget:
        st["clause_time_used"] = max(0.0, budget)  # cut short by the query's time limit
    if stats is not None:
        stats.update(st)
        stats["clauses_source"] = "learned"
    meta = {
        "key": key,
        "model": model_key(ens),
        "data": data.digest(),
        "data_source": data.source,
        "width": width,
        "max_clauses": max_clauses,
        "time_budget": max(0.0, budget),
        "complete": not st.get("clause_budget_reached", False),
    }
    # a set learned in less than its budget is not what the cache's key promises
    cut = budget < time_budget and not meta["complete"]
    targets = [] if "clause_learning" in st else [file] + ([] if cut else [cpath])
    for target in targets:
        if target is not None:
            with contextlib.suppress(OSError):
                save_clauses(target, clauses, meta)
    return clauses


def _from_cache(
    cpath: Path | None, file, key: str, stats: dict | None, check
) -> list[Clause] | None:
    """The clauses cached at ``cpath`` that ``check`` keeps (copied to ``file``), or None.
    Re-checked: a set cached by an older learner may hold data rows."""
    if cpath is None or not cpath.exists():
        return None
    try:
        clauses = check(load_clauses(cpath))
    except InputError:
        return None
    if stats is not None:
        stats["clauses_source"] = f"cache {cpath}"
    if file is not None:
        save_clauses(file, clauses, {"key": key})
    return clauses


def _learning_budget(time_budget: float, deadline: float | None) -> float:
    """The seconds learning may take: its own budget, at most a share of the time left."""
    if deadline is None:
        return time_budget
    return min(time_budget, LEARNING_SHARE * (deadline - time.time()))


def query_clauses(
    ens: Ensemble,
    q: Query,
    data: Dataset,
    stats: dict,
    progress: bool = False,
    deadline: float | None = None,
) -> list[Clause]:
    """The cavity clauses of a query's options (``clause_width``, ``max_clauses``,
    ``clause_time``, ``clauses``, ``clause_cache``) learned by ``deadline`` (see
    :func:`clauses_for`); their statistics go to ``stats``."""
    st: dict = {}
    clauses = clauses_for(
        ens,
        data,
        width=int(q.plan.options.value("clause_width")),
        max_clauses=int(q.plan.options.value("max_clauses")),
        time_budget=float(q.plan.options.value("clause_time")),
        file=q.plan.options.clauses,
        cache=bool(q.plan.options.value("clause_cache")),
        progress=progress,
        stats=st,
        deadline=deadline,
    )
    stats.update(st)
    stats["clauses_learned"] = len(clauses)
    return clauses
