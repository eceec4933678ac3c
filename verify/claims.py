"""What a certificate claims, and the rows a pair meeting the opposite would satisfy.

A claim says that no pair (x1, x2), equal outside the varied features, meets a
condition. The checker derives that condition's linear rows on the raw scores itself,
from the claim and the model (never from the certificate): every pair meeting the
condition satisfies every row, so a box where some row's largest value stays below its
threshold holds no such pair.

A row reads ``sum_k a[k] * raw_k(x1) + sum_k b[k] * raw_k(x2) >= rhs`` (``a`` or ``b``
None: that input does not enter it). The claims:

* a binary gap (``gap_kind`` "prob": P(x1) >= 0.5 + g and P(x2) <= 0.5 - g; "margin":
  raw(x1) >= g and raw(x2) <= -g in logit units; a forest's probabilities take 0.5 +- g
  for both kinds): rows ``x1``, ``x2`` and their sum ``sum``;
* a multiclass gap between classes c1 and c2 (a probability ratio r >= 1, or a margin
  m = ln r): x1 decided c1 over every other class o (``x1/o``: raw_c1 - raw_o >= ln r
  with softmax; P_c1 - r P_o >= 0, or P_c1 - P_o >= m, for a forest's probabilities),
  x2 decided c2 (``x2/o``), and ``sum``, a row of x1 plus a row of x2 whose weights are
  opposite; "any" for a class: one part of the proof per pair of classes it allows;
* an audit row's flip (``flip``, version 4): x1 is the row (its domain a point on every
  feature), and no x2 of x2's domain is decided ``to`` (binary: P(x2) <= 0.5 - g, to 0,
  or P(x2) >= 0.5 + g, to 1) or of class c2 (multiclass ``classes`` [c1, c2], c1 the
  row's class, c2 a class or "any": x2 of c2 by the ratio over every other class) with
  the gap: rows of x2 alone, ``x2`` or ``x2/o``, as the gap's (x2 decided 1 takes the
  gap's ``x1`` row, asked of x2); no ``sum``. Nothing is claimed of x1's prediction;
* a regressor's change by at least D (``change``): f(x2) - f(x1) >= D (up) or
  f(x1) - f(x2) >= D (down). Where both inputs range over the same domain, swapping them
  maps the pairs going up onto those going down: a proof for one direction proves the
  claim in both (and in "either"). Where a varied feature's domain is stated per input
  (version 4), no swap maps the pairs onto themselves: the claim is of its direction,
  a part per direction it names (``one_way``). A regressor predicting exp(raw) has no such row: its
  boxes are closed by ``link`` steps (verify/link.py).

A probability claim is of P as the library computes it from its raw scores, which the
rows read: a row asks less than the exact logit (or ln r) by the library's rounding of
its link, so that every pair the library's predict puts at the gap meets it.

* Binary: |P - sigmoid(r)| <= REL * sigmoid(r) + ABS for the library's raw score r
  (``SIGMOID_ROUNDING``): XGBoost's float32 sigmoid, 1 / (1 + expf(-r)), is within a few
  float32 ulps of the exact one relatively (expf, the sum and the quotient; its clamp
  at r = -88.7 only raises a P near 0, which no x1 row reads); onnxruntime's LOGISTIC
  takes 1 - P of -r for r < 0, an absolute float32 ulp of 1. So P(x1) >= 0.5 + g gives
  sigmoid(r) >= (0.5 + g - ABS) / (1 + REL), and P(x2) <= 0.5 - g gives sigmoid(r) <=
  (0.5 - g + ABS) / (1 - REL) (a sigmoid below float32's normal range, where the bound
  need not hold, lies under any 0.5 - g a double states). Float64 links (LightGBM,
  scikit-learn, CatBoost, XGBoost's logitraw) round by a few 2^-53: 2^-40 covers them.
  Neither bound reaches treesens' own rows, which ask 2^-20 less of P
  (compiler/query.py SIGMOID_ROUNDING): its certificates verify.
* Softmax ratios: P_c / P_o is exp(raw_c - raw_o) up to the float32 rounding of
  raw_o - max, both expf and both quotients (the sum cancels): for a pair meeting the
  ratio c is the largest class and raw_o - max lies within ln r <= ln 1e6 of 0, so ln of
  the ratio moves by less than 2^-18 (``SOFTMAX_ROUNDING``; float64: 2^-40), what
  treesens' own rows ask less (compiler/query.py SOFTMAX_ROUNDING).

A replayed pair of a float32 link is judged on the library's own probabilities
(``library_misses``); of a float64 link, on its raw scores against these rows, which is
sound and refuses only a pair within about 2^-40 of the claim.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from .models import Model

ANY = "any"
DIRECTIONS = ("up", "down", "either")
MAX_RATIO = 1e6  # a multiclass ratio beyond this is not a claim the checker takes
# per float32 link (Model.float32_link) or not, the library's P against the exact
# sigmoid of its raw score: (REL, ABS) with |P - sigmoid(r)| <= REL * sigmoid(r) + ABS
SIGMOID_ROUNDING = {True: (2.0**-21, 2.0**-22), False: (2.0**-40, 0.0)}
# and ln(P_c / P_o) against raw_c - raw_o near a ratio's threshold
SOFTMAX_ROUNDING = {True: 2.0**-18, False: 2.0**-40}


@dataclass(frozen=True)
class Row:
    a: tuple[float, ...] | None  # per output, the weight of x1's raw score
    b: tuple[float, ...] | None  # and of x2's
    rhs: float

    @property
    def weight(self) -> float:
        """How many raw scores (counted by |weight|) the row adds: its relaxation's factor."""
        return sum(abs(v) for v in (self.a or ())) + sum(abs(v) for v in (self.b or ()))


@dataclass(frozen=True)
class Claim:
    kind: str  # "gap", "flip" or "change"
    value: float  # the gap (binary, multiclass ratio or margin) or the change D
    gap_kind: str = "prob"  # "prob" or "margin"
    classes: tuple = ()  # a multiclass gap's (c1, c2): class numbers or "any"
    direction: str = "up"  # a change's
    max_gap_upper: bool = False  # the value is a max gap's certified upper bound
    to: int | None = None  # a binary flip's: the decision no x2 gets with the gap

    def describe(self, one_way: bool = False) -> str:
        """The claim in words, its value as short as it reads back exactly (%g when that
        is exact: 0.49999999 is not "0.5", a claim the proof does not make); ``one_way``:
        a change's direction named (its inputs' domains differ)."""
        value = exact_text(self.value)
        if self.kind == "change":
            way = {"up": " up from x1 to x2", "down": " down from x1 to x2"}
            return f"no change of {value} or more" + (
                way.get(self.direction, "") if one_way else ""
            )
        kind = "a margin gap" if self.gap_kind == "margin" else "a gap"
        if self.kind == "flip":
            return self._flip_text(value)
        if self.classes:
            c1, c2 = self.classes
            kind = "a margin gap" if self.gap_kind == "margin" else "a probability ratio"
            return f"no pair reaches {kind} of {value} (class {c1} -> class {c2})"
        return f"no pair reaches {kind} of {value}"

    def _flip_text(self, value: str) -> str:
        """A flip claim in words: what no x2 of its domain gets."""
        if not self.classes:
            kind = "a margin gap" if self.gap_kind == "margin" else "a gap"
            return f"no x2 is decided {self.to} with {kind} of {value}"
        c1, c2 = self.classes
        kind = "a margin gap" if self.gap_kind == "margin" else "a probability ratio"
        to = "another class" if c2 == ANY else f"class {c2}"
        return f"no x2 reaches {to} by {kind} of {value} from class {c1}"


def exact_text(v: float) -> str:
    """A number as short as it reads back exactly (``%g`` when that is exact)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


def claim_of(doc: dict) -> Claim:
    """The claim a certificate states: version 1, a binary probability gap (``gap``);
    version 2, its ``question.claim``."""
    q = doc["question"]
    if int(doc.get("version", 1)) == 1:
        return Claim("gap", float(q["gap"]), max_gap_upper=q.get("claim") == "max_gap_upper")
    c = q["claim"]
    upper = bool(q.get("max_gap_upper", False))
    if c["kind"] == "change":
        direction = str(c.get("direction", "either"))
        if direction not in DIRECTIONS:
            raise ValueError(f"direction {direction!r}")
        return Claim("change", float(c["delta"]), direction=direction, max_gap_upper=upper)
    if c["kind"] not in ("gap", "flip"):
        raise ValueError(f"unknown claim kind {c['kind']!r}")
    kind = str(c.get("gap_kind", "prob"))
    if kind not in ("prob", "margin"):
        raise ValueError(f"gap kind {kind!r}")
    classes = tuple(_class(v) for v in c.get("classes") or ())
    if c["kind"] == "flip":
        to = c.get("to")
        if upper or (to is not None and (type(to) is not int or to not in (0, 1))):
            raise ValueError("a flip claim's 'to' is the decision 0 or 1, and no max gap")
        if classes and classes[0] == ANY:
            raise ValueError("a flip claim names the row's class first")
        return Claim("flip", float(c["gap"]), kind, classes, to=to)
    return Claim("gap", float(c["gap"]), kind, classes, max_gap_upper=upper)


def _class(v):
    """A class as a claim or a part names it: a whole number, or "any" (a claim's). One
    that is no whole number (0.9, "1", true) is no class of the model: int() would check
    the claim of another class than the one stated."""
    if v == ANY or (type(v) is int):
        return v
    raise ValueError(f"a class is a whole number or 'any', not {json.dumps(v)}")


def required_parts(model: Model, claim: Claim, one_way: bool = False) -> list[tuple]:
    """The parts a proof of the claim needs, by key: a multiclass gap's (c1, c2) pairs
    (every pair the claim's classes allow, the two different); a change's directions
    where its inputs' domains differ (``one_way``: "either" needs both); one part
    otherwise."""
    if claim.kind == "change":
        if model.task != "regressor":
            raise ValueError("a change is claimed of regressors")
        if one_way:
            return [("up",), ("down",)] if claim.direction == "either" else [(claim.direction,)]
        return [()]
    if model.task == "regressor":
        raise ValueError(f"a regressor's claim is a change, not a {claim.kind}")
    if model.n_outputs == 1:
        if claim.classes:
            raise ValueError("a binary model's claim names no classes")
        if claim.kind == "flip" and claim.to is None:
            raise ValueError("a binary flip claim names the decision x2 gets ('to': 0 or 1)")
        return [()]
    if claim.kind == "flip" and claim.to is not None:
        raise ValueError("a multiclass flip claim names classes, not 'to'")
    if len(claim.classes) != 2:
        raise ValueError("a multiclass claim names two classes")
    every = range(model.n_outputs)
    sides = [list(every) if c == ANY else [c] for c in claim.classes]
    for c in claim.classes:
        if c != ANY and not 0 <= c < model.n_outputs:
            raise ValueError(f"class {c} out of range")
    pairs = [(a, b) for a in sides[0] for b in sides[1] if a != b]
    if not pairs:  # c1 -> c1 asks nothing a proof could rule out
        raise ValueError(f"classes {claim.classes}: no pair of two different classes")
    return pairs


def part_key(model: Model, claim: Claim, part: dict, one_way: bool = False) -> tuple:
    """The key a part of the proof answers (``required_parts``' form)."""
    if claim.kind == "change" and one_way:
        return (str(part.get("direction", "up")),)
    if claim.kind == "change" or model.n_outputs == 1:
        return ()
    a, b = part["classes"]
    if ANY in (a, b):
        raise ValueError("a part names the two classes it proves, not 'any'")
    return (_class(a), _class(b))


def part_rows(model: Model, claim: Claim, part: dict) -> dict[str, Row]:
    """The rows of the condition a part of the proof rules out, by name."""
    if claim.kind == "change":
        if model.link == "exp":  # no row states it: its boxes are ``link`` steps (link.py)
            return {}
        return _change_rows(claim, str(part.get("direction", "up")))
    if model.n_outputs == 1:
        rows = _binary_rows(model, claim)
    else:
        c1, c2 = part_key(model, claim, part)
        rows = _multiclass_rows(model, claim, c1, c2)
    if claim.kind != "flip":
        return rows
    if model.n_outputs == 1 and claim.to == 1:  # x2 decided 1: the gap's high side, of x2
        return {"x2": Row(None, rows["x1"].a, rows["x1"].rhs)}
    return {name: r for name, r in rows.items() if name.startswith("x2")}


def _binary_rows(model: Model, claim: Claim) -> dict[str, Row]:
    g = claim.value
    if claim.gap_kind == "prob" and not 0.0 <= g < 0.5:
        raise ValueError(f"gap {g} out of range (a binary gap lies in [0, 0.5))")
    if not (math.isfinite(g) and g >= 0.0):
        raise ValueError(f"margin gap {g} out of range")
    if model.link == "proba":  # P(x1) >= 0.5 + g, P(x2) <= 0.5 - g, whatever the kind
        if g >= 0.5:
            raise ValueError(f"gap {g} out of range (probabilities)")
        hi, lo = 0.5 + g, 0.5 - g
    elif model.link == "logistic" and claim.gap_kind == "prob":
        rel, ab = SIGMOID_ROUNDING[model.float32_link]  # the library's rounding of P
        hi = _logit((0.5 + g - ab) / (1.0 + rel)) / model.margin_per_logit  # raw units
        lo = _logit((0.5 - g + ab) / (1.0 - rel)) / model.margin_per_logit
    elif model.link == "logistic":
        hi = g / model.margin_per_logit  # in the trees' raw units
        lo = -hi
    else:
        raise ValueError(f"a binary gap on a model with link {model.link}")
    return {
        "x1": Row((1.0,), None, hi),
        "x2": Row(None, (-1.0,), -lo),
        "sum": Row((1.0,), (-1.0,), hi - lo),
    }


def probability_claim(model: Model, claim: Claim) -> bool:
    """Whether the claim is of the probabilities a float32 link computes (its replayed
    pairs are judged on them: ``library_misses``)."""
    return (
        model.float32_link
        and claim.kind in ("gap", "flip")
        and claim.gap_kind == "prob"
        and model.link in ("logistic", "softmax")
    )


def library_misses(claim: Claim, key: tuple, proba) -> bool:
    """Whether a pair misses a probability claim's condition (part ``key``), judged on
    the library's probabilities of its two inputs (``proba[k]``: a binary model's
    P(class 1) alone, else one per class) and compared in float64 as treesens' replay
    compares them: P(x1) >= 0.5 + g and P(x2) <= 0.5 - g; x1 of class c1 by the ratio r
    over every other class (P_c1 >= r P_o), x2 of c2."""
    g = claim.value
    flip = claim.kind == "flip"  # x2's side alone
    if not key:
        p1, p2 = float(proba[0][-1]), float(proba[1][-1])
        if flip:
            return not (p2 >= 0.5 + g if claim.to == 1 else p2 <= 0.5 - g)
        return not (p1 >= 0.5 + g and p2 <= 0.5 - g)

    def decided(p, c: int) -> bool:
        return all(float(p[c]) >= g * float(p[o]) for o in range(len(p)) if o != c)

    c1, c2 = key
    return not ((flip or decided(proba[0], c1)) and decided(proba[1], c2))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _multiclass_rows(model: Model, claim: Claim, c1: int, c2: int) -> dict[str, Row]:
    n = model.n_outputs
    if c1 == c2 or not (0 <= c1 < n and 0 <= c2 < n):
        raise ValueError(f"classes {c1}, {c2}: two different classes of {n}")
    g = claim.value
    if claim.gap_kind == "prob":
        if not 1.0 <= g <= MAX_RATIO:
            raise ValueError(f"ratio {g} out of range [1, {MAX_RATIO:g}]")
        margin = math.log(g) - SOFTMAX_ROUNDING[model.float32_link]
    else:
        if not 0.0 <= g <= math.log(MAX_RATIO):
            raise ValueError(f"margin gap {g} out of range")
        if model.link == "proba" and g >= 1.0:
            raise ValueError(f"margin gap {g}: probabilities differ by less than 1")
        margin = g  # as stated: ln(exp(g)) may round an ulp off it

    def row(c: int, o: int) -> tuple[tuple[float, ...], float]:
        coefs = [0.0] * n
        coefs[c] = 1.0
        if model.link == "softmax":
            coefs[o] = -1.0
            return tuple(coefs), margin
        if model.link != "proba":
            raise ValueError(f"a multiclass gap on a model with link {model.link}")
        if claim.gap_kind == "margin":
            coefs[o] = -1.0
            return tuple(coefs), g
        coefs[o] = -g  # a ratio
        return tuple(coefs), 0.0

    rows: dict[str, Row] = {}
    for o in range(n):
        if o != c1:
            coefs, rhs = row(c1, o)
            rows[f"x1/{o}"] = Row(coefs, None, rhs)
    for o in range(n):
        if o != c2:
            coefs, rhs = row(c2, o)
            rows[f"x2/{o}"] = Row(None, coefs, rhs)
    one, two = rows[f"x1/{c2}"], rows[f"x2/{c1}"]
    if all(x == -y for x, y in zip(one.a, two.b, strict=True)):  # opposite: they sum
        rows["sum"] = Row(one.a, two.b, one.rhs + two.rhs)
    return rows


def _change_rows(claim: Claim, direction: str) -> dict[str, Row]:
    d = claim.value
    if not (math.isfinite(d) and d > 0.0):
        raise ValueError(f"change {d} must be a finite number above 0")
    if direction == "up":  # f(x2) - f(x1) >= d
        return {"change": Row((-1.0,), (1.0,), d)}
    if direction == "down":
        return {"change": Row((1.0,), (-1.0,), d)}
    raise ValueError(f"a part's direction is up or down, not {direction!r}")
