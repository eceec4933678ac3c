"""The smallest change that flips an audit's row past the enumeration where too many x2
have no larger change than a known flip's to score them (questions/audit_solve.
smallest_flip): a branch and bound over the row's anchored boxes (search/box_search.py)
with a cap on the change.

With x1 the row, a box of the anchored question's tables holds, per feature of F, a run
of x2's cells; the least change of an x2 in it is exact and cheap: per feature the least
change of its cells' values (compiler/audit.values_and_changes: the cell's value nearest
the row's, as the enumeration takes it), summed. A box whose least change is above the
best flip's (less a rounding) holds no x2 that flips with a smaller change, so it is
dropped; of a split's two boxes the one of smaller least change is searched first. A
resolved box's x2 of least change is replayed by the library; one that flips is the new
best, and the cap falls to its change. When the search ends, the best is the smallest
change that flips among F's cells, as the enumeration would find it (to ``_SLACK``, the
rounding of sums in another order): exact, not to a resolution.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from ..compiler.audit import (
    NEAR_EDGE,
    FeatureCells,
    flip_confidence,
    library_predict,
    values_and_changes,
)
from ..compiler.encode import ensemble_structure
from ..compiler.ensemble import Ensemble
from ..search.box_answers import tables_or_skip
from ..search.box_search import FOUND, GAVE_UP, BoxSearch
from ..search.pair_scope import class_pair_encodings, pair_encoding

# the capped search on or off (tests of a change not proven the smallest, benchmarks)
ENABLED = True
_SLACK = 1e-9  # a change's rounding: sums of the same changes in another order
NEAREST = "nearest"  # the capped search's stage in a row's stats.work (its boxes)


def nearest_flip(ens: Ensemble, spec, q, row: tuple, known: tuple, below: float, until, work=None):
    """The x2 that flips a row with the smallest change on F: ``q`` the row's anchored
    question (audit_solve.row_query), ``row`` (its values, decision, F's cells, the
    change function: audit_solve.change_of), ``known`` (x2, its outputs, its change) an
    x2 that flips, ``below`` a change below which none flips. Returns the best flip
    (x2, its outputs, its change) and None once the capped search has ended by ``until``
    (time.time()): its change is the smallest; else the best flip found and the change
    below which none flips (at least ``below``). Under a row's ``work`` budget
    (answers/work.Work) the search ends on the boxes it visits, each a unit spent on
    ``work`` as stage ``nearest`` (the same boxes whatever the clock); ``until`` stays the
    safety net."""
    from ..search.boxes import rows_of_each_input  # noqa: PLC0415 - the box search's stage

    r, decision, cells, change_of = row
    if not ENABLED or time.time() >= until or (work is not None and work.left() <= 0):
        return known, below
    encs = class_pair_encodings(pair_encoding(ens, q), relations=True)
    if encs is None:
        return known, below
    best, opened = known, np.inf  # opened: the least change of a near miss not ruled out
    for enc in encs:
        tables = tables_or_skip(enc, {}, None, until)
        cols = None if tables is None else x2_columns(ens, cells, tables, r)
        if cols is None:
            return known, below
        least = partial(box_least, cols)
        search = BoxSearch(enc, tables, least=least)
        while True:
            search.cap = best[2] - _SLACK * max(1.0, best[2])
            out = _run(search, until, work)
            if out.status == GAVE_UP:
                low = min(search.frontier(), opened, best[2])
                return best, max(below, _any_x2(low, cells))
            if out.status != FOUND:
                break
            x2 = nearest_in_box(cols, r, *out.box)
            p2 = _flipping(ens, spec, decision, x2)
            if p2 is not None:
                best = (x2, p2, change_of(cells, r, x2))
            elif not rows_of_each_input(enc):  # other x2 of the box may flip
                opened = min(opened, least(*out.box))
    if opened < best[2] - _SLACK * max(1.0, best[2]):
        return best, max(below, _any_x2(opened, cells))
    return best, None


def _run(search: BoxSearch, until: float, work):
    """One run of the capped search until a box or ``until``; under ``work`` until its
    boxes reach what is left of it too, the boxes visited spent on it."""
    if work is None:
        return search.run(until)
    before = search.boxes
    search.box_limit = before + work.left()
    out = search.run(until)
    work.spend(NEAREST, search.boxes - before)
    return out


def _any_x2(low: float, cells) -> float:
    """A change below which no x2 of F's cells flips as one below which no x2 flips:
    less the rounding and what each cell's shown value adds to its end (compiler/audit.
    NEAR_EDGE), as audit_solve.smallest_flip says it."""
    return max(0.0, low - _SLACK * max(1.0, low) - len(cells) * NEAR_EDGE)


def _flipping(ens: Ensemble, spec, decision, x2: np.ndarray):
    """x2's outputs by the library's predict where they flip the row's decision, else
    None."""
    proba_of, raw_of = library_predict(ens)
    p2 = np.asarray(proba_of(x2[None, :]), float)
    margin = spec.target.gap.kind == "margin"
    r2 = np.asarray(raw_of(x2[None, :]), float).reshape(1, -1) if margin else None
    d = np.array([decision])
    return p2[0] if flip_confidence(ens, spec.target, d, p2, r2)[0] >= 0 else None


def x2_columns(ens: Ensemble, cells: list[FeatureCells], tables, r: np.ndarray):
    """Per x2 column of a feature of F a tree reads: (column, feature, each rank's value
    nearest the row's, its change), the column's ranks those of the feature's cells; a
    feature no tree reads keeps the row's value (change 0). None where a column's ranks
    are not its cells (its change not known per box)."""
    used = ensemble_structure(ens).used
    by_feature = {c.feature: c for c in cells}
    out = []
    for j, (f, copy) in enumerate(tables.columns):
        if copy != 1 or f not in used or f not in by_feature:
            continue
        vals, change = values_and_changes(by_feature[f], np.array([r[f]], dtype=float))
        off = 0 if tables.offsets is None else int(tables.offsets[j])
        if off != 0 or int(tables.sizes[j]) != vals.shape[1]:
            return None
        out.append((j, f, vals[0], change[0]))
    return out


def box_least(cols: list, lo: np.ndarray, hi: np.ndarray) -> float:
    """The least change on F of an x2 in the box lo <= rank < hi (``x2_columns``)."""
    return float(sum(change[lo[j] : hi[j]].min() for j, _f, _v, change in cols))


def nearest_in_box(cols: list, r: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The x2 of the box of least change: per column, the value of its rank of least
    change; the row's own elsewhere."""
    x2 = np.array(r, dtype=float)
    for j, f, vals, change in cols:
        x2[f] = vals[int(lo[j]) + int(np.argmin(change[lo[j] : hi[j]]))]
    return x2
