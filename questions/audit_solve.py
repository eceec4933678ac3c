"""The audit's fallback for rows whose F has too many cell combinations to enumerate: one
solver query per row, of the anchored kind (compiler/kinds.py): x1 is the row itself,
x2 equal to it outside F must get another decision with the gap (a regressor: a
prediction at least delta from the row's). "Insensitive" is then a proof that no such x2
exists; a "sensitive" x2 is replayed once more against the row's decision.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

import numpy as np

from ..answers.result import INSENSITIVE, SENSITIVE
from ..compiler.audit import FLIPPABLE, UNKNOWN, RowAnswers, flip_confidence, library_predict
from ..compiler.encode import resolve_features
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.kinds import can_move
from ..compiler.plan import Plan
from ..compiler.query import ANY, Query
from .ask import answer

if TYPE_CHECKING:
    from .audit import AuditSpec

NOT_FLIPPABLE_BY_SOLVER = "not flippable"


def row_query(ens: Ensemble, spec: AuditSpec, r: np.ndarray, decision, timeout: float) -> Query:
    """The audit's anchored question of row r, whose "sensitive" answer holds an x2 that
    flips."""
    q = spec.question
    if not ens.is_regressor and ens.n_outputs > 1:
        q = q.with_(classes=(int(decision), q.classes[1] if q.classes else ANY))
    row = {"anchor": tuple(float(v) for v in r), "decision": float(decision)}
    return Query.of(q.with_(params=row), Plan(timeout=float(timeout)))


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


def _accept(ens: Ensemble, spec: AuditSpec, ans: RowAnswers, i: int, r: np.ndarray, x2) -> bool:
    """Record x2 as row i's flip when the library's predict agrees that it flips."""
    proba_of, raw_of = library_predict(ens)
    p2 = np.asarray(proba_of(x2[None, :]), float)
    margin = spec.target.gap.kind == "margin"
    r2 = np.asarray(raw_of(x2[None, :]), float).reshape(1, -1) if margin else None
    if flip_confidence(ens, spec.target, ans.decision[i : i + 1], p2, r2)[0] < 0:
        return False  # the library disagrees with the solver's pair: left unknown
    ans.status[i] = FLIPPABLE
    ans.x2[i] = x2
    ans.p_x2[i] = p2[0]
    ch = [abs(x2[f] - r[f]) / spec.scales[f] for f in resolve_features(ens, spec.vary)]
    ans.change[i] = float(np.nansum(ch))  # an x2 that flips, not the smallest change
    return True


def solve_rows(
    ens: Ensemble,
    spec: AuditSpec,
    X: np.ndarray,
    ans: RowAnswers,
    timeout: float,
    deadline: float | None = None,
    memory_mb: int | None = None,
    why: list[str] | None = None,
) -> bool:
    """Answer the rows ``ans`` left unknown by one anchored query each (in place), each
    within ``timeout`` seconds and none past ``deadline``, under the memory limit
    ``memory_mb`` (None: the default). False when the deadline left
    a row unasked. A row the solver cannot take (an InputError) stays unknown, the
    reason appended to ``why``."""
    asked_all = True
    for i, s in enumerate(ans.status):
        if s != UNKNOWN or np.isnan(X[i]).any():
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
        if left <= 0:
            asked_all = False  # the audit's time is up: the row stays unknown
            continue
        try:
            res = answer(ens, row_query(ens, spec, X[i], d, left), memory_mb=memory_mb)
        except InputError as e:  # e.g. a value of the row outside its declared bounds
            if why is not None:
                why.append(f"the solver could not take the row: {e}")
            continue  # the row stays unknown; the audit goes on
        ans.times[i] = dict(res.time)
        if res.status == INSENSITIVE:
            ans.status[i] = NOT_FLIPPABLE_BY_SOLVER
            ans.answered_by[i] = res.backend
        elif res.status == SENSITIVE and res.validated and res.witness:
            x2 = _witness_row(ens, res.witness["x2"], X[i], spec)
            if _accept(ens, spec, ans, i, X[i], x2):
                ans.answered_by[i] = res.backend
    return asked_all
