"""A max gap's direction (``direction_note``): where swapping x1 and x2 does not map
the query's pairs onto themselves, what the max gap measures and how to ask the other
way round."""

from __future__ import annotations

from ..compiler.ensemble import Ensemble
from ..compiler.query import Query, symmetric


def direction_note(ens: Ensemble, q: Query) -> str | None:
    """What a max gap measures where swapping x1 and x2 does not map the query's pairs
    onto themselves (a bound on one input, a relation; compiler/query.symmetric): its
    direction, x1 the input scored high (a regressor's: the prediction falling from x1
    to x2), and how to ask the other (the same query with x1 and x2 swapped), or None."""
    if symmetric(q):
        return None
    one = [b for b in q.bounds if set(b.copies) != {1, 2}]
    swapped = ", ".join(
        f"x{3 - c}.{b.feature} in [{b.lo:g}, {b.hi:g}]" for b in one for c in b.copies
    )
    why = "a bound on one input" if one else "a relation between the inputs"
    how = f"put the bounds on the other input ({swapped})" if one else ""
    if q.relations:
        how += (" and " if how else "") + "swap x1 and x2 in the relations"
    if ens.is_regressor:
        what = "the largest change f(x1) - f(x2), the prediction falling from x1 to x2"
        other = "the largest rise from x1 to x2"
    elif ens.n_outputs > 1:
        what = "the largest ratio with x1 of the first class of the pair, x2 of the second"
        other = "the pairs the other way round"
    else:
        what = "the largest gap with P(x1) high and P(x2) low"
        other = "the pairs the other way round (P(x1) low, P(x2) high)"
    return f"{why} makes the max gap directional: {what}, each input within its own bounds; for {other}, {how}"
