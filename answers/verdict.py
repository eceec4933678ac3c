"""The replay check of a candidate pair, as a typed verdict.

``Accepted``: the library's predict confirms the pair meets the gap. ``NearMiss``: a
pair on the gap's boundary where treesens' exact arithmetic and the library's float32
sums round differently; its failing copies are cut and the search goes on. ``Rejected``:
the candidate cannot stand and no cut is sound (an error, never a verdict).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..compiler.encode import Encoding, pair_constraint
from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.invert import Witness
from ..compiler.ir import LE, Implication, Linear
from ..compiler.kinds import kind_of
from ..compiler.passes.feature_constraints import constraint_violations
from ..compiler.query import Query
from ..compiler.replay import ReplayFailed, condition_slack, library_output, pair_slack

# how far the library's probabilities and treesens' may be apart on a near-miss pair
# (float32 accumulation over thousands of trees stays orders of magnitude below this)
PROBA_AGREEMENT = 1e-3


@dataclass(frozen=True)
class Accepted:
    witness: Witness
    outputs: dict  # {"x1": [per-class probabilities], "x2": [...]} by the library


@dataclass(frozen=True)
class NearMiss:
    witness: Witness
    failing: tuple[int, ...]  # the copies (0: x1, 1: x2) the library rejects
    pair: bool = False  # the library rejects the pair as a whole (a regressor's change)


@dataclass(frozen=True)
class Rejected:
    message: str


Verdict = Accepted | NearMiss | Rejected


def check_candidate(
    ens: Ensemble, q: Query, enc: Encoding, decode: Callable[[], Witness]
) -> Verdict:
    """Map solver values back to a pair (``decode``: the chains' inversion) and replay it."""
    try:
        w = decode()
    except ValueError as e:
        return Rejected(f"cannot map the solution back to inputs: {e}")
    routed = ens.leaf_indices(np.stack([w.x1, w.x2]))
    for copy in (0, 1):
        if not np.array_equal(routed[copy], w.leaves[copy]):
            bad = int(np.flatnonzero(routed[copy] != w.leaves[copy])[0])
            return Rejected(
                f"internal: x{copy + 1} reaches leaf {routed[copy][bad]} of tree {bad}, "
                f"the solver chose leaf {w.leaves[copy][bad]}"
            )
    return check_pair(ens, q, enc, w)


def check_pair(ens: Ensemble, q: Query, enc: Encoding, w: Witness) -> Verdict:
    """Replay a pair on the library's predict (the IR's when there is no replayer); a
    pair that breaks the query's bounds or relations is rejected first."""
    broken = constraint_violations(ens, q, w.x1, w.x2)
    if broken:
        return Rejected(
            "internal: the witness breaks the query's constraints: " + "; ".join(broken)
        )
    X = np.stack([w.x1, w.x2])
    ir_raw = ens.raw(X)
    try:
        ir_proba, lib_proba, lib_raw = library_scores(ens, X, ir_raw)
    except InputError as e:  # the library cannot be asked about this pair (see its message)
        return Rejected(f"cannot replay the pair: {e.message}")
    except ReplayFailed as e:  # as a disagreement: an error, never a verdict or a cut
        return Rejected(str(e))
    kind = kind_of(q)
    lib = kind.judge(ens, q, lib_proba, lib_raw)
    if lib.met:
        return Accepted(w, {"x1": lib_proba[0].tolist(), "x2": lib_proba[1].tolist()})
    ir = kind.judge(ens, q, ir_proba, ir_raw)
    if lib.x1 and lib.x2:
        return _pair_near_miss(ens, q, enc, w, (ir_raw, ir_proba, ir.pair), lib_proba)
    lib_ok, ir_ok = (lib.x1, lib.x2), (ir.x1, ir.x2)
    failing = tuple(c for c in (0, 1) if not lib_ok[c])
    for c in failing:
        slack = condition_slack(enc, ir_raw[c], c)
        # cutting a near miss is sound only if the library and treesens agree on the
        # scores. If they do not, treesens models the library wrongly: an error, never a
        # cut (a cut could then exclude valid pairs and fake "insensitive").
        apart = scores_apart(ens, lib_proba[c], ir_proba[c])
        far = 4 * enc.relax + enc.condition.rounding + 1e-9  # past the library's rounding
        if (ir_ok[c] and slack > far) or apart > PROBA_AGREEMENT:
            return Rejected(
                f"the library's predict disagrees with treesens' model of it on x{c + 1}: "
                f"library {lib_proba[c].tolist()}, treesens {ir_proba[c].tolist()}"
            )
    return NearMiss(w, failing)


def _pair_near_miss(ens, q: Query, enc, w, ir: tuple, lib_proba) -> Verdict:
    """A pair whose predictions the library puts less than delta apart: a near miss when
    treesens' exact sums put it on the boundary too, else a disagreement (an error)."""
    ir_raw, ir_proba, ir_ok = ir
    apart = scores_apart(ens, lib_proba, ir_proba)
    if (ir_ok and _past_rounding(q, enc, ir_raw)) or apart > PROBA_AGREEMENT:
        return Rejected(
            "the library's predict disagrees with treesens' model of it: library "
            f"{lib_proba[:, 0].tolist()}, treesens {ir_proba[:, 0].tolist()}"
        )
    return NearMiss(w, (0, 1), pair=True)


def _past_rounding(q: Query, enc: Encoding, ir_raw: np.ndarray) -> bool:
    """Does the pair with exact raw scores ``ir_raw`` meet the change by more than the
    library's rounding could take away (its sums, 2 ``relax`` a score, as every row's
    allowance; through a nonlinear link, also the link's float32 rounding)?"""
    lc = enc.condition.link_change
    if lc is not None:
        shift = 2 * enc.relax + 1e-9
        return lc.least_library_change(float(ir_raw[0, 0]), float(ir_raw[1, 0]), shift) >= q.delta
    return pair_slack(enc, ir_raw[0], ir_raw[1]) > 4 * enc.relax + 1e-9


def near_miss_cuts(enc: Encoding, miss: NearMiss) -> list[Linear | Implication]:
    """The rows that exclude a near miss: each failing copy's leaves, or for a pair the
    library rejects as a whole, the two inputs' leaves together; through a nonlinear
    link, also the tangents that cut the pair's raw scores off the outer approximation
    (``link_cuts``)."""
    if not miss.pair:
        return [leaf_cut(enc, miss.witness, c) for c in miss.failing]
    acc: dict[int, float] = {}
    for copy in (0, 1):
        for ti, n in enumerate(miss.witness.leaves[copy]):
            v = enc.leaves[copy][ti][int(n)]
            acc[v] = acc.get(v, 0.0) + 1.0
    total = sum(acc.values())
    pair = Linear(tuple(acc), tuple(acc.values()), LE, total - 1.0, ("cut", "pair"))
    return [pair, *link_cuts(enc, miss.witness)]


def link_cuts(enc: Encoding, w: Witness) -> list[Linear | Implication]:
    """Tangents of a nonlinear link's change at a pair that does not meet it (its exact
    raw scores lie below the curve), each under its direction's choice: valid for every
    pair that meets the change, and violated by this one unless it lies within the
    rounding band (where the leaf cut excludes it)."""
    lc = enc.condition.link_change
    if lc is None:
        return []
    ens = enc.ensemble
    raw = ens.raw(np.stack([w.x1, w.x2]))[:, 0]
    out: list[Linear | Implication] = []
    for di, rows in enumerate(lc.cuts(float(raw[0]), float(raw[1]))):
        when = enc.pair_choice[di] if enc.pair_choice else None
        for row in rows:
            out.append(pair_constraint(ens, enc.leaves, row, enc.relax, ("cut", "link", di), when))
    return out


def library_scores(ens: Ensemble, X: np.ndarray, ir_raw: np.ndarray) -> tuple:
    """(IR probabilities, library probabilities, library raw scores) of rows ``X``; a
    regressor's predictions stand in for probabilities, as one column.
    OutputsMisaligned when the library's columns are not the model's."""
    ir, lib = library_outputs(ens, X)
    lib_raw = ir_raw if ens.replayer is None else library_output(ens, X, raw=True)
    return ir, lib, lib_raw


def library_outputs(ens: Ensemble, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(treesens', the library's) probabilities of rows ``X``, or a regressor's
    predictions as one column (the IR's own when there is no replayer).
    OutputsMisaligned when the library's columns are not the model's (``library_output``)."""
    ir = ens.predict(X)[:, None] if ens.is_regressor else ens.proba(X)
    lib = ir if ens.replayer is None else library_output(ens, X)
    return ir, lib


def scores_apart(ens: Ensemble, lib: np.ndarray, ir: np.ndarray) -> float:
    """How far the library's scores are from treesens' (a regressor's predictions,
    which are not probabilities, relatively)."""
    apart = float(np.max(np.abs(lib - ir)))
    if ens.is_regressor:
        apart /= max(1.0, float(np.max(np.abs(lib))))
    return apart


def leaf_cut(enc: Encoding, w: Witness, copy: int) -> Linear:
    """A row excluding the leaves copy ``copy`` of ``w`` reaches (every input reaching
    them scores the same, so the cut loses no other pair)."""
    vs = tuple(enc.leaves[copy][ti][int(n)] for ti, n in enumerate(w.leaves[copy]))
    return Linear(vs, (1.0,) * len(vs), LE, float(len(vs) - 1), ("cut", copy))
