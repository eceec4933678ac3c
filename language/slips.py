"""Slips behind a syntax error that the parser's own message would hide: the words a
writer meant, told where they wrote them (language/parse.py asks)."""

from __future__ import annotations

import re

from .grammar import KEYWORDS

# a vary whose list is empty, its line ending there: the next line's keyword (gap, expect)
# was read as the feature it lists
_EMPTY_VARY = re.compile(
    r"\bvary(?:[ \t]+each[ \t]+of)?[ \t]*\r?\n\s*([A-Za-z_][A-Za-z0-9_]*)[ \t]*$"
)


def vary_lists_nothing(before: str) -> tuple[str, int, int] | None:
    """The error, line and column of a ``vary`` (or ``vary each of``) that lists no
    feature on its line, where the next line's first word is a keyword the parser took
    for the feature (``vary each of`` then ``expect max gap <= 0.1`` said "unknown
    expectation 'max'"); None otherwise."""
    m = _EMPTY_VARY.search(before)
    if m is None or m.group(1) not in KEYWORDS:
        return None
    line = before.count("\n", 0, m.start()) + 1
    col = m.start() - (before.rfind("\n", 0, m.start()) + 1) + 1
    return (
        f"this vary lists no feature (the next line's {m.group(1)!r} was read as one): "
        "write its features on the vary's line, vary FEATURE[, FEATURE...]",
        line,
        col,
    )


# a vary's list so far, on its line: a number next is a feature given by its index
_VARY_SO_FAR = re.compile(r"\bvary(?:[ \t]+each[ \t]+of)?(?:[ \t]+[^\n{}#]*,)?[ \t]*$")


def vary_numbered(before: str, tok) -> str | None:
    """The error for a vary that gives a feature by its index (``vary 3``, as ``--vary 3``
    and ``vary=3`` take one), which a .sens file does not; None otherwise."""
    if tok.type not in ("NUMBER", "INT") or not _VARY_SO_FAR.search(before):
        return None
    return (
        f"unexpected number {tok}: a .sens file names its features (vary NAME), where "
        "--vary and the API's vary= also take an index"
    )


# a number then '%' where a number alone goes (gap 20%): the error says the number meant
_PERCENT_AFTER = re.compile(r"(?<![\w.])(\d+(?:\.\d*)?|\.\d+)[ \t]*$")


def percent_number(before: str, tok) -> str | None:
    """The error for a percent given where a number goes (``gap 20%``; only an audit
    expectation's limit takes one), with the number it stands for; None otherwise."""
    m = _PERCENT_AFTER.search(before)
    if str(tok) != "%" or m is None:
        return None
    return (
        f"unexpected '%': {m.group(1)}% is written {float(m.group(1)) / 100:g} (a percent is "
        "only an audit's limit: expect audit flippable <= 2%)"
    )


# a number just before a ',' after a word or comparison that takes one number (gap 0,2):
# a decimal comma (not classes 0,1, whose slip is another)
_NUMBER_BEFORE = re.compile(
    r"(?:\b(?:gap|margin|above|below|delta|tolerance|timeout|budget)|[<>=])[ \t]*(\d+)$"
)


def decimal_comma(before: str, tok) -> str | None:
    """The error for a decimal comma (``gap 0,2``, as some locales write 0.2), where the
    parser takes no ',' after the number; None otherwise."""
    m = _NUMBER_BEFORE.search(before)
    if str(tok) != "," or m is None:
        return None
    n = m.group(1)
    return f"unexpected ',' after {n}: a number's decimals follow a '.' (0.2, not 0,2)"


# a duration's number, then a space before its unit (timeout 10 s)
_DURATION_SPACED = re.compile(r"\b(timeout|budget)[ \t]+(\d+(?:\.\d*)?|\.\d+)[ \t]+$")


def duration_spaced(before: str, tok) -> str | None:
    """The error for a duration's unit set apart from its number (``timeout 10 s``);
    None otherwise."""
    m = _DURATION_SPACED.search(before)
    if m is None or str(tok) not in ("ms", "s", "m", "h"):
        return None
    written = f"{m.group(1)} {m.group(2)}{tok}"
    return (
        f"unexpected {str(tok)!r}: a duration's unit follows its number with no space ({written})"
    )


# a class pair separated by a comma (classes 0,1, as the CLI's --classes 0,1 writes it)
_CLASS_BEFORE = re.compile(r"\bclasses[ \t]+(\w+)[ \t]*$")


def class_pair_comma(before: str, tok) -> str | None:
    """The error for a .sens file's class pair written as the CLI's (``classes 0,1``);
    None otherwise."""
    m = _CLASS_BEFORE.search(before)
    if str(tok) != "," or m is None:
        return None
    return "unexpected ',': a class pair is written with '->' (classes 0 -> 1)"


def number_slip(before: str, tok) -> str | None:
    """The error for a number a .sens file does not take so (``vary 3``, ``gap 20%``,
    ``gap 0,2``, ``timeout 10 s``, ``classes 0,1``)."""
    return (
        vary_numbered(before, tok)
        or percent_number(before, tok)
        or decimal_comma(before, tok)
        or duration_spaced(before, tok)
        or class_pair_comma(before, tok)
    )


def max_gap_flag(word: str) -> str | None:
    """The error of the command line's --max-gap written as a word (max_gap, max-gap,
    maxgap) where a query's lines go; None for another word."""
    if re.sub(r"[-_]", "", word.lower()) != "maxgap":
        return None
    return (
        f"unexpected {word!r}: a .sens query asks for its max gap with 'gap max' (as "
        "--max-gap on the command line; 'gap max tolerance 0.01' to set it)"
    )


def joiner_slip(word: str, expected_keywords: set[str]) -> str | None:
    """The error of constraints joined otherwise than by 'and' where 'and' may come
    (``x1.age <= 30 or ...`` was "did you mean 'work'?", ``&&`` an unexpected character);
    None for another word, or where no constraint ends."""
    if "and" not in expected_keywords:
        return None
    if word.lower() in ("or", "||", "|"):
        return (
            f"unexpected {word!r}: the constraints of a where clause all hold at once, "
            "joined by 'and'; for one or another, ask a query for each"
        )
    if word in ("&&", "&"):
        return f"unexpected {word!r}: constraints are joined by 'and'"
    return None


def equals_slip(text: str, tok, expected) -> str | None:
    """The error of '=' alone where a comparison goes (``where age = 30``, as SQL and a
    ``fix`` write it; not ``=!``, another slip), the token ``tok`` of ``text``: a
    comparison's equals is '=='; None otherwise. ``expected``: the names of the terminals
    the parser expected."""
    here = text[tok.start_pos : tok.start_pos + 2] if tok.start_pos is not None else ""
    if here[:1] != "=" or here[1:] in ("!", "<", ">") or "CMP" not in set(expected):
        return None
    return "unexpected '=': a comparison tests equality with '==' (age == 30)"


# a path given bare after the statement that names a file: its first character is no token
_PATH_STATEMENT = re.compile(r"\b(model|data|from|plugin)[ \t]+$")


def character_slip(before: str, rest: str) -> str:
    """The error of a character no token starts with, ``before`` the text before it and
    ``rest`` the text from it: a path left unquoted (``model /models/m.json``), a ';'
    ending a statement, a comment begun with '//', a range in parentheses; else the
    character named alone."""
    ch = rest[:1]
    if (m := _PATH_STATEMENT.search(before)) and ch in "/\\~.":
        return f'unexpected character {ch!r}: a path is quoted ({m.group(1)} "path/to/file")'
    if ch == ";":
        return "unexpected character ';': statements are set apart by a new line or a space"
    if rest.startswith("//"):
        return "unexpected '//': a comment starts with '#'"
    if ch == "(" and re.search(r"\bin[ \t]*$", before):
        return "unexpected character '(': a range is written in square brackets (in [10, 15])"
    return f"unexpected character {ch!r}"
