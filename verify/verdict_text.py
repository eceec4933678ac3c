"""What a valid verdict says of the domain its proof covers: the varied features'
bounds and the others' (``scope_text``), the codes a coded feature takes and the
features that may be missing (``domain_text``), and the same per feature as a record
(``domain_record``, ``verify --json``)."""

from __future__ import annotations

import math

from .box_checks import Checker
from .domain import INF, Domain, codes_from_0
from .models import Model


def domain_record(model: Model, checker: Checker) -> tuple[dict, ...]:
    """Per feature, the domain the proof covers (``Verdict.domain``)."""

    def number(v: float) -> float | str:
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")

    def fields(d: Domain) -> dict:
        rec = {"lb": number(d.lb), "ub": number(d.ub), "integer": d.integer}
        rec["missing"] = d.missing
        if d.codes is not None:
            rec["codes"] = list(d.codes)
        if d.unlisted is not None:
            rec["unlisted"] = d.unlisted
        return rec

    out = []
    for f, d in enumerate(checker.domain):
        rec = {"feature": model.features[f], "varied": f in checker.varied}
        if f in checker.inputs:  # stated per input (version 4)
            rec |= {"x1": fields(checker.dom(f, 0)), "x2": fields(checker.dom(f, 1))}
        else:
            rec |= fields(d)
        out.append(rec)
    return tuple(out)


# the verdict lists the other features' bounds when at most this many have any (or are
# integer); more are counted, and ``verify --json`` lists them
SHOWN_BOUNDS = 3


def scope_text(model: Model, checker: Checker) -> str:
    """Which features the claim varies, and over what: a proof speaks of the pairs
    within the domain the certificate states (a narrower one proves less), so the verdict
    names the varied features' bounds and every other feature's that has any (or is
    integer), grouped by bounds, each number as it is (a bound rounded for show could
    name values the proof does not cover); more than SHOWN_BOUNDS such features are
    counted instead."""
    varied = []
    for f in sorted(checker.varied):
        d = checker.domain[f]
        bounds = "" if d.codes is not None else f" in {_interval(d)}"
        if f in checker.inputs and d.codes is None:  # x1's and x2's (version 4)
            one, two = (_interval(checker.dom(f, k)) for k in (0, 1))
            bounds = f" (x1 in {one}, x2 in {two})"
        varied.append(f"{model.features[f]}{bounds}" + (" (integers)" if d.integer else ""))
    groups: dict[str, list[str]] = {}
    for f, d in enumerate(checker.domain):
        if f in checker.varied or d.codes is not None:
            continue  # a coded feature's codes: ``domain_text``
        if d.lb > -INF or d.ub < INF or d.integer:
            shown = _interval(d) + (" (integers)" if d.integer else "")
            groups.setdefault(shown, []).append(model.features[f])
    said = "varying " + ", ".join(varied)
    bounded = sum(map(len, groups.values()))
    rest = bounded + len(checker.varied) < len(checker.domain)
    if bounded > SHOWN_BOUNDS:  # counted: the line stays short (Verdict.domain has each)
        others = f"{bounded} other features" if rest else f"the other {bounded} features"
        within = (
            "at the row's values" if checker.claim.kind == "flip" else "within their stated bounds"
        )
        said += f"; {others} {within} (listed by verify --json)"
    elif groups:
        listed = "; ".join(f"{', '.join(names)} in {shown}" for shown, names in groups.items())
        said += f"; the others bounded as the certificate states: {listed}"
    if groups and rest:
        said += "; the rest unbounded"
    return said


def _interval(d: Domain) -> str:
    if d.missing and d.codes is None and not d.lb <= d.ub:  # no number: NaN alone
        return "{NaN}"
    return f"[{_number(d.lb)}, {_number(d.ub)}]"


def _number(v: float) -> str:
    """A bound as short as it reads back exactly (``%g`` when that is exact)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(v)


def domain_text(model: Model, checker: Checker, named: dict[str, list[str]]) -> str:
    """What a version-3 domain adds to the claim: each coded feature's codes (and the
    categories they name, where the domain names them: the claim is over those), and the
    features that may be missing (the claim covers NaN there); of a domain stated per
    input, each input's."""
    said = []
    for f, name, d in _each_input(model, checker):
        if d.codes is not None:
            codes = tuple(c for c in d.codes if c != d.unlisted)
            listed = ", ".join(str(c) for c in codes)
            if codes == tuple(range(len(codes))) and len(codes) > 3:
                listed = f"0 to {len(codes) - 1}"
            meaning, cats = model.meaning.get(f), named.get(model.features[f])
            if meaning is None and cats is not None:
                meaning = ", ".join(cats[c] if 0 <= c < len(cats) else "?" for c in d.codes)
            if d.unlisted is not None:  # every whole number no split lists, routed as r
                whole = f"every other whole number in {_interval(codes_from_0(d))}"
                listed = (f"{listed}, and " if codes else "") + f"as {d.unlisted} {whole}"
            said.append(f"{name} takes the codes {listed}" + (f" ({meaning})" if meaning else ""))
        if d.missing:
            said.append(f"{name} may be missing")
    return "; " + "; ".join(said) if said else ""


def _each_input(model: Model, checker: Checker):
    """(feature, its name as the verdict says it, its domain): once per feature, and a
    domain stated per input once per input (``x1.name``)."""
    for f, name in enumerate(model.features):
        if f in checker.inputs:
            yield from ((f, f"x{k + 1}.{name}", checker.dom(f, k)) for k in (0, 1))
        else:
            yield f, name, checker.domain[f]
