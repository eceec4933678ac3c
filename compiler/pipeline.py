"""Compile a query, solve it on a backend in a worker, map the answer back, replay it.

    ensemble + query --encode--> Problem --passes--> --backend reductions--> worker
    result <-- replay check <-- invert <-- values

"insensitive" is said only when the backend proves the (soundly relaxed) problem
infeasible. A candidate pair that the library's predict rejects is excluded with a cut
on its leaves (every input reaching those leaves scores the same) and the search goes
on; a disagreement between the IR and the library is an error, never a verdict.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..backends.base import ERROR as S_ERROR
from ..backends.base import INFEASIBLE, SolveOptions
from ..backends.registry import get_info
from .encode import Encoding, encode
from .ensemble import Ensemble
from .heuristic import find_witness
from .invert import Witness, invert, values_for_pair, witness_from_pair
from .ir import Linear, check_constraint
from .passes import Chain, Compiled, passes_for
from .passes.feature_constraints import constraint_violations
from .query import Query
from .replay import condition_slack, meets, predicted_class
from .result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result

MAX_CUTS = 50
HEURISTIC_SECONDS = 100.0  # backstop: at most this long (and 20% of the limit) before the solver
# row-tree evaluations per leaf of the model (~10-40 s on a 500-tree model when nothing is
# found). Ten times the earlier 50: side by side on 70 sampled full-tier queries it found
# the pair of 35 of 40 queries CP-SAT had answered (17 before), PAR2 2.07x lower on those,
# 0.78x on insensitive ones (docs/benchmarks.md, "Heuristic effort")
HEURISTIC_WORK_PER_LEAF = 500


def heuristic_work(ens: Ensemble) -> int:
    """The heuristic's effort bound in row-tree evaluations: it grows with the model, so
    tiny models go straight to the solver, and it keeps answers reproducible under load."""
    return HEURISTIC_WORK_PER_LEAF * ens.n_leaves() + 2000


def heuristic_bounds(ens: Ensemble, q: Query, time_left: float) -> tuple[int, float]:
    """(work, seconds) for one heuristic run: the work bound decides, scaled by the query's
    ``heuristic_effort``; the time bound is only a backstop, and at most 20 % of the time
    left."""
    effort = float(_option(q, "heuristic_effort", 1.0))
    return (
        int(heuristic_work(ens) * effort),
        min(HEURISTIC_SECONDS * effort, 0.2 * max(0.0, time_left)),
    )


def _option(q: Query, key: str, default):
    return dict(q.options).get(key, default)


@dataclass
class CompiledQuery:
    compiled: Compiled  # after the solver-agnostic passes
    chain: Chain
    inverse: object
    compile_time: float
    data: object = None  # the query's Dataset (frontends/data.py) when it names data
    data_stats: dict | None = None

    @property
    def encoding(self) -> Encoding:
        return self.compiled.encoding


def compile_query(ens: Ensemble, q: Query, progress: bool = False) -> CompiledQuery:
    from .passes.data_aware import data_passes

    t0 = time.time()
    data = _dataset(ens, q)
    problem, enc = encode(ens, q)
    dstats: dict = {}
    chain = Chain(passes_for(q.passes, data_passes(ens, q, data, dstats, progress=progress)))
    compiled, inverse = chain.apply(Compiled(problem, enc))
    return CompiledQuery(compiled, chain, inverse, time.time() - t0, data, dstats)


def _dataset(ens: Ensemble, q: Query):
    """The Dataset the query names (option ``data``: a path, DataFrame or Dataset)."""
    if _option(q, "data", None) is None:
        return None
    from ..frontends.data import dataset_for

    return dataset_for(ens, q)


def for_backend(cq: CompiledQuery, backend: str) -> tuple[Compiled, Chain, object]:
    info = get_info(backend)
    chain = Chain(info.reductions())
    compiled, inv = chain.apply(cq.compiled)
    return compiled, chain, inv


def _witness_dict(ens: Ensemble, w: Witness) -> dict:
    names = ens.feature_names

    def show(f: int, v: float):
        feat = ens.features[f]
        if v != v:  # NaN: a missing value
            return None
        if (
            feat.kind == "categorical"
            and feat.categories
            and float(v).is_integer()
            and 0 <= int(v) < len(feat.categories)
        ):
            return feat.categories[int(v)]
        if feat.integral:
            return int(v)
        return float(v)

    return {
        "x1": {names[f]: show(f, w.x1[f]) for f in range(ens.n_features)},
        "x2": {names[f]: show(f, w.x2[f]) for f in range(ens.n_features)},
    }


def _cut(enc: Encoding, w: Witness, copy: int) -> Linear:
    vs = tuple(enc.leaves[copy][ti][int(n)] for ti, n in enumerate(w.leaves[copy]))
    return Linear(vs, (1.0,) * len(vs), "<=", float(len(vs) - 1), ("cut", copy))


def solve_query(
    ens: Ensemble,
    q: Query,
    *,
    compiled: CompiledQuery | None = None,
    deadline: float | None = None,
    memory_mb: int | None = None,
    log: bool = False,
    prefer=None,
) -> Result:
    """Answer one query; the result records what was asked (``stats["asked"]``)."""
    res = _solve(
        ens, q, compiled=compiled, deadline=deadline, memory_mb=memory_mb, log=log, prefer=prefer
    )
    res.stats["asked"] = q.asked()
    return res


def _solve(
    ens: Ensemble,
    q: Query,
    *,
    compiled: CompiledQuery | None,
    deadline: float | None,
    memory_mb: int | None,
    log: bool,
    prefer,
) -> Result:
    if q.backend == "race" or q.backend.startswith("race:"):
        from .race import solve_race

        return solve_race(
            ens, q, None, deadline, memory_mb, compiled=compiled, log=log, prefer=prefer
        )
    from ..backends.worker import worker_for

    t_start = time.time()
    deadline = deadline if deadline is not None else t_start + q.timeout
    res = Result(
        query=q.label,
        status=UNKNOWN,
        backend=q.backend,
        features=[],
        gap=q.gap.value,
        gap_kind=q.gap.kind,
        model=ens.source,
        passes=sorted(q.passes),
        classes=list(q.classes) if q.classes else None,
    )
    cq = compiled or compile_query(ens, q, progress=log or bool(_option(q, "progress", False)))
    enc = cq.encoding
    data = cq.data if cq.data is not None else _dataset(ens, q)
    if data is not None and prefer is None:
        prefer = data.prefer()  # realistic witnesses: values seen in the data
    if cq.data_stats:
        res.stats.update(cq.data_stats)
    res.features = [ens.feature_names[f] for f in sorted(enc.varying)]
    res.time["compile"] = time.time() - t_start
    res.stats.update(cq.compiled.problem.stats())
    res.stats.update(enc.stats)
    res.stats["relax"] = enc.relax
    first = q.data_aware == "none"  # data-aware: no heuristic (it knows nothing of the data)
    hint = None
    heuristic_pair = None
    fallback = None  # data-aware: a pair that meets the gap, if the optimizer returns none
    solve_time = 0.0
    # the heuristic knows nothing of the query's bounds / relations on the inputs; it runs
    # before the backend's reductions, which only a query left to the solver needs
    if _option(q, "heuristic", True) and first and not (q.bounds or q.relations):
        t_h = time.time()
        work, budget = heuristic_bounds(ens, q, deadline - t_h)
        found = find_witness(enc, budget, seed=q.seed, margin=2 * enc.relax, work=work)
        res.stats["heuristic_time"] = time.time() - t_h
        res.stats["heuristic_work"] = work
        if found is not None:
            x1, x2, ok = found
            if ok:
                w = witness_from_pair(enc, x1, x2)
                if prefer:
                    w = _with_preferred(enc, w, prefer)
                verdict = _check_pair(ens, q, enc, w)
                if verdict[0] == "ok":
                    _accept(res, ens, verdict, found_by="heuristic")
                    if data is not None:
                        _measure(res, ens, enc, data)
                    res.time["solve"] = time.time() - t_h
                    res.time["total"] = time.time() - t_start
                    return res
            heuristic_pair = (x1, x2)
        solve_time += time.time() - t_h
    t_b = time.time()
    bcompiled, bchain, binv = for_backend(cq, q.backend)
    res.time["compile"] += time.time() - t_b
    problem = bcompiled.problem
    res.stats.update(problem.stats())
    if problem.note("scaling_error") is not None:
        res.stats["scaling_error"] = problem.note("scaling_error")
    # an "optimize" objective (the data-aware utility) is solved to the best point found
    # within the time limit; a "guide" objective stops at the first feasible point
    stop_first = problem.objective is None or problem.objective.role != "optimize"
    if heuristic_pair is not None:
        hint = values_for_pair(enc, *heuristic_pair, problem.n_vars)
    elif (
        _option(q, "heuristic", True)
        and not first
        and data is not None
        and not (q.bounds or q.relations)
    ):
        # data-aware: the heuristic, started from data rows, only gives the solver a
        # starting point (its pair knows nothing of the utility or the clauses)
        t_h = time.time()
        rows = np.random.default_rng(q.seed).permutation(data.n_rows)[:200]
        starts = np.where(np.isnan(data.X[rows]), 0.0, data.X[rows])
        work, budget = heuristic_bounds(ens, q, deadline - t_h)
        # a few runs from different rows; the pair best for the data-aware objective wins
        # (fewest violated cavity clauses, then the highest utility)
        data_cons = [c for c in problem.constraints if _data_tag(c)]
        obj = problem.objective if not stop_first else None

        def score(v):
            viol = sum(1 for c in data_cons if not check_constraint(c, v))
            return (
                -viol,
                sum(k * v[i] for i, k in zip(obj.vars, obj.coefs)) if obj is not None else 0.0,
            )

        best = None
        runs = 4
        for k in range(runs):
            found = find_witness(
                enc,
                budget / runs,
                seed=q.seed + k,
                starts=starts[k::runs],
                margin=2 * enc.relax,
                work=work // runs,
            )
            if found is None:
                continue
            v = values_for_pair(enc, found[0], found[1], problem.n_vars)
            key = (bool(found[2]),) + score(v)
            if best is None or key > best[0]:
                best = (key, found, v)
        if best is not None:
            hint = best[2]
            res.stats["hint_meets_gap"] = bool(best[1][2])
            if best[1][2]:
                fallback = best[1]
        res.stats["heuristic_time"] = time.time() - t_h
        solve_time += time.time() - t_h
    worker = worker_for(q.backend, memory_mb)
    cuts = 0
    while True:
        if time.time() >= deadline:
            res.status, res.message = UNKNOWN, "time limit reached"
            break
        # optimizing runs to the limit: stop it early enough that its best point comes back
        # before the worker's hard kill at the deadline
        sdl = (
            deadline
            if stop_first
            else deadline - min(10.0, 0.15 * max(0.0, deadline - time.time()))
        )
        opts = SolveOptions(
            deadline=sdl,
            threads=q.threads,
            seed=q.seed,
            first_solution=stop_first,
            log=log,
            memory_mb=memory_mb,
            hint=hint,
            params=tuple(_option(q, "solver_params", ())),
        )
        sol = worker.solve(problem, opts)
        solve_time += sol.time + sol.build_time
        if sol.stats.get("search"):  # which search of the backend's schedule answered
            res.stats["search"] = sol.stats["search"]
        if sol.status == INFEASIBLE and problem.note("data_restricted"):
            # the data's restrictions (cavity clauses, forbidden intervals) leave no pair:
            # drop them and search the whole space; "insensitive" is never based on data
            problem = replace(
                problem,
                constraints=tuple(c for c in problem.constraints if not _data_tag(c)),
                notes=tuple((k, v) for k, v in problem.notes if k != "data_restricted"),
            )
            res.stats["data_restrictions_dropped"] = True
            continue
        if sol.status == INFEASIBLE:
            res.status = INSENSITIVE
            res.message = "proved: no pair meets the gap" + (
                f" (after excluding {cuts} near-miss pairs)" if cuts else ""
            )
            break
        if sol.status == S_ERROR:
            res.status, res.error = ERROR, sol.message or "solver error"
            if sol.stats.get("traceback"):
                res.stats["solver_traceback"] = sol.stats["traceback"]
            break
        if not sol.has_point:
            res.status, res.message = UNKNOWN, sol.message or "no answer within the time limit"
            if fallback is not None:
                w = _with_preferred(
                    enc, witness_from_pair(enc, fallback[0], fallback[1]), prefer or {}
                )
                verdict = _check_pair(ens, q, enc, w)
                if verdict[0] == "ok":
                    _accept(res, ens, verdict, found_by="heuristic-from-data")
                    res.message = (
                        "the solver returned no point in time: the pair the heuristic found "
                        "from data rows (the best of its runs for the data-aware objective)"
                    )
            break
        values = bchain.invert(sol.values, binv)
        values = cq.chain.invert(values, cq.inverse)
        verdict = _check_candidate(ens, q, enc, values, prefer)
        if verdict[0] == "ok":
            _accept(res, ens, verdict, found_by=q.backend)
            scale = problem.note("objective_scale") or 1.0
            res.stats["objective"] = None if sol.objective is None else sol.objective / scale
            res.stats["solver_status"] = sol.status  # "optimal" or "feasible" (best found in time)
            if cuts:
                res.message = f"found after excluding {cuts} near-miss pairs"
            break
        if verdict[0] == "error":
            res.status, res.error = ERROR, verdict[1]
            break
        # a near miss: exclude the failing copy's leaves and search on
        cuts += 1
        if cuts > MAX_CUTS:
            res.status = UNKNOWN
            res.message = (
                f"gave up after excluding {MAX_CUTS} near-miss pairs (rounding band too dense)"
            )
            break
        problem = problem.with_constraints([_cut(enc, verdict[1], c) for c in verdict[2]])
    res.stats["cuts"] = cuts
    if data is not None and res.status == SENSITIVE and getattr(res, "_witness", None) is not None:
        _measure(res, ens, enc, data)
    res.time["solve"] = solve_time
    res.time["total"] = time.time() - t_start
    return res


def _with_preferred(enc: Encoding, w: Witness, prefer) -> Witness:
    """The same intervals (so the same leaves), with values seen in the data where they fit."""
    from .domain import choose_value

    ens = enc.ensemble
    xs = [np.array(w.x1, dtype=float), np.array(w.x2, dtype=float)]
    for f, dom in enc.domains.items():
        pf = prefer.get(f)
        if pf is None or dom.codes is not None:
            continue
        for c in (0, 1) if f in enc.varying else (0,):
            j = w.intervals[c].get(f, -1)
            if 0 <= j < len(dom.reps) and dom.reps[j] is not None and xs[c][f] == xs[c][f]:
                xs[c][f] = choose_value(ens, ens.features[f], dom, j, pf)
        if f not in enc.varying:
            xs[1][f] = xs[0][f]
    return Witness(xs[0], xs[1], w.intervals, w.leaves)


def _data_tag(c) -> bool:
    from .passes.data_aware import DATA_TAGS

    tag = getattr(c, "tag", ())
    return bool(tag) and tag[0] in DATA_TAGS


def _measure(res: Result, ens: Ensemble, enc: Encoding, data) -> None:
    """Distance of the witness's region to the data, and the nearest row (SPEC 6)."""
    from .distance import distance_to_data

    w = res._witness
    lo, rng = data.ranges()
    dist, i, _ = distance_to_data(ens, w.leaves, enc.varying, data.X, rng)
    res.distance = dist
    row = {}
    for f, name in enumerate(ens.feature_names):
        v = float(data.X[i, f])
        feat = ens.features[f]
        if v != v:
            row[name] = None
        elif (
            feat.kind == "categorical"
            and feat.categories
            and v.is_integer()
            and 0 <= int(v) < len(feat.categories)
        ):
            row[name] = feat.categories[int(v)]
        else:
            row[name] = int(v) if feat.integral and v.is_integer() else v
    res.stats["nearest_row"] = {"index": i, "values": row}


def _accept(res: Result, ens: Ensemble, verdict, found_by: str) -> None:
    _, w, outs = verdict
    res.status = SENSITIVE
    res.validated = True
    res.witness = _witness_dict(ens, w)
    res.outputs = outs
    res.stats["found_by"] = found_by
    res._witness = w  # for callers that want arrays (not serialised)


def _check_candidate(ens: Ensemble, q: Query, enc: Encoding, values: np.ndarray, prefer):
    try:
        w = invert(enc, values, prefer)
    except ValueError as e:
        return ("error", f"cannot map the solution back to inputs: {e}")
    broken = constraint_violations(ens, q, w.x1, w.x2)
    if broken:
        return (
            "error",
            "internal: the witness breaks the query's constraints: " + "; ".join(broken),
        )
    X = np.stack([w.x1, w.x2])
    routed = ens.leaf_indices(X)
    for copy in (0, 1):
        if not np.array_equal(routed[copy], w.leaves[copy]):
            bad = int(np.flatnonzero(routed[copy] != w.leaves[copy])[0])
            return (
                "error",
                f"internal: x{copy + 1} reaches leaf {routed[copy][bad]} of tree {bad}, "
                f"the solver chose leaf {w.leaves[copy][bad]}",
            )
    return _check_pair(ens, q, enc, w)


# how far the library's probabilities and treesens' may be apart on a near-miss pair
# (float32 accumulation over thousands of trees stays orders of magnitude below this)
PROBA_AGREEMENT = 1e-3


def _check_pair(ens: Ensemble, q: Query, enc: Encoding, w: Witness):
    X = np.stack([w.x1, w.x2])
    ir_raw = ens.raw(X)
    ir_proba = ens.proba(X)
    rep = ens.replayer
    if rep is not None:
        lib_proba = np.asarray(rep.predict_proba(X), dtype=np.float64)
        lib_raw = np.asarray(rep.predict_raw(X), dtype=np.float64)
    else:
        lib_proba, lib_raw = ir_proba, ir_raw
    c_pred = predicted_class(lib_proba[0])
    lib_ok = [
        meets(ens, q, lib_proba[0], lib_raw[0], 0),
        meets(ens, q, lib_proba[1], lib_raw[1], 1, c_pred),
    ]
    outs = {"x1": lib_proba[0].tolist(), "x2": lib_proba[1].tolist()}
    if all(lib_ok):
        return ("ok", w, outs)
    failing = [c for c in (0, 1) if not lib_ok[c]]
    ir_ok = [meets(ens, q, ir_proba[c], ir_raw[c], c, predicted_class(ir_proba[0])) for c in (0, 1)]
    for c in failing:
        slack = condition_slack(enc, ir_raw[c], c)
        # a near-miss is a pair on the gap's boundary, where treesens' exact arithmetic and
        # the library's float32 sums round differently; cutting it is sound only if the two
        # agree on the scores. If they do not, treesens models the library wrongly: an
        # error, never a cut (a cut could then exclude valid pairs and fake "insensitive").
        apart = float(np.max(np.abs(lib_proba[c] - ir_proba[c])))
        if (ir_ok[c] and slack > 4 * enc.relax + 1e-9) or apart > PROBA_AGREEMENT:
            return (
                "error",
                f"the library's predict disagrees with treesens' model of it on x{c + 1}: "
                f"library {lib_proba[c].tolist()}, treesens {ir_proba[c].tolist()}",
            )
    return ("near-miss", w, failing)
