"""The heuristic stages: a pair search before the solver, and (data-aware) a hint from
data rows.

The heuristic knows nothing of the query's bounds on the inputs: a query whose bounds
hold for both inputs alike (compiler/bounds_as_domains.py) is searched over the model
whose features are declared that narrowly, as the max gap's seed is, and its pair is
replayed and checked against the bounds; a query with a bound on one input of a varied
feature is not searched. Its ascent meets relations between the inputs (``where x1.age <=
x2.age``: heuristic.py), so a check with relations is searched as one without (over the
narrowed model where it has bounds too, which keeps the relations), and its pair, read
back with the query's relations, is reported only where it meets them. It runs before
the backend's reductions, which only a query left to the solver needs.
"""

from __future__ import annotations

import time

import numpy as np

from ..answers.accept import accept, with_preferred
from ..answers.context import SolveContext
from ..answers.verdict import Accepted, check_pair
from ..compiler.bounds_as_domains import bounds_as_domains
from ..compiler.encode import Encoding
from ..compiler.ensemble import Ensemble
from ..compiler.invert import values_for_pair, witness_from_pair
from ..compiler.ir import Problem, check_constraint
from ..compiler.passes.feature_constraints import constraint_violations
from ..compiler.query import Query
from .heuristic import find_witness
from .pair_scope import pair_encoding

HEURISTIC_SECONDS = 100.0  # backstop: at most this long (and 20% of the limit) before the solver
# row-tree evaluations per leaf of the model (docs/benchmarks.md, "Heuristic effort")
HEURISTIC_WORK_PER_LEAF = 500
DATA_STARTS = 200  # data rows the data-aware heuristic starts from
DATA_RUNS = 4  # its runs, each from its share of those rows


def heuristic_work(ens: Ensemble) -> int:
    """The heuristic's effort bound in row-tree evaluations: it grows with the model, so
    tiny models go straight to the solver, and it keeps answers reproducible under load."""
    return HEURISTIC_WORK_PER_LEAF * ens.n_leaves() + 2000


def heuristic_bounds(ens: Ensemble, q: Query, time_left: float) -> tuple[int, float]:
    """(work, seconds) for one heuristic run: the work bound decides, scaled by the query's
    ``heuristic_effort``; the time bound is only a backstop, and at most 20 % of the time
    left; under a work budget (``Plan.work``) the time limit itself."""
    effort = float(q.plan.options.value("heuristic_effort"))
    if q.plan.work is not None:  # a work budget: the work bound alone, the limit a net
        return int(heuristic_work(ens) * effort), max(0.0, time_left)
    return (
        int(heuristic_work(ens) * effort),
        min(HEURISTIC_SECONDS * effort, 0.2 * max(0.0, time_left)),
    )


def _allowed(q: Query) -> bool:
    """Whether a data-aware query's heuristic from data rows runs (its hint): not under
    bounds, which its ascent over the declared domains knows nothing of (its pairs and
    hint would lie outside them; its pair over all inputs searches the model they narrow,
    ``pair_over_all_inputs``); under relations between the inputs, which the ascent
    meets, the fallback's pair is offered only where it meets them (check_pair) and the
    solver takes its hint as a hint."""
    return bool(q.plan.options.value("heuristic")) and not q.bounds


def searched_encoding(ctx: SolveContext) -> Encoding | None:
    """The encoding the heuristic searches: the query's, or a bounded query's over the
    model its bounds narrow (bounds_as_domains: each held for both inputs alike); None
    where it does not search (turned off, a bound on one input). Relations between the
    inputs are the query's own, which the ascent meets."""
    q = ctx.q
    if not bool(q.plan.options.value("heuristic")):
        return None
    if not q.bounds:
        return ctx.enc
    narrowed = bounds_as_domains(ctx.ens, q, relations=True)
    return None if narrowed is None else pair_encoding(*narrowed)


def heuristic_search(ctx: SolveContext) -> bool:
    """Look for a pair before the solver (not for data-aware queries: the heuristic knows
    nothing of the data). True when it answered the query; a pair short of the gap is
    kept as the solver's hint (not a bounded query's, whose pair is the narrowed
    model's). Not again where it ran before the solve (``ctx.heuristic_ran``: a race's)."""
    q = ctx.q
    if ctx.heuristic_ran:
        return False
    enc = searched_encoding(ctx) if q.plan.data_aware == "none" else None
    if enc is None:
        return False
    t_h = time.time()
    verdict, found = _heuristic_pair(ctx, q, enc, ctx.enc)
    if verdict is not None:
        accept(ctx, verdict, found_by="heuristic")
        ctx.solve_time = time.time() - t_h
        return True
    if found is not None and enc is ctx.enc:
        ctx.heuristic_pair = found
    ctx.solve_time += time.time() - t_h
    return False


def pair_over_all_inputs(ctx: SolveContext, enc: Encoding) -> Accepted | None:
    """A data-aware query's: the heuristic on ``enc``, the same question over all inputs
    (search/boxes.py, ``proof_only``); its replayed pair, or None. A pair there means the
    query is sensitive, and no proof needs to be looked for. Under bounds the ascent
    searches the model they narrow (bounds_as_domains: each held for both inputs alike,
    as a bound on a feature the inputs share is), its pair read and checked by ``enc``;
    a varied feature bounded on one input otherwise than on the other keeps it off."""
    if not bool(ctx.q.plan.options.value("heuristic")):
        return None
    searched = enc
    if enc.query.bounds:
        narrowed = bounds_as_domains(ctx.ens, enc.query, relations=True)
        if narrowed is None:
            return None
        searched = pair_encoding(*narrowed)
    t_h = time.time()
    verdict, _ = _heuristic_pair(ctx, enc.query, searched, enc)
    ctx.solve_time += time.time() - t_h
    return verdict


def _heuristic_pair(
    ctx: SolveContext, q: Query, enc: Encoding, read_by: Encoding | None = None
) -> tuple[Accepted | None, tuple | None]:
    """One heuristic run for ``q`` on ``enc`` within its bounds: the pair it replayed,
    and the pair it found (short of the gap, or rejected by the replay). ``read_by``:
    the encoding the pair is read and replayed by (default ``enc``; the query's own,
    for a pair found over the model its bounds narrow), its bounds checked."""
    read_by = enc if read_by is None else read_by
    t_h = time.time()
    work, budget = heuristic_bounds(ctx.ens, q, ctx.deadline - t_h)
    found = find_witness(enc, budget, seed=q.plan.seed, margin=2 * enc.relax, work=work)
    ctx.stats["heuristic_time"] = time.time() - t_h
    ctx.stats["heuristic_work"] = work
    if found is None:
        return None, None
    x1, x2, ok = found
    if ok:
        w = witness_from_pair(enc, x1, x2)
        if ctx.prefer:
            preferred = with_preferred(enc, w, ctx.prefer)  # each input's own data values
            if not (q.relations and constraint_violations(ctx.ens, q, preferred.x1, preferred.x2)):
                w = preferred
        if read_by is not enc:  # found on the narrowed model: the query's own reading
            w = witness_from_pair(read_by, w.x1, w.x2)
        if (q.bounds or q.relations) and constraint_violations(ctx.ens, q, w.x1, w.x2):
            return None, (x1, x2)  # outside the query's bounds or relations: never reported
        verdict = check_pair(ctx.ens, q, read_by, w)
        if isinstance(verdict, Accepted):
            return verdict, (x1, x2)
    return None, (x1, x2)


def data_hint(ctx: SolveContext, problem: Problem, optimize: bool) -> None:
    """Data-aware: the heuristic, started from data rows, gives the solver a starting
    point (its pair knows nothing of the utility or the clauses). Of a few runs from
    different rows the pair best for the data-aware objective wins (fewest violated soft
    rows, then the highest utility); one that meets the gap is kept as the fallback."""
    q, enc, data = ctx.q, ctx.enc, ctx.data
    if q.plan.data_aware == "none" or data is None or not _allowed(q):
        return
    t_h = time.time()
    rows = np.random.default_rng(q.plan.seed).permutation(data.n_rows)[:DATA_STARTS]
    starts = np.where(np.isnan(data.X[rows]), 0.0, data.X[rows])
    work, budget = heuristic_bounds(ctx.ens, q, ctx.deadline - t_h)
    soft = problem.soft_constraints
    obj = problem.objective if optimize else None

    def score(v) -> tuple:
        viol = sum(1 for c in soft if not check_constraint(c, v))
        utility = sum(k * v[i] for i, k in zip(obj.vars, obj.coefs)) if obj is not None else 0.0
        return (-viol, utility)

    best = None
    end = t_h + budget
    for k in range(DATA_RUNS):
        left = end - time.time()
        if left <= 0:
            break
        found = find_witness(
            enc,
            left / (DATA_RUNS - k),
            seed=q.plan.seed + k,
            starts=starts[k::DATA_RUNS],
            margin=2 * enc.relax,
            work=work // DATA_RUNS,
        )
        if found is None:
            continue
        v = values_for_pair(enc, found[0], found[1], problem.n_vars)
        key = (bool(found[2]),) + score(v)
        if best is None or key > best[0]:
            best = (key, found, v)
    if best is not None:
        ctx.hint = best[2]
        ctx.stats["hint_meets_gap"] = bool(best[1][2])
        if best[1][2]:
            ctx.fallback = (best[1][0], best[1][1])
    ctx.stats["heuristic_time"] = time.time() - t_h
    ctx.solve_time += time.time() - t_h
