"""The audit's fallback for rows whose F has too many cell combinations to enumerate: one
solver query per row, of the anchored kind (compiler/kinds.py): x1 is the row itself,
x2 equal to it outside F must get another decision with the gap (a regressor: a
prediction at least delta from the row's). "Insensitive" is then a proof that no such x2
exists; a "sensitive" x2 is replayed once more against the row's decision.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import TYPE_CHECKING

import numpy as np

from ..answers.proof import BOX_SEARCH
from ..answers.result import ERROR, INSENSITIVE, SENSITIVE
from ..answers.work import SPENT, Work
from ..backends.registry import BOXES
from ..compiler.audit import (
    FLIPPABLE,
    MAX_CANDIDATES,
    NEAR_EDGE,
    UNKNOWN,
    FeatureCells,
    RowAnswers,
    feature_cells,
    flip_confidence,
    library_predict,
    values_and_changes,
)
from ..compiler.encode import resolve_features
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.kinds import can_move
from ..compiler.plan import Plan
from ..compiler.query import ANY, Query
from ..search.pair_boxes import tables_held
from ..search.proof_tree import RecordedProof, recording_proofs
from .ask import answer
from .audit_nearest import nearest_flip

if TYPE_CHECKING:
    from .audit import AuditSpec

NOT_FLIPPABLE_BY_SOLVER = "not flippable"
# the x2 of F's cells scored for a row's smallest change (those of least change, up to
# the change of the x2 its query found): a tenth of MAX_CANDIDATES, since each row here
# is scored alone (200,000 x2 were minutes a row on a 1,000-tree model)
SMALLEST_CANDIDATES = MAX_CANDIDATES // 10
# an unknown row's reason under a work budget per row (``solve_rows``)
WORK_WHY = "too many cells of F to enumerate; the row's work budget was spent"
SMALLEST_BATCH = 20_000  # x2 per predict call, the row's time checked between calls
_SLACK = 1e-9  # a change's rounding: sums of the same changes in another order
# per model, the cells of an audit's F (``_cells``): each accepted row reads them
_CELLS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# while an audit's rows are to be certified (``keeping_row_proofs``): the answers whose
# proof the box search recorded, by row (``proof_key``), for their certificates
_KEPT: ContextVar[dict | None] = ContextVar("treesens_row_proofs", default=None)
# the kept proofs' tables hold at most this many bytes in all; a row past it is
# certified by a search of its own, as one a solver answered
KEPT_BYTES = 512 * 2**20


@contextmanager
def keeping_row_proofs(on: bool = True) -> Iterator[None]:
    """Within this block, a row the box search proves not flippable (``solve_rows``, in
    this process) keeps its recorded proof, which the row's certificate is written from
    with no second search (``kept_answer``); ``on`` False: none kept."""
    token = _KEPT.set({"bytes": 0} if on else None)
    try:
        yield
    finally:
        _KEPT.reset(token)


def proof_key(spec: AuditSpec, r: np.ndarray, decision) -> tuple:
    """A row's question among an audit's: the audit's, the row's values and decision."""
    return (spec.label, tuple(spec.vary), np.asarray(r, float).tobytes(), float(decision))


def _keep(spec: AuditSpec, r: np.ndarray, decision, res) -> None:
    """Keep ``res`` (insensitive, its proof recorded) for the row's certificate, within
    KEPT_BYTES."""
    _keep_answer(proof_key(spec, r, decision), res)


def _keep_answer(key: tuple, res) -> None:
    kept = _KEPT.get()
    rec = res.box_proof
    if kept is None or not isinstance(rec, RecordedProof) or not rec.parts:
        return
    held = sum(tables_held(p.tables) for p in rec.parts)
    if kept["bytes"] + held > KEPT_BYTES:
        return
    kept["bytes"] += held
    kept[key] = res


def keeping() -> bool:
    """Whether this process keeps its rows' proofs (within ``keeping_row_proofs``)."""
    return _KEPT.get() is not None


def taken_proofs() -> dict:
    """The proofs kept so far (proof_key -> answer), taken out: a worker's block sends them
    back to the audit's process (``adopt_proofs``). They are data: the answer, its
    encoding, tables and recorded boxes."""
    kept = _KEPT.get()
    if kept is None:
        return {}
    out = {k: v for k, v in kept.items() if k != "bytes"}
    kept.clear()
    kept["bytes"] = 0
    return out


def adopt_proofs(proofs: dict) -> None:
    """Keep the proofs a worker's block sent back (``taken_proofs``) as this process's
    own, within KEPT_BYTES: its rows are then certified from them as from its own."""
    for key, res in proofs.items():
        _keep_answer(key, res)


def kept_answer(spec: AuditSpec, r: np.ndarray, decision):
    """The answer of a row the box search proved, its proof recorded, taken from what
    ``keeping_row_proofs`` keeps (None: not kept)."""
    kept = _KEPT.get()
    return None if kept is None else kept.pop(proof_key(spec, r, decision), None)


def row_query(
    ens: Ensemble, spec: AuditSpec, r: np.ndarray, decision, timeout: float, work=None
) -> Query:
    """The audit's anchored question of row r, whose "sensitive" answer holds an x2 that
    flips: the box search's first (search/anchored_boxes.py), then the solver's; a row
    with a missing value the box search's alone (a solver cannot pin x1 to NaN).
    ``work``: the row's work budget (answers/work.py; None: the clock decides)."""
    q = spec.question
    if not ens.is_regressor and ens.n_outputs > 1:
        q = q.with_(classes=(int(decision), q.classes[1] if q.classes else ANY))
    row = {"anchor": tuple(float(v) for v in r), "decision": float(decision)}
    plan = Plan(timeout=float(timeout), work=work)
    if np.isnan(r).any():
        plan = plan.with_(backend=BOXES)
    return Query.of(q.with_(params=row), plan)


def _witness_row(ens: Ensemble, w: dict, r: np.ndarray, spec: AuditSpec) -> np.ndarray:
    """The row r with F set to the witness's values (category names back to codes)."""
    x2 = r.copy()
    for f in resolve_features(ens, spec.vary):
        v = w[ens.feature_names[f]]
        cats = ens.features[f].categories or ()
        if isinstance(v, str):
            v = cats.index(v)
        x2[f] = math.nan if v is None else float(v)
    return x2


def _accept(
    ens: Ensemble,
    spec: AuditSpec,
    ans: RowAnswers,
    i: int,
    r: np.ndarray,
    x2,
    until: float,
    work: Work | None = None,
) -> bool:
    """Record x2 as row i's flip when the library's predict agrees that it flips: first
    with each feature of F at the admissible value of its cell nearest the row's (the
    same cells, so the same leaves: ``nearest_in_cells``), else as found; then the
    smallest change that flips in its place (``smallest_flip``, else the capped box
    search: audit_nearest.py) where that is proven by ``until`` (time.time()), else
    ``ans.unproven`` holds the change below which none flips. Under the row's ``work``
    budget the scoring is not timed (it is bounded: SMALLEST_CANDIDATES x2) and the capped
    search ends on the boxes it visits, spent on ``work``; ``until`` stays its safety net."""
    proba_of, raw_of = library_predict(ens)
    margin = spec.target.gap.kind == "margin"
    cells = _cells(ens, spec)
    for x in (nearest_in_cells(cells, r, x2), x2):
        p2 = np.asarray(proba_of(x[None, :]), float)
        r2 = np.asarray(raw_of(x[None, :]), float).reshape(1, -1) if margin else None
        if flip_confidence(ens, spec.target, ans.decision[i : i + 1], p2, r2)[0] >= 0:
            ans.status[i] = FLIPPABLE
            ans.x2[i] = x
            ans.p_x2[i] = p2[0]
            ans.change[i] = change_of(cells, r, x)  # an x2 that flips, not yet the smallest
            d = ans.decision[i]
            scoring = until if work is None else math.inf  # bounded: not timed under work
            best, low = smallest_flip(ens, spec, r, d, float(ans.change[i]), scoring), None
            if isinstance(best, float):  # too many to score: the capped box search
                q = row_query(ens, spec, r, d, max(0.0, until - time.time()))
                known = (ans.x2[i].copy(), ans.p_x2[i].copy(), float(ans.change[i]))
                row = (r, d, cells, change_of)
                best, low = nearest_flip(ens, spec, q, row, known, best, until, work)
            ans.x2[i], ans.p_x2[i], ans.change[i] = best
            if low is not None:  # none flips below it; the smallest not proven
                ans.unproven[i] = low
            return True
    return False  # the library disagrees with the search's pair: left unknown


def smallest_flip(ens: Ensemble, spec: AuditSpec, r: np.ndarray, decision, bound: float, until):
    """The x2 that flips row r with the smallest change on F, as the enumeration
    (compiler/audit.audit_rows) picks it, among the x2 of F's cells (each feature at its
    cell's value nearest the row's) whose change is at most ``bound``, the change of an
    x2 known to flip: (x2, its outputs, its change). When they are more than
    SMALLEST_CANDIDATES, those up to the largest change that keeps them within it are
    scored: a flip among them is the smallest too. Else a float: the change below which
    no x2 flips (0 when ``until``, time.time(), passed first), the smallest not proven."""
    cells = _cells(ens, spec)
    upto = _largest_within(cells, r, bound)
    within = _within(cells, r, upto, SMALLEST_CANDIDATES)
    if within is None:  # not even the row's own x2 (a limit below 1)
        return 0.0
    vals, change = within
    proba_of, raw_of = library_predict(ens)
    margin = spec.target.gap.kind == "margin"
    cand = np.repeat(r[None, :], len(vals), axis=0)
    cand[:, [c.feature for c in cells]] = vals
    conf, P = np.full(len(cand), -np.inf), None
    for s in range(0, len(cand), SMALLEST_BATCH):
        if time.time() > until:
            return 0.0
        part = cand[s : s + SMALLEST_BATCH]
        p = np.asarray(proba_of(part), float)
        rc = np.asarray(raw_of(part), float).reshape(len(part), -1) if margin else None
        d = np.full(len(part), decision)
        conf[s : s + len(part)] = flip_confidence(ens, spec.target, d, p, rc)
        P = p if P is None else np.concatenate([P, p])
    if not (conf >= 0).any():  # none flips up to ``upto``: none below it, less the
        # rounding and what a cell's shown value adds to its end (compiler/audit.NEAR_EDGE)
        return max(0.0, upto - _SLACK * max(1.0, upto) - len(cells) * NEAR_EDGE)
    j = int(np.lexsort((-conf, np.where(conf >= 0, change, np.inf)))[0])
    return cand[j], P[j], float(change[j])


def _largest_within(cells: list[FeatureCells], r: np.ndarray, bound: float) -> float:
    """``bound`` when at most SMALLEST_CANDIDATES x2 of F's cells have a change up to it,
    else the largest change (within a thousandth of ``bound``, by bisection) that keeps
    them within it; the row's own x2 (change 0) alone at least."""
    if _within(cells, r, bound, SMALLEST_CANDIDATES) is not None:
        return bound
    lo, hi = 0.0, bound
    while hi - lo > 1e-3 * bound:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _within(cells, r, mid, SMALLEST_CANDIDATES) else (lo, mid)
    return lo


def _within(cells: list[FeatureCells], r: np.ndarray, bound: float, limit: int):
    """The x2 of F's cells whose change from row r is at most ``bound`` (a rounding's
    worth above it): (k, |F|) values and (k,) changes, summed as the enumeration sums
    them; None when they are more than ``limit``."""
    top = bound + _SLACK * max(1.0, bound)
    vals, change = np.zeros((1, 0)), np.zeros(1)
    for c in cells:
        v, ch = values_and_changes(c, np.array([r[c.feature]], dtype=float))
        order = np.argsort(ch[0], kind="stable")
        v, ch = v[0, order], ch[0, order]
        counts = np.searchsorted(ch, top - change, side="right")
        total = int(counts.sum())
        if total > limit:
            return None
        at = np.repeat(np.arange(len(change)), counts)
        j = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        vals = np.concatenate([vals[at], v[j][:, None]], axis=1)
        change = change[at] + ch[j]
    return vals, change


def _cells(ens: Ensemble, spec: AuditSpec) -> list[FeatureCells]:
    """The cells of F's features (compiler/audit.py), made once per model and audit."""
    key = (spec.vary, tuple(sorted(spec.scales.items())))
    kept = _CELLS.setdefault(ens, {})
    if key not in kept:
        F = sorted(resolve_features(ens, spec.vary))
        kept[key] = [feature_cells(ens, f, spec.scales.get(f, 1.0)) for f in F]
    return kept[key]


def nearest_in_cells(cells: list[FeatureCells], r: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """x2 with each feature of F at the value its cell's x2 takes in the enumeration
    (compiler/audit.py: the row's own when it lies in the cell, else the shortest decimal
    near the cell's end nearest it); a value in no cell kept as it is."""
    out = np.array(x2, dtype=float)
    for c in cells:
        v = float(x2[c.feature])
        inside = np.isnan(c.lo) if math.isnan(v) else (c.lo <= v) & (v <= c.hi)
        if inside.any():
            vals, _ = values_and_changes(c, np.array([r[c.feature]], dtype=float))
            out[c.feature] = vals[0, int(np.argmax(inside))]
    return out


def change_of(cells: list[FeatureCells], r: np.ndarray, x2: np.ndarray) -> float:
    """x2's change from the row on F, as the enumeration measures it: each feature's
    |x2 - r| over its scale, a changed category or a change to or from missing 1."""
    total = 0.0
    for c in cells:
        a, b = float(r[c.feature]), float(x2[c.feature])
        if math.isnan(a) or math.isnan(b):
            total += float(math.isnan(a) != math.isnan(b))
        else:
            total += float(a != b) if c.discrete else abs(b - a) / c.scale
    return total


def solve_rows(
    ens: Ensemble,
    spec: AuditSpec,
    X: np.ndarray,
    ans: RowAnswers,
    timeout: float,
    deadline: float | None = None,
    memory_mb: int | None = None,
    why: list[str] | None = None,
    work: int | None = None,
) -> bool:
    """Answer the rows ``ans`` left unknown by one anchored query each (in place), each
    within ``timeout`` seconds and none past ``deadline``, under the memory limit
    ``memory_mb`` (None: the default). False when the deadline left
    a row unasked. A row the solver cannot take (an InputError) stays unknown, the
    reason appended to ``why``. ``work``: each row's work budget, its query's and its
    smallest change's search's in all (``ans.work`` says what each row used); the
    ``timeout`` then a safety net."""
    asked_all = True
    for i, s in enumerate(ans.status):
        if s != UNKNOWN:
            continue
        d = ans.decision[i]
        if spec.target.cls is not None and int(d) == spec.target.cls:
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER  # already the class x2 must take
            continue
        t = spec.target
        if ens.is_regressor and not can_move(ens, float(d), t.delta, t.direction):
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER  # no prediction of the link lies so far
            continue
        left = timeout if deadline is None else min(timeout, deadline - time.time())
        until = time.time() + left  # the row's time, its smallest change's search within it
        if left <= 0:
            asked_all = False  # the audit's time is up: the row stays unknown
            continue
        try:
            with recording_proofs() if _KEPT.get() is not None else nullcontext():
                res = answer(ens, row_query(ens, spec, X[i], d, left, work), memory_mb=memory_mb)
        except InputError as e:  # e.g. a value of the row outside its declared bounds
            if why is not None:
                why.append(f"the solver could not take the row: {e}")
            continue  # the row stays unknown; the audit goes on
        ans.times[i] = dict(res.time)
        row_work = _row_work(work, res)
        if res.status == ERROR and why is not None:  # e.g. the box search cannot take it
            why.append(f"the row could not be asked: {res.message}")
        if row_work is not None and why is not None and SPENT in (res.message or ""):
            why.append(f"{WORK_WHY} ({work:,} units a row)")
        if res.status == INSENSITIVE:
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER
            ans.answered_by[i] = answered_by(res)
            _keep(spec, X[i], d, res)
        elif res.status == SENSITIVE and res.validated and res.witness:
            x2 = _witness_row(ens, res.witness["x2"], X[i], spec)
            if _accept(ens, spec, ans, i, X[i], x2, until, row_work):
                ans.answered_by[i] = answered_by(res)
        if row_work is not None:
            ans.work[i] = _work_stats(row_work, res)
    return asked_all


def _row_work(work: int | None, res) -> Work | None:
    """The row's work budget as its query left it: what each stage used (stats.work),
    the rest for its smallest change's search."""
    if work is None:
        return None
    out = Work(work)
    for stage, units in (res.stats.get("work") or {}).get("stages", {}).items():
        out.spend(stage, units)
    return out


def _work_stats(work: Work, res) -> dict:
    """The row's stats.work: its budget, what it used by stage, and what its query's
    stats said beyond that (the stages that ran on the clock, what ended it)."""
    out = {**(res.stats.get("work") or {}), **work.stats()}
    out.pop("timed", None)
    timed = [*(res.stats.get("work") or {}).get("timed", []), *work.timed]
    if timed:
        out["timed"] = list(dict.fromkeys(timed))
    return out


def answered_by(res) -> str:
    """What answered a row's query: ``boxes`` where the box search found its pair or
    proved it, else the solver (its backend)."""
    by = res.stats.get("found_by") or res.stats.get("proved_by")
    return BOXES if by == BOX_SEARCH else res.backend


def rows_work(lines: list[dict]) -> dict | None:
    """What an audit's rows used of their work budget per row (each line's stats.work):
    the budget, the units in all and the most one row used (and which row), the rows
    that used any, and the stages that ran on the clock; None: no row had a budget."""
    used = [(d, (d.get("stats") or {}).get("work")) for d in lines]
    used = [(d, w) for d, w in used if w]
    if not used:
        return None
    most = max(used, key=lambda dw: dw[1].get("used", 0))
    timed = [t for _, w in used for t in w.get("timed", [])]
    return {
        "budget": max(w.get("budget", 0) for _, w in used),
        "sum": sum(w.get("used", 0) for _, w in used),
        "max": most[1].get("used", 0),
        "max_row": int(most[0]["row"]),
        "rows": len(used),
        "timed": list(dict.fromkeys(timed)),
    }


def work_used_text(lines: list[dict]) -> str:
    """The line an audit's report ends with under a work budget per row (``rows_work``),
    which a budget is sized from; "" where no row had one."""
    w = rows_work(lines)
    if w is None:
        return ""
    rows = f"{w['rows']} row{'s' * (w['rows'] != 1)}"
    return (
        f"work: {w['budget']:,} units a row; {w['sum']:,} used by the {rows} a solver "
        f"answered, at most {w['max']:,} (row {w['max_row']})"
    )
