"""Parsing ``.sens`` text: lark (language/sens.lark) -> parse tree -> typed AST.

Syntax errors become SensErrors that say what was expected in words; the structure
checks (check.py) run on the AST before ``parse`` returns it.
"""

from __future__ import annotations

import json
import re
from difflib import SequenceMatcher
from pathlib import Path

from lark import Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

from ..compiler.errors import InputError, closest, duration_seconds, not_utf8
from ..compiler.options import MODE_ALIASES, work_amount
from ..compiler.query import ANY
from . import ast as nodes
from . import slips
from .check import check_structure
from .errors import SensError, located
from .grammar import KEYWORDS, TOP_KEYWORDS, parser
from .slips import equals_slip, joiner_slip, max_gap_flag, number_slip, vary_lists_nothing


def _tok_pos(tok) -> nodes.Pos:
    return nodes.Pos(tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column)


def _meta_pos(meta) -> nodes.Pos | None:
    if getattr(meta, "empty", True):
        return None
    return nodes.Pos(meta.line, meta.column, meta.end_line, meta.end_column)


def _unquote(tok) -> str:
    try:
        s = json.loads(str(tok))
    except json.JSONDecodeError as e:
        raise ValueError(f"the string {str(tok)[:40]} has a bad escape ({e.msg})") from None
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):  # not text: `treesens fmt` cannot print it
        raise ValueError(f"the string {str(tok)[:40]} holds an unpaired surrogate")
    return s


# rules whose result is made the same way, by kind (the methods of _Build)
def _items(self, meta, ch):
    """A list: its children, as a tuple."""
    return tuple(ch)


def _fields(cls):
    """The rule's children are the node's fields, in order."""
    return lambda self, meta, ch: cls(*ch, pos=_meta_pos(meta))


def _count(cls):
    """A setting of one whole number (threads 4)."""
    return lambda self, meta, ch: cls(int(ch[0]), pos=_meta_pos(meta))


def _block(cls):
    """A named block: its name, then its statements."""
    return lambda self, meta, ch: cls(ch[0], tuple(ch[1:]), pos=_meta_pos(meta))


def _file(cls):
    """A file and, optionally, its label column (data "train.csv" label y)."""
    return lambda self, meta, ch: cls(
        ch[0], ch[1].text if len(ch) > 1 else None, pos=_meta_pos(meta)
    )


@v_args(meta=True)
class _Build(Transformer):
    """The parse tree to the typed AST (one method, or one rule helper, per grammar rule)."""

    # ---- leaves ----
    def name(self, meta, ch):
        tok = ch[0]
        text = _unquote(tok) if tok.type == "STRING" else str(tok)
        return nodes.Name(text, pos=_tok_pos(tok))

    def string(self, meta, ch):
        return nodes.Str(_unquote(ch[0]), pos=_tok_pos(ch[0]))

    def number(self, meta, ch):
        return nodes.Num(float(ch[0]), pos=_tok_pos(ch[0]))

    def text(self, meta, ch):
        return nodes.Text(_unquote(ch[0]), pos=_tok_pos(ch[0]))

    def boolean(self, meta, ch):
        return nodes.Bool(str(ch[0]) == "true", pos=_tok_pos(ch[0]))

    def word(self, meta, ch):
        return nodes.Word(str(ch[0]), pos=_tok_pos(ch[0]))

    def copy_ref(self, meta, ch):
        return nodes.Ref(ch[1], int(str(ch[0])[1]), pos=_tok_pos(ch[0]))

    def plain_ref(self, meta, ch):
        return nodes.Ref(nodes.Name(str(ch[0]), pos=_tok_pos(ch[0])), None, pos=_tok_pos(ch[0]))

    def ref(self, meta, ch):
        x = ch[0]
        return x if isinstance(x, nodes.Ref) else nodes.Ref(x, None, pos=x.pos)

    # ---- top level ----
    def model(self, meta, ch):
        fmt = base = fpos = bpos = objective = num_class = parallel = None
        trust = False
        for c in ch[1:]:
            if c[0] == "format":
                fmt, fpos = c[1], c[2]
            elif c[0] == "trust_pickle":
                trust = True
            elif c[0] == "objective":
                objective = c[1]
            elif c[0] == "num_class":
                num_class = c[1]
            elif c[0] == "num_parallel_tree":
                parallel = c[1]
            else:
                base, bpos = c[1], c[2]
        return nodes.ModelDecl(
            ch[0],
            fmt,
            base,
            trust_pickle=trust,
            objective=objective,
            num_class=num_class,
            num_parallel_tree=parallel,
            pos=_meta_pos(meta),
            format_pos=fpos,
            base_score_pos=bpos,
        )

    def model_format(self, meta, ch):
        return ("format", ch[0].text, _meta_pos(meta))

    def model_base_score(self, meta, ch):
        values = tuple(c.value for c in ch)
        return ("base_score", values[0] if len(values) == 1 else values, _meta_pos(meta))

    def model_objective(self, meta, ch):
        return ("objective", f"{ch[0].text}:{ch[1].text}", _meta_pos(meta))

    def model_num_class(self, meta, ch):
        return ("num_class", int(ch[0]), _meta_pos(meta))

    def model_num_parallel_tree(self, meta, ch):
        return ("num_parallel_tree", int(ch[0]), _meta_pos(meta))

    def model_trust_pickle(self, meta, ch):
        return ("trust_pickle", True, _meta_pos(meta))

    def feature_decl(self, meta, ch):
        kind = lo = hi = cats = None
        for c in ch[1:]:
            if isinstance(c, Token):
                kind = str(c)
            elif c[0] == "range":
                lo, hi = c[1], c[2]
            else:
                cats = c[1]
        return nodes.FeatureDecl(ch[0], kind, lo, hi, cats, pos=_meta_pos(meta))

    def range(self, meta, ch):
        return ("range", ch[0].value, ch[1].value)

    def categories(self, meta, ch):
        return ("categories", tuple(n.text for n in ch))

    # ---- blocks ----
    def defaults(self, meta, ch):
        return nodes.Defaults(tuple(ch), pos=_meta_pos(meta))

    # ---- vary ----
    def sample(self, meta, ch):
        return ("sample", int(ch[0]))

    def vary_subsets(self, meta, ch):
        k = int(ch[0])
        pool = sample = None
        for c in ch[1:]:
            if isinstance(c, tuple) and c and c[0] == "sample":
                sample = c[1]
            else:
                pool = c
        return nodes.VarySubsets(k, pool, sample, pos=_meta_pos(meta))

    # ---- settings ----
    def gap_prob(self, meta, ch):
        return nodes.GapSetting(ch[0].value, "prob", pos=_meta_pos(meta))

    def gap_margin(self, meta, ch):
        return nodes.GapSetting(ch[0].value, "margin", pos=_meta_pos(meta))

    def gap_threshold(self, meta, ch):
        return nodes.GapSetting(ch[0].value, "threshold", ch[1].value, pos=_meta_pos(meta))

    def gap_delta(self, meta, ch):
        direction = str(ch[1]) if len(ch) > 1 else None
        return nodes.GapSetting(ch[0].value, "delta", direction=direction, pos=_meta_pos(meta))

    def gap_max(self, meta, ch):
        # the value is the tolerance (None: max gap's default)
        return nodes.GapSetting(ch[0].value if ch else None, "max", pos=_meta_pos(meta))

    def class_(self, meta, ch):
        s = str(ch[0])
        return ANY if s == "any" else int(s)

    def backend(self, meta, ch):
        # a name, or a race's RACE_SPEC token (race:cpsat+highs)
        names = tuple(n.text if isinstance(n, nodes.Name) else str(n) for n in ch)
        return nodes.Backend(names, pos=_meta_pos(meta))

    def timeout(self, meta, ch):
        return nodes.Timeout(duration_seconds(str(ch[0])), pos=_meta_pos(meta))

    def work(self, meta, ch):
        return nodes.Work(work_amount(str(ch[0])), pos=_meta_pos(meta))

    def budget(self, meta, ch):
        return nodes.Budget(duration_seconds(str(ch[0])), pos=_meta_pos(meta))

    def passes(self, meta, ch):
        return nodes.Passes(tuple(str(t).lower() for t in ch), pos=_meta_pos(meta))

    def baseline(self, meta, ch):
        return nodes.Baseline(ch[0].text, pos=_meta_pos(meta))

    def data_aware(self, meta, ch):
        mode = str(ch[0]).lower()
        return nodes.DataAware(MODE_ALIASES.get(mode, mode), tuple(ch[1:]), pos=_meta_pos(meta))

    def param(self, meta, ch):
        return nodes.Param(ch[0].text, ch[1], pos=_meta_pos(meta))

    def query_kind(self, meta, ch):
        return nodes.KindSetting(ch[0].text, tuple(ch[1:]), pos=_meta_pos(meta))

    def plugin(self, meta, ch):
        return nodes.PluginDecl(ch[0], pos=_meta_pos(meta))

    def option(self, meta, ch):
        return nodes.OptionSetting(ch[0].text, ch[1], pos=_meta_pos(meta))

    # ---- expectations ----
    def expect(self, meta, ch):
        exp = ch[0]
        return nodes.Expect(
            exp["kind"],
            exp.get("op"),
            exp.get("limit"),
            exp.get("percent", False),
            exp.get("by"),
            allow_unknown=len(ch) > 1,
            pos=_meta_pos(meta),
        )

    def expect_insensitive(self, meta, ch):
        return {"kind": "insensitive"}

    def expect_sensitive(self, meta, ch):
        return {"kind": "sensitive"}

    def expect_max_gap(self, meta, ch):
        op, num = ch
        return {"kind": "max_gap", "op": str(op), "limit": num.value}

    def expect_audit(self, meta, ch):
        op, num, *rest = ch
        percent = any(isinstance(c, Token) and c.type == "PERCENT" for c in rest)
        by = next((c for c in rest if isinstance(c, nodes.Name)), None)
        return {
            "kind": "audit",
            "op": str(op),
            "limit": num.value,
            "percent": percent,
            "by": by,
        }

    def or_unknown(self, meta, ch):
        return True

    # ---- constraints ----
    def where(self, meta, ch):
        return nodes.Where(tuple(ch), pos=_meta_pos(meta))

    def compare(self, meta, ch):
        return nodes.Compare(tuple(ch[0::2]), tuple(str(t) for t in ch[1::2]), pos=_meta_pos(meta))

    # ---- the rules a helper builds (above), by helper ----
    start = name_list = set_list = _items
    details = _fields(nodes.DetailsDecl)
    group_decl = _fields(nodes.GroupDecl)
    groups_infer = _fields(nodes.GroupsInfer)
    groups_none = _fields(nodes.GroupsNone)
    bounds_from_data = _fields(nodes.BoundsFromData)
    by = _fields(nodes.By)
    out = _fields(nodes.Out)
    vary_list = _fields(nodes.Vary)
    vary_all = _fields(nodes.VaryAll)
    vary_each_feature = _fields(nodes.VaryEachFeature)
    feature_set = _fields(nodes.FeatureSet)
    vary_each_of = _fields(nodes.VaryEachOf)
    classes = _fields(nodes.Classes)
    fix = _fields(nodes.Fix)
    in_range = _fields(nodes.InRange)
    limit = _count(nodes.Limit)
    threads = _count(nodes.Threads)
    jobs = _count(nodes.Jobs)
    seed = _count(nodes.Seed)
    query = _block(nodes.QueryBlock)
    sweep = _block(nodes.SweepBlock)
    audit = _block(nodes.AuditBlock)
    data = _file(nodes.DataDecl)
    rows = _file(nodes.Rows)


# readable names of the grammar's terminals, for "expected ..." messages
_TERMINAL_WORDS = {
    "NAME": "a name",
    "STRING": 'a "quoted string"',
    "NUMBER": "a number",
    "INT": "a whole number (0, 1, 2, ...)",
    "DURATION": "a duration (30, 30s, 2m, 1e3)",
    "WORK": "work units (4000000, 4M, 250k)",
    "COPY": "x1. or x2.",
    "CMP": "a comparison (<=, <, >=, >, ==, !=)",
    "PASS": "a pass name",
    "MODE": "a data-aware mode",
    "KIND": "a kind (real, integer, binary, categorical)",
    "BOOL": "true or false",
    "ANY": "'any'",
    "RACE_SPEC": "a race (race:NAME+NAME)",
    "$END": "end of file",
}


MAX_EXPECTED = 8  # the most tokens an "expected ..." list names


def _describe_expected(expected) -> str:
    lark = parser()
    words = []
    for name in sorted(set(expected)):
        if name in _TERMINAL_WORDS:
            words.append(_TERMINAL_WORDS[name])
            continue
        try:
            term = lark.get_terminal(name)
        except KeyError:
            words.append(name.lower())
            continue
        pat = term.pattern
        if type(pat).__name__ == "PatternStr":
            words.append(f"'{pat.value}'")
        else:
            words.append(name.lower())
    words = sorted(set(words), key=lambda w: (not w.startswith("'"), w))
    if len(words) > MAX_EXPECTED:  # the keywords cut short; '}', a name, end of file kept
        keywords = [w for w in words if re.fullmatch(r"'[a-z_]+'", w)]
        room = max(MAX_EXPECTED - (len(words) - len(keywords)), 3)
        cut = set(keywords[room:])
        last = keywords[room - 1]
        words = [x for w in words if w not in cut for x in ([w, "..."] if w == last else [w])]
    return ", ".join(words)


def _accepted(e, expected) -> set[str]:
    """The terminals the parser takes where ``e`` stopped it: those that a parse goes on
    with (its interactive parser fed each), not ``expected``, the LALR state's lookahead,
    which a state shared by several rules makes a union of theirs (after 'gap 0.2': '%',
    ']' and 'base_score', none of which can follow)."""
    ip = getattr(e, "interactive_parser", None)
    accepted = set(ip.accepts()) if ip is not None else set()
    return accepted or set(expected or ())


def _keyword_guess(word: str, expected) -> str:
    """ " (did you mean 'timeout'?)" for a word close to a keyword the parser expected
    there, else ""."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word):
        return ""
    return closest(word, sorted(_expected_keywords(expected)), n=1)


def _expected_keywords(expected) -> set[str]:
    """The keywords among the terminals ``expected`` (names of the grammar's terminals)."""
    lark, keywords = parser(), set()
    for name in set(expected):
        try:
            pat = lark.get_terminal(name).pattern
        except KeyError:
            continue
        if type(pat).__name__ == "PatternStr" and re.fullmatch(r"[a-z_]{3,}", pat.value):
            keywords.add(pat.value)
    return keywords


def _hyphened_keyword(before: str, word: str, expected) -> tuple[str, str] | None:
    """(``data-aware``, ``data_aware``): the unexpected ``word`` spells a keyword taken
    there with '-' for '_' (``num-class``), or is its tail (``-aware`` after the keyword
    ``data``, the text ``before`` it ending in that word); else None."""
    m = re.search(r"\b[A-Za-z]\w*$", before)
    if word.startswith("-") and m is not None:  # the keyword was taken at the word before
        written = m.group(0) + word
        taken = {t.name for t in parser().terminals}
    elif "-" in word:
        written, taken = word, expected
    else:
        return None
    keyword = written.replace("-", "_").lower()
    return (written, keyword) if keyword in _expected_keywords(taken) else None


def _open_blocks(text: str):
    """Positions of '{' not closed before the end (lexing only: strings and comments skip)."""
    stack = []
    i, line, col = 0, 1, 1
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            col += j + 1 - i
            i = j + 1
            continue
        if c == "{":
            stack.append((line, col))
        elif c == "}" and stack:
            stack.pop()
        if c == "\n":
            line, col = line + 1, 1
        else:
            col += 1
        i += 1
    return stack


def _block_name_at(text: str, line: int, col: int) -> str:
    src = text.splitlines()[line - 1][: col - 1]
    m = re.search(
        r"(defaults|query|sweep|audit|feature)\s*(\"(?:[^\"\\]|\\.)*\"|[^\s{]*)\s*(?::[^{]*)?$", src
    )
    if not m:
        return "block"
    if m.group(1) == "defaults":
        return "defaults block"
    if m.group(1) == "feature":
        return "category list"
    return f"{m.group(1)} {m.group(2)}".strip()


def parse(text: str, filename: str = "<string>") -> nodes.SensAST:
    """Parse ``.sens`` text into a SensAST; syntax and structure errors raise SensError."""
    ast = parse_items(text, filename)
    check_structure(ast)
    return ast


def parse_items(text: str, filename: str = "<string>") -> nodes.SensAST:
    """``.sens`` text as a SensAST, its syntax checked (SensError), not yet its structure
    (a file's model line, its blocks' statements: check_structure): ``parse``'s first
    half, which a constraint given by a flag (language/where_flag.py) is read with."""
    text = text.removeprefix("\ufeff")  # a byte order mark some editors write
    lark = parser()

    def err(message, line, col):
        return located(message, filename, text, nodes.Pos(line, col, line, col))

    try:
        tree = lark.parse(text)
    except UnexpectedCharacters as e:
        raise _unexpected_characters(e, text, err) from None
    except UnexpectedEOF as e:
        raise _eof_error(text, filename, getattr(e, "expected", ())) from None
    except UnexpectedToken as e:
        tok, expected = e.token, _accepted(e, e.expected)
        if tok.type == "$END":
            raise _eof_error(text, filename, expected) from None
        opens = _open_blocks(text[: tok.start_pos]) if tok.start_pos is not None else []
        shown = str(tok)
        if tok.type == "RBRACE" and not opens:
            raise err("'}' without a matching '{'", tok.line, tok.column) from None
        if opens and shown in TOP_KEYWORDS:
            ol, oc = opens[-1]
            raise err(
                f"unexpected '{shown}' inside the {_block_name_at(text, ol, oc)} opened at line {ol} "
                "(missing '}'?)",
                tok.line,
                tok.column,
            ) from None
        empty_vary = tok.start_pos is not None and vary_lists_nothing(text[: tok.start_pos])
        if empty_vary is not None:
            raise err(*empty_vary) from None
        numbered = tok.start_pos is not None and number_slip(text[: tok.start_pos], tok)
        if numbered:
            raise err(numbered, tok.line, tok.column) from None
        spaced = tok.start_pos is not None and _race_spaced(text[: tok.start_pos])
        if spaced and not _keyword_guess(shown, expected):  # not 'race:cpsat timout 5s'
            raise err(RACE_SPACED, tok.line, tok.column) from None
        if tok.start_pos is not None and re.search(r"\bexpect\s*$", text[: tok.start_pos]):
            raise err(_unknown_expectation(shown), tok.line, tok.column) from None
        before = text[: tok.start_pos] if tok.start_pos is not None else ""
        slip = joiner_slip(shown, _expected_keywords(expected)) or equals_slip(text, tok, expected)
        if slip or ((flag := max_gap_flag(shown)) and "gap" in _expected_keywords(expected)):
            raise err(slip or flag, tok.line, tok.column) from None
        hyphened = _hyphened_keyword(before, shown, expected)
        if hyphened is not None:  # data-aware: the flag's spelling of data_aware
            written, keyword = hyphened
            raise err(
                f"unexpected {written!r} (did you mean {keyword!r}? a .sens keyword joins its "
                "words with '_' where a command-line flag has '-')",
                tok.line,
                tok.column - (len(written) - len(shown)),
            ) from None
        what = _describe_expected(expected)
        guess = _keyword_guess(shown, expected)  # a misspelt keyword: 'timout 5s'
        if re.search(r"\bvary\s+all\s*$", before) and tok.type == "COMMA":
            raise err(
                "'vary all' varies every feature and takes no list; a feature named all is "
                'quoted: vary "all", ...',
                tok.line,
                tok.column,
            ) from None
        spaced_name = _spaced_name(before, tok, expected)
        if spaced_name is not None:  # vary fixed acidity: one name with a space in it
            raise err(spaced_name, tok.line, tok.column) from None
        raise err(
            f"unexpected {_show_token(tok)}{guess}; expected {what}", tok.line, tok.column
        ) from None
    try:
        items = _Build().transform(tree)
    except VisitError as e:  # a value the transformer cannot convert
        meta = getattr(e.obj, "meta", None)
        at = e.obj if hasattr(e.obj, "line") else meta
        line, col = (at.line, at.column) if getattr(at, "line", None) else (1, 1)
        raise err(f"cannot read this: {e.orig_exc}", line, col) from None
    comments = tuple(_comments(text))
    return nodes.SensAST(tuple(items), filename, text, comments)


def _unexpected_characters(e: UnexpectedCharacters, text: str, err) -> SensError:
    """The error for a character no token of the grammar starts with."""
    ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else ""
    if ch == '"':
        return err("unterminated string (a quoted string ends on the same line)", e.line, e.column)
    before = text[: e.pos_in_stream]
    m = re.search(r"\bx(\d+)$", before)
    if ch == "." and m:
        return err(
            f"unknown input 'x{m.group(1)}': the two inputs are x1 and x2",
            e.line,
            e.column - len(m.group(0)),
        )
    if _race_spaced(before):
        return err(RACE_SPACED, e.line, e.column)
    if joined := joiner_slip(re.match(r"[|&]*", text[e.pos_in_stream :]).group(0), {"and"}):
        return err(joined, e.line, e.column)
    if ch.isalpha() and not ch.isascii():  # fix région = ...: bare names are ASCII
        return _non_ascii_name(text, e.pos_in_stream, ch, e.line, e.column, err)
    word = re.match(r"[\w.+-]*", text[e.pos_in_stream :]).group(0)
    if len(word) > 1 and getattr(e, "allowed", None):  # "5x": a word no token reads
        expected = _describe_expected(_accepted(e, e.allowed))
        return err(f"unexpected {word!r}; expected {expected}", e.line, e.column)
    return err(slips.character_slip(before, text[e.pos_in_stream :]), e.line, e.column)


def _spaced_name(before: str, tok, expected) -> str | None:
    """The error of a name with a space in it written unquoted (``vary fixed acidity``,
    ``where x1.fixed acidity <= 2``): a word right after a name on the same line, where a
    list of names takes ',' or a constraint its comparison next; None where the word is
    close to a keyword expected there (``vary age timout 5s``)."""
    m = re.search(r"(?:^|[\s,{.])([A-Za-z_][A-Za-z0-9_-]*)[ \t]+$", before)
    takes = set(expected)
    if tok.type != "NAME" or not {"COMMA", "CMP", "EQUAL"} & takes or m is None:
        return None
    if m.group(1) in KEYWORDS:
        return None
    near = (SequenceMatcher(None, str(tok), k).ratio() for k in _expected_keywords(expected))
    if max(near, default=0.0) >= 0.75:
        return None
    then = ", and the names of a list are separated by ','" if "COMMA" in takes else ""
    return (
        f"unexpected {str(tok)!r} after {m.group(1)!r}: a name with a space in it is quoted "
        f'("{m.group(1)} {tok}"){then}'
    )


RACE_SPACED = "a race is written without spaces, its backends joined by '+' (race:cpsat+highs)"


def _race_spaced(before: str) -> bool:
    """Whether the text up to an error ends in a backend line's race and a space (a race
    written 'race: cpsat+highs' or 'race:cpsat + highs')."""
    return bool(re.search(r"\bbackend\b[^\n#]*\brace:[A-Za-z0-9_+-]*[ \t]+$", before))


def _non_ascii_name(text: str, pos: int, ch: str, line: int, column: int, err):
    """The error of a bare name holding a letter outside ASCII, at the name's start."""
    start = pos
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-"):
        start -= 1
    name = re.match(r"[\w-]*", text[start:]).group(0)
    return err(
        f"the name {name!r} holds a letter outside ASCII ({ch!r}): write it quoted, "
        f'"{name}" (bare names are ASCII letters, digits, _ and -)',
        line,
        column - (pos - start),
    )


EXPECTATIONS = ("insensitive", "sensitive", "max gap", "audit flippable")


def _unknown_expectation(word: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", word):
        head = f"unknown expectation {word!r}{closest(word, EXPECTATIONS)}"
    else:
        head = "'expect' without what to expect"
    return (
        f"{head}; known: expect "
        "insensitive, expect sensitive, expect max gap <= LIMIT, expect audit flippable "
        "<= LIMIT[%] [by COLUMN], each optionally followed by 'or unknown'"
    )


def _show_token(tok) -> str:
    s = str(tok)
    if tok.type == "STRING":
        return f"string {s}"
    if tok.type in ("NUMBER", "INT", "DURATION"):
        return f"number {s}"
    return f"'{s}'"


def _eof_error(text: str, filename: str, expected) -> SensError:
    opens = _open_blocks(text)
    if opens:
        line, col = opens[-1]
        what = _block_name_at(text, line, col)
        return located(
            f"unclosed block: the '{{' of {what} is never closed (missing '}}')",
            filename,
            text,
            nodes.Pos(line, col, line, col),
        )
    lines = text.splitlines() or [""]
    last = len(lines)
    while last > 1 and not lines[last - 1].strip():
        last -= 1
    col = len(lines[last - 1]) + 1
    what = _describe_expected(expected) if expected else "more"
    return located(
        f"unexpected end of file; expected {what}", filename, text, nodes.Pos(last, col, last, col)
    )


def _comments(text: str):
    """Comments with their positions (outside strings)."""
    line = 1
    for raw in text.splitlines():
        i, n = 0, len(raw)
        while i < n:
            c = raw[i]
            if c == '"':
                i += 1
                while i < n and raw[i] != '"':
                    i += 2 if raw[i] == "\\" else 1
                i += 1
                continue
            if c == "#":
                yield nodes.Comment(line, i + 1, raw[i:].rstrip())
                break
            i += 1
        line += 1


# a .sens file is a page of text; the cap stops a path to /dev/zero or a huge file early
MAX_SENS_BYTES = 10_000_000


def parse_file(path: str | Path) -> nodes.SensAST:
    """Read and parse a .sens file; a model file given instead is said to be one."""
    p = Path(path)
    shown = str(path)
    if not p.exists():
        raise InputError("query file not found", shown)
    if p.is_dir():
        raise InputError("is a directory, not a .sens file", shown)
    try:
        with p.open("rb") as fh:
            blob = fh.read(MAX_SENS_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read: {e}", shown) from None
    if len(blob) > MAX_SENS_BYTES:
        raise InputError(
            f"larger than {MAX_SENS_BYTES // 1_000_000} MB, the limit for a .sens file", shown
        )
    try:
        text = blob.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        if _looks_like_model(blob):
            raise InputError(_MODEL_NOT_SENS, shown) from None
        if p.suffix.lower() in _DATA_SUFFIXES:
            raise InputError(_DATA_NOT_SENS, shown) from None
        raise not_utf8(e, shown, column=True) from None
    try:
        return parse(text, shown)
    except SensError:
        if _looks_like_model(blob):
            raise located(_MODEL_NOT_SENS, shown, text, nodes.Pos(1, 1, 1, 1)) from None
        if p.suffix.lower() in _DATA_SUFFIXES:
            raise InputError(_DATA_NOT_SENS, shown) from None
        raise


_MODEL_NOT_SENS = (
    "this looks like a model file, not a .sens query file (to ask about a model "
    "directly: treesens check MODEL --vary FEATURE ...; the .sens language: docs/language.md)"
)


# a data file given instead of a .sens file, told by its name (as a model's reader does)
_DATA_SUFFIXES = (".csv", ".tsv", ".parquet")
_DATA_NOT_SENS = (
    "a data file, not a .sens query file: a .sens file names its data with a line  "
    'data "ROWS.csv"  (treesens test FILE.sens --data ROWS.csv replaces it; docs/language.md)'
)


def _looks_like_model(blob: bytes) -> bool:
    """A model given instead of a .sens file: JSON (an XGBoost model or dump, a LightGBM
    JSON dump), UBJSON (binary, starts with '{'), or a LightGBM text model."""
    head = blob[:4096].lstrip()
    return head[:1] in (b"{", b"[") or head.startswith(b"tree\n") or head.startswith(b"tree\r\n")
