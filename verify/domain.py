"""A certificate's domain of a feature as the checker reads it: its bounds, whether it
is integer, its category codes and whether NaN is one of its values (version 3), and a
varied feature's stated per input (version 4)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

INF = math.inf


@dataclass(frozen=True)
class Domain:
    lb: float
    ub: float
    integer: bool
    codes: tuple[int, ...] | None = None  # the category codes, in the order splits cut
    missing: bool = False  # NaN is a value of the feature
    # the code that stands for every whole number in [max(lb, 0), ub] no split lists
    # (``PairSpace._unlisted_refusal`` says where it may), or None: the codes alone
    unlisted: int | None = None


EMPTY = (INF, -INF)  # an interval holding no value (a box part that is NaN alone)


def read_domain(d: dict, version: int) -> Domain:
    """A feature's domain: bounds and integrality, and (version 3) its category codes,
    which then are its values, and whether NaN is one."""
    codes = d.get("codes")
    missing = bool(d.get("missing", False))
    if (codes is not None or missing) and version < 3:
        raise ValueError("category codes and NaN in a domain are certificate version 3")
    if codes is not None:
        if not codes or any(type(c) is not int for c in codes) or len(set(codes)) != len(codes):
            raise ValueError("a domain's codes are distinct integers")
        codes = tuple(codes)
    if not isinstance(d["integer"], bool) or not isinstance(d.get("missing", False), bool):
        raise ValueError("a domain's integer and missing are true or false")
    unlisted = d.get("unlisted")
    if unlisted is not None and (type(unlisted) is not int or unlisted not in (codes or ())):
        raise ValueError("a domain's unlisted code is one of its codes")
    return Domain(
        bound_value(d["lb"]), bound_value(d["ub"]), d["integer"], codes, missing, unlisted
    )


def codes_from_0(d: Domain) -> Domain:
    """The domain's bounds as codes' bounds (codes are at least 0)."""
    return replace(d, lb=max(d.lb, 0.0))


def per_input_domain(d: dict, version: int, name) -> tuple[Domain, Domain]:
    """A varied feature's domain stated per input (version 4: ``{"x1": ..., "x2": ...}``,
    each a domain), as (x1's, x2's); both inputs are of one kind (integer or not)."""
    if version < 4:
        raise ValueError("a domain per input is certificate version 4")
    if set(d) != {"x1", "x2"} or not all(isinstance(d[k], dict) for k in ("x1", "x2")):
        raise ValueError(f"feature {name!r}: a domain per input is {{'x1': ..., 'x2': ...}}")
    one, two = read_domain(d["x1"], version), read_domain(d["x2"], version)
    if one.integer != two.integer:
        raise ValueError(f"feature {name!r}: its inputs' domains are integer alike or not")
    return one, two


def bound_value(v) -> float:
    return float(v) if not isinstance(v, str) else float(v.replace("inf", "Infinity"))
