"""A campaign: many questions of one model, run together. Sweeps, audits, reports and the
queries of a ``.sens`` file all run theirs here: where (this process, or an executor's
workers: ``local``, ``dask``, ``ray``), what is written as answers come (the results
log), what an earlier run already answered (``--resume``), and what is shown meanwhile
(the progress display). Each question is answered by questions/ask.py.
"""

from __future__ import annotations

import math
import numbers
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..answers.phrases import ProgressLine
from ..answers.result import Result
from ..answers.stats import asked_of
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.query import Query
from ..search.proof_tree import recording_proofs
from .ask import Task, answer_task, task_failed
from .executors import Executor, Failure, make_executor, parse_executor
from .executors.machine_cap import capped_workers, usable_cores, warn_from_caller
from .progress import Display, silent
from .results_log import appending, refuse_other_file
from .resume import ResumeKey, ResumePlan, plan_resume, read_results, result_from_line
from .sweep_budget import Budget, answer_within
from .sweep_certs import SweepCertificates

STATUS_EVERY = 10.0  # seconds between two status lines of a max-gap query in flight
STILL_RUNNING_EVERY = 30.0  # seconds between two "still running" lines of another query


@dataclass(frozen=True)
class Campaign:
    """How a campaign runs: ``executor`` (a spec, ``local``, ``dask[=ADDRESS]``,
    ``ray[=ADDRESS]``, or an Executor) with ``jobs`` workers (one local job: in this
    process); ``out``, the results log its answers are appended to; ``resume``, a log
    whose answers to the same question are reused (the new ones are appended to it
    unless ``out`` names another file)."""

    executor: str | Executor | None = None
    jobs: int | None = None
    out: str | Path | None = None
    resume: str | Path | None = None

    def __post_init__(self) -> None:
        jobs = self.jobs
        if jobs is not None and not (
            isinstance(jobs, numbers.Integral) and not isinstance(jobs, bool) and jobs >= 1
        ):
            raise InputError(f"jobs takes a whole number of workers from 1, not {jobs!r}")

    @property
    def log(self) -> str | Path | None:
        return self.out or self.resume


@dataclass(frozen=True)
class Opened:
    """A campaign while it runs: ``append(text)`` writes whole lines to its results log
    (nothing without one), ``executor`` runs its tasks (None: this process)."""

    append: Callable[[str], None]
    executor: Executor | None


@contextmanager
def opened(campaign: Campaign, work: bool = True, ens: Ensemble | None = None) -> Iterator[Opened]:
    """The campaign's results log and executor, closed at the end; no executor is made
    when there is no ``work`` (every answer reused). ``ens``: the model its workers
    read, whose size caps a pool on this machine (``opened_executor``)."""
    spec, jobs = (campaign.executor, campaign.jobs) if work else (None, 1)
    with appending(campaign.log) as append, opened_executor(spec, jobs, ens) as ex:
        yield Opened(append, ex)


@contextmanager
def opened_executor(
    executor: str | Executor | None, jobs: int | None, ens: Ensemble | None = None
) -> Iterator[Executor | None]:
    """None (this process) for one local job; an executor made from a spec is closed at
    the end, one given as an object is the caller's. A pool on this machine (local, or
    dask or ray without an address) starts at most a worker per core and as many as the
    memory holds ``ens``'s first stage (executors/machine_cap.py), saying so in a
    warning when that is fewer than ``jobs``."""
    if executor is not None and not isinstance(executor, str):
        yield executor
        return
    kind, address = parse_executor(executor or "local")
    if kind == "local" and (jobs or 1) == 1:
        yield None
        return
    workers = jobs or usable_cores()
    if address is None:
        capped = capped_workers(workers, ens)
        if capped.why is not None:
            warn_from_caller(capped.why)
        workers = capped.workers
    made = make_executor(executor or "local", workers)
    try:
        yield made
    finally:
        made.close()


def answer_all(
    ens: Ensemble,
    tasks: list[Task],
    *,
    executor: Executor | None = None,
    on_start: Callable[[Query], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    status: Callable[[str], None] | None = None,
) -> list[Result]:
    """Answer the tasks: in this process one after the other (``on_start`` sees each
    query as it starts), or on ``executor``'s workers (``on_start`` sees them all first).
    ``on_result`` sees each result as it ends (completion order); the list returned is
    in the order of ``tasks``. A task that fails on every attempt is an error result.
    ``status``: where a max-gap query run in this process reports its bounds as they
    move (every ``STATUS_EVERY`` seconds at most) and its notes (``_throttled``), and
    where a check in flight, or the workers' queries, are said to be still running
    (every ``STILL_RUNNING_EVERY`` seconds)."""
    if on_start is not None and executor is not None:
        for t in tasks:
            on_start(t.query)
    if executor is None:
        outcomes = ((i, _here(ens, t, on_start, status)) for i, t in enumerate(tasks))
    else:
        outcomes = executor.run(answer_task, ens, tasks)
    results: list[Result | None] = [None] * len(tasks)
    answered = [0]

    def say(seconds: float) -> str:  # the workers' queries, which say nothing as they run
        return f"still running: {answered[0]} of {len(tasks)} answered, {seconds:.0f}s in"

    with _beating(status if executor is not None else None, say, STILL_RUNNING_EVERY):
        for i, out in outcomes:
            res = task_failed(ens, tasks[i], out.message) if isinstance(out, Failure) else out
            results[i] = res
            answered[0] += 1
            if on_result is not None:
                on_result(res)
    return results


def ask_many(
    ens: Ensemble,
    queries: Sequence[Query],
    *,
    memory_mb: int | None = None,
    catch: bool = True,
    executor: Executor | None = None,
    on_start: Callable[[Query], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    status: Callable[[str], None] | None = None,
) -> list[Result]:
    """The batch path: every query of one model, loaded and read once, answered in order
    (results in the order of ``queries``), each within its own time limit counted from
    when it starts. A sweep, the API's ``check_many`` and ``bench/run.py --batch`` ask
    here. Each query is answered by the one runner (questions/ask.py), so the answers are
    the single-query path's; a batch saves the interpreter, the imports, the load and
    what an answer caches on the model for the next (the heuristic's per-tree tables).
    ``catch``: a query's failure is its "error" result, not an exception that loses the
    others' answers. The other keywords are ``answer_all``'s."""
    tasks = [Task.of(ens, q, memory_mb=memory_mb, catch=catch) for q in queries]
    return answer_all(
        ens, tasks, executor=executor, on_start=on_start, on_result=on_result, status=status
    )


def starting_workers(executor: Executor) -> str:
    """The status while an executor's workers start and each reads the model (seconds
    before the first answer, which nothing else would show)."""
    n = getattr(executor, "workers", None)
    return f"starting {n or 'the'} workers (each reads the model once)..."


def _here(ens: Ensemble, task: Task, on_start, status) -> Result:
    if on_start is not None:
        on_start(task.query)
    log = None
    if status is not None and task.asked.max_gap is not None:
        log = _throttled(status, task.query.label)
        return answer_task(ens, task, log)
    with _still_running(status, task.query):
        return answer_task(ens, task, log)


@contextmanager
def _still_running(
    status: Callable[[str], None] | None, query: Query, every: float = STILL_RUNNING_EVERY
) -> Iterator[None]:
    """While a query that reports nothing as it runs (a check, unlike a max gap) is in
    flight, ``status`` hears every ``every`` seconds that it still runs: a sweep's progress
    lines on a pipe or a log are otherwise silent for up to its time limit."""
    limit = query.plan.timeout
    with _beating(status, lambda s: f"{query.label}: still running, {s:.0f}s of {limit:g}s", every):
        yield


@contextmanager
def _beating(
    status: Callable[[str], None] | None, say: Callable[[float], str], every: float
) -> Iterator[None]:
    """``status(say(seconds so far))`` every ``every`` seconds while the block runs, from a
    daemon thread that ends with the block."""
    if status is None:
        yield
        return
    stop, start = threading.Event(), time.monotonic()

    def beat() -> None:
        while not stop.wait(every):
            status(say(time.monotonic() - start))

    beating = threading.Thread(target=beat, name="treesens-still-running", daemon=True)
    beating.start()
    try:
        yield
    finally:
        stop.set()
        beating.join()


def _throttled(status: Callable[[str], None], label: str) -> Callable[[str], None]:
    """``status`` for one query's lines, prefixed with its label: its progress lines (a
    ``ProgressLine``, the bracket so far) at most every ``STATUS_EVERY`` seconds, any other
    line (a note on making the box search's kernel ready) at once and without taking their
    turn; the progress line after a note comes at once too (a bar shows the note in its
    place)."""
    last = [-math.inf]

    def log(text: str) -> None:
        if not isinstance(text, ProgressLine):
            last[0] = -math.inf
            status(f"{label}: {text}")
        elif time.time() - last[0] >= STATUS_EVERY:
            last[0] = time.time()
            status(f"{label}: {text}")

    return log


@contextmanager
def _cut_short_written(written: Callable[[Result], None]) -> Iterator[None]:
    """Ctrl-C or a signal in a query answered in this process: the bounds or the best
    pair it had (the interruption's ``partial_result``, its ``stopped_by`` saying it was
    cut short, so that ``--resume`` asks it again) given to ``written``, then the
    interruption raised on."""
    try:
        yield
    except KeyboardInterrupt as e:
        partial = getattr(e, "partial_result", None)
        if partial is not None:
            written(partial)
        raise


def _quiet(_msg: str) -> None:
    pass


def _out_lines(path: str | Path) -> list[dict]:
    """The results an ``out`` file holds, read for ``warn_other_model`` only: a file
    that is not text holds none, and the sweep appends to it as it always did."""
    try:
        return read_results(path, _quiet)
    except InputError:
        return []


def other_model(lines: list[dict], ens: Ensemble) -> str | None:
    """Whose results a results log holds besides ``ens``'s (by their fingerprint,
    ``stats["asked"]["ensemble"]``), as words: "of another model", or of a model of
    ``ens``'s name retrained in place; None: only ``ens``'s."""
    if any("row" in d for d in lines):
        return "of an audit (its lines name a 'row')"
    mine = ens.fingerprint()
    for d in lines:
        other = (asked_of(d.get("stats")) or {}).get("ensemble")
        if isinstance(other, str) and other != mine:
            same_name = bool(ens.source) and d.get("model") == ens.source  # retrained in place
            return (
                "of a model of this name with other trees or bounds (or written by an "
                "earlier treesens, whose fingerprints differ)"
                if same_name
                else "of another model"
            )
    return None


def holds_other_model(path: str | Path, ens: Ensemble) -> str | None:
    """``other_model`` of the results log at ``path`` (None: no such file)."""
    return other_model(_out_lines(path), ens) if Path(path).is_file() else None


def warn_other_model(
    path: str | Path, lines: list[dict], ens: Ensemble, warn: Callable[[str], None]
) -> None:
    """A results log the sweep appends to that holds another model's results is
    legitimate, a log of several models, but no longer one sweep's: ``warn`` hears it
    once, before anything runs."""
    what = other_model(lines, ens)
    if what is not None:
        warn(
            f"{path} holds results {what}: a plot of it will refuse them; give this sweep a new file"
        )


def _resume_plan(
    ens: Ensemble,
    subsets: list[tuple[str, ...]],
    make: Callable[..., Query],
    campaign: Campaign,
    warn: Callable[[str], None],
    warn_other: Callable[[str], None],
) -> tuple[ResumePlan, str | None]:
    """What a sweep reuses from ``campaign.resume`` and the note saying so (None: no
    resume file); warns once if the file it appends to holds another model's results.
    A resume file that is no results log (a CSV given by a slip) is refused before its
    lines are read, not warned about line by line first."""
    if campaign.resume is not None:
        refuse_other_file(campaign.resume, of="sweep")  # an audit's rows: none reused
    lines = read_results(campaign.resume, warn) if campaign.resume is not None else []
    if campaign.resume is None and campaign.out is not None and Path(campaign.out).is_file():
        warn_other_model(campaign.out, _out_lines(campaign.out), ens, warn_other)
    elif campaign.resume is not None:
        warn_other_model(campaign.resume, lines, ens, warn_other)
    if campaign.resume is None:
        return ResumePlan({}, list(subsets)), None
    key = ResumeKey.of(ens, make(list(subsets[0]), ""))
    plan = plan_resume(subsets, lines, key)
    missing = "" if Path(campaign.resume).exists() else " (no such file yet: it is created)"
    return plan, f"resume from {campaign.resume}{missing}: {plan.summary()}"


def sweep_campaign(
    ens: Ensemble,
    subsets: list[tuple[str, ...]],
    make: Callable[..., Query],
    campaign: Campaign,
    *,
    memory_mb: int | None = None,
    display: Display | None = None,
    count_reused: bool = True,
    warn: Callable[[str], None] | None = None,
    warn_other: Callable[[str], None] | None = None,
    on_reused: Callable[[dict], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    certificates: SweepCertificates | None = None,
    budget: float | None = None,
) -> list[Result]:
    """A query per feature set (``make(vary, label)``), the results in the order of
    ``subsets``: those ``campaign.resume`` answers the same question (``ResumeKey``) reused
    (``on_reused`` sees their lines first), the others run and appended to the results
    log as they end (``on_result`` sees them). ``display(total)`` shows the progress
    (``count_reused``: the reused answers count in it, as answered at once); ``warn``
    sees the lines of the resume file that are not results, and ``warn_other`` (default:
    ``warn``) once that the log holds another model's results (``warn_other_model``).
    ``certificates``
    (``--certificates``): each answer, reused or new, is handed to it before it is
    written or seen, so that its proof record says whether it was certified. ``budget``:
    the seconds the queries run in all, in two passes (questions/sweep_budget.py; None:
    each query within its own time limit, once)."""
    warn = warn or (lambda _msg: None)
    plan, note = _resume_plan(ens, subsets, make, campaign, warn, warn_other or warn)
    total = len(subsets) if count_reused else len(plan.todo)
    with (display or silent)(total) as shown:
        if note is not None:
            shown.note(note)
        reused = {s: result_from_line(plan.reused[s]) for s in subsets if s in plan.reused}
        for s, res in reused.items():
            line = plan.reused[s]
            if certificates is not None:
                certificates(res, s)
                line = res.to_dict()  # its proof record as certified now
            if on_reused is not None:
                on_reused(line)
            if count_reused:
                shown.advance(res)
        queries = [make(list(s), ",".join(s)) for s in plan.todo]
        with opened(campaign, work=bool(queries), ens=ens) as run:

            def written(res: Result) -> None:
                run.append(res.to_json() + "\n")
                shown.advance(res)
                if on_result is not None:  # the CLI's raises a signal it recorded
                    on_result(res)

            def ended(res: Result) -> None:
                if certificates is not None:  # before its line: it says if it was certified
                    certificates(res)
                written(res)

            # certified here as each answer ends: its box search's proof is recorded, and
            # the certificate written from it (certify_recorded.py)
            record = certificates is not None and certificates.takes_recorded(run.executor)
            if run.executor is not None and queries:  # seconds before the first answer
                shown.status(starting_workers(run.executor))

            def ask(qs, on_result) -> list[Result]:
                return ask_many(
                    ens,
                    qs,
                    memory_mb=memory_mb,
                    catch=False,
                    executor=run.executor,
                    on_result=on_result,
                    status=shown.status,
                )

            passes = Budget.of(budget, run.executor)
            with recording_proofs(record), _cut_short_written(written):
                new = answer_within(passes, queries, ask, ended, shown.note, cut_short=written)
    answered = dict(zip(plan.todo, new, strict=True))
    return [answered[s] if s in answered else reused[s] for s in subsets]
