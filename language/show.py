"""How names, values and constraints of ``.sens`` are written: by the formatter and in
messages. A :class:`FormatMode` says how cautiously names are quoted."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from ..compiler.errors import category_range
from .ast import Bool, InRange, Name, Node, Num, Ref, Text, Word
from .grammar import KEYWORDS, NAME_RE

VARY_WORDS = frozenset({"all", "each", "subsets"})  # words that may follow 'vary'
OPERAND_WORDS = frozenset({"true", "false", "inf"})  # lexed as values where a value may stand


@dataclass(frozen=True)
class FormatMode:
    """``quote_keywords``: quote every name that is a keyword of the grammar, even where
    the contextual lexer would read it as a name (the fallback of ``format_sens``)."""

    quote_keywords: bool = False


PLAIN = FormatMode()
CONSERVATIVE = FormatMode(quote_keywords=True)


def fmt_num(v: float) -> str:
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return repr(float(v))


def fmt_duration(s: float) -> str:
    for unit, k in (("h", 3600), ("m", 60)):
        if s >= k and s % k == 0:
            return f"{int(s // k)}{unit}"
    if s == int(s):
        return f"{int(s)}s"
    return np.format_float_positional(s, trim="-") + "s"


def fmt_name(s: str, reserved: frozenset[str] = frozenset(), mode: FormatMode = PLAIN) -> str:
    """A name bare when it lexes as one at its place (``reserved``: the keywords that may
    stand there too), else quoted."""
    if NAME_RE.match(s) and s not in reserved and not (mode.quote_keywords and s in KEYWORDS):
        return s
    return json.dumps(s, ensure_ascii=False)


def fmt_ref(r: Ref, compare: bool = False, mode: FormatMode = PLAIN) -> str:
    if r.copy is not None:
        return f"x{r.copy}.{fmt_name(r.name.text, mode=mode)}"
    # a bare name inside a comparison came from a NAME token: print it bare
    if compare and NAME_RE.match(r.name.text):
        return r.name.text
    return fmt_name(r.name.text, OPERAND_WORDS, mode)


def show_value(v: Node) -> str:
    """A value (number, string, boolean or word) as it is written."""
    if isinstance(v, Num):
        return fmt_num(v.value)
    if isinstance(v, Text):
        return json.dumps(v.value, ensure_ascii=False)
    if isinstance(v, Bool):
        return "true" if v.value else "false"
    if isinstance(v, Word):
        return v.value
    raise TypeError(v)


def fmt_operand(x: Node, mode: FormatMode = PLAIN) -> str:
    return fmt_ref(x, compare=True, mode=mode) if isinstance(x, Ref) else show_value(x)


def fmt_constraint(c: Node, mode: FormatMode = PLAIN) -> str:
    if isinstance(c, InRange):
        return f"{fmt_ref(c.ref, mode=mode)} in [{fmt_num(c.lo.value)}, {fmt_num(c.hi.value)}]"
    out = fmt_operand(c.operands[0], mode)
    for op, x in zip(c.ops, c.operands[1:]):
        out += f" {op} {fmt_operand(x, mode)}"
    return out


def fmt_names(names: tuple[Name, ...], mode: FormatMode = PLAIN) -> str:
    return ", ".join(fmt_name(n.text, mode=mode) for n in names)


def show(x: object) -> str:
    """An operand of a comparison, for a message."""
    if isinstance(x, Num):
        return fmt_num(x.value)
    if isinstance(x, Text):
        return json.dumps(x.value)
    if isinstance(x, Bool):
        return "true" if x.value else "false"
    if isinstance(x, Ref):
        return fmt_ref(x, compare=True)
    if isinstance(x, Word):
        return x.value
    return str(x)


def show_range(lo: float, hi: float, categories: tuple[str, ...] | None = None) -> str:
    """``[1, 2]``, ``>= 3``; a categorical feature's codes by the names a .sens file
    writes (``"Sud"``, ``one of "Nord", "Ouest"``), not by the codes it never sees."""
    if (named := category_range(categories, lo, hi)) is not None:
        return named
    if lo == hi:
        return fmt_num(lo)
    if lo == -math.inf:
        return f"<= {fmt_num(hi)}"
    if hi == math.inf:
        return f">= {fmt_num(lo)}"
    return f"[{fmt_num(lo)}, {fmt_num(hi)}]"


def py_value(v: Node) -> object:
    """The Python value of a value node (a whole number as an int)."""
    if isinstance(v, Num):  # not inf: int(inf) raises
        return int(v.value) if abs(v.value) < 2**53 and v.value == int(v.value) else v.value
    return v.value
