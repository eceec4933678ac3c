"""A box search's recorded proof as a certificate's steps (docs/certificates.md, "The
format"): its splits at the thresholds the checker reads, its pruned boxes with the rows
the checker names and the bounds it recomputes, its replayed pairs, ``link`` and
``alike`` steps, converted one at a time as the document is written
(certificate_json.py)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..compiler.encode import ensemble_structure, gap_row_terms
from ..compiler.passes.feature_constraints import bounds_by_copy
from ..search.pair_scope import input_rank_ranges
from .certify_groups import model_thresholds


def proof_part(ens, enc, tables, record) -> dict:
    """One box search's proof, with what it answers: a class pair, or a change's
    direction. Its ``proof`` is a generator over ``record``'s steps, converted as the
    document is written (certificate_json.py), not held as a second list."""
    names, constant = row_names(enc, tables), _row_constants(enc)
    if len(names) != tables.values.shape[0] or len(constant) != len(names):
        raise AssertionError("the pair tables' rows are not the condition's")
    part: dict = {}
    q = enc.query
    if ens.n_outputs > 1:
        part["classes"] = [int(c) for c in q.classes]
    if q.delta is not None:
        part["direction"] = _direction(enc)
    # the ranks are the encoding's own (its domains narrowed by bounds: bounds_as_domains)
    part["proof"] = _proof_steps(enc.ensemble, tables, record, names, constant)
    return part


def _proof_steps(ens, tables, record, names: list[str], constant: list[float]) -> Iterator:
    """The certificate's steps of ``record`` (the search's, in preorder), one at a time."""
    st = ensemble_structure(ens)
    own = model_thresholds(ens)  # a grouped model's splits at its own thresholds
    for event in record:
        if event[0] == "replay":
            yield ["replay", _values(event[1]), _values(event[2])]
        elif event[0] == "link":  # the change's bounds R and S through the exp link
            yield ["link", json_number(event[1]), json_number(event[2])]
        elif event[0] == "prune":
            row = event[1]
            yield ["prune", names[row], event[2] + constant[row]]
        elif event[0] == "alike":  # x1 and x2 reach the same leaves (verify/alike.py)
            yield alike_step(ens, tables)
        elif event[0] == "relation":  # no pair meets a relation (verify/relations.py)
            yield list(event)
        else:
            _, c, r = event
            at = split_at(st.domains[tables.columns[c][0]], tables.domain_rank(c, r))
            if isinstance(at, float):
                at = own.get(tables.columns[c][0], {}).get(at, at)
            elif isinstance(at, dict):  # the codes from the column's first, its input's list
                at = {"codes": at["codes"][tables.domain_rank(c, 0) :]}
            yield ["split", c, at]


def input_domains(enc, domain: list[dict]) -> dict[int, dict]:
    """Per varied feature that the query bounds on one input (or on each otherwise: the
    tables' columns restricted, pair_scope.input_rank_ranges), its domain per input,
    ``{"x1": ..., "x2": ...}`` (certificate version 4): a bounded input's bounds within
    the feature's (bounds_by_copy), its codes those within them (the column's ranks),
    and never missing; the other input's, the feature's ``domain``."""
    ranges = input_rank_ranges(enc) if enc.query.bounds else None
    if not ranges:
        return {}
    bounds, st = bounds_by_copy(enc), ensemble_structure(enc.ensemble)
    out = {}
    for f in sorted({f for f, _ in ranges}):
        sides = {}
        for c in (0, 1):
            d = dict(domain[f])
            if (f, c) in ranges:
                lo, hi = bounds[(f, c)]
                d["lb"], d["ub"] = json_number(lo), json_number(hi)
                d.pop("missing", None)  # a bounded input is never missing
                if "codes" in d:
                    a, b = ranges[(f, c)]
                    d["codes"] = [int(code) for code in st.domains[f].codes[a:b]]
                    with_unlisted(d, enc.ensemble, f, "unlisted" in domain[f])
            sides[f"x{c + 1}"] = d
        out[f] = sides
    return out


def anchored_domains(enc, row, domain: list[dict]) -> dict[int, dict]:
    """An anchored question's domains (an audit's row, certificate version 4), in place
    of ``domain``'s: every feature outside F the row's value alone (both inputs share
    it); a feature of F per input, x1's the row's value, x2's the feature's ``domain``.
    A point is a number, one category code, or NaN alone: bounds that hold no number
    (``lb`` inf, ``ub`` -inf) and ``missing`` (a missing category code is refused:
    certify.anchored_refusal). Returns the per-input entries."""
    out = {}
    for f, v in enumerate(row.tolist()):
        point = dict(domain[f])
        point.pop("unlisted", None)
        if math.isnan(v):
            point.update(lb="inf", ub="-inf", missing=True)
        else:
            point["lb"] = point["ub"] = json_number(float(v))
            point.pop("missing", None)
        if "codes" in point:
            point["codes"] = [int(v)]
        if f in enc.varying:
            out[f] = {"x1": point, "x2": domain[f]}
        else:
            domain[f] = point
    return out


# the libraries that route every whole code no split lists as one unlisted category
# (beyond their category bitsets too, negative codes and NaN-free): XGBoost, LightGBM
OPEN_CODES = ("xgboost", "xgboost-dump", "lightgbm")


def with_unlisted(d: dict, ens, f: int, library_opens: bool) -> dict:
    """Coded domain ``d`` of feature f with ``"unlisted": r`` when r, one of its codes,
    stands for every whole code in its bounds no split lists (docs/certificates.md): of a
    library in OPEN_CODES, a feature of undeclared categories every split on which is
    categorical; else ``d`` without it (its claim then covers its codes alone)."""
    d.pop("unlisted", None)
    listed = _listed_codes(ens, f) if library_opens and "codes" in d else None
    if listed is not None and not ens.features[f].categories:
        unlisted = [c for c in d["codes"] if c not in listed]
        if unlisted:
            d["unlisted"] = int(min(unlisted))
    return d


def _listed_codes(ens, f: int) -> set[int] | None:
    """The codes the splits on feature f list, or None where one of them is numeric."""
    listed: set[int] = set()
    for t in ens.trees:
        for n in np.flatnonzero(t.feature == f).tolist():
            if not t.is_categorical(n):
                return None
            listed |= {int(c) for c in t.categories[n]}
    return listed


def alike_step(ens, tables) -> list:
    """The ``alike`` step: the varied features (their indices in the model's order) and
    their bounds as the certificate's domain states them (``[lb, ub]`` each), within
    which no tree splits on them."""
    varied = sorted({int(f) for f, copy in tables.columns if copy is not None})
    bounds = [[json_number(ens.features[f].lb), json_number(ens.features[f].ub)] for f in varied]
    return ["alike", varied, bounds]


def row_names(enc, tables) -> list[str]:
    """The pair tables' rows as the checker names them (verify/claims.py): a binary
    gap's ``x1``, ``x2``; a multiclass gap's ``x1/o`` (x1's class over class o) and
    ``x2/o``; a change's ``change``; then the pair sums, ``sum``."""
    names = []
    for c in (0, 1):
        for coefs, _ in enc.condition.rows[c]:
            if len(coefs) == 1:
                names.append(f"x{c + 1}")
            else:  # the class it loses to has the negative weight
                names.append(f"x{c + 1}/{next(k for k, w in enumerate(coefs) if w < 0)}")
    names += ["change"] * len(enc.condition.pair_rows)
    names += ["sum"] * len(tables.sums)
    return names


def _row_constants(enc) -> list[float]:
    """Per row, what the intercepts add to it (the box search's bounds leave it out)."""
    ens, cond = enc.ensemble, enc.condition
    out = [gap_row_terms(ens, coefs)[1] for c in (0, 1) for coefs, _ in cond.rows[c]]
    out += [gap_row_terms(ens, a)[1] + gap_row_terms(ens, b)[1] for a, b, _ in cond.pair_rows]
    n1 = len(cond.rows[0])
    sums = [out[i] + out[n1 + j] for i, j in _opposite_pairs(cond)]
    return out + sums


def _opposite_pairs(cond) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, (a, _) in enumerate(cond.rows[0])
        for j, (b, _) in enumerate(cond.rows[1])
        if any(a) and all(x == -y for x, y in zip(a, b))
    ]


def _direction(enc) -> str:
    """A change's direction as the box search asked it (its one row over both inputs:
    x2's weight positive, up)."""
    (a, b, _), *_ = enc.condition.pair_rows
    return "up" if b[0] > 0 else "down"


def split_at(dom, r: int):
    """A split of the box search at rank r as the certificate states it: the category
    codes before r (a coded feature), "nan" at the NaN rank (numbers vs NaN), else the
    threshold below rank r."""
    if dom.codes is not None:
        return {"codes": [int(c) for c in dom.codes[:r]]}
    if r >= len(dom.valid):
        return "nan"
    return float(dom.thresholds[dom.valid[r] - 1])


def _values(x) -> list[float | str]:
    """A replayed pair's values: numbers, ``"inf"`` / ``"-inf"``, and ``"nan"`` for NaN."""
    return ["nan" if math.isnan(float(v)) else json_number(float(v)) for v in x]


def json_number(v: float) -> float | str:
    return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
