"""Running the queries of a ``.sens`` file."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..answers.result import Result
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError, suggests_keywords
from ..compiler.options import timeout_problem
from ..compiler.query import Query
from ..language.audit_block import AuditPlan
from ..language.resolve import SensFile, load_queries
from ..questions.ask import Task, answer_task
from ..questions.audit import (
    by_column,
    flip_to,
    frame_from_results,
    report_text,
    summary,
    unproven_rows,
)
from ..questions.audit_run import check_same_audit, read_done, run_audit
from ..questions.audit_solve import work_used_text
from ..questions.campaign import Campaign, answer_all, opened
from ..questions.executors import Executor, parse_executor
from ..questions.query_build import require_backend
from ..questions.sweep_budget import Ask, Budget, answer_within, budget_advice, check_budget


def _task(sf: SensFile, q: Query, memory_mb: int | None) -> Task:
    """A query of the file as its runner takes it: problems with the query become an
    "error" result."""
    return Task.of(sf.ensemble, q, memory_mb=memory_mb, catch=True)


def run_query(sf: SensFile, q: Query, *, memory_mb: int | None = None) -> Result:
    """Answer one query of a file; problems with this query become an "error" result."""
    return answer_task(sf.ensemble, _task(sf, q, memory_mb))


def _runs(sf: SensFile, queries: list[Query]) -> list[tuple[str | None, list[Query]]]:
    """The queries cut into runs of one block each, in order: (sweep block name, its
    queries) for a sweep's, (None, [query]) for any other query."""
    block_of = {
        qname: block
        for block, names in sf.groups.items()
        if block in sf.sweep_jobs
        for qname in names
    }
    runs: list[tuple[str | None, list[Query]]] = []
    for q in queries:
        sweep = block_of.get(q.name)
        if sweep is not None and runs and runs[-1][0] == sweep:
            runs[-1][1].append(q)
        else:
            runs.append((sweep, [q]))
    return runs


class FileResults(list):
    """The results of a file's queries (a list, in the file's order), with
    ``budget_advice``: for each sweep block a ``budget`` left with queries open at their
    time limits, by the block's name, the line ``treesens run`` ends that sweep with (how
    many stayed open, and the budget that gives each of them more time); empty when none
    did."""

    def __init__(self, results: list[Result], budget_advice: dict[str, str]) -> None:
        super().__init__(results)
        self.budget_advice = budget_advice


def run_queries(
    sf: SensFile,
    queries: list[Query],
    *,
    memory_mb: int | None = None,
    jobs: int | None = None,
    budget: float | None = None,
    executor: str | Executor | None = None,
    on_start: Callable[[Query], None] | None = None,
    on_result: Callable[[Result], None] | None = None,
    note: Callable[[str], None] | None = None,
    overridden: str = "--budget {:.0f}",
) -> FileResults:
    """Answer ``queries`` (of ``sf``) in order. A sweep block's queries run on ``executor``
    with ``jobs`` workers (default: the block's ``jobs`` setting; one: in this process,
    one after the other), within ``budget`` seconds in all (default: the block's
    ``budget``; none: each query once, within its own time limit) in the two passes of
    questions/sweep_budget.py, whose lines ``note`` sees, and at a sweep's end, where it
    left queries open, the budget that gives each of them more time (the file's ``budget
    Ns``; ``overridden``'s words when ``budget`` overrides it), also the returned
    FileResults' ``budget_advice``; ``on_result`` sees the queries' final results as they
    end, the list returned is in the order of ``queries``. Other queries run one after the
    other."""
    if isinstance(executor, str):
        parse_executor(executor)  # a wrong spec fails before anything runs
    check_budget(budget, "budget=")
    for backend in dict.fromkeys(q.plan.backend for q in queries):
        try:
            require_backend(backend)
        except InputError as e:
            raise InputError(e.message, str(sf.path)) from None
    results: list[Result] = []
    advice: dict[str, str] = {}
    asked = overridden if budget is not None else "budget {:.0f}s"
    for sweep, batch in _runs(sf, queries):
        n = jobs if jobs is not None else sf.sweep_jobs.get(sweep)
        seconds = budget if budget is not None else sf.sweep_budget.get(sweep)
        campaign = Campaign(executor, n) if sweep else Campaign()
        with opened(campaign, ens=sf.ensemble) as run:
            ask = _asker(sf, run.executor, memory_mb, on_start)
            passes = Budget.of(seconds if sweep else None, run.executor)
            done = answer_within(passes, batch, ask, on_result or _ignore, note or _ignore)
        results += done
        if passes is not None and (line := budget_advice(done, seconds, asked=asked)):
            advice[sweep] = line
            (note or _ignore)(f"sweep {sweep}: {line}")
    return FileResults(results, advice)


def _asker(sf: SensFile, executor: Executor | None, memory_mb: int | None, on_start) -> Ask:
    """How a run of queries is asked (``answer_within``'s ``ask``): on ``executor``, or
    in this process (None), ``on_start`` seeing each query as it starts."""

    def ask(queries, on_result: Callable[[Result], None]) -> list[Result]:
        tasks = [_task(sf, q, memory_mb) for q in queries]
        return answer_all(
            sf.ensemble, tasks, executor=executor, on_start=on_start, on_result=on_result
        )

    return ask


def _ignore(_x: object) -> None:
    pass


def run_audits(
    sf: SensFile,
    plans: list[AuditPlan],
    *,
    jobs: int | None = None,
    executor: str | Executor | None = None,
    timeout: float | None = None,
    memory_mb: int | None = None,
    on_block: Callable[[AuditPlan, list[dict]], None] | None = None,
    on_audit: Callable[[AuditPlan, list[dict], float], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> dict[str, list[dict]]:
    """Run audit blocks one after the other: each row's result line, per block name.
    ``on_block(plan, lines)`` sees each block of rows as it ends, ``on_audit(plan, lines,
    seconds)`` each audit when done, ``note`` what resuming an out file says; ``jobs``,
    ``executor``, ``timeout`` (per row) and ``memory_mb`` override the file's settings."""
    if isinstance(executor, str):
        parse_executor(executor)
    out: dict[str, list[dict]] = {}
    for plan in plans:
        t0 = time.time()

        def block_done(new: list[dict], _answered: int, plan=plan) -> None:
            if on_block is not None:
                on_block(plan, new)

        lines = run_audit_plan(
            sf.ensemble,
            plan,
            jobs=jobs,
            executor=executor,
            timeout=timeout,
            memory_mb=memory_mb,
            on_block=block_done,
            note=note,
        )
        out[plan.name] = lines
        if on_audit is not None:
            on_audit(plan, lines, time.time() - t0)
    return out


@suggests_keywords()
def run_file(
    path: str | Path,
    query: str | None = None,
    *,
    timeout: float | None = None,
    memory_mb: int | None = None,
    on_result: Callable[[Result], None] | None = None,
    jobs: int | None = None,
    budget: float | None = None,
    executor: str | Executor | None = None,
    on_audit: Callable[[AuditPlan, list[dict], float], None] | None = None,
) -> FileResults:
    """Answer every query of a ``.sens`` file (or those of one query/sweep block).

    A bad file raises :class:`InputError` before anything is solved; a query that fails
    becomes an "error" result and the others still run. ``on_result(result)`` is called
    as each query ends. ``timeout`` (seconds) overrides every query's own limit.
    A sweep's queries run at once on ``executor`` (``"local"``, ``"dask[=ADDRESS]"``,
    ``"ray[=ADDRESS]"`` or an executors.Executor) with ``jobs`` workers, which
    overrides the file's ``jobs`` setting (docs/distributed.md); the list returned is
    in the file's order. ``budget`` (seconds) overrides every sweep's ``budget``: the
    time its queries take in all, in two passes (questions/sweep_budget.py); where a
    sweep's budget left queries open, the list's ``budget_advice`` holds the line
    ``treesens run`` ends it with, by the sweep's name (``budget=N`` where ``budget`` set
    it, the file's ``budget Ns`` where the file did). The file's
    audit blocks (or the one named ``query``) run after its queries; ``on_audit(plan,
    lines, seconds)`` sees each one's result lines.
    """
    if timeout is not None and timeout_problem(timeout):
        raise InputError(f"timeout {timeout_problem(timeout)}, not {timeout!r}")
    if jobs is not None and jobs < 1:
        raise InputError(f"jobs must be at least 1, got {jobs}")
    check_budget(budget, "budget=")
    sf = load_queries(path)
    queries = sf.select(query)
    if timeout is not None:
        queries = [q.planned(timeout=timeout) for q in queries]
    results = run_queries(
        sf,
        queries,
        memory_mb=memory_mb,
        jobs=jobs,
        budget=budget,
        executor=executor,
        on_result=on_result,
        overridden="budget={:.0f}",
    )
    run_audits(
        sf,
        sf.select_audits(query),
        jobs=jobs,
        executor=executor,
        timeout=timeout,
        on_audit=on_audit,
    )
    return results


def _check_out(plan: AuditPlan, ens: Ensemble) -> None:
    """An ``out`` file is resumed: its lines must answer this audit."""
    hint = f"audit {plan.name!r} resumes its out file: delete it or name another"
    done = read_done(plan.run.resume, f"the out file of audit {plan.name!r}")  # not --resume
    check_same_audit(done, ens, plan.spec, plan.run.resume, hint)


def run_audit_plan(
    ens: Ensemble,
    plan: AuditPlan,
    *,
    jobs: int | None = None,
    executor: str | Executor | None = None,
    timeout: float | None = None,
    memory_mb: int | None = None,
    on_block: Callable[[list[dict], int], None] | None = None,
    note: Callable[[str], None] | None = None,
    work: int | None = None,
) -> list[dict]:
    """Every audited row's result line. ``jobs``/``executor`` override the block's
    ``jobs`` (a local pool by default), ``timeout`` its time limit per row, ``work`` its
    work budget per row; ``memory_mb``
    is the memory limit (questions/memory.py: a model over it is refused, MemoryRefused);
    ``note`` hears what resuming the out file says (questions/audit_run.py)."""
    _check_out(plan, ens)
    run = replace(
        plan.run,
        jobs=jobs if jobs is not None else plan.run.jobs,
        executor=executor,
        timeout_per_row=timeout if timeout is not None else plan.run.timeout_per_row,
        memory_mb=memory_mb if memory_mb is not None else plan.run.memory_mb,
        work_per_row=work if work is not None else plan.run.work_per_row,
    )
    return run_audit(ens, plan.data, plan.spec, run, on_block, note)


def audit_report(ens: Ensemble, plan: AuditPlan, lines: list[dict], seconds: float) -> str:
    """The summary an audit block prints: the same table as ``treesens audit``."""
    by = by_column(plan.data, ens, plan.by, plan.label)
    df = frame_from_results(lines, plan.spec.vary, by, flip_to(ens, plan.spec.target))
    table = summary(df, plan.by)
    text = report_text(ens, plan.spec, plan.run.n_rows, seconds, table, unproven_rows(df))
    used = work_used_text(lines)
    return text + ("\n" + used if used else "")
