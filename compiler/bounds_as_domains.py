"""A query's bounds read as narrower feature domains, where they say the same thing.

A bound ``lo <= f <= hi`` that holds for both inputs alike (every bound on a feature
outside the varied set, whose value both inputs share; on a varied feature, the same
bound on x1 and on x2) keeps exactly the values a feature declared over [lo, hi] takes:
the threshold intervals that hold an admissible value in it (both decided exactly, by
the library's own comparison: compiler/domain.py and passes/feature_constraints.py), and
not NaN. So the query without those bounds, over the model whose features are declared
that narrower, has the same pairs. The box search, the max gap's compiled search and
certificates read domains, not bounds: this is how they take such a query, and a
certificate states the narrower domains, which is what its claim is about.

Not where a bound holds for one input only (x1 pinned, x2 free: the domains are the
feature's, for both inputs): None there, or with ``per_input`` the query keeps those
bounds, which the box search reads as a restriction of that input's column of the pair
tables (search/pair_boxes.py, ``input_rank_ranges``). With relations between the inputs,
only where asked (``relations``: the box search, which reads them over the narrowed
domains, search/relation_boxes.py); elsewhere the query is left to the solvers' encoding
of its constraints.
"""

from __future__ import annotations

from dataclasses import replace

from .encode import ensemble_structure, varied_features
from .ensemble import Ensemble
from .errors import InputError
from .query import Query, bounds_by_copy, feature_index


def bounds_as_domains(
    ens: Ensemble, q: Query, per_input: bool = False, relations: bool = False
) -> tuple[Ensemble, Query] | None:
    """(the model with its features' domains narrowed to ``q``'s bounds, ``q`` without
    them), or None when ``q`` has no bounds, has relations, or bounds some input of a
    varied feature otherwise than the other, or leaves a feature the model splits on no
    value at all (the solvers' encoding reports that). ``per_input``: a varied feature
    bounded otherwise on one input than on the other keeps its domain and its bounds
    stay in the query returned (the model as it is when every bound is such).
    ``relations``: a query with relations too, which it keeps (the box search reads them
    over the narrowed domains: a relation's values within the bounds are the narrowed
    feature's, and never NaN either way)."""
    if not q.bounds or (q.relations and not relations):
        return None
    by_copy = bounds_by_copy(ens, q, varied_features(ens, q.vary))
    features = list(ens.features)
    alike = set()
    for (f, copy), (lo, hi) in by_copy.items():
        if lo > hi:
            return None
        if by_copy.get((f, 1 - copy)) != (lo, hi):
            if not per_input:
                return None
            continue
        alike.add(f)
        features[f] = replace(ens.features[f], lb=lo, ub=hi, may_be_missing=False)
    narrowed = ens.with_features(tuple(features)) if alike else ens
    try:
        domains = ensemble_structure(narrowed).domains
    except InputError:  # a feature with no admissible value left
        return None
    if any(not domains[f].valid for f in alike if f in domains):
        return None
    left = tuple(b for b in q.bounds if feature_index(ens, b.feature) not in alike)
    return narrowed, q.with_(bounds=left)
