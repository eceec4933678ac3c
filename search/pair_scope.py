"""Which queries the pair tables (pair_boxes.py) describe exactly, and the encodings
they are built from: ``applies`` / ``refusal`` (gap rows on both inputs, one pair of
classes at a time, bounds only on one input of a varied feature, no data-aware mode,
relations only where a search drops the boxes that fail them), the rank ranges such a
bound leaves its input (``input_rank_ranges``), and a query as one encoding per pair of
classes it allows (``class_pair_encodings``), each of which the tables describe."""

from __future__ import annotations

from ..answers.phrases import UNREAD_CONSTRAINTS
from ..compiler.bounds_as_domains import bounds_as_domains
from ..compiler.domain import with_unlisted_codes
from ..compiler.encode import Encoding, ensemble_structure, relation_coded, varied_features
from ..compiler.ensemble import Ensemble
from ..compiler.kinds import prepared, resolve_condition
from ..compiler.passes.feature_constraints import admissible_ranks, bounds_by_copy
from ..compiler.query import ANY, Query
from ..compiler.rounding import gap_relaxation
from .anchored_boxes import anchor_ranks, anchored_encodings, is_anchored
from .relation_boxes import covered


def applies(enc: Encoding, relations: bool = False) -> bool:
    """Whether the product form describes the query exactly (``refusal``)."""
    return refusal(enc, relations) is None


def refusal(enc: Encoding, relations: bool = False) -> str | None:
    """Why the product form does not describe the query exactly, in words (None: it
    does): it takes gap rows on both inputs and no class alternatives ("any": one query
    per class pair), no change through a nonlinear link (its rows are an outer
    approximation), no bounds but on one input of a varied feature
    (``input_rank_ranges``), no data-aware mode, and no relations between the inputs
    unless ``relations`` (a search that drops the boxes without a pair of ranks meeting
    them, relation_boxes.py: a check's, a max gap's, a certificate's) and
    ``relation_boxes.covered``. Every feature kind takes part: numeric, categorical
    (category codes, one-hot groups), and may be missing (NaN a rank of its own). Raises
    InputError where a bound leaves an input no value, as the solvers' encoding does."""
    q: Query = enc.query
    cond = enc.condition
    if q.relations and not relations:
        return f"it takes no {UNREAD_CONSTRAINTS} in a change through a nonlinear link"
    if q.relations and not covered(enc):
        return "it takes no relation on a feature no tree reads, whose codes it cannot order"
    if q.plan.data_aware != "none":
        return "it takes no data-aware mode"
    if any(cond.alternatives or ()):
        return "it takes a choice of classes only as one pair of classes at a time"
    if is_anchored(q):  # x1 a row (rows on x2 only): anchored_boxes.py
        if cond.pair_rows or cond.link_change is not None or not anchor_ranks(enc):
            return "it takes an anchored row's question only as a check of x2's rows"
        return None
    if q.bounds:
        ranges = _rank_ranges(enc)
        if isinstance(ranges, str):
            return ranges
    if len(cond.pair_rows) > 1:  # a choice between rows over both inputs
        return "it takes no choice between conditions over both inputs"
    if cond.link_change is not None:  # an outer approximation, not the condition
        return "it takes a change through a nonlinear link up or down only, not either"
    # a side without rows and no pair row: nothing ties the two inputs' trees together
    if cond.pair_rows or all(len(rows) > 0 for rows in cond.rows):
        return None
    return "it takes no question that leaves one input's prediction free"


def input_rank_ranges(enc: Encoding) -> dict[tuple[int, int], tuple[int, int]] | None:
    """(varied feature, copy 0/1) -> the ranks [a, b) of its domain that hold an
    admissible value within the query's bounds on that input (exactly: span, or the
    category codes within them; never NaN); None where ``_rank_ranges`` gives a reason."""
    out = _rank_ranges(enc)
    return None if isinstance(out, str) else out


def _rank_ranges(enc: Encoding) -> dict[tuple[int, int], tuple[int, int]] | str:
    """``input_rank_ranges``, or why there are none: a bound on a feature outside the
    varied set or that holds for both inputs alike (read as a domain first:
    compiler/bounds_as_domains.py), on a feature no tree reads, over category codes no
    split lists, or that leaves a copy ranks with a gap between them (the solvers'
    encoding takes those). A bound that leaves a copy no rank is an InputError."""
    ens = enc.ensemble
    by_copy = bounds_by_copy(enc)
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for (f, c), (lo, hi) in by_copy.items():
        name = ens.feature_names[f]
        if f not in enc.varying or by_copy.get((f, 1 - c)) == (lo, hi):
            return f"it takes no bound on {name} that holds for both inputs alike here"
        dom = ensemble_structure(ens).domains.get(f)
        if dom is None:  # no tree reads it: its one rank
            return f"it takes no bound on one input of {name}, which no tree reads"
        who = f"x{c + 1}.{name}"
        coded = dom.codes is not None and not ens.features[f].categories
        if coded and with_unlisted_codes(ens, f, dom, [(lo, hi)]) is not dom:
            # an unlisted category inside the bound has no code of the domain (its code
            # for them lies outside): the solvers' encoding adds one (encode.py)
            return (
                f"it takes no bound on {who} in [{lo:g}, {hi:g}] over category codes no split lists"
            )
        ranks = admissible_ranks(enc, f, c, lo, hi, dom)
        if ranks[-1] - ranks[0] + 1 != len(ranks):
            return (
                f"it takes no bound on {who} in [{lo:g}, {hi:g}], whose admissible values "
                "lie in intervals apart"
            )
        out[(f, c)] = (ranks[0], ranks[-1] + 1)
    return out


def plain_numeric(enc: Encoding) -> bool:
    """Whether every feature the model reads is numeric and never missing, and no node
    has a categorical split or LightGBM's zero band: the tables' ranks are then
    threshold intervals only (what a certificate's "split" states)."""
    ens = enc.ensemble
    st = ensemble_structure(ens)
    if st.zero_mode:
        return False
    for f in st.used:
        if st.domains[f].codes is not None or ens.features[f].may_be_missing:
            return False
    return not any(
        t.categories is not None and any(c is not None for c in t.categories) for t in ens.trees
    )


def pair_encoding(ens: Ensemble, q: Query) -> Encoding:
    """What the pair tables read of an encoded query, without building its Problem."""
    q = prepared(ens, q)
    st = ensemble_structure(ens)
    return Encoding(
        ensemble=ens,
        query=q,
        condition=resolve_condition(ens, q),
        varying=varied_features(ens, q.vary),
        domains=st.domains,
        pred=({}, {}),
        leaves=((), ()),
        relax=gap_relaxation(ens),
    )


def class_pair_encodings(enc: Encoding, relations: bool = False) -> list[Encoding] | None:
    """The query as one encoding per pair of classes it allows (c1 or c2 "any": every
    class, the two different), each of which the pair tables describe; None when some
    does not (``class_pair_refusal`` says why). A pair meets the query if and only if it
    meets one of them. Bounds that hold for both inputs alike are read as the features'
    domains (compiler/bounds_as_domains.py): the encodings are then over the model so
    declared; a bound on one input of a varied feature stays in their query
    (``applies``). ``relations``: ``applies``'s, relations between the inputs kept in
    their query, over a model whose domains hold the codes they need
    (encode.relation_coded)."""
    return _class_pairs(enc, relations)[0]


def class_pair_refusal(enc: Encoding, relations: bool = False) -> str | None:
    """Why ``class_pair_encodings(enc, relations)`` is None, in words (``refusal`` of the
    first encoding the tables do not describe); None when it is not."""
    return _class_pairs(enc, relations)[1]


def _class_pairs(enc: Encoding, relations: bool) -> tuple[list[Encoding] | None, str | None]:
    """(``class_pair_encodings``, ``class_pair_refusal``) of ``enc``."""
    q = enc.query
    if is_anchored(q):  # its row pins the columns, not its bounds (anchored_boxes.py)
        return _described(anchored_encodings(enc), False)
    narrowed = (
        bounds_as_domains(enc.ensemble, q, per_input=True, relations=relations)
        if q.bounds
        else None
    )
    if narrowed is not None and narrowed[1].bounds != q.bounds:  # bounds read as domains
        return _class_pairs(pair_encoding(*narrowed), relations)
    # a relation on categories no split lists: the codes that keep their order
    coded = relation_coded(enc.ensemble, q) if relations else enc.ensemble
    if coded is not enc.ensemble:
        return _class_pairs(pair_encoding(coded, q), relations)
    why = refusal(enc, relations)
    if why is None:
        return [enc], None
    ens, q = enc.ensemble, enc.query
    if ens.n_outputs < 2 or not q.classes or ANY not in q.classes:
        return None, why
    every = range(ens.n_classes)
    sides = [list(every) if c == ANY else [int(c)] for c in q.classes]
    pairs = [(a, b) for a in sides[0] for b in sides[1] if a != b]
    return _described([pair_encoding(ens, q.with_(classes=p)) for p in pairs], relations)


def _described(encs: list[Encoding], relations: bool) -> tuple[list[Encoding] | None, str | None]:
    """(encs, None) when the tables describe each, else (None, the first one's refusal)."""
    for e in encs:
        why = refusal(e, relations)
        if why is not None:
            return None, why
    return encs, None
