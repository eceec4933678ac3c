"""Testing the expectations of a ``.sens`` file (``treesens test``, docs/testing.md): every
query, sweep and audit that says what must hold (``expect ...``) is answered by the
contract question (questions/contract.py) and judged, one Outcome per expectation."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..answers.work import AUDIT_TIMED, work_line
from ..compiler.errors import InputError
from ..compiler.options import timeout_problem
from ..compiler.query import Query
from ..language import Expect, SensFile, load_queries
from ..language.audit_block import AuditPlan
from ..questions.audit import by_column, frame_from_results, row_bounds
from ..questions.audit_solve import keeping_row_proofs, rows_work
from ..questions.certify import certify_answer, forget_file
from ..questions.certify_recorded import recording_for
from ..questions.contract import (
    ERROR,
    Expectation,
    Outcome,
    answer,
    asked_query,
    audit_outcome,
    judge_result,
)
from ..questions.memory import MemoryRefused
from ..questions.output_folder import make_folder
from .sens_run import audit_report, run_audit_plan

# a sweep block whose expectations treesens test answers, with a budget (its own or
# defaults'): a budget shares seconds out between a run's queries (treesens run), which
# would make the verdicts follow the runner's load; test answers each expectation alone
SWEEP_BUDGET = (
    "sweep {block}: budget {seconds:g}s shares seconds out between the sweep's queries "
    "under treesens run, and a verdict within it would follow the runner's load; treesens "
    "test answers each expectation on its own, within its timeout or work budget (work N: "
    "the same verdict on any runner): take budget out of the contract (treesens run "
    "--budget S still gives one)"
)


def refuse_sweep_budgets(sf: SensFile, queries: list[Query]) -> None:
    """A sweep block with a budget whose expectations are asked is bad input (exit 2):
    SWEEP_BUDGET."""
    asked = {q.name for q in queries}
    for block, seconds in sf.sweep_budget.items():
        if seconds is not None and asked.intersection(sf.groups.get(block, ())):
            raise InputError(SWEEP_BUDGET.format(block=block, seconds=seconds), str(sf.path))


def expectation_of(st: Expect) -> Expectation:
    """The question's Expectation of an ``expect`` statement."""
    by = st.by.text if st.by is not None else None
    return Expectation(st.kind, st.limit, st.percent, by, st.allow_unknown)


def load_contract(
    path: str | Path,
    *,
    model: str | Path | None = None,
    data: str | Path | None = None,
    loading: Callable[[Path], None] | None = None,
    trust_pickle: bool = False,
) -> SensFile:
    """The file, on another model and data when given; a file that expects nothing is
    bad input (a contract that cannot fail). ``loading`` is given the model file's path
    once the file's paths are checked, before the model loads (the command line's word
    on a large file). ``trust_pickle``: a pickled model may load (``--trust-pickle``)."""
    for flag, p in (("--model", model), ("--data", data)):
        if p is not None and not Path(p).is_file():
            found = "a folder, not a file" if Path(p).is_dir() else "file not found"
            raise InputError(f"{flag} {p}: {found}")
    if loading is not None:
        given = load_queries(path, load_model=False, model=model, data=data)
        loading(given.model_path)
    sf = load_queries(path, model=model, data=data, trust_pickle=trust_pickle)
    if not sf.expectations:
        raise InputError(
            "expects nothing: add what must hold to a query (expect insensitive, expect "
            "sensitive, expect max gap <= LIMIT) or an audit (expect audit flippable <= 2%)",
            str(path),
        )
    return sf


def contract_queries(sf: SensFile, name: str | None = None) -> list[Query]:
    """The queries (of the block ``name``, or all) that carry an expectation, in order."""
    return [q for q in sf.select(name) if q.name in sf.expectations]


def contract_audits(sf: SensFile, name: str | None = None) -> list[AuditPlan]:
    """The audit blocks (``name``, or all) that carry an expectation, in order."""
    return [p for p in sf.select_audits(name) if p.name in sf.expectations]


def run_contract(
    sf: SensFile,
    *,
    query: str | None = None,
    timeout: float | None = None,
    work: int | None = None,
    memory_mb: int | None = None,
    certificates: str | Path | None = None,
    on_start: Callable[[str], None] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    certify_rows: int | None = None,
    certify_timeout: float | None = None,
    note: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Judge every expectation of ``sf`` (or of one block): its queries' in file order,
    then its audits'. ``timeout`` overrides every query's time limit and every audit's
    time per row, ``work`` every query's work budget (answers/work.py); ``certificates``: a folder where each passing expectation proven by an
    insensitive answer (``insensitive``, ``max gap``) gets its certificate
    (docs/certificates.md), and so does each audited row that does not flip: of each
    audit block, the first ``certify_rows`` and those begun within ``certify_timeout``
    seconds (default: all), ``note`` getting a progress line on a long run;
    ``on_start(block name)`` / ``on_outcome(outcome)`` see each one begin and end."""
    if timeout is not None and timeout_problem(timeout):
        raise InputError(f"timeout {timeout_problem(timeout)}, not {timeout!r}")
    rows_bounds = {**row_bounds(certify_rows, certify_timeout), "progress": note}
    queries = contract_queries(sf, query)
    plans = contract_audits(sf, query)
    if not queries and not plans:
        raise InputError(f"--query {query}: this block expects nothing", str(sf.path))
    refuse_sweep_budgets(sf, queries)
    if certificates is not None:
        make_folder(certificates, f"--certificates {certificates}")
    outcomes = []
    for q in queries:
        if timeout is not None:
            q = q.planned(timeout=timeout)
        if work is not None:
            q = q.planned(work=work)
        if on_start is not None:
            on_start(q.name)
        exp = expectation_of(sf.expectations[q.name])
        folder = Path(certificates) if certificates is not None else None
        out = _query_outcome(sf, q, exp, memory_mb, folder)
        outcomes.append(out)
        if on_outcome is not None:
            on_outcome(out)
    for plan in plans:
        if on_start is not None:
            on_start(plan.name)
        exp = expectation_of(sf.expectations[plan.name])
        folder = Path(certificates) if certificates is not None else None
        if work is not None:  # every question's budget: each row's of an audit
            plan = replace(plan, run=replace(plan.run, work_per_row=work))
        out = _audit_outcome(sf, plan, exp, timeout, memory_mb, folder, rows_bounds)
        if plan.run.work_per_row is None and any(q.plan.work is not None for q in sf.queries):
            out.message += AUDIT_TIMED
        outcomes.append(out)
        if on_outcome is not None:
            on_outcome(out)
    return outcomes


def _query_outcome(
    sf: SensFile, q: Query, exp: Expectation, memory_mb: int | None, folder: Path | None
) -> Outcome:
    """One query's verdict; a problem with the query (or a bug) is an "error" result, so
    the other queries' verdicts are not lost. With a ``folder``, an insensitive answer to
    an expectation a proof passes gets its certificate there, written from the answer's
    own recorded proof (no second search where the box search proved it) and checked
    before the verdict, which then says so."""
    wanted = folder is not None and exp.kind in PROVEN_KINDS
    if wanted:  # an earlier run's certificate (another model's) is no claim of this one
        forget_file(folder / certificate_name(q.name))
    with recording_for(q, folder if wanted else None):
        res = answer(sf.ensemble, q, exp, memory_mb=memory_mb, catch=True)
    certificate = None
    if wanted and res.status == "insensitive":
        certificate = _certificate(sf, q, exp, res, folder)
    res.box_proof = None  # the recorded proof's boxes: not kept past the certificate
    out = judge_result(sf.ensemble, q, exp, res, res.time["total"])
    out.certificate = certificate
    timed = res.stats.get("work", {}).get("timed")
    if timed:  # a stage the work budget does not reach: its verdict may follow the load
        out.message += f" (timed: {'; '.join(timed)})"
    if res.stats.get("work"):  # what it used of its budget, which a budget is sized from
        out.detail = "\n".join(p for p in (out.detail, work_line(res.stats["work"])) if p)
    return out


def _audit_outcome(
    sf: SensFile,
    plan: AuditPlan,
    exp: Expectation,
    timeout: float | None,
    memory_mb: int | None,
    folder: Path | None = None,
    rows_bounds: dict | None = None,
) -> Outcome:
    """An audit's verdict; refused for memory, an "error" as a refused query's is. With
    a ``folder``, each row that does not flip gets its certificate in ``FOLDER/NAME.rows``
    (questions/audit_certificates.py, as ``treesens audit --certificates`` writes them),
    within the block's time per row each and ``rows_bounds`` (certify_rows's ``limit``,
    ``seconds`` and ``progress``); the outcome's ``certificate`` says how many."""
    t0 = time.time()
    ens = sf.ensemble
    # a row the box search proves keeps its proof for its certificate, as treesens audit's
    with keeping_row_proofs(folder is not None):
        try:
            lines = run_audit_plan(ens, plan, timeout=timeout, memory_mb=memory_mb)
        except MemoryRefused as e:
            return Outcome(plan.name, exp, ERROR, f"error: {e}", seconds=time.time() - t0)
        seconds = time.time() - t0
        timed = (rows_work(lines) or {}).get("timed")
        by = exp.by or plan.by  # the summary table, by the expectation's column (else block's)
        df = frame_from_results(lines, plan.spec.vary, by_column(plan.data, ens, by, plan.label))
        detail = audit_report(ens, replace(plan, by=by), lines, seconds)
        out = audit_outcome(plan.name, exp, df, plan.spec.vary, seconds, detail)
        if timed:  # a stage of a row's query the work budget does not reach
            out.message += f" (timed: {'; '.join(timed)})"
        if folder is not None:
            bounds = rows_bounds or {}
            certified = _row_certificates(sf, plan, lines, folder, timeout, memory_mb, bounds)
            out.certificate = certified
    return out


def _row_certificates(
    sf: SensFile, plan: AuditPlan, lines, folder: Path, timeout, memory_mb, bounds: dict
):
    """An audit block's rows that do not flip, certified (``_audit_outcome``): the line
    saying how many, where."""
    from ..questions.audit_certificates import certified_text, certify_rows, rows_folder

    where = rows_folder(folder, plan.name)
    budget = timeout if timeout is not None else plan.run.timeout_per_row
    X = plan.data.X
    ens = sf.ensemble
    work = plan.run.work_per_row  # the rows' work budget ends their certificates' search
    outcome = certify_rows(
        ens, plan.spec, X, lines, where, sf.model_path, budget, memory_mb, **bounds, work=work
    )
    return certified_text(outcome, where)


PROVEN_KINDS = ("insensitive", "max_gap")  # expectations an "insensitive" answer passes


def exp_proven(out: Outcome) -> bool:
    """Whether a pass rests on a proof of "insensitive" (which a certificate can carry)."""
    return out.expectation.kind in PROVEN_KINDS


def certificate_name(name: str) -> str:
    """A query's name as a file name (a sweep's SWEEP/FEATURE has a slash)."""
    return re.sub(r"[^A-Za-z0-9_.+@-]+", "_", name) + ".json"


def _certificate(sf: SensFile, q: Query, exp: Expectation, res, folder: Path) -> str:
    """Certify an insensitive answer (its proof record says so); the file written and
    verified, or why there is none."""
    path = folder / certificate_name(q.name)
    asked = asked_query(sf.ensemble, q, exp)
    done = certify_answer(sf.ensemble, asked, res, path, sf.model_path, q.plan.timeout)
    return str(path) if done.verified else done.message
