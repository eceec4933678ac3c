"""The analysis behind Aff and Obj (the paper's section 5): the two gap rows summed.

A sensitivity query with a binary gap, or a multiclass gap between two fixed classes,
asks (among its gap rows) ``a . raw(x1) >= r1`` and ``b . raw(x2) >= r2``; their sum
``a . raw(x1) + b . raw(x2) >= r1 + r2`` is implied (``Condition.pair_sum`` is
``(a, b, r1 + r2)``). Written over
leaves, an unaffected leaf (compiler/affected.py) is chosen by both inputs or
neither, so its two terms merge into one on the first copy's variable: the sum then
ranges over affected leaves only (plus those merged terms, which cancel when the two
rows weigh the leaf with opposite signs, as a binary gap does). The right-hand side is
relaxed exactly as the encoding relaxed each row (``Encoding.relax``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from ..affected import unaffected_leaves
from ..encode import Encoding, gap_row_terms

_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class GapSum:
    """``sum(coefs[i] * x[vars[i]]) + constant >= rhs``, implied by the gap rows."""

    vars: tuple[int, ...]
    coefs: tuple[float, ...]
    constant: float
    rhs: float


def gap_sum(enc: Encoding) -> GapSum | None:
    """The summed gap rows of an encoded query, or None when its gap has no such pair
    (e.g. ``c2 = any``)."""
    if enc in _CACHE:
        return _CACHE[enc]
    out = None if enc.condition.pair_sum is None else _gap_sum(enc)
    _CACHE[enc] = out
    return out


def _gap_sum(enc: Encoding) -> GapSum:
    ens = enc.ensemble
    a, b, rhs = enc.condition.pair_sum
    rows0, const0 = gap_row_terms(ens, a)
    rows1, const1 = gap_row_terms(ens, b)
    unaffected = unaffected_leaves(ens, enc.varying)
    acc: dict[int, float] = {}
    for ti in range(len(ens.trees)):
        unaff = unaffected[ti]
        c1, c2 = rows0.get(ti, {}), rows1.get(ti, {})
        l1, l2 = enc.leaves[0][ti], enc.leaves[1][ti]
        for n, c in c1.items():
            if n in unaff:
                acc[l1[n]] = acc.get(l1[n], 0.0) + c + c2.get(n, 0.0)
            else:
                acc[l1[n]] = acc.get(l1[n], 0.0) + c
        for n, c in c2.items():
            if n not in unaff:
                acc[l2[n]] = acc.get(l2[n], 0.0) + c
            elif n not in c1:  # merged above when the first row weighs the leaf too
                acc[l1[n]] = acc.get(l1[n], 0.0) + c
    items = [(v, c) for v, c in acc.items() if c != 0.0]
    relaxed = rhs - enc.relax * (sum(abs(x) for x in a) + sum(abs(x) for x in b))
    return GapSum(
        vars=tuple(v for v, _ in items),
        coefs=tuple(c for _, c in items),
        constant=const0 + const1,
        rhs=relaxed,
    )
