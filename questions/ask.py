"""One question answered: a check, or (the ``max_gap`` kind) its largest gap, from the
data to the result.

Every interface (the CLI, the Python API, a ``.sens`` file) and every campaign (a sweep,
an audit's rows, a report) asks a question through ``answer``: it owns the clock (the
time limit becomes a deadline here, from the moment given as ``start``), reads the data
the query names, turns a failure into an "error" result when asked to, and records what
was asked (``Asked``, the result's ``stats["asked"]``, which ``--resume`` matches on).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..answers.phrases import NEVER_SPLITS
from ..answers.result import INSENSITIVE, Result, error_result
from ..compiler.dataset import Dataset
from ..compiler.encode import resolve_features
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, name_list
from ..compiler.kinds import LargestGap, kind_of, with_question_fields
from ..compiler.options import ANSWER_OPTIONS
from ..compiler.query import ANY, Query
from ..driver import solve_query
from ..driver.solver_memory import QueryTooLarge
from ..readers.data import dataset_for
from ..readers.plugins import load_plugin, loaded_plugins
from .cores import capped_threads
from .memory import MemoryLimit, MemoryRefused, memory_limit, memory_refusal, search_budget

if TYPE_CHECKING:
    from ..driver.compile import CompiledQuery


@dataclass(frozen=True)
class Asked:
    """What a result answers beyond the fields its line shows (model, gap, classes,
    passes): the model's fingerprint, the backend asked for (a ``race`` result's
    ``backend`` is the winner), the time limit, the data-aware mode, the options that
    change the answer (a data file by its content's digest, data in memory by its rows
    and digest) and a max gap's tolerance. Written as the result's ``stats["asked"]``."""

    ensemble: str
    backend: str
    timeout: float
    data_aware: str = "none"
    options: tuple[tuple[str, object], ...] = ()
    max_gap: float | None = None
    # classes asked with "any": a max gap's line shows the classes its pair found instead
    any_classes: tuple | None = None
    work: int | None = None  # a work budget (answers/work.py)

    @classmethod
    def of(cls, ens: Ensemble, q: Query) -> Asked:
        given = q.plan.options.given()
        options = {k: given[k] for k in ANSWER_OPTIONS if k in given}
        data = options.get("data")
        if isinstance(data, Dataset):  # data in memory: recorded by its content
            options["data"] = {"rows": data.n_rows, "sha256": data.digest()}
        elif isinstance(data, (str, Path)):  # a file: by its content, wherever it is
            options["data"] = file_digest(data)
        return cls(
            ensemble=ens.fingerprint(),
            backend=q.plan.backend,
            timeout=q.plan.timeout,
            data_aware=q.plan.data_aware.value,
            options=tuple(options.items()),
            max_gap=LargestGap.tolerance(q) if q.kind_name == LargestGap.name else None,
            any_classes=tuple(q.classes) if q.classes and ANY in q.classes else None,
            work=q.plan.work,
        )

    def to_dict(self) -> dict:
        """The JSON form: ``ensemble``, ``data_aware``, the options, ``max_gap`` (a max
        gap's only), ``backend``, ``timeout``."""
        out = {"ensemble": self.ensemble, "data_aware": self.data_aware, **dict(self.options)}
        if self.max_gap is not None:
            out["max_gap"] = self.max_gap
        if self.any_classes is not None:
            out["classes"] = list(self.any_classes)
        if self.work is not None:
            out["work"] = self.work
        return out | {"backend": self.backend, "timeout": self.timeout}


def file_digest(path: str | Path) -> str | None:
    """The sha256 of a file's bytes (None when it is not a file): a data file changed in
    place asks new questions."""
    p = Path(path)
    if not p.is_file():
        return None
    st = p.stat()
    return _digest(str(p.resolve()), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=32)
def _digest(path: str, _mtime_ns: int, _size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def recorded(res: Result, asked: Asked | dict) -> Result:
    """The result with what it answers recorded (the one place ``stats["asked"]`` is
    written): a question's ``Asked``, or an audited row's record as a mapping
    (questions/audit_spec.py, ``audit_record``: the model's fingerprint, the data's rows,
    the class asked)."""
    res.stats["asked"] = asked.to_dict() if isinstance(asked, Asked) else dict(asked)
    return res


def answer(
    ens: Ensemble,
    q: Query,
    *,
    start: float | None = None,
    memory_mb: int | None = None,
    log: Callable[[str], None] | None = None,
    compiled: CompiledQuery | None = None,
    asked: Asked | None = None,
    catch: bool = False,
) -> Result:
    """Answer ``q``: the check, or (a ``max_gap`` query) the largest gap at which the
    pair question holds. The time limit runs from ``start`` (a ``time.time()``; default
    now; the CLI's: the command's start, so that loading counts), and ``time["total"]``
    is measured from it.
    ``log`` sees a max gap's bounds as they move; ``compiled``: the query compiled
    already (a compare's); ``asked``: the record, when a campaign made it once for all
    its questions. ``catch``: a problem with this query (a bad input, a bug) becomes an
    "error" result instead of an exception (a ``.sens`` file's other queries still run).
    ``memory_mb``: the memory limit, over the query's own ``memory_mb`` option
    (questions/memory.py): a model whose load and search pass it is refused, before
    anything is compiled, by an "error" result that says so, as is a query that compiles
    first (data-aware, a race) whose compile would pass it; a query that reaches the
    solver stage only after the heuristic and the box search skips that stage when its
    compile would pass the limit (driver/solver_memory.py): "unknown", saying why.

    Interrupted while optimising with a replay-checked pair (or a max gap's bounds) in
    hand, the KeyboardInterrupt carries that result, recorded, as ``partial_result``."""
    start = time.time() if start is None else start
    asked = asked or Asked.of(ens, q)
    threads = capped_threads(q.plan.threads)
    q = replace(q, plan=replace(q.plan, threads=threads.workers))
    limit = query_memory_limit(q, memory_mb)
    too_large = memory_refusal(ens, limit)
    if too_large is not None:
        return _finish(_error(ens, q, too_large), asked, start)
    try:
        res = _answer(ens, q, q.plan.deadline(start), limit, log, compiled)
        _note_unread(ens, q, res)
        res.notes.extend([threads.why] if threads.why is not None else [])
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            _finish(partial, asked, start)
        raise
    except QueryTooLarge as e:  # this query's tables or compile: refused as up front
        res = _error(ens, q, str(e))
    except InputError as e:
        if not catch:
            raise
        res = _error(ens, q, str(e))
    except Exception as e:  # noqa: BLE001 - one query's bug must not lose the others' answers
        if not catch:
            raise
        res = _error(ens, q, f"internal error: {type(e).__name__}: {e}")
    return _finish(res, asked, start)


def _note_unread(ens: Ensemble, q: Query, res: Result) -> None:
    """An insensitive answer about features no tree splits on says so (a feature the
    training left unused, or another model's): the model never reads them, so no change
    of them alone moves its prediction."""
    if res.status != INSENSITIVE or not q.vary:
        return
    try:
        varied = sorted(resolve_features(ens, q.vary))
    except InputError:  # a kind's own features, which the answer named otherwise
        return
    if any((t.feature == f).any() for t in ens.trees for f in varied):
        return
    them = "them" if len(varied) > 1 else "it"
    names = name_list(ens.features[f].name for f in varied)
    res.notes.append(f"{NEVER_SPLITS} {names}: no change of {them} alone moves its prediction")


def query_memory_limit(q: Query, memory_mb: int | None = None) -> MemoryLimit | None:
    """The memory limit of ``q``: ``memory_mb`` (a run's, e.g. ``--memory-mb`` over a
    .sens file's queries), else the query's ``memory_mb`` option, else the default."""
    return memory_limit(memory_mb if memory_mb is not None else q.plan.options.memory_mb)


def refuse_query(ens: Ensemble, q: Query, memory_mb: int | None = None) -> None:
    """Raise MemoryRefused when ``q`` on ``ens`` would pass its memory limit
    (``query_memory_limit``): a command-line check or a sweep refuses so, once, before
    anything is compiled."""
    why = memory_refusal(ens, query_memory_limit(q, memory_mb))
    if why is not None:
        raise MemoryRefused(why)


def _answer(ens, q, deadline, limit: MemoryLimit | None, log, compiled) -> Result:
    _refuse_unnamed_categories(ens)  # a pair needing one could not be replayed
    data = dataset_for(ens, q)
    memory_mb = None if limit is None else limit.given_mb  # the solver's address space
    if not kind_of(q).searched:
        return solve_query(
            ens,
            q,
            compiled=compiled,
            deadline=deadline,
            memory_mb=memory_mb,
            data=data,
            tables_mb=None if limit is None else limit.mb,
            note=log,
        )
    from .max_gap import max_gap_query  # (the max gap's searches: only when asked)

    tol = LargestGap.tolerance(q)
    budget = search_budget(ens, limit)
    return max_gap_query(
        ens,
        q,
        tolerance=tol,
        deadline=deadline,
        memory_mb=memory_mb,
        log=log,
        data=data,
        heap_bytes=budget.heap_bytes,
        memory_bytes=budget.memory_bytes,
    )


def solving_with(ens: Ensemble, q: Query) -> str:
    """What solves ``q``, as the line before its answer says ("solving with cpsat..."):
    its backend, but for a max gap the box search answers (questions/max_gap.py) where
    its tables describe the query, the backend bisecting where they do not (a data-aware
    one: the box search, then a check by the backend for the pair nearest the data)."""
    box_search = q.plan.options.value("box_search") or ens.n_outputs > 1
    if not kind_of(q).searched or not box_search:
        return q.plan.backend
    if q.plan.data_aware != "none":
        return f"the box search, then {q.plan.backend} for the pair nearest the data"
    return f"the box search ({q.plan.backend} where it does not apply)"


def _refuse_unnamed_categories(ens: Ensemble) -> None:
    """CatBoost categories known only by their hash refused (catboost_categories.py):
    only a CatBoost replayer, or a replayer wrapping one (``inner``), holds them, and its
    reader's modules are loaded then; other models do not import them."""
    replayer = getattr(ens, "replayer", None)
    while replayer is not None:
        if getattr(replayer, "hashed", None):
            from ..readers.formats.catboost_categories import refuse_unnamed_categories

            refuse_unnamed_categories(ens)
            return
        replayer = getattr(replayer, "inner", None)


def refused(ens: Ensemble, q: Query, message: str, start: float | None = None) -> Result:
    """The error result of a question refused before it is asked (a contract's limit the
    model cannot take, ...), recorded as an answer is."""
    start = time.time() if start is None else start
    return _finish(_error(ens, q, message), Asked.of(ens, q), start)


def _error(ens: Ensemble, q: Query, message: str) -> Result:
    """``error_result`` with what every result of ``q`` records of its question besides
    (with_question_fields), so that an error line reads as the question its answer,
    asked again, will answer."""
    return with_question_fields(error_result(ens, q, message), q)


def _finish(res: Result, asked: Asked, start: float) -> Result:
    res.time["total"] = time.time() - start
    return recorded(res, asked)


@dataclass(frozen=True)
class Task:
    """One question of a campaign, as an executor sends it to a worker: the query, what
    it asks (recorded here, where the data file is), the memory limit, whether a
    failure is an "error" result (``answer``'s ``catch``), and the plugins loaded here
    (a worker loads them too: a kind a plugin registers answers there)."""

    query: Query
    asked: Asked
    memory_mb: int | None = None
    catch: bool = False
    plugins: tuple[str, ...] = ()

    @classmethod
    def of(cls, ens: Ensemble, q: Query, **kw) -> Task:
        return cls(q, Asked.of(ens, q), plugins=loaded_plugins(), **kw)


def answer_task(ens: Ensemble, task: Task, log: Callable[[str], None] | None = None) -> Result:
    """A campaign's question, on whatever process or machine runs it: the clock starts
    there."""
    for plugin in task.plugins:
        load_plugin(plugin)
    return answer(
        ens,
        task.query,
        memory_mb=task.memory_mb,
        log=log,
        asked=task.asked,
        catch=task.catch,
    )


def task_failed(ens: Ensemble, task: Task, message: str) -> Result:
    """The error result of a task that failed on every attempt (a worker lost, ...)."""
    return recorded(_error(ens, task.query, f"task failed: {message}"), task.asked)
