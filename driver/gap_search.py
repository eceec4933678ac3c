"""The largest gap of a binary query by one best-first search over boxes of the pair space
(compiler/gap_boxes.py), where the pair tables describe the query exactly.

Every pair the search resolves is replayed with the library's own predict: the gap it
achieves there (``achieved_gap``) is the lower bound, and the pair with the largest one
is the witness. The upper bound is the search's, in probability: the bound on the
(float32-relaxed) rows through the library's link, rounded up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..answers.result import ERROR, INSENSITIVE, SENSITIVE, UNKNOWN, Result, input_files
from ..compiler.encode import Encoding
from ..compiler.ensemble import LOGISTIC, Ensemble
from ..compiler.gap_boxes import GapBoxOutcome, largest_gap
from ..compiler.invert import witness_from_pair
from ..compiler.pair_boxes import PairTablesTooLarge, applies, pair_encoding, pair_tables
from ..compiler.query import Gap, GapKind, Query
from .accept import witness_dict
from .context import new_result
from .verdict import PROBA_AGREEMENT

FOUND_BY = "box search (largest gap)"
# added to a bound on the gap: the library's float32 sigmoid, rounded up
PROBA_SLACK = 1e-6
PROGRESS_EVERY = 2.0  # seconds between two progress lines


def achieved_gap(p1: float, p2: float) -> float:
    """The largest gap a pair with these class-1 probabilities meets:
    min(P(x1) - 0.5, 0.5 - P(x2)), rounded down until it holds in floating point."""
    g = min(p1 - 0.5, 0.5 - p2)
    while not (p1 >= 0.5 + g and p2 <= 0.5 - g):
        g = float(np.nextafter(g, -math.inf))
    return g


def gap_bound(ens: Ensemble) -> Callable[[float], float]:
    """Row units (a row's value at gap 0) to a bound on the gap in probability."""
    if ens.link == LOGISTIC:

        def to_gap(u: float) -> float:
            g = 1.0 / (1.0 + math.exp(-u)) - 0.5 if u > -700 else -0.5
            return min(0.5, g + PROBA_SLACK)

        return to_gap
    return lambda u: min(0.5, u + PROBA_SLACK)  # the raw score is the probability


@dataclass
class _Best:
    """The best replayed pair, and a disagreement between the library and the IR."""

    enc: Encoding
    gap: float = -math.inf
    pair: tuple[np.ndarray, np.ndarray] | None = None
    outputs: dict | None = None
    disagreement: str | None = None
    offered: int = 0
    stats: dict = field(default_factory=dict)

    def offer(self, x1: np.ndarray, x2: np.ndarray) -> float | None:
        ens = self.enc.ensemble
        self.offered += 1
        X = np.stack([x1, x2])
        ir = ens.proba(X)
        lib = np.asarray(ens.replayer.predict_proba(X), float) if ens.replayer else ir
        if float(np.max(np.abs(lib - ir))) > PROBA_AGREEMENT:
            self.disagreement = (
                "the library's predict disagrees with treesens' model of it: "
                f"library {lib.tolist()}, treesens {ir.tolist()}"
            )
            return None
        g = achieved_gap(float(lib[0, 1]), float(lib[1, 1]))
        if g > self.gap:
            self.gap, self.pair = g, (x1, x2)
            self.outputs = {"x1": lib[0].tolist(), "x2": lib[1].tolist()}
        return g


def box_largest_gap(
    ens: Ensemble,
    q: Query,
    tolerance: float,
    deadline: float,
    log: Callable[[str], None] | None = None,
) -> tuple[Result, GapBoxOutcome] | None:
    """The largest gap of ``q`` (its gap unused) by the box search, or None where the
    pair tables do not describe the query (then the caller bisects with the check)."""
    t0 = time.time()
    enc = pair_encoding(ens, q.with_(gap=Gap(0.0, GapKind.PROB)))
    if not applies(enc):
        return None
    try:
        tables = pair_tables(enc)
    except PairTablesTooLarge:
        return None
    t_compile = time.time() - t0
    best = _Best(enc)
    last = [0.0]

    def progress(lower: float | None, upper: float, boxes: int) -> None:
        if log is not None and time.time() - last[0] >= PROGRESS_EVERY:
            last[0] = time.time()
            low = "-" if lower is None else f"{lower:.6g}"
            log(f"max gap: bounds [{low}, {upper:.6g}] after {boxes:,} boxes")

    out = largest_gap(enc, tables, gap_bound(ens), best.offer, tolerance, deadline, progress)
    res = _result(ens, q, best, out)
    res.time = {"compile": t_compile, "solve": time.time() - t0 - t_compile}
    res.time["total"] = time.time() - t0
    res.stats["box_search"] = {
        "boxes": out.boxes,
        "leaves": int(tables.values.shape[1]),
        "pairs_replayed": best.offered,
    }
    return res, out


def _result(ens: Ensemble, q: Query, best: _Best, out: GapBoxOutcome) -> Result:
    res = new_result(ens, q)
    res.features = [ens.feature_names[f] for f in sorted(best.enc.varying)]
    res.stats["asked"] = {"ensemble": ens.fingerprint(), **q.asked()}
    res.inputs = input_files(ens.inputs, q.options.data)
    if best.disagreement is not None:
        res.status, res.error = ERROR, best.disagreement
    elif out.lower is not None and best.pair is not None:
        w = witness_from_pair(best.enc, *best.pair)
        res.status, res.validated = SENSITIVE, True
        res.witness = witness_dict(ens, w)
        res.witness_arrays = w
        res.outputs = best.outputs
        res.stats["found_by"] = FOUND_BY
    elif out.proven:
        res.status = INSENSITIVE
        res.stats["proved_by"] = FOUND_BY
    else:
        res.status = UNKNOWN
    if out.proven:
        res.stats.setdefault("proved_by", FOUND_BY)
    return res
