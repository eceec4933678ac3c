"""Relations between the two inputs in a certificate: the claim's ``relations`` and the
``relation`` step.

A claim may restrict its pairs by relations between x1 and x2 on varied features
(``where x1.age <= x2.age``): ``question.relations`` lists them as ``[feature, op]``
(feature by name, op one of ``<=``, ``<``, ``>=``, ``>``, ``==``, ``!=`` read as
``x1.feature op x2.feature``), at most one per feature, each on a varied feature. The
claim is then that no pair meeting every relation reaches the gap (a missing value meets
no relation).

The step ``["relation", f, op]`` closes a box of the proof because no pair in it meets
the claim's relation on feature f (its index in the model's order; ``op`` as the claim
states it, which the step must repeat). The checker re-derives that from the box alone:
the two parts of f's columns (x1's and x2's) as the values the library reads there,
within the domain (a float32 model's reads are float32 values; rounding to float32 keeps
the order of any two inputs, so reads of x1 all above reads of x2 leave every x1 above
every x2), NaN left out, or as the category codes of the part. A relation no pair of
those can meet closes the box; the checker accepts nothing else. Two inputs reading one
float32 value may differ, so a strict relation within one read value is taken as met
(the box is not closed) unless the feature is a whole number or of one value.
"""

from __future__ import annotations

import math

import numpy as np

INF = math.inf
OPS = ("<=", "<", ">=", ">", "==", "!=")
# an op of "x1 op x2" as (left input, right input, kind): x_left kind x_right
_NORMAL = {
    "<=": (0, 1, "<="),
    "<": (0, 1, "<"),
    ">=": (1, 0, "<="),
    ">": (1, 0, "<"),
    "==": (0, 1, "=="),
    "!=": (0, 1, "!="),
}
FLOAT32_EXACT = 2.0**24  # whole numbers up to it read exactly as float32


def claimed_relations(question: dict, features: list[str], varied: set[int]) -> dict[int, str]:
    """The claim's relations: feature index -> op (``x1 op x2``). Raises ValueError
    where they are malformed, on a feature outside vary, or twice on one feature."""
    stated = question.get("relations", [])
    if not isinstance(stated, list):
        raise ValueError("the claim's relations are a list of [feature, op]")
    out: dict[int, str] = {}
    for item in stated:
        if not (isinstance(item, list) and len(item) == 2 and item[1] in OPS):
            raise ValueError(f"a relation is [feature, op], op one of {', '.join(OPS)}")
        name, op = item
        if name not in features or features.index(name) not in varied:
            raise ValueError(f"a relation on {name!r}, which is not a varied feature")
        f = features.index(name)
        if f in out:
            raise ValueError(f"two relations on {name!r}")
        out[f] = op
    return out


def relations_text(relations: dict[int, str], features: list[str]) -> str:
    """The relations as the verdict states them ("" where there are none)."""
    if not relations:
        return ""
    shown = " and ".join(f"x1.{features[f]} {op} x2.{features[f]}" for f, op in relations.items())
    return f", where {shown}"


def relation_refusal(ch, box: list, step: list) -> str | None:
    """Why a ``["relation", f, op]`` step does not close ``box`` (None: it does), for the
    Checker ``ch`` (its model, domain, columns and ``relations``)."""
    f, op = step[1], step[2]
    names = ch.m.features
    if type(f) is not int or not 0 <= f < len(names) or f not in ch.relations:
        return f"a relation step on {f!r}, where the claim states no relation"
    if op != ch.relations[f]:
        return f"its relation {op!r} on {names[f]!r} is not the claim's {ch.relations[f]!r}"
    a, b, kind = _NORMAL[op]
    parts = [box[ch.col_of[k][f]] for k in (0, 1)]
    if any(ch.dom(f, k).unlisted is not None for k in (0, 1)):
        # its unlisted code stands for every code no split lists: two inputs at it may
        # hold two different codes, which a part's codes do not show
        return f"a relation step on {names[f]!r}, whose unlisted code stands for many codes"
    if ch.dom(f, 0).codes is not None:  # each input's part of its own codes (version 4)
        ca, cb = (_codes_of(ch.dom(f, k).codes, parts[k]) for k in (a, b))
        met = _codes_meet(ca, cb, kind)
    else:
        met = _reads_meet(ch, f, _reads(ch, f, a, parts[a]), _reads(ch, f, b, parts[b]), kind)
    if met:
        return f"its box holds a pair with x1.{names[f]} {op} x2.{names[f]}"
    return None


def _codes_of(codes: tuple, part: tuple) -> tuple:
    """The codes of a box part (positions [lo, hi) of ``codes``; a NaN-only part: none)."""
    return codes[max(int(max(part[0], 0)), 0) : int(min(part[1], len(codes)))]


def _codes_meet(ca: tuple, cb: tuple, kind: str) -> bool:
    """Whether codes ``ca`` (x_left's) and ``cb`` (x_right's) meet ``kind``."""
    if not ca or not cb:
        return False
    if kind == "<=":
        return min(ca) <= max(cb)
    if kind == "<":
        return min(ca) < max(cb)
    if kind == "==":
        return bool(set(ca) & set(cb))
    return not (len(ca) == len(cb) == 1 and ca == cb)


def _reads(ch, f: int, k: int, part: tuple) -> tuple[float, float] | None:
    """The least and largest value the library reads within input k's box part of
    feature f (``(lo, hi]`` of its test "<=", ``[lo, hi)`` of "<"; float32 values for a
    float32 model) that a value of input k's domain gives; None: none (NaN alone, or
    nothing)."""
    lo, hi = float(part[0]), float(part[1])
    if not lo < hi:
        return None
    f32 = ch.m.float32
    if ch.m.test == "<=":
        r0, r1 = _step(lo, INF, f32), hi
    else:
        r0, r1 = lo, _step(hi, -INF, f32)
    d = ch.dom(f, k)
    lb, ub = (_f32(d.lb), _f32(d.ub)) if f32 else (d.lb, d.ub)
    r0, r1 = max(r0, lb), min(r1, ub)
    if d.integer:  # the reads of whole numbers are whole numbers (float32's too)
        r0, r1 = _ceil(r0), _floor(r1)
    return (r0, r1) if r0 <= r1 else None


def _reads_meet(ch, f: int, ra, rb, kind: str) -> bool:
    """Whether inputs reading within ``ra`` (x_left's) and ``rb`` may meet ``kind``."""
    if ra is None or rb is None:
        return False
    if kind == "<=":
        return ra[0] <= rb[1]
    if kind == "==":
        return max(ra[0], rb[0]) <= min(ra[1], rb[1])
    one_input = _one_input_per_read(ch, f, ra[0])
    if kind == "<":
        return ra[0] < rb[1] or (ra[0] == rb[1] and not one_input)
    return not (ra[0] == ra[1] == rb[0] == rb[1] and one_input)  # "!=" of numbers


def _one_input_per_read(ch, f: int, w: float) -> bool:
    """Whether only one value of the two inputs' domains reads as the value ``w``: a
    float64 model's, a whole number's, or the one value both domains hold."""
    d1, d2 = ch.dom(f, 0), ch.dom(f, 1)
    if not ch.m.float32 or d1.lb == d1.ub == d2.lb == d2.ub:
        return True
    return d1.integer and d2.integer and abs(w) < FLOAT32_EXACT


def _step(v: float, to: float, f32: bool) -> float:
    """The next value after ``v`` towards ``to`` (float32's for ``f32``)."""
    if not math.isfinite(v):
        return v
    if f32:
        return float(np.nextafter(np.float32(v), np.float32(to)))
    return float(np.nextafter(v, to))


def _f32(v: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(v))


def _ceil(v: float) -> float:
    return float(math.ceil(v)) if math.isfinite(v) else v


def _floor(v: float) -> float:
    return float(math.floor(v)) if math.isfinite(v) else v
