"""Writing an accepted pair into the result, and its distance to the data."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ..compiler.column_prefixes import unseen_combinations
from ..compiler.distance import distance_to_data
from ..compiler.domain import choose_value, fitting_values
from ..compiler.encode import Encoding
from ..compiler.ensemble import Ensemble
from ..compiler.invert import Witness
from ..compiler.passes.feature_constraints import constraint_violations
from ..compiler.query import ANY, feature_index
from .context import SolveContext
from .result import SENSITIVE, Result
from .verdict import Accepted, library_outputs


def accept(ctx: SolveContext, verdict: Accepted, found_by: str) -> None:
    res = ctx.result
    res.status = SENSITIVE
    res.validated = True
    res.witness = witness_dict(ctx.ens, verdict.witness)
    res.outputs = verdict.outputs
    res.stats["found_by"] = found_by
    res.witness_arrays = verdict.witness
    ctx.witness = verdict.witness
    res.classes = classes_met(res.classes, verdict.outputs)


def classes_met(asked: list | None, outputs: Mapping | None) -> list | None:
    """A multiclass pair's classes, ``any`` replaced by the class its input was found in
    (the one whose probability beats every other's by the gap: its most probable)."""
    if not asked or ANY not in asked or not outputs:
        return asked
    return [int(np.argmax(outputs[x])) if c == ANY else c for c, x in zip(asked, ("x1", "x2"))]


def shown_value(ens: Ensemble, f: int, v: float):
    """A feature value as the result shows it: a category's name, an int, or None (NaN)."""
    feat = ens.features[f]
    if v != v:  # NaN: a missing value
        return None
    if (
        feat.kind == "categorical"
        and feat.categories
        and float(v).is_integer()
        and 0 <= int(v) < len(feat.categories)
    ):
        return feat.shown_category(int(v))
    if feat.integral:
        return int(v)
    return float(v)


def witness_dict(ens: Ensemble, w: Witness) -> dict:
    names = ens.feature_names
    return {
        "x1": {names[f]: shown_value(ens, f, w.x1[f]) for f in range(ens.n_features)},
        "x2": {names[f]: shown_value(ens, f, w.x2[f]) for f in range(ens.n_features)},
    }


def with_preferred(enc: Encoding, w: Witness, prefer: Mapping[int, Sequence[float]]) -> Witness:
    """The same intervals (so the same leaves), with values seen in the data where they
    fit; a feature a relation between the inputs ties keeps it (:func:`_related_values`)."""
    ens = enc.ensemble
    xs = [np.array(w.x1, dtype=float), np.array(w.x2, dtype=float)]
    related = _relations_by_feature(enc)
    for f, dom in enc.domains.items():
        pf = prefer.get(f)
        if pf is None:
            continue
        if f in related:
            _related_values(enc, w, xs, f, pf, related[f])
            continue
        for c in (0, 1) if f in enc.varying else (0,):
            j = w.intervals[c].get(f, -1)
            if 0 <= j < len(dom.reps) and dom.reps[j] is not None and xs[c][f] == xs[c][f]:
                xs[c][f] = choose_value(ens, ens.features[f], dom, j, pf)
        if f not in enc.varying:
            xs[1][f] = xs[0][f]
    return Witness(xs[0], xs[1], w.intervals, w.leaves)


# the data values tried per input for a feature a relation between the inputs ties
RELATED_CANDIDATES = 32
_OPS = {
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _relations_by_feature(enc: Encoding) -> dict[int, list[tuple[int, int, Callable]]]:
    """The query's relations between the inputs on varied features: feature -> (left
    copy, right copy, comparison), 0 for x1."""
    out: dict[int, list[tuple[int, int, Callable]]] = {}
    for r in enc.query.relations:
        f = feature_index(enc.ensemble, r.feature)
        if f in enc.varying:
            out.setdefault(f, []).append((r.left - 1, r.right - 1, _OPS[r.op]))
    return out


def _related_values(enc: Encoding, w: Witness, xs: list, f: int, pf, checks) -> None:
    """Feature f's values in ``xs`` where a relation ties them: each input's likeliest
    data values in its interval, paired so that the relations hold, both from the data
    if a pair does, else one (the other input keeps the pair's own value), else the
    pair's own two: under x1.sex < x2.sex with both in [0, 1) the data's 0 for x1 and
    the pair's 0.5 for x2, since no row holds a value between. Every value stays in its
    input's interval, so the replay reads the pair the search found."""
    ens, dom = enc.ensemble, enc.domains[f]
    options = []
    for c in (0, 1):
        own, j = float(xs[c][f]), w.intervals[c].get(f, -1)
        fits: list[float] = []
        if 0 <= j < len(dom.reps) and dom.reps[j] is not None and own == own:
            seen = fitting_values(ens, ens.features[f], dom, j, pf)
            fits = list(itertools.islice(seen, RELATED_CANDIDATES))
        options.append([(v, 1) for v in fits] + [(own, 0)])
    pairs = sorted(itertools.product(*options), key=lambda p: -(p[0][1] + p[1][1]))
    for (a, _), (b, _) in pairs:  # the pair's own two, last, meet the relations
        if all(op((a, b)[left], (a, b)[right]) for left, right, op in checks):
            xs[0][f], xs[1][f] = a, b
            return


def measure_distance(ctx: SolveContext) -> None:
    """Distance of the witness's region to the data, and the nearest row
    (docs/data-aware.md)."""
    record_distance(ctx.ens, ctx.data, ctx.witness, ctx.enc.varying, ctx.result)


def with_data_values(ens: Ensemble, enc: Encoding, res: Result, data) -> None:
    """A replayed pair found without the data (a max gap's), given the data (a Dataset):
    its values those seen in the data where they fit (``with_preferred``: the same
    cells), kept when the library gives them the outputs it gave the pair and they meet
    the bounds left in ``enc``'s query (a bound on one input of a varied feature may cut
    a cell), and its distance to the data."""
    if res.status != SENSITIVE or res.witness_arrays is None or res.outputs is None:
        return
    w = with_preferred(enc, res.witness_arrays, data.prefer())
    _, lib = library_outputs(ens, np.stack([w.x1, w.x2]))
    if lib.tolist() == [res.outputs["x1"], res.outputs["x2"]] and not constraint_violations(
        ens, enc.query, w.x1, w.x2
    ):
        res.witness, res.witness_arrays = witness_dict(ens, w), w
    record_distance(ens, data, res.witness_arrays, enc.varying, res)


def record_distance(ens: Ensemble, data, w: Witness, varying, res: Result) -> None:
    """``res.distance`` of pair ``w``'s region (F the ``varying`` features) to the rows
    of ``data`` (a Dataset), and its nearest row in ``res.stats``."""
    _, rng = data.ranges()
    dist, i, _ = distance_to_data(ens, w.leaves, varying, data.X, rng)
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
            row[name] = feat.shown_category(int(v))
        else:
            row[name] = int(v) if feat.integral and v.is_integer() else v
    res.stats["nearest_row"] = {"index": i, "values": row}


def note_unseen_combinations(ctx: SolveContext) -> None:
    """A note for each set of 0/1 columns of one prefix that the witness sets to 1
    together and no data row does: one-hot columns of one feature the model was not told
    about (a group inferred or declared makes such a pair impossible)."""
    for which, x in (("x1", ctx.witness.x1), ("x2", ctx.witness.x2)):
        for cols in unseen_combinations(ctx.ens, ctx.data.X, np.asarray(x, dtype=float)):
            ctx.result.notes.append(
                f"{which} sets {' and '.join(cols)} to 1 together, which no row of the data "
                f"does; if they encode one feature, declare them as one group "
                f"(--groups / groups=, with the category they drop)"
            )


def free_range_note(ens: Ensemble) -> str:
    """What a pair found without data is: each feature free within its bounds (all reals
    where none are declared), whatever the others hold, so the pair may lie far from
    every real row; the data would keep it to values seen there."""
    bounded = any(math.isfinite(f.lb) or math.isfinite(f.ub) for f in ens.features)
    if not bounded:
        where = "features range over all reals (no bounds declared, no data given)"
    else:
        free = any(math.isinf(f.lb) and math.isinf(f.ub) for f in ens.features)
        where = (
            f"no data given to the query: each feature ranges {ens.domain}"
            f"{' (all reals where none are declared)' if free else ''}, whatever the others hold"
        )
    sens = any(role == "sens" for role, _ in ens.inputs)  # asked by a .sens file
    how = 'a line  data "ROWS.csv"  in the .sens file' if sens else "--data ROWS.csv, data="
    return (
        f"{where}, so the pair may lie far from any real row; give the data "
        f"({how}) for values seen in it and the pair's distance to it"
    )
