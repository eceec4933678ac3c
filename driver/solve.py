"""Answer one query: the stages of the solve over one context.

    compile -> heuristic search -> box search (boxes.py, a first turn)
            -> backend reductions (+ data-aware hint)
            -> backend search (near-miss cuts, soft group dropped if infeasible),
               with the unfinished box search beside it (alongside.py)
            -> data-aware fallback -> distance to the data

"insensitive" is said only when the backend proves the (soundly relaxed) problem
infeasible, or the box search finds no box of the pair space that meets the (equally
relaxed) gap. A candidate pair that the library's predict rejects is excluded with a cut
on its leaves and the search goes on; a disagreement between the IR and the library is
an error, never a verdict.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..answers.accept import free_range_note, measure_distance, note_unseen_combinations
from ..answers.context import Pair, SolveContext, new_result
from ..answers.phrases import BEFORE_SEARCH, BEFORE_SEARCH_UNCOMPILED
from ..answers.result import SENSITIVE, Result, input_files, record_prover
from ..answers.stats import RACE_NOT_STARTED
from ..answers.work import (
    BOXES_AFTER,
    CLAUSES_TIMED,
    SOLVER_SHARE,
    Work,
    work_ended,
    work_refusal,
)
from ..backends.registry import search_method
from ..compiler.dataset import Dataset
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.kinds import kind_of, prepared
from ..compiler.query import Query
from ..compiler.readings import read_for
from ..search.heuristic_stage import data_hint, heuristic_search
from ..search.pair_scope import pair_encoding
from .data import dataset_for_query
from .race_spec import is_race, race_backends
from .solver_memory import refuse_solver_stage, solver_stage_over

if TYPE_CHECKING:
    from .compile import CompiledQuery

# The box search, the solver layer and the race are imported by the stage that first
# needs them (below): a query the heuristic answers loads none of them (the command
# line's start-up; tests/package/test_lazy_imports.py).


def solve_query(
    ens: Ensemble,
    q: Query,
    *,
    compiled: CompiledQuery | None = None,
    deadline: float | None = None,
    memory_mb: int | None = None,
    log: bool = False,
    prefer: Mapping[int, Sequence[float]] | None = None,
    data: Dataset | None = None,
    stop: threading.Event | None = None,
    tables_mb: float | None = None,
    after_heuristic: Pair | bool = False,
    note: Callable[[str], None] | None = None,
) -> Result:
    """Answer one query by ``deadline`` (default: its time limit from now; the question's
    runner, questions/ask.py, gives it). ``data``: the Dataset read from the path or
    DataFrame the query names (driver/data.py). A kind answered by a search over other
    questions (``max_gap``) is the runner's, not one solve's.
    ``stop``: set by a race when another backend has answered (a search method running
    in this process, such as the box search, then ends). ``memory_mb``: a memory limit
    given (the solver process's address space, and the box search's tables);
    ``tables_mb``: the limit the box search's tables are held to when none is given
    (the default limit, questions/memory.py). ``after_heuristic``: the heuristic ran
    before this solve (a race's, ``_race``), which does not run it again: True, or the
    pair it found short of the gap (the solver's hint). ``note``: a progress line, told
    where the box search's tables take seconds to build (in a race, once for all its
    backends).

    Interrupted (KeyboardInterrupt, or the CLI's SIGTERM / SIGHUP) while optimising with
    a replay-checked pair in hand, the exception carries the result so far as its
    ``partial_result`` attribute, and is raised on. A probability model is read as the
    query asks (compiler/readings.py)."""
    if kind_of(q).searched:
        raise InputError(
            f"a {q.kind_name} query is a search over checks, not one solve: ask it through "
            "treesens.check / questions.ask.answer (the CLI's and .sens's runner)"
        )
    if q.plan.work is not None and (why := work_refusal(q.plan.backend)) is not None:
        raise InputError(why)
    ens = read_for(ens, q)
    q = prepared(ens, q)
    limit_mb = memory_mb if memory_mb is not None else tables_mb
    if is_race(q.plan.backend):
        given = {"compiled": compiled, "log": log, "prefer": prefer, "data": data, "note": note}
        res = _race(ens, q, deadline, memory_mb, tables_mb, given)
    else:
        ctx = _start(ens, q, compiled, deadline, memory_mb, log, prefer, data, limit_mb)
        ctx.stop, ctx.tables_mb, ctx.note = stop, limit_mb, note
        if after_heuristic is not False:
            ctx.heuristic_ran = True
            ctx.heuristic_pair = None if after_heuristic is True else after_heuristic
        res = _solve(ctx)
    res.inputs = input_files(ens.inputs, q.plan.options.data)
    res.where = list(q.where) or None
    return record_prover(res)


def _race(ens: Ensemble, q: Query, deadline, memory_mb, tables_mb, given: dict) -> Result:
    """A race (driver/race.py), after the heuristic: it runs once, here, before any
    solver process starts, and its pair ends the race (``stats.winner`` "heuristic",
    every backend RACE_NOT_STARTED, ``backend`` the race asked); else the backends race,
    none running the heuristic again, its pair short of the gap their hint. In the race
    the heuristic, pure Python, would share the interpreter with the threads starting
    the solvers: about 0.5 s where it alone takes 0.05 s."""
    t_start = time.time()
    deadline = deadline if deadline is not None else q.plan.deadline(t_start)
    names = race_backends(q.plan.backend)
    limit_mb = memory_mb if memory_mb is not None else tables_mb
    first = q.planned(backend=names[0])
    args = (given["compiled"], deadline, memory_mb, given["log"], given["prefer"])
    ctx = _start(ens, first, *args, given["data"], limit_mb)
    if heuristic_search(ctx):
        res = _finish(ctx)
        res.backend = q.plan.backend
        res.stats["race"] = {b: RACE_NOT_STARTED for b in names}
        res.stats["winner"] = "heuristic"
        return res
    from .race import solve_race

    given["compiled"] = ctx.compiled_query  # None unless the context compiled it
    given["after_heuristic"] = ctx.heuristic_pair if ctx.heuristic_pair is not None else True
    res = solve_race(ens, q, solve_query, deadline, memory_mb, tables_mb=tables_mb, **given)
    for key in ("heuristic_time", "heuristic_work"):
        if key in ctx.stats:
            res.stats.setdefault(key, ctx.stats[key])
    res.time["total"] = time.time() - t_start
    return res


def _solve(ctx: SolveContext) -> Result:
    """The stages of the search over a context made by ``_start``."""
    try:
        if ctx.time_left() <= 0:  # loading and compiling took the whole time limit
            compiled = ctx.compiled_query is not None
            ctx.result.message = BEFORE_SEARCH if compiled else BEFORE_SEARCH_UNCOMPILED
        elif (method := search_method(ctx.q.plan.backend)) is not None:  # no solver
            if not heuristic_search(ctx):
                method.load().search_alone(ctx)
        elif not heuristic_search(ctx) and not _box_stage(ctx):
            if ctx.time_left() <= 0:  # the solver's compile alone can take minutes and GBs
                ctx.result.message = before_solver_stage(ctx.stats.get("box_search") or {})
            elif (why := _solver_stage_over_limit(ctx)) is not None:
                _without_solver(ctx, why)
            else:
                _solver_stage(ctx)
    except KeyboardInterrupt as e:
        if ctx.witness is not None:  # optimising: the best replay-checked pair so far
            e.partial_result = _finish(ctx)
        raise
    return _finish(ctx)


def before_solver_stage(box_stats: dict) -> str:
    """Why a query's time ran out before its solver's stage: the heuristic and the box
    search did not answer, or the box search's pair tables took the time (their build,
    which no work budget counts, on a model of many leaves: 28 CPU s for adult
    lgbm_t1000_l255's fnlwgt)."""
    if box_stats.get("ended_by") == "time":
        return f"time limit reached before the solver's stage: {box_stats['reason']}"
    return (
        "time limit reached before the solver's stage (the heuristic and the box search "
        "did not answer)"
    )


def _box_stage(ctx: SolveContext) -> bool:
    """The box search's first turn (search/boxes.py): True when it answered."""
    from ..search.boxes import box_stage

    return box_stage(ctx)


def _solver_stage_over_limit(ctx: SolveContext) -> str | None:
    """Why the solver stage's compile, not built yet, would pass the query's memory limit
    from what the process holds now (driver/solver_memory.py); None when it fits."""
    if ctx.compiled_query is not None:
        return None
    return solver_stage_over(ctx.ens, ctx.tables_mb, ctx.memory_mb is not None)


def _without_solver(ctx: SolveContext, why: str) -> None:
    """The solver stage skipped (``why``: its compile would pass the memory limit): the
    box search its first turn left unfinished goes on alone until the deadline; if
    nothing answers, the query stays unknown, saying why."""
    ctx.stats["solver_stage"] = "skipped: memory"
    boxes = None if ctx.work is None else ctx.work.left()
    if ctx.boxes is not None and ctx.boxes.run(ctx, ctx.deadline, boxes):
        return
    ctx.result.message = f"solver stage skipped: {why}"


def _solver_stage(ctx: SolveContext) -> None:
    """The backend's reductions and search, with the box search's rest beside it (under
    a work budget: after it, ``_solver_then_boxes``)."""
    from .alongside import backend_beside_boxes
    from .backend import reduce_for_backend

    bp = reduce_for_backend(ctx)
    data_hint(ctx, bp.problem, bp.optimize)
    if ctx.work is not None:
        _solver_then_boxes(ctx, bp)
    else:
        backend_beside_boxes(ctx, bp)
    ctx.stats["cuts"] = ctx.cuts


def _solver_then_boxes(ctx: SolveContext, bp) -> None:
    """Under a work budget the stages run one after the other, never beside each other
    (which answers first would be the clock's): the solver on its share of the work left,
    then the box search its first turn left unfinished on the rest."""
    from .alongside import proven
    from .backend import backend_search

    # all of it where no box search is left to go on after the solver
    after = ctx.boxes is not None and ctx.boxes.unfinished
    ctx.work.allow("solver", ctx.work.share(SOLVER_SHARE) if after else ctx.work.left())
    backend_search(ctx, bp)
    if proven(ctx.result) or ctx.boxes is None or ctx.result.status == "error":
        return
    if ctx.work.left() > 0 and ctx.boxes.run(ctx, ctx.deadline, ctx.work.left()):
        ctx.result.stats["beside"] = BOXES_AFTER


def _finish(ctx: SolveContext) -> Result:
    """The result with the pair's distance to the data (without data: a note that the
    pair's features range freely) and the times."""
    if ctx.data is not None and ctx.result.status == SENSITIVE and ctx.witness is not None:
        measure_distance(ctx)
        note_unseen_combinations(ctx)
    elif ctx.result.status == SENSITIVE and ctx.witness is not None and ctx.q.kind != "anchored":
        ctx.result.notes.append(free_range_note(ctx.ens))  # (an anchored x1 is a data row)
    ctx.result.time["solve"] = ctx.solve_time
    ctx.result.time["total"] = time.time() - ctx.t_start
    if ctx.work is not None:
        work_ended(ctx)
    return ctx.result


def _start(
    ens: Ensemble,
    q: Query,
    compiled: CompiledQuery | None,
    deadline: float | None,
    memory_mb: int | None,
    log: bool,
    prefer,
    given: Dataset | None = None,
    limit_mb: float | None = None,
) -> SolveContext:
    """Set up the context: compiled now (given, or a query with data it only measures
    against, with time left), or compiled when a stage first needs the Problem
    (``SolveContext.cq``): the heuristic and the box search read the encoding without it,
    and answer most queries. A compile now that would pass ``limit_mb`` (the memory limit,
    MB) is refused (SolverStageTooLarge)."""
    t_start = time.time()
    if deadline is None:
        deadline = q.plan.deadline(t_start)
    res = new_result(ens, q)
    progress = log or bool(q.plan.options.value("progress"))

    def compile_now(cq: CompiledQuery | None = None) -> CompiledQuery:
        t0 = time.time()
        if cq is None:
            from .compile import compile_query

            cq = compile_query(
                ens, q, progress=progress, prefer=prefer, deadline=deadline, data=given
            )
        if cq.data_stats:
            res.stats.update(cq.data_stats)
        res.time["compile"] = res.time.get("compile", 0.0) + time.time() - t0
        res.stats.update(cq.compiled.problem.stats())
        res.stats.update(cq.encoding.stats)
        return cq

    data = dataset_for_query(ens, q, given)
    # a data-aware query's box search (a proof over all inputs) comes before its
    # compile, which may learn the data's clauses for half the time left
    steered = data is not None and q.plan.data_aware != "none"
    # out of time already (the load took the limit): the search is skipped, so a compile
    # now (CatBoost's 1,000 trees: 7.8 s) would only delay the unknown; a stage that asks
    # for the Problem still gets it (SolveContext.cq)
    late = time.time() >= deadline
    lazy = steered or late or (data is None and q.plan.data_aware == "none")
    later = compiled is None and lazy
    light = pair_encoding(ens, q) if later else None
    if not later and compiled is None:
        refuse_solver_stage(ens, limit_mb, memory_mb is not None)
    cq = None if later else compile_now(compiled)
    enc = light if cq is None else cq.encoding
    if cq is not None and cq.data is not None:
        data = cq.data
    if data is not None and prefer is None:
        prefer = data.prefer()  # realistic witnesses: values seen in the data
    res.features = [ens.feature_names[f] for f in sorted(enc.varying)]
    res.time["compile"] = time.time() - t_start
    if light is not None:
        res.stats.update(trees=len(ens.trees), leaves=ens.n_leaves())
    res.stats["relax"] = enc.relax
    work = None if q.plan.work is None else Work(q.plan.work)
    if work is not None and q.plan.data_aware.uses_clauses:
        work.timed.append(CLAUSES_TIMED)
    return SolveContext(
        work=work,
        ens=ens,
        q=q,
        compiled_query=cq,
        result=res,
        deadline=deadline,
        t_start=t_start,
        data=data,
        prefer=prefer,
        log=log,
        memory_mb=memory_mb,
        light=light,
        compile_later=compile_now if later else None,
    )
