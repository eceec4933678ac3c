"""The grammar of ``.sens`` (language/sens.lark) loaded by lark, and what is read from it.

The keywords are read from the parser's terminals, so the grammar is their only source.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib.resources import files

from lark import Lark

# a name that lexes as a bare NAME token (else it is written quoted)
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*\Z")
# a word only a terminal that takes any name matches: it tells those terminals apart
_ANY_NAME = "zqnotakeyword"


@lru_cache(maxsize=1)
def parser() -> Lark:
    """The LALR parser of the language (built once)."""
    grammar = files("treesens.language").joinpath("sens.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def grammar_keywords(lark: Lark) -> frozenset[str]:
    """The words the grammar's terminals match other than as a name: the anonymous
    keywords ("model", "vary", ...) and the fixed words of named terminals (KIND's
    "real", BOOL's "true", NUMBER's "inf", ...)."""
    words: set[str] = set()
    for term in lark.terminals:
        pattern = re.compile(term.pattern.to_regexp())
        if pattern.fullmatch(_ANY_NAME):  # NAME, PASS, MODE: any name, no keyword
            continue
        source = term.pattern.value
        words.update(w for w in re.findall(r"[A-Za-z_]+", source) if pattern.fullmatch(w))
    return frozenset(words)


# the words of the grammar: a name equal to one is written quoted by the conservative fmt
KEYWORDS: frozenset[str] = grammar_keywords(parser())


def top_keywords(lark: Lark) -> frozenset[str]:
    """The keywords that start a top-level item (model, data, query, ...): the words the
    parser accepts at the start of a file."""
    accepted = lark.parse_interactive("").accepts()
    return frozenset(
        t.pattern.value
        for t in lark.terminals
        if t.name in accepted and t.pattern.value in KEYWORDS
    )


# the keywords a file's items start with: one inside an unclosed block means a missing '}'
TOP_KEYWORDS: frozenset[str] = top_keywords(parser())
