"""The ``.sens`` query language: parse, check, format and run query files.

    text --lark (grammar/sens.lark)--> parse tree --_Build--> SensAST (typed dataclasses)
         --_check_structure--> (no model needed) --load_queries--> SensFile with Query objects

Every query of a file ends as the same ``compiler.query.Query`` that ``treesens check``
flags and the Python API build (through ``frontends.api.make_query``). Errors are
``SensError``: ``FILE:LINE:COL: message``, then the offending line, then a caret.
The language is documented in docs/language.md.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import random
import re
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ..compiler.errors import FEATURES, InputError, closest
from ..compiler.query import ANY, FeatureBound, FeatureRelation, Query

# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------


class SensError(InputError):
    """A problem at a place in a ``.sens`` file: ``FILE:LINE:COL: message``, the line, a caret.

    ``located`` tells the CLI to print the message as it is (no ``treesens: error:``
    prefix), so the first line is exactly ``FILE:LINE:COL: message``.
    """

    located = True

    def __init__(
        self, message: str, filename: str, line: int, column: int, source_line: str | None = None
    ):
        self.filename, self.line, self.column = filename, line, column
        self.source_line = source_line
        super().__init__(message, f"{filename}:{line}:{column}")

    def __str__(self) -> str:
        head = f"{self.where}: {self.message}"
        if self.source_line is None:
            return head
        src, at = _clip(self.source_line.rstrip("\r\n"), max(self.column - 1, 0))
        caret = "".join(c if c == "\t" else " " for c in src[:at]) + "^"
        return f"{head}\n{src}\n{caret}"


CONTEXT_WIDTH = 100  # the most characters of the offending line an error shows


def _clip(src: str, at: int, width: int = CONTEXT_WIDTH) -> tuple[str, int]:
    """The offending line cut to about ``width`` characters around index ``at`` (``...``
    marks a cut), and the index of ``at`` in the cut line: a model given instead of a
    .sens file has a first line of megabytes."""
    if len(src) <= width:
        return src, at
    start = min(max(at - width // 2, 0), len(src) - width)
    if start > 0:
        start += 3  # room for the leading "..."
    end = start + width - (3 if start > 0 else 0)
    head = "..." if start > 0 else ""
    tail = "..." if end < len(src) else ""
    if tail:
        end -= 3
    return head + src[start:end] + tail, at - start + len(head)


# ---------------------------------------------------------------------------------------
# the typed AST (positions are kept for messages but never compared)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pos:
    line: int
    column: int
    end_line: int
    end_column: int


def _pos() -> Pos | None:
    return field(default=None, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Node:
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Name(Node):
    text: str


@dataclass(frozen=True)
class Str(Node):
    value: str


@dataclass(frozen=True)
class Num(Node):
    value: float


@dataclass(frozen=True)
class Text(Node):
    """A quoted string where a value or a feature may stand (resolved against the model)."""

    value: str


@dataclass(frozen=True)
class Word(Node):
    """A bare word used as a value (a category name, an option value)."""

    value: str


@dataclass(frozen=True)
class Bool(Node):
    value: bool


@dataclass(frozen=True)
class Ref(Node):
    """A feature of x1 (copy 1), of x2 (copy 2), or of both inputs (copy None)."""

    name: Name
    copy: int | None = None


@dataclass(frozen=True)
class Compare(Node):
    """``a op b [op c]``: operands are Ref, Num, Text, Bool; ops from <=, <, >=, >, ==."""

    operands: tuple
    ops: tuple[str, ...]


@dataclass(frozen=True)
class InRange(Node):
    ref: Ref
    lo: Num
    hi: Num


@dataclass(frozen=True)
class Where(Node):
    items: tuple  # Compare | InRange


@dataclass(frozen=True)
class Fix(Node):
    ref: Ref
    value: Node  # Num | Text | Bool | Word


@dataclass(frozen=True)
class Vary(Node):
    names: tuple[Name, ...]


@dataclass(frozen=True)
class VaryAll(Node):
    pass


@dataclass(frozen=True)
class VaryEachFeature(Node):
    pass


@dataclass(frozen=True)
class FeatureSet(Node):
    names: tuple[Name, ...]


@dataclass(frozen=True)
class VaryEachOf(Node):
    items: tuple  # Name | FeatureSet


@dataclass(frozen=True)
class VarySubsets(Node):
    k: int
    pool: tuple[Name, ...] | None = None
    sample: int | None = None


@dataclass(frozen=True)
class GapSetting(Node):
    value: float
    kind: str  # "prob" or "margin"


@dataclass(frozen=True)
class Classes(Node):
    c1: int | str
    c2: int | str


@dataclass(frozen=True)
class Backend(Node):
    names: tuple[str, ...]


@dataclass(frozen=True)
class Timeout(Node):
    seconds: float


@dataclass(frozen=True)
class Threads(Node):
    n: int


@dataclass(frozen=True)
class Seed(Node):
    n: int


@dataclass(frozen=True)
class Passes(Node):
    items: tuple[str, ...]


@dataclass(frozen=True)
class Baseline(Node):
    name: str


@dataclass(frozen=True)
class Param(Node):
    name: str
    value: Node


@dataclass(frozen=True)
class DataAware(Node):
    mode: str
    params: tuple[Param, ...] = ()


@dataclass(frozen=True)
class OptionSetting(Node):
    name: str
    value: Node


@dataclass(frozen=True)
class Defaults(Node):
    body: tuple


@dataclass(frozen=True)
class QueryBlock(Node):
    name: Name
    body: tuple


@dataclass(frozen=True)
class SweepBlock(Node):
    name: Name
    body: tuple


@dataclass(frozen=True)
class ModelDecl(Node):
    path: Str
    format: str | None = None
    base_score: float | None = None
    # where 'format' and 'base_score' are written (for messages)
    format_pos: Pos | None = _pos()
    base_score_pos: Pos | None = _pos()


@dataclass(frozen=True)
class DataDecl(Node):
    path: Str
    label: str | None = None


@dataclass(frozen=True)
class DetailsDecl(Node):
    path: Str


@dataclass(frozen=True)
class FeatureDecl(Node):
    name: Name
    kind: str | None = None
    lo: float | None = None
    hi: float | None = None
    categories: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str


@dataclass(frozen=True)
class SensAST:
    items: tuple
    filename: str = field(default="<string>", compare=False)
    source: str = field(default="", compare=False, repr=False)
    comments: tuple[Comment, ...] = field(default=(), compare=False, repr=False)

    def error(self, message: str, at) -> SensError:
        return _located(message, self.filename, self.source, at)


def _located(message: str, filename: str, source: str, at) -> SensError:
    pos = at.pos if isinstance(at, Node) else at
    line, col = (pos.line, pos.column) if pos is not None else (1, 1)
    lines = source.splitlines()
    src = lines[line - 1] if 0 < line <= len(lines) else None
    return SensError(message, filename, line, col, src)


# ---------------------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------------------

DATA_AWARE_MODES = ("none", "prob", "clause", "probclause")
# parameters of the data-aware passes (compiler/passes/data_aware.py), as Query.options
DATA_AWARE_PARAMS = (
    "clause_width",
    "max_clauses",
    "clause_time",
    "clauses",
    "clause_cache",
    "prob_alpha",
    "prob_empty",
)
# the modes each parameter acts in (elsewhere it would be ignored)
_PARAM_MODES = {
    "clause_width": ("clause", "probclause"),
    "max_clauses": ("clause", "probclause"),
    "clause_time": ("clause", "probclause"),
    "clauses": ("clause", "probclause"),
    "clause_cache": ("clause", "probclause"),
    "prob_alpha": ("prob", "probclause"),
    "prob_empty": ("prob", "probclause"),
}
_MODE_ALIASES = {"prob+clause": "probclause", "clause+prob": "probclause", "off": "none"}
# the names `option NAME = VALUE` may set (the Query.options the compiler reads), with the
# kind of value each takes; other Query.options have their own statement (or none in .sens)
OPTIONS = {
    "heuristic": "true or false",
    "progress": "true or false",
    "heuristic_effort": "a positive number",
}
_OTHER_OPTIONS = {
    "data": 'the data file is given by a line  data "train.csv"',
    "label": 'the label column is given by the data line:  data "train.csv" label NAME',
    "solver_params": "solver parameters cannot be set from a .sens file "
    "(treesens check --solver-param NAME=VALUE)",
    **{
        p: f"a data-aware parameter: give it on the data_aware line "
        f"(data_aware {modes[0]} {p} = ...)"
        for p, modes in _PARAM_MODES.items()
    },
}
# the words of the grammar: a name equal to one is written quoted by fmt
KEYWORDS = frozenset(
    {
        "model",
        "format",
        "base_score",
        "data",
        "label",
        "features",
        "from",
        "feature",
        "in",
        "real",
        "integer",
        "binary",
        "categorical",
        "defaults",
        "query",
        "sweep",
        "vary",
        "all",
        "each",
        "of",
        "subsets",
        "sample",
        "gap",
        "margin",
        "classes",
        "any",
        "backend",
        "timeout",
        "threads",
        "seed",
        "passes",
        "baseline",
        "data_aware",
        "option",
        "where",
        "and",
        "fix",
        "true",
        "false",
        "inf",
    }
)
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*\Z")


@lru_cache(maxsize=1)
def _parser():
    from importlib.resources import files

    from lark import Lark

    grammar = files("treesens.grammar").joinpath("sens.lark").read_text()
    return Lark(grammar, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def grammar_path() -> Path:
    return Path(__file__).resolve().parent.parent / "grammar" / "sens.lark"


def _tok_pos(tok) -> Pos:
    return Pos(tok.line, tok.column, tok.end_line or tok.line, tok.end_column or tok.column)


def _meta_pos(meta) -> Pos | None:
    if getattr(meta, "empty", True):
        return None
    return Pos(meta.line, meta.column, meta.end_line, meta.end_column)


def _unquote(tok) -> str:
    try:
        s = json.loads(str(tok))
    except json.JSONDecodeError as e:
        raise ValueError(f"the string {str(tok)[:40]} has a bad escape ({e.msg})") from None
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):  # not text: `treesens fmt` cannot print it
        raise ValueError(f"the string {str(tok)[:40]} holds an unpaired surrogate")
    return s


def _duration(text: str) -> float:
    m = re.fullmatch(r"((?:\d+(?:\.\d*)?|\.\d+))(ms|s|m|h)?", text)
    v = float(m.group(1))
    return v * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}[m.group(2)]


def _build_transformer():
    from lark import Token, Transformer, v_args

    @v_args(meta=True)
    class _Build(Transformer):
        def start(self, meta, ch):
            return tuple(ch)

        # ---- leaves ----
        def name(self, meta, ch):
            tok = ch[0]
            text = _unquote(tok) if tok.type == "STRING" else str(tok)
            return Name(text, pos=_tok_pos(tok))

        def string(self, meta, ch):
            return Str(_unquote(ch[0]), pos=_tok_pos(ch[0]))

        def number(self, meta, ch):
            return Num(float(ch[0]), pos=_tok_pos(ch[0]))

        def text(self, meta, ch):
            return Text(_unquote(ch[0]), pos=_tok_pos(ch[0]))

        def boolean(self, meta, ch):
            return Bool(str(ch[0]) == "true", pos=_tok_pos(ch[0]))

        def word(self, meta, ch):
            return Word(str(ch[0]), pos=_tok_pos(ch[0]))

        def copy_ref(self, meta, ch):
            return Ref(ch[1], int(str(ch[0])[1]), pos=_tok_pos(ch[0]))

        def plain_ref(self, meta, ch):
            return Ref(Name(str(ch[0]), pos=_tok_pos(ch[0])), None, pos=_tok_pos(ch[0]))

        def ref(self, meta, ch):
            x = ch[0]
            return x if isinstance(x, Ref) else Ref(x, None, pos=x.pos)

        # ---- top level ----
        def model(self, meta, ch):
            fmt = base = fpos = bpos = None
            for c in ch[1:]:
                if c[0] == "format":
                    fmt, fpos = c[1], c[2]
                else:
                    base, bpos = c[1], c[2]
            return ModelDecl(
                ch[0], fmt, base, pos=_meta_pos(meta), format_pos=fpos, base_score_pos=bpos
            )

        def model_format(self, meta, ch):
            return ("format", ch[0].text, _meta_pos(meta))

        def model_base_score(self, meta, ch):
            return ("base_score", ch[0].value, _meta_pos(meta))

        def data(self, meta, ch):
            return DataDecl(ch[0], ch[1].text if len(ch) > 1 else None, pos=_meta_pos(meta))

        def details(self, meta, ch):
            return DetailsDecl(ch[0], pos=_meta_pos(meta))

        def feature_decl(self, meta, ch):
            kind = lo = hi = cats = None
            for c in ch[1:]:
                if isinstance(c, Token):
                    kind = str(c)
                elif c[0] == "range":
                    lo, hi = c[1], c[2]
                else:
                    cats = c[1]
            return FeatureDecl(ch[0], kind, lo, hi, cats, pos=_meta_pos(meta))

        def range(self, meta, ch):
            return ("range", ch[0].value, ch[1].value)

        def categories(self, meta, ch):
            return ("categories", tuple(n.text for n in ch))

        # ---- blocks ----
        def defaults(self, meta, ch):
            return Defaults(tuple(ch), pos=_meta_pos(meta))

        def query(self, meta, ch):
            return QueryBlock(ch[0], tuple(ch[1:]), pos=_meta_pos(meta))

        def sweep(self, meta, ch):
            return SweepBlock(ch[0], tuple(ch[1:]), pos=_meta_pos(meta))

        # ---- vary ----
        def name_list(self, meta, ch):
            return tuple(ch)

        def vary_list(self, meta, ch):
            return Vary(ch[0], pos=_meta_pos(meta))

        def vary_all(self, meta, ch):
            return VaryAll(pos=_meta_pos(meta))

        def vary_each_feature(self, meta, ch):
            return VaryEachFeature(pos=_meta_pos(meta))

        def feature_set(self, meta, ch):
            return FeatureSet(ch[0], pos=_meta_pos(meta))

        def set_list(self, meta, ch):
            return tuple(ch)

        def vary_each_of(self, meta, ch):
            return VaryEachOf(ch[0], pos=_meta_pos(meta))

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
            return VarySubsets(k, pool, sample, pos=_meta_pos(meta))

        # ---- settings ----
        def gap_prob(self, meta, ch):
            return GapSetting(ch[0].value, "prob", pos=_meta_pos(meta))

        def gap_margin(self, meta, ch):
            return GapSetting(ch[0].value, "margin", pos=_meta_pos(meta))

        def class_(self, meta, ch):
            s = str(ch[0])
            return ANY if s == "any" else int(s)

        def classes(self, meta, ch):
            return Classes(ch[0], ch[1], pos=_meta_pos(meta))

        def backend(self, meta, ch):
            return Backend(tuple(n.text for n in ch), pos=_meta_pos(meta))

        def timeout(self, meta, ch):
            return Timeout(_duration(str(ch[0])), pos=_meta_pos(meta))

        def threads(self, meta, ch):
            return Threads(int(ch[0]), pos=_meta_pos(meta))

        def seed(self, meta, ch):
            return Seed(int(ch[0]), pos=_meta_pos(meta))

        def passes(self, meta, ch):
            return Passes(tuple(str(t).lower() for t in ch), pos=_meta_pos(meta))

        def baseline(self, meta, ch):
            return Baseline(ch[0].text, pos=_meta_pos(meta))

        def data_aware(self, meta, ch):
            mode = str(ch[0]).lower()
            return DataAware(_MODE_ALIASES.get(mode, mode), tuple(ch[1:]), pos=_meta_pos(meta))

        def param(self, meta, ch):
            return Param(ch[0].text, ch[1], pos=_meta_pos(meta))

        def option(self, meta, ch):
            return OptionSetting(ch[0].text, ch[1], pos=_meta_pos(meta))

        # ---- constraints ----
        def where(self, meta, ch):
            return Where(tuple(ch), pos=_meta_pos(meta))

        def fix(self, meta, ch):
            return Fix(ch[0], ch[1], pos=_meta_pos(meta))

        def compare(self, meta, ch):
            return Compare(tuple(ch[0::2]), tuple(str(t) for t in ch[1::2]), pos=_meta_pos(meta))

        def in_range(self, meta, ch):
            return InRange(ch[0], ch[1], ch[2], pos=_meta_pos(meta))

    return _Build()


# readable names of the grammar's terminals, for "expected ..." messages
_TERMINAL_WORDS = {
    "NAME": "a name",
    "STRING": 'a "quoted string"',
    "NUMBER": "a number",
    "INT": "a whole number",
    "DURATION": "a duration (30, 30s, 2m)",
    "COPY": "x1. or x2.",
    "CMP": "a comparison (<=, <, >=, >, ==)",
    "PASS": "a pass name",
    "MODE": "a data-aware mode",
    "KIND": "a kind (real, integer, binary, categorical)",
    "BOOL": "true or false",
    "ANY": "'any'",
    "$END": "end of file",
}
_TOP_KEYWORDS = ("model", "data", "features", "feature", "defaults", "query", "sweep")


def _describe_expected(expected) -> str:
    parser = _parser()
    words = []
    for name in sorted(set(expected)):
        if name in _TERMINAL_WORDS:
            words.append(_TERMINAL_WORDS[name])
            continue
        try:
            term = parser.get_terminal(name)
        except KeyError:
            words.append(name.lower())
            continue
        pat = term.pattern
        if type(pat).__name__ == "PatternStr":
            words.append(f"'{pat.value}'")
        else:
            words.append(name.lower())
    words = sorted(set(words), key=lambda w: (not w.startswith("'"), w))
    if len(words) > 8:
        words = words[:8] + ["..."]
    return ", ".join(words)


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
        r"(defaults|query|sweep|feature)\s*(\"(?:[^\"\\]|\\.)*\"|[^\s{]*)\s*(?::[^{]*)?$", src
    )
    if not m:
        return "block"
    if m.group(1) == "defaults":
        return "defaults block"
    if m.group(1) == "feature":
        return "category list"
    return f"{m.group(1)} {m.group(2)}".strip()


def parse(text: str, filename: str = "<string>") -> SensAST:
    """Parse ``.sens`` text into a SensAST; syntax and structure errors raise SensError."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

    parser = _parser()

    def err(message, line, col):
        return _located(message, filename, text, Pos(line, col, line, col))

    try:
        tree = parser.parse(text)
    except UnexpectedCharacters as e:
        ch = text[e.pos_in_stream] if 0 <= e.pos_in_stream < len(text) else ""
        if ch == '"':
            raise err(
                "unterminated string (a quoted string ends on the same line)", e.line, e.column
            ) from None
        before = text[: e.pos_in_stream]
        m = re.search(r"\bx(\d+)$", before)
        if ch == "." and m:
            raise err(
                f"unknown input 'x{m.group(1)}': the two inputs are x1 and x2",
                e.line,
                e.column - len(m.group(0)),
            ) from None
        if ch == "!" and text[e.pos_in_stream : e.pos_in_stream + 2] == "!=":
            raise err(
                "'!=' is not a comparison here (use <=, <, >=, >, ==)", e.line, e.column
            ) from None
        raise err(f"unexpected character {ch!r}", e.line, e.column) from None
    except UnexpectedEOF as e:
        raise _eof_error(text, filename, getattr(e, "expected", ())) from None
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            raise _eof_error(text, filename, e.expected) from None
        opens = _open_blocks(text[: tok.start_pos]) if tok.start_pos is not None else []
        shown = str(tok)
        if tok.type == "RBRACE" and not opens:
            raise err("'}' without a matching '{'", tok.line, tok.column) from None
        if opens and shown in _TOP_KEYWORDS:
            ol, oc = opens[-1]
            raise err(
                f"unexpected '{shown}' inside the {_block_name_at(text, ol, oc)} opened at line {ol} "
                "(missing '}'?)",
                tok.line,
                tok.column,
            ) from None
        what = _describe_expected(e.expected)
        raise err(f"unexpected {_show_token(tok)}; expected {what}", tok.line, tok.column) from None
    try:
        items = _build_transformer().transform(tree)
    except VisitError as e:  # a value the transformer cannot convert
        meta = getattr(e.obj, "meta", None)
        at = e.obj if hasattr(e.obj, "line") else meta
        line, col = (at.line, at.column) if getattr(at, "line", None) else (1, 1)
        raise err(f"cannot read this: {e.orig_exc}", line, col) from None
    comments = tuple(_comments(text))
    ast = SensAST(tuple(items), filename, text, comments)
    _check_structure(ast)
    return ast


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
        return _located(
            f"unclosed block: the '{{' of {what} is never closed (missing '}}')",
            filename,
            text,
            Pos(line, col, line, col),
        )
    lines = text.splitlines() or [""]
    last = len(lines)
    while last > 1 and not lines[last - 1].strip():
        last -= 1
    col = len(lines[last - 1]) + 1
    what = _describe_expected(expected) if expected else "more"
    return _located(
        f"unexpected end of file; expected {what}", filename, text, Pos(last, col, last, col)
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
                yield Comment(line, i + 1, raw[i:].rstrip())
                break
            i += 1
        line += 1


def parse_file(path) -> SensAST:
    p = Path(path)
    shown = str(path)
    if not p.exists():
        raise InputError("query file not found", shown)
    if p.is_dir():
        raise InputError("is a directory, not a .sens file", shown)
    try:
        blob = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {e}", shown) from None
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as e:
        if _looks_like_model(blob):
            raise InputError(_MODEL_NOT_SENS, shown) from None
        raise InputError(f"cannot read: {e}", shown) from None
    try:
        return parse(text, shown)
    except SensError:
        if _looks_like_model(blob):
            raise _located(_MODEL_NOT_SENS, shown, text, Pos(1, 1, 1, 1)) from None
        raise


_MODEL_NOT_SENS = (
    "this looks like a model file, not a .sens query file (to ask about a model "
    "directly: treesens check MODEL --vary FEATURE ...; the .sens language: docs/language.md)"
)


def _looks_like_model(blob: bytes) -> bool:
    """A model given instead of a .sens file: JSON (an XGBoost model or dump, a LightGBM
    JSON dump), UBJSON (binary, starts with '{'), or a LightGBM text model."""
    head = blob[:4096].lstrip()
    return head[:1] in (b"{", b"[") or head.startswith(b"tree\n") or head.startswith(b"tree\r\n")


# ---------------------------------------------------------------------------------------
# structure checks (no model needed)
# ---------------------------------------------------------------------------------------

_SETTING_NAMES = {
    GapSetting: "gap",
    Classes: "classes",
    Backend: "backend",
    Timeout: "timeout",
    Threads: "threads",
    Seed: "seed",
    Passes: "passes",
    Baseline: "passes",  # one or the other
    DataAware: "data_aware",
}
_VARY_TYPES = (Vary, VaryAll, VaryEachFeature, VaryEachOf, VarySubsets)
_SWEEP_VARY = (VaryEachFeature, VaryEachOf, VarySubsets)
_CONSTRAINTS = (Where, Fix)


def _check_structure(ast: SensAST) -> None:
    seen: dict[str, Node] = {}
    blocks: dict[str, Node] = {}
    decls: dict[str, Node] = {}
    for it in ast.items:
        kind = {
            ModelDecl: "model",
            DataDecl: "data",
            DetailsDecl: "features from",
            Defaults: "defaults",
        }.get(type(it))
        if kind is not None:
            if kind in seen:
                raise ast.error(
                    f"a second '{kind}' statement (the first is at line {seen[kind].pos.line}); "
                    "a file has at most one",
                    it,
                )
            seen[kind] = it
        if (
            isinstance(it, ModelDecl)
            and it.base_score is not None
            and not 0.0 < it.base_score < 1.0
        ):
            raise ast.error(
                f"base_score {it.base_score:g} must be a probability in (0, 1)",
                it.base_score_pos or it,
            )
        if isinstance(it, FeatureDecl):
            _check_feature_decl(ast, it, decls)
        if isinstance(it, (Defaults, QueryBlock, SweepBlock)):
            _check_block(ast, it)
        if isinstance(it, (QueryBlock, SweepBlock)):
            name = it.name.text
            if not name:
                raise ast.error("empty query name", it.name)
            if name in blocks:
                raise ast.error(
                    f"a second block named {name!r} (the first is at line {blocks[name].pos.line})",
                    it.name,
                )
            blocks[name] = it
    if "model" not in seen:
        raise ast.error('no model: add a line  model "path/to/model.json"', Pos(1, 1, 1, 1))
    if not blocks:
        raise ast.error("no query: add a block  query NAME { vary FEATURE }", Pos(1, 1, 1, 1))


def _check_feature_decl(ast: SensAST, d: FeatureDecl, decls: dict) -> None:
    n = d.name.text
    if n in decls:
        raise ast.error(
            f"feature {n!r} declared twice (the first is at line {decls[n].pos.line})", d.name
        )
    decls[n] = d
    if d.kind is None and d.lo is None and d.categories is None:
        raise ast.error(
            f"feature {n!r}: say what to declare (': KIND', 'in [LO, HI]' or categories)", d
        )
    if d.lo is not None and (math.isnan(d.lo) or math.isnan(d.hi) or d.lo > d.hi):
        raise ast.error(f"feature {n!r}: lower bound {d.lo:g} is above upper bound {d.hi:g}", d)
    if d.categories is not None:
        if d.kind not in (None, "categorical"):
            raise ast.error(f"feature {n!r}: only a categorical feature has category names", d)
        dup = sorted({c for c in d.categories if d.categories.count(c) > 1})
        if dup:
            raise ast.error(f"feature {n!r}: category {dup[0]!r} listed twice", d)
    if d.kind == "binary" and d.lo is not None and (d.lo > 1 or d.hi < 0):
        raise ast.error(
            f"feature {n!r}: a binary feature takes 0 or 1, not values in [{d.lo:g}, {d.hi:g}]", d
        )


def _check_block(ast: SensAST, blk) -> None:
    kind = {Defaults: "defaults", QueryBlock: "query", SweepBlock: "sweep"}[type(blk)]
    where_first: dict[str, Node] = {}
    vary = None
    opts: dict[str, Node] = {}
    for st in blk.body:
        if isinstance(st, _VARY_TYPES):
            if kind == "defaults":
                raise ast.error("'vary' belongs in a query or a sweep, not in defaults", st)
            if vary is not None:
                raise ast.error(
                    f"a second 'vary' in this {kind} (the first is at line {vary.pos.line})", st
                )
            vary = st
            if kind == "query" and isinstance(st, _SWEEP_VARY):
                word = "each" if not isinstance(st, VarySubsets) else "subsets"
                raise ast.error(
                    f"'vary {word} ...' makes several queries: write it in a sweep block "
                    f"(sweep {blk.name.text} {{ ... }})",
                    st,
                )
            if kind == "sweep" and not isinstance(st, _SWEEP_VARY):
                raise ast.error(
                    "a sweep varies 'each feature', 'each of A, B, {C, D}' or "
                    "'subsets of K [from A, B, ...]'; for one query write a query block",
                    st,
                )
            _check_vary(ast, st)
            continue
        key = _SETTING_NAMES.get(type(st))
        if key is not None:
            if key in where_first:
                raise ast.error(
                    f"'{key}' is set twice in this {kind} (the first is at line "
                    f"{where_first[key].pos.line})",
                    st,
                )
            where_first[key] = st
            _check_setting(ast, st)
        elif isinstance(st, OptionSetting):
            if st.name in opts:
                raise ast.error(f"option {st.name!r} is set twice in this {kind}", st)
            opts[st.name] = st
        elif isinstance(st, Where):
            for c in st.items:
                _check_constraint(ast, c)
        elif isinstance(st, Fix):
            pass
    if kind != "defaults" and vary is None:
        hint = "vary FEATURE[, FEATURE...]" if kind == "query" else "vary each feature"
        raise ast.error(f"{kind} {blk.name.text!r} has no 'vary' ({hint})", blk.name)


def _check_vary(ast: SensAST, st) -> None:
    names: list[Name] = []
    if isinstance(st, Vary):
        names = list(st.names)
    elif isinstance(st, VaryEachOf):
        for it in st.items:
            names += list(it.names) if isinstance(it, FeatureSet) else [it]
            if isinstance(it, FeatureSet):
                _no_dups(ast, it.names)
    elif isinstance(st, VarySubsets):
        if st.k < 1:
            raise ast.error("subsets of 0 features: k must be at least 1", st)
        if st.sample is not None and st.sample < 1:
            raise ast.error("sample must be at least 1", st)
        if st.sample is not None and st.sample > 100_000:  # as many as a sweep may make
            raise ast.error(f"sample {st.sample} makes too many queries (at most 100000)", st)
        if st.pool is not None:
            _no_dups(ast, st.pool)
            if st.k > len(st.pool):
                raise ast.error(
                    f"subsets of {st.k} from a list of {len(st.pool)} features: there are none", st
                )
        return
    if isinstance(st, Vary):
        _no_dups(ast, names)


def _no_dups(ast: SensAST, names) -> None:
    seen = set()
    for n in names:
        if n.text in seen:
            raise ast.error(f"feature {n.text!r} listed twice", n)
        seen.add(n.text)


def _param_value_problem(name: str, v) -> str | None:
    """What a data-aware parameter's value must be, when it is not (None: it is fine)."""
    num = v.value if isinstance(v, Num) else None
    if name in ("clause_width", "max_clauses"):
        ok = num is not None and math.isfinite(num) and num >= 1 and float(num).is_integer()
        return None if ok else "takes a whole number of at least 1"
    if name == "clause_time":
        ok = num is not None and math.isfinite(num) and num > 0
        return None if ok else "takes a positive number of seconds"
    if name == "prob_alpha":
        ok = num is not None and math.isfinite(num) and num >= 0
        return None if ok else "takes a number >= 0"
    if name == "prob_empty":
        ok = isinstance(v, (Word, Text)) and v.value in ("smooth", "forbid")
        return None if ok else "takes smooth or forbid"
    if name == "clause_cache":
        return None if isinstance(v, Bool) else "takes true or false"
    if name == "clauses":
        return None if isinstance(v, (Text, Word)) else "takes a file name"
    return None


def _check_setting(ast: SensAST, st) -> None:
    if isinstance(st, GapSetting):
        if not math.isfinite(st.value):
            raise ast.error(f"gap {st.value:g} is not a finite number", st)
        if st.value < 0:
            raise ast.error(f"gap {st.value:g} must be >= 0", st)
    elif isinstance(st, Classes):
        if st.c1 != ANY and st.c1 == st.c2:
            raise ast.error(f"classes must differ (got {st.c1} twice)", st)
    elif isinstance(st, Backend):
        from ..backends.registry import BACKENDS
        from ..driver import is_race

        for i, b in enumerate(st.names):
            if b not in BACKENDS and not is_race(b):
                raise ast.error(
                    f"unknown backend {b!r}{closest(b, BACKENDS)}; known: {', '.join(BACKENDS)}", st
                )
            if b in st.names[:i]:
                raise ast.error(f"backend {b!r} listed twice", st)
    elif isinstance(st, Timeout):
        if not st.seconds > 0:
            raise ast.error("timeout must be positive", st)
    elif isinstance(st, Threads):
        if st.n < 1:
            raise ast.error("threads must be at least 1", st)
    elif isinstance(st, Passes):
        from .api import parse_passes

        try:
            parse_passes(",".join(st.items))
        except InputError as e:
            raise ast.error(e.message, st) from None
    elif isinstance(st, Baseline):
        if st.name.lower() != "kant":
            raise ast.error(f"unknown baseline {st.name!r} (known: kant)", st)
    elif isinstance(st, DataAware):
        if st.mode not in DATA_AWARE_MODES:
            raise ast.error(
                f"unknown data-aware mode {st.mode!r}{closest(st.mode, DATA_AWARE_MODES)}; "
                f"known: {', '.join(DATA_AWARE_MODES)}",
                st,
            )
        seen = set()
        for p in st.params:
            if p.name in seen:
                raise ast.error(f"parameter {p.name!r} given twice", p)
            if p.name not in DATA_AWARE_PARAMS:
                raise ast.error(
                    f"unknown data-aware parameter {p.name!r}{closest(p.name, DATA_AWARE_PARAMS)}; "
                    f"known: {', '.join(DATA_AWARE_PARAMS)}",
                    p,
                )
            modes = _PARAM_MODES[p.name]
            if st.mode not in modes:
                raise ast.error(
                    f"{p.name} has no effect with data_aware {st.mode}: it is a parameter of "
                    f"the {' and '.join(modes)} modes",
                    p,
                )
            bad = _param_value_problem(p.name, p.value)
            if bad:
                raise ast.error(f"{p.name} {bad}, not {_fmt_value(p.value)}", p.value)
            seen.add(p.name)


def _check_constraint(ast: SensAST, c) -> None:
    if isinstance(c, InRange):
        if math.isnan(c.lo.value) or math.isnan(c.hi.value) or c.lo.value > c.hi.value:
            raise ast.error(
                f"empty range [{c.lo.value:g}, {c.hi.value:g}]: the lower end is above the upper", c
            )
        return
    for a, op, b in zip(c.operands, c.ops, c.operands[1:]):
        if not _is_featureish(a) and not _is_featureish(b):
            raise ast.error(
                f"this compares two values ({_show(a)} {op} {_show(b)}); one side must be a "
                "feature (x1.NAME, x2.NAME or NAME)",
                a,
            )
        if isinstance(a, Ref) and isinstance(b, Ref):
            if a.copy is None or b.copy is None:
                raise ast.error(
                    f"a relation compares x1 with x2: write x1.{a.name.text} {op} x2.{b.name.text}",
                    a,
                )
            if a.copy == b.copy:
                raise ast.error(
                    f"this relation compares x{a.copy} with itself; compare x1 with x2", a
                )
            if a.name.text != b.name.text:
                raise ast.error(
                    f"a relation compares one feature between x1 and x2 (got {a.name.text!r} and "
                    f"{b.name.text!r})",
                    b,
                )


def _is_featureish(x) -> bool:
    return isinstance(x, (Ref, Text))


def _show(x) -> str:
    if isinstance(x, Num):
        return _fmt_num(x.value)
    if isinstance(x, Text):
        return json.dumps(x.value)
    if isinstance(x, Bool):
        return "true" if x.value else "false"
    if isinstance(x, Ref):
        return _fmt_ref(x, compare=True)
    if isinstance(x, Word):
        return x.value
    return str(x)


# ---------------------------------------------------------------------------------------
# formatting (fmt): canonical text, comments kept
# ---------------------------------------------------------------------------------------


def _fmt_num(v: float) -> str:
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == int(v) and abs(v) < 1e16:
        return str(int(v))
    return repr(float(v))


def _fmt_duration(s: float) -> str:
    import numpy as np

    for unit, k in (("h", 3600), ("m", 60)):
        if s >= k and s % k == 0:
            return f"{int(s // k)}{unit}"
    if s == int(s):
        return f"{int(s)}s"
    return np.format_float_positional(s, trim="-") + "s"


_CONSERVATIVE = [False]  # quote every keyword-like name (fallback, see format_sens)
_VARY_WORDS = frozenset({"all", "each", "subsets"})  # words that may follow 'vary'
_OPERAND_WORDS = frozenset({"true", "false", "inf"})  # lexed as values where a value may stand


def _fmt_name(s: str, reserved=frozenset()) -> str:
    """A name bare when it lexes as one at its place (``reserved``: the keywords that may
    stand there too), else quoted."""
    if _NAME_RE.match(s) and s not in reserved and not (_CONSERVATIVE[0] and s in KEYWORDS):
        return s
    return json.dumps(s, ensure_ascii=False)


def _fmt_ref(r: Ref, compare: bool = False) -> str:
    if r.copy is not None:
        return f"x{r.copy}.{_fmt_name(r.name.text)}"
    # a bare name inside a comparison came from a NAME token: print it bare
    if compare and _NAME_RE.match(r.name.text):
        return r.name.text
    return _fmt_name(r.name.text, _OPERAND_WORDS)


def _fmt_value(v) -> str:
    if isinstance(v, Num):
        return _fmt_num(v.value)
    if isinstance(v, Text):
        return json.dumps(v.value, ensure_ascii=False)
    if isinstance(v, Bool):
        return "true" if v.value else "false"
    if isinstance(v, Word):
        return v.value
    raise TypeError(v)


def _fmt_operand(x) -> str:
    return _fmt_ref(x, compare=True) if isinstance(x, Ref) else _fmt_value(x)


def _fmt_constraint(c) -> str:
    if isinstance(c, InRange):
        return f"{_fmt_ref(c.ref)} in [{_fmt_num(c.lo.value)}, {_fmt_num(c.hi.value)}]"
    out = _fmt_operand(c.operands[0])
    for op, x in zip(c.ops, c.operands[1:]):
        out += f" {op} {_fmt_operand(x)}"
    return out


def _fmt_names(names) -> str:
    return ", ".join(_fmt_name(n.text) for n in names)


def _fmt_stmt(st) -> str:
    if isinstance(st, Vary):
        first = _fmt_name(st.names[0].text, _VARY_WORDS)
        return "vary " + ", ".join([first] + [_fmt_name(n.text) for n in st.names[1:]])
    if isinstance(st, VaryAll):
        return "vary all"
    if isinstance(st, VaryEachFeature):
        return "vary each feature"
    if isinstance(st, VaryEachOf):
        items = [
            ("{" + _fmt_names(i.names) + "}") if isinstance(i, FeatureSet) else _fmt_name(i.text)
            for i in st.items
        ]
        return "vary each of " + ", ".join(items)
    if isinstance(st, VarySubsets):
        s = f"vary subsets of {st.k}"
        if st.pool is not None:
            s += f" from {_fmt_names(st.pool)}"
        if st.sample is not None:
            s += f" sample {st.sample}"
        return s
    if isinstance(st, GapSetting):
        return (
            f"gap {_fmt_num(st.value)}" if st.kind == "prob" else f"gap margin {_fmt_num(st.value)}"
        )
    if isinstance(st, Classes):
        return f"classes {st.c1} -> {st.c2}"
    if isinstance(st, Backend):
        return "backend " + ", ".join(_fmt_name(b) for b in st.names)
    if isinstance(st, Timeout):
        return f"timeout {_fmt_duration(st.seconds)}"
    if isinstance(st, Threads):
        return f"threads {st.n}"
    if isinstance(st, Seed):
        return f"seed {st.n}"
    if isinstance(st, Passes):
        return "passes " + ", ".join(st.items)
    if isinstance(st, Baseline):
        return f"baseline {_fmt_name(st.name)}"
    if isinstance(st, DataAware):
        s = f"data_aware {st.mode}"
        if st.params:
            s += " " + ", ".join(f"{_fmt_name(p.name)} = {_fmt_value(p.value)}" for p in st.params)
        return s
    if isinstance(st, OptionSetting):
        return f"option {_fmt_name(st.name)} = {_fmt_value(st.value)}"
    if isinstance(st, Where):
        return "where " + " and ".join(_fmt_constraint(c) for c in st.items)
    if isinstance(st, Fix):
        return f"fix {_fmt_ref(st.ref)} = {_fmt_value(st.value)}"
    if isinstance(st, ModelDecl):
        s = f"model {json.dumps(st.path.value, ensure_ascii=False)}"
        if st.format is not None:
            s += f" format {_fmt_name(st.format)}"
        if st.base_score is not None:
            s += f" base_score {_fmt_num(st.base_score)}"
        return s
    if isinstance(st, DataDecl):
        s = f"data {json.dumps(st.path.value, ensure_ascii=False)}"
        if st.label is not None:
            s += f" label {_fmt_name(st.label)}"
        return s
    if isinstance(st, DetailsDecl):
        return f"features from {json.dumps(st.path.value, ensure_ascii=False)}"
    if isinstance(st, FeatureDecl):
        s = f"feature {_fmt_name(st.name.text)}"
        if st.kind is not None:
            s += f": {st.kind}"
        if st.lo is not None:
            s += f" in [{_fmt_num(st.lo)}, {_fmt_num(st.hi)}]"
        if st.categories is not None:
            s += " {" + ", ".join(_fmt_name(c) for c in st.categories) + "}"
        return s
    raise TypeError(f"cannot format {st!r}")


def format_sens(ast: SensAST, indent: str = "  ") -> str:
    """The canonical text of a file: one statement per line, blocks indented, names and
    numbers written one way, comments kept, single blank lines kept (runs of them
    collapsed) and one blank line around every top-level block."""
    text = _format(ast, indent)
    try:  # the output must read back as the same file; if not, quote every keyword
        same = parse(text, ast.filename) == ast
    except SensError:
        same = False
    if not same:
        _CONSERVATIVE[0] = True
        try:
            text = _format(ast, indent)
        finally:
            _CONSERVATIVE[0] = False
    return text


def _format(ast: SensAST, indent: str) -> str:
    comments = sorted(ast.comments, key=lambda c: (c.line, c.column))
    src = ast.source.splitlines()
    out: list[str] = []
    k = 0
    last = [0]  # last source line emitted

    def blank_between(a: int, b: int) -> bool:
        return any(not src[i - 1].strip() for i in range(a + 1, b) if 0 < i <= len(src))

    def emit(line: int, text: str, force_blank: bool = False) -> None:
        if (
            out
            and out[-1] != ""
            and (force_blank or (line and last[0] and blank_between(last[0], line)))
        ):
            out.append("")
        out.append(text)
        if line:
            last[0] = max(last[0], line)

    def leading(line: int, pad: str, force_blank: bool = False) -> None:
        nonlocal k
        while k < len(comments) and comments[k].line < line:
            emit(comments[k].line, pad + comments[k].text, force_blank)
            force_blank = False
            k += 1

    def trailing(line: int) -> str:
        nonlocal k
        parts = []
        while k < len(comments) and comments[k].line == line:
            parts.append(comments[k].text)
            k += 1
        return ("  " + " ".join(parts)) if parts else ""

    prev_block = False
    for i, it in enumerate(ast.items):
        is_block = isinstance(it, (Defaults, QueryBlock, SweepBlock))
        force = i > 0 and (is_block or prev_block)
        prev_block = is_block
        line = it.pos.line if it.pos else 0
        had_leading = k < len(comments) and comments[k].line < line
        leading(line, "", force)
        force = force and not had_leading
        end = it.pos.end_line if it.pos else 0
        if not is_block:
            emit(line, _fmt_stmt(it) + trailing(end), force)
            last[0] = max(last[0], end)
            continue
        head = (
            "defaults"
            if isinstance(it, Defaults)
            else (f"{'query' if isinstance(it, QueryBlock) else 'sweep'} {_fmt_name(it.name.text)}")
        )
        emit(line, head + " {" + trailing(line), force)
        for st in it.body:
            sl = st.pos.line if st.pos else 0
            leading(sl, indent)
            emit(sl, indent + _fmt_stmt(st) + trailing(st.pos.end_line if st.pos else 0))
            last[0] = max(last[0], st.pos.end_line if st.pos else 0)
        leading(end, indent)
        if out and out[-1] == "":
            out.pop()
        out.append("}" + trailing(end))
        last[0] = max(last[0], end)
    for j, c in enumerate(comments[k:]):
        emit(c.line, c.text, force_blank=(j == 0 and bool(out)))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------
# loading: resolve against the model, build Query objects
# ---------------------------------------------------------------------------------------


@dataclass
class SensFile:
    """A checked ``.sens`` file: the model (with declarations applied) and its queries."""

    path: Path
    ast: SensAST
    model_path: Path
    model_format: str
    details_path: Path | None
    data_path: Path | None
    label: str | None
    ensemble: object  # compiler.ensemble.Ensemble
    queries: list[Query]
    groups: dict[str, list[str]]  # query / sweep block name -> the names of its queries

    def select(self, name: str | None) -> list[Query]:
        """Every query, or those of one block (a query or a sweep), or one expanded query."""
        if name is None:
            return list(self.queries)
        if name in self.groups:
            wanted = set(self.groups[name])
            return [q for q in self.queries if q.name in wanted]
        for q in self.queries:
            if q.name == name:
                return [q]
        known = list(dict.fromkeys(list(self.groups) + [q.name for q in self.queries]))
        raise InputError(
            f"no query named {name!r}{closest(name, known)}; the file has: "
            f"{', '.join(self.groups)}",
            str(self.path),
        )


def load_queries(path, *, load_model: bool = True) -> SensFile:
    """Parse, check and resolve a ``.sens`` file; relative paths are against its folder."""
    ast = parse_file(path)
    return resolve(ast, Path(path).resolve().parent, load_model=load_model)


def _resolve_path(base: Path, p: str) -> Path:
    q = Path(p).expanduser()
    return q if q.is_absolute() else (base / q)


def _show_path(p: Path) -> str:
    import os

    return os.path.normpath(str(p))


def resolve(ast: SensAST, base: Path, *, load_model: bool = True) -> SensFile:
    from .load import FORMATS

    model = next(it for it in ast.items if isinstance(it, ModelDecl))
    details = next((it for it in ast.items if isinstance(it, DetailsDecl)), None)
    data = next((it for it in ast.items if isinstance(it, DataDecl)), None)
    defaults = next((it for it in ast.items if isinstance(it, Defaults)), Defaults(()))
    fmt = model.format or "auto"
    if fmt not in FORMATS:
        raise ast.error(
            f"unknown model format {fmt!r}{closest(fmt, FORMATS)}; known: {', '.join(FORMATS)}",
            model,
        )
    model_path = _resolve_path(base, model.path.value)
    if not model_path.exists():
        raise ast.error(f"model file not found: {_show_path(model_path)}", model.path)
    if model_path.is_dir():
        raise ast.error(f"model path is a directory: {_show_path(model_path)}", model.path)
    details_path = data_path = None
    if details is not None:
        details_path = _resolve_path(base, details.path.value)
        if not details_path.is_file():
            raise ast.error(f"features file not found: {_show_path(details_path)}", details.path)
    label = None
    if data is not None:
        data_path = _resolve_path(base, data.path.value)
        if not data_path.is_file():
            raise ast.error(f"data file not found: {_show_path(data_path)}", data.path)
        label = data.label if data.label is not None else "label"
        header = _csv_header(data_path)
        if header is not None and label not in header:
            if data.label is None:
                label = None  # no label column: fine, unless one was asked for
            else:
                raise ast.error(
                    f"the data file has no column {label!r}{closest(label, header)}", data
                )
    _check_options(ast)
    if not load_model:
        return SensFile(
            Path(ast.filename), ast, model_path, fmt, details_path, data_path, label, None, [], {}
        )

    from .load import load_model as _load

    try:
        ens = _load(str(model_path), format=fmt, base_score=model.base_score)
    except InputError as e:
        if model.base_score is not None or model.format == "xgboost-dump":
            # the loader refuses a dump's settings on another model: say which, and where
            try:
                plain = _load(str(model_path))
            except InputError:
                plain = None
            if plain is not None:
                _check_model_options(ast, model, plain)
        raise ast.error(f"cannot load the model: {e}", model.path) from None
    if data_path is not None and details_path is None:
        from .details import apply_data_names

        try:  # a model with generic names (f0, Column_0, x0, ...) is named by the data
            ens = apply_data_names(ens, str(data_path), label)
        except InputError as e:
            raise ast.error(f"cannot use the data: {e}", data.path) from None
    if details_path is not None:
        from .details import apply_details

        try:
            ens = apply_details(ens, details_path)
        except InputError as e:
            raise ast.error(str(e), details.path) from None
    ens = _apply_declarations(ast, ens)
    if data_path is not None:
        _check_data(ast, data, ens, data_path, label)
    ctx = _Ctx(ast, ens, defaults, data_path, label, base)
    queries: list[Query] = []
    groups: dict[str, list[str]] = {}
    for it in ast.items:
        if isinstance(it, (QueryBlock, SweepBlock)):
            qs = ctx.expand(it)
            groups[it.name.text] = [q.name for q in qs]
            queries += qs
    names: dict[str, str] = {}
    for q in queries:
        if q.name in names:
            raise ast.error(
                f"two queries end up named {q.name!r} (rename a block)", Pos(1, 1, 1, 1)
            )
        names[q.name] = q.name
    return SensFile(
        Path(ast.filename),
        ast,
        model_path,
        fmt,
        details_path,
        data_path,
        label,
        ens,
        queries,
        groups,
    )


def _check_options(ast: SensAST) -> None:
    """``option NAME = VALUE`` sets one of the Query.options the compiler reads; any other
    name would be ignored (a typo, or an option that has its own statement)."""
    for blk in ast.items:
        if not isinstance(blk, (Defaults, QueryBlock, SweepBlock)):
            continue
        for st in blk.body:
            if not isinstance(st, OptionSetting):
                continue
            if st.name in _OTHER_OPTIONS:
                raise ast.error(f"option {st.name!r}: {_OTHER_OPTIONS[st.name]}", st)
            if st.name not in OPTIONS:
                raise ast.error(
                    f"unknown option {st.name!r}{closest(st.name, OPTIONS)}; "
                    f"known: {', '.join(OPTIONS)}",
                    st,
                )
            if OPTIONS[st.name] == "true or false" and not isinstance(st.value, Bool):
                raise ast.error(
                    f"option {st.name!r} takes true or false, not {_fmt_value(st.value)}",
                    st.value,
                )
            if OPTIONS[st.name] == "a positive number" and not (
                isinstance(st.value, Num) and math.isfinite(st.value.value) and st.value.value > 0
            ):
                raise ast.error(
                    f"option {st.name!r} takes a positive number, not {_fmt_value(st.value)}",
                    st.value,
                )


_MODEL_KINDS = {
    "xgboost": "a native XGBoost model",
    "lightgbm": "a LightGBM model",
    "sklearn": "a scikit-learn model",
}


def _check_model_options(ast: SensAST, model: ModelDecl, ens) -> None:
    """``format xgboost-dump`` and ``base_score`` only mean something for an XGBoost text
    dump (a JSON list of trees): the loader reads any other model by its content and
    takes the model's own base_score, so on another model they would be ignored."""
    family = str(getattr(ens, "source", "")).split(":", 1)[0]
    if family == "xgboost-dump":
        return
    kind = _MODEL_KINDS.get(family, "not an XGBoost text dump")
    if model.format == "xgboost-dump":
        raise ast.error(
            f"format xgboost-dump, but the file is {kind}, not a text dump (a JSON list of "
            "trees); drop 'format xgboost-dump' (the format is read from the file)",
            model.format_pos or model,
        )
    if model.base_score is not None:
        raise ast.error(
            f"base_score is only for XGBoost text dumps, which do not store it; the file is "
            f"{kind}, which has its own: drop 'base_score {_fmt_num(model.base_score)}'",
            model.base_score_pos or model,
        )


def _check_data(ast: SensAST, decl, ens, path: Path, label) -> None:
    """Read the data now, so that a column that does not match the model is reported here."""
    try:
        from .data import load_data
    except ImportError:  # no data support in this build
        return
    try:
        load_data(str(path), ens, label)
    except InputError as e:
        raise ast.error(f"cannot use the data: {e}", decl.path) from None


def _csv_header(path: Path) -> list[str] | None:
    if path.suffix.lower() not in (".csv", ".txt", ".tsv"):
        return None
    try:
        with path.open(newline="") as f:
            row = next(csv.reader(f), None)
    except (OSError, UnicodeDecodeError):
        return None
    return [c.strip() for c in row] if row else None


def _apply_declarations(ast: SensAST, ens):
    decls = [it for it in ast.items if isinstance(it, FeatureDecl)]
    details = next((it for it in ast.items if isinstance(it, DetailsDecl)), None)
    if not decls:
        return ens
    feats = list(ens.features)
    names = ens.feature_names
    for d in decls:
        n = d.name.text
        if n not in names:
            raise ast.error(f"unknown feature {n!r}{closest(n, names, listing=FEATURES)}", d.name)
        i = names.index(n)
        f = feats[i]
        kw = {}
        if d.kind is not None:
            kw["kind"] = d.kind
        if d.categories is not None:
            kw["kind"] = "categorical"
            kw["categories"] = tuple(d.categories)
            kw["lb"], kw["ub"] = 0.0, float(len(d.categories) - 1)
        if d.lo is not None:
            kw["lb"], kw["ub"] = d.lo, d.hi
        # a kind alone keeps the bounds (from the features file or the model), bounds alone
        # keep the kind; a binary feature keeps 0 and 1 inside its bounds, so they must
        # hold one of them (as the features file requires)
        lb, ub = kw.get("lb", f.lb), kw.get("ub", f.ub)
        if kw.get("kind", f.kind) == "binary" and (lb > 1 or ub < 0):
            if details is not None:
                src = f" (from {details.path.value})"
            else:  # a details file found beside the model, or the model's own bounds
                m = re.search(r"\(bounds from (.+)\)$", str(getattr(ens, "source", "")))
                src = f" (from {Path(m.group(1)).name}, found beside the model)" if m else ""
            if d.lo is None:
                raise ast.error(
                    f"feature {n!r}: a binary feature takes 0 or 1, but its bounds are "
                    f"[{lb:g}, {ub:g}]{src}; give bounds to replace them "
                    f"(feature {_fmt_name(n)}: binary in [0, 1])",
                    d,
                )
            raise ast.error(
                f"feature {n!r} is binary{src}: it takes 0 or 1, not values in [{lb:g}, {ub:g}]",
                d,
            )
        try:
            feats[i] = replace(f, **kw)
        except ValueError as e:
            raise ast.error(str(e).removeprefix(f"feature {n!r}: "), d) from None
    return ens.with_features(tuple(feats))


class _Ctx:
    """Effective settings of a block (defaults, then the block) and Query building."""

    def __init__(self, ast: SensAST, ens, defaults: Defaults, data_path, label, base: Path):
        self.ast, self.ens, self.defaults, self.base = ast, ens, defaults, base
        self.data_path, self.label = data_path, label
        self.names = ens.feature_names
        self.binary = ens.n_classes == 2 and ens.n_outputs == 1
        self.places: dict[int, Node] = {}  # id of a FeatureBound / FeatureRelation -> its node

    def err(self, msg, at):
        return self.ast.error(msg, at)

    def feature(self, n: Name) -> str:
        if n.text not in self.names:
            raise self.err(
                f"unknown feature {n.text!r}{closest(n.text, self.names, listing=FEATURES)}", n
            )
        return n.text

    # ---- settings ----
    def settings(self, blk) -> dict:
        eff: dict = {}
        for src in (self.defaults.body, blk.body):
            for st in src:
                key = _SETTING_NAMES.get(type(st))
                if key is not None:
                    eff[key] = st
        return eff

    def options(self, blk) -> dict:
        out: dict = {}
        for src in (self.defaults.body, blk.body):
            for st in src:
                if isinstance(st, OptionSetting):
                    out[st.name] = _py_value(st.value)
        return out

    def constraints(self, blk) -> tuple[tuple[FeatureBound, ...], tuple[FeatureRelation, ...]]:
        """The bounds and relations of a block (defaults first); ``self.places`` maps each
        (by identity) to the constraint it comes from, for messages."""
        bounds: list[FeatureBound] = []
        rels: list[FeatureRelation] = []
        for src in (self.defaults.body, blk.body):
            for st in src:
                if isinstance(st, Fix):
                    f = self.feature(st.ref.name)
                    v = self.value_for(f, st.value)
                    bounds.append(self.bound(st, f, v, v, st.ref.copy))
                elif isinstance(st, Where):
                    for c in st.items:
                        self.constraint(c, bounds, rels)
        return tuple(bounds), tuple(rels)

    def place(self, x) -> Node:
        return self.places[id(x)]

    def line_of(self, x) -> int:
        pos = self.place(x).pos
        return pos.line if pos is not None else 1

    def in_file_order(self, xs) -> list:
        def key(x):
            pos = self.place(x).pos
            return (pos.line, pos.column) if pos is not None else (0, 0)

        return sorted(xs, key=key)

    def check_consistent(self, fs, where: str, bounds, rels) -> None:
        """The contradictions the feature-constraints pass finds when it compiles a query
        (compiler/passes/feature_constraints.py: ``bounds_by_copy``, ``relations_of``,
        which the Python API still relies on), found here with the same functions so that
        they point at the later of the conflicting constraints, before anything is solved.
        ``where``: " in QUERY" for a sweep's query, else ""."""
        from types import SimpleNamespace

        from ..compiler.passes.feature_constraints import (
            bounds_by_copy,
            check_relations_within_bounds,
            relations_of,
        )

        varying = {self.names.index(f) for f in fs}

        def enc(bs=(), rs=()):
            q = Query(vary=tuple(fs), bounds=tuple(bs), relations=tuple(rs))
            return SimpleNamespace(ensemble=self.ens, query=q, varying=varying)

        for r in self.in_file_order(rels):
            if r.op in ("<", ">") and r.feature not in fs:
                raise self.err(
                    f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature} cannot hold: "
                    f"{r.feature!r} is not varied{where}, so x1 and x2 share its value",
                    self.place(r),
                )
        try:
            relations_of(enc(rs=rels))
        except InputError:
            self.relations_contradict(self.in_file_order(rels), enc)
        if any(
            self.empty(self.ens.features[f], lo, hi)
            for (f, _), (lo, hi) in bounds_by_copy(enc(bs=bounds)).items()
        ):
            self.bounds_contradict(self.in_file_order(bounds), enc, varying, where)
        try:
            check_relations_within_bounds(enc(bs=bounds, rs=rels))
        except InputError as e:
            # point at the last relation on the feature named first in the message
            named = [r for r in self.in_file_order(rels) if f"x1.{r.feature} " in str(e)]
            at = self.place((named or self.in_file_order(rels))[-1])
            raise self.err(f"{e}{where}", at) from None

    @staticmethod
    def empty(feat, lo: float, hi: float) -> str | None:
        """Why no value of the feature lies in [lo, hi] (None: some does)."""
        if not lo <= hi:
            return "value"
        whole = feat.integral and math.isfinite(lo) and math.isfinite(hi)
        return "whole value" if whole and math.ceil(lo) > math.floor(hi) else None

    def at_lines(self, xs, here: int) -> str:
        """Where earlier constraints are: "at line 5", "at lines 4, 5", "earlier on this line"."""
        lines = sorted({self.line_of(x) for x in xs})
        if lines == [here]:
            return "earlier on this line"
        s = "s" if len(lines) > 1 else ""
        return f"at line{s} {', '.join(map(str, lines))}"

    def relations_contradict(self, rels: list, enc) -> None:
        """Report the first relation (in file order) that contradicts the earlier ones."""
        from ..compiler.passes.feature_constraints import relations_of

        def show(r) -> str:
            return f"x{r.left}.{r.feature} {r.op} x{r.right}.{r.feature}"

        for k in range(1, len(rels) + 1):
            try:
                relations_of(enc(rs=rels[:k]))
            except InputError:
                r = rels[k - 1]
                here = self.line_of(r)
                before = [e for e in rels[: k - 1] if e.feature == r.feature]
                raise self.err(
                    f"the relations on {r.feature!r} contradict each other: {show(r)} here, "
                    f"{' and '.join(map(show, before))} {self.at_lines(before, here)}",
                    self.place(r),
                ) from None

    def bounds_contradict(self, bounds: list, enc, varying, where: str) -> None:
        """Report the first bound (in file order) that leaves a feature no value."""
        from ..compiler.passes.feature_constraints import bounds_by_copy

        for k in range(1, len(bounds) + 1):
            for (f, c), (lo, hi) in sorted(bounds_by_copy(enc(bs=bounds[:k])).items()):
                feat = self.ens.features[f]
                what = self.empty(feat, lo, hi)
                if what is None:
                    continue
                b, name = bounds[k - 1], self.names[f]
                before = [
                    e
                    for e in bounds[: k - 1]
                    if e.feature == name and (f not in varying or c + 1 in e.copies)
                ]
                if len(before) == 1:
                    e = before[0]
                    other = f"the one {self.at_lines(before, self.line_of(b))} asks for "
                    other += _show_range(e.lo, e.hi)
                elif before:
                    plo, phi = bounds_by_copy(enc(bs=before))[(f, c)]
                    other = f"the ones {self.at_lines(before, self.line_of(b))} leave "
                    other += _show_range(plo, phi)
                else:
                    other = f"it is declared in {_show_range(feat.lb, feat.ub)}"
                shared = ""
                if f not in varying and any(len(e.copies) == 1 for e in [b, *before]):
                    shared = f" ({name!r} is not varied{where}, so x1 and x2 share its value)"
                who = f"x{c + 1}.{name}" if f in varying else name
                raise self.err(
                    f"the bounds on {who} leave no {what}: this one asks for "
                    f"{_show_range(b.lo, b.hi)}, but {other}{shared}",
                    self.place(b),
                )

    def bound(self, at, f: str, lo: float, hi: float, copy) -> FeatureBound:
        feat = self.ens.features[self.names.index(f)]
        if lo > hi:
            raise self.err(
                f"no value of {f!r} meets this (lower end {lo:g} is above upper end {hi:g})", at
            )
        if lo == hi and not feat.lb <= lo <= feat.ub:
            raise self.err(
                f"{lo:g} is outside the declared range of {f!r}, [{feat.lb:g}, {feat.ub:g}]", at
            )
        if hi < feat.lb or lo > feat.ub:
            raise self.err(
                f"{f!r} is declared in [{feat.lb:g}, {feat.ub:g}]: no value of it lies in "
                f"[{lo:g}, {hi:g}]",
                at,
            )
        if (
            feat.integral
            and math.isfinite(lo)
            and math.isfinite(hi)
            and math.ceil(lo) > math.floor(hi)
        ):
            raise self.err(f"{f!r} is {feat.kind}: no whole value lies in [{lo:g}, {hi:g}]", at)
        b = FeatureBound(f, lo, hi, (1, 2) if copy is None else (copy,))
        self.places[id(b)] = at
        return b

    def value_for(self, f: str, v) -> float:
        feat = self.ens.features[self.names.index(f)]
        if isinstance(v, Num):
            return v.value
        if isinstance(v, Bool):
            return 1.0 if v.value else 0.0
        text = v.value
        if feat.categories:
            if text in feat.categories:
                return float(feat.categories.index(text))
            raise self.err(
                f"{text!r} is not a category of {f!r}{closest(text, feat.categories)}", v
            )
        if feat.kind == "categorical":
            raise self.err(
                f"{f!r} has no category names: declare them "
                f"(feature {_fmt_name(f)}: categorical {{...}}) or give the code",
                v,
            )
        raise self.err(f"{f!r} is a {feat.kind} feature: give a number, not {json.dumps(text)}", v)

    def constraint(self, c, bounds: list, rels: list) -> None:
        if isinstance(c, InRange):
            f = self.feature(c.ref.name)
            bounds.append(self.bound(c, f, c.lo.value, c.hi.value, c.ref.copy))
            return
        ops = list(c.ops)
        operands = list(c.operands)
        # a quoted string next to a categorical feature is a category; elsewhere a feature
        refs = [x for x in operands if isinstance(x, Ref)]
        for i, x in enumerate(operands):
            if isinstance(x, Text):
                cat_ref = any(
                    self.is_categorical(r) and x.value in (self.feat_of(r).categories or ())
                    for r in refs
                )
                if not cat_ref and x.value in self.names:
                    operands[i] = Ref(Name(x.value, pos=x.pos), None, pos=x.pos)
        for a, op, b in zip(operands, ops, operands[1:]):
            if isinstance(a, Ref) and isinstance(b, Ref):
                fa, fb = self.feature(a.name), self.feature(b.name)
                if a.copy is None or b.copy is None or a.copy == b.copy or fa != fb:
                    raise self.err(
                        "a relation compares one feature between x1 and x2 (x1.NAME <= x2.NAME)", a
                    )
                rels.append(self.relation(c, fa, a.copy, op, b.copy))
                continue
            if isinstance(b, Ref):  # value op ref: flip to ref op' value
                a, b, op = b, a, _FLIP[op]
            if not isinstance(a, Ref):
                text = next((x for x in (a, b) if isinstance(x, Text)), None)
                if text is not None:  # a quoted name that is no feature
                    self.feature(Name(text.value, pos=text.pos))
                raise self.err("one side of a comparison must be a feature", a)
            f = self.feature(a.name)
            v = self.value_for(f, b)
            feat = self.ens.features[self.names.index(f)]
            lo, hi = -math.inf, math.inf
            if op == "==":
                lo = hi = v
            elif op == "<=":
                hi = v
            elif op == ">=":
                lo = v
            elif op == "<":
                hi = math.ceil(v) - 1.0 if feat.integral else math.nextafter(v, -math.inf)
            elif op == ">":
                lo = math.floor(v) + 1.0 if feat.integral else math.nextafter(v, math.inf)
            bounds.append(self.bound(c, f, lo, hi, a.copy))

    def relation(self, at, f: str, left: int, op: str, right: int) -> FeatureRelation:
        r = FeatureRelation(f, left, op, right)
        self.places[id(r)] = at
        return r

    def is_categorical(self, r: Ref) -> bool:
        return r.name.text in self.names and self.feat_of(r).kind == "categorical"

    def feat_of(self, r: Ref):
        return self.ens.features[self.names.index(r.name.text)]

    # ---- queries ----
    def expand(self, blk) -> list[Query]:
        vary = next(st for st in blk.body if isinstance(st, _VARY_TYPES))
        eff = self.settings(blk)
        sets = self.vary_sets(blk, vary, eff)
        base_name = blk.name.text
        out = []
        backends = eff["backend"].names if "backend" in eff else ("cpsat",)
        bounds, rels = self.constraints(blk)
        for fs in sets:
            name = base_name if isinstance(blk, QueryBlock) else f"{base_name}/{'+'.join(fs)}"
            self.check_consistent(
                fs, f" in {name}" if isinstance(blk, SweepBlock) else "", bounds, rels
            )
            for b in backends:
                qname = name if len(backends) == 1 else f"{name}@{b}"
                q = self.query(blk, eff, fs, qname, b, bounds, rels)
                out.append(q)
        return out

    def vary_sets(self, blk, vary, eff) -> list[tuple[str, ...]]:
        if isinstance(vary, Vary):
            return [tuple(self.feature(n) for n in vary.names)]
        if isinstance(vary, VaryAll):
            return [tuple(self.names)]
        if isinstance(vary, VaryEachFeature):
            return [(n,) for n in self.names]
        if isinstance(vary, VaryEachOf):
            out = []
            for it in vary.items:
                if isinstance(it, FeatureSet):
                    out.append(tuple(self.feature(n) for n in it.names))
                else:
                    out.append((self.feature(it),))
            return out
        pool = [self.feature(n) for n in vary.pool] if vary.pool is not None else list(self.names)
        k = vary.k
        if k > len(pool):
            raise self.err(f"subsets of {k} features, but there are only {len(pool)}", vary)
        total = math.comb(len(pool), k)
        if vary.sample is None or vary.sample >= total:
            if total > 100_000:
                raise self.err(
                    f"subsets of {k} of {len(pool)} features make {total} queries; add 'sample N'",
                    vary,
                )
            return [tuple(c) for c in itertools.combinations(pool, k)]
        seed = eff["seed"].n if "seed" in eff else 0
        rng = random.Random(seed)
        chosen: set[tuple[int, ...]] = set()
        while len(chosen) < vary.sample:
            chosen.add(tuple(sorted(rng.sample(range(len(pool)), k))))
        return [tuple(pool[i] for i in c) for c in sorted(chosen)]

    def query(self, blk, eff, fs, name, backend, bounds, rels) -> Query:
        from .api import make_query

        gap_st = eff.get("gap")
        cls_st = eff.get("classes")
        if self.binary:
            if cls_st is not None:
                raise self.err(
                    "classes given, but the model is binary (classes 0 and 1); drop them", cls_st
                )
            if gap_st is not None and gap_st.kind == "prob" and not (0.0 <= gap_st.value < 0.5):
                raise self.err(
                    f"gap {gap_st.value:g} out of range: a binary gap g needs 0 <= g < 0.5 "
                    "(P(x1) >= 0.5+g and P(x2) <= 0.5-g)",
                    gap_st,
                )
        else:
            C = self.ens.n_classes
            if cls_st is None:
                raise self.err(
                    f"the model has {C} classes: say which two to compare "
                    "(classes C1 -> C2; C2 may be 'any')",
                    blk.name,
                )
            for c in (cls_st.c1, cls_st.c2):
                if c != ANY and not 0 <= c < C:
                    raise self.err(
                        f"class {c} out of range: the model has classes 0..{C - 1}", cls_st
                    )
            if gap_st is None:
                raise self.err(
                    "a multiclass query needs a gap: a probability ratio g >= 1 (gap 1.5) "
                    "or a margin (gap margin 0.4)",
                    blk.name,
                )
            if gap_st.kind == "prob" and gap_st.value < 1.0:
                raise self.err(
                    f"gap {gap_st.value:g} out of range: a multiclass gap is a probability ratio "
                    "g >= 1 (P(c1) >= g * P(c) for every other class c)",
                    gap_st,
                )
        passes = baseline = None
        pst = eff.get("passes")
        if isinstance(pst, Passes):
            passes = ",".join(pst.items)
        elif isinstance(pst, Baseline):
            baseline = pst.name
        da = eff.get("data_aware")
        mode = da.mode if da is not None else "none"
        options = self.options(blk)
        if da is not None:
            for p in da.params:
                v = _py_value(p.value)
                if p.name == "clauses" and isinstance(v, str):  # a file: relative to the .sens file
                    v = str(_resolve_path(self.base, v))
                options[p.name] = v
        if self.data_path is not None:
            options.setdefault("data", str(self.data_path))
            if self.label is not None:
                options.setdefault("label", self.label)
        elif mode != "none":
            raise self.err(f'data-aware mode {mode!r} needs data: add a line  data "train.csv"', da)
        kw = dict(
            gap=gap_st.value if gap_st is not None and gap_st.kind == "prob" else None,
            margin_gap=gap_st.value if gap_st is not None and gap_st.kind == "margin" else None,
            classes=(cls_st.c1, cls_st.c2) if cls_st is not None else None,
            passes=passes,
            baseline=baseline,
            backend=backend,
            timeout=eff["timeout"].seconds if "timeout" in eff else 600.0,
            threads=eff["threads"].n if "threads" in eff else 1,
            seed=eff["seed"].n if "seed" in eff else 0,
            name=name,
        )
        try:
            q = make_query(list(fs), **kw)
        except InputError as e:
            raise self.err(e.message, blk.name) from None
        # options (data, data-aware parameters, option NAME = VALUE) are set here, after
        # make_query, so they reach the Query whatever make_query accepts
        q = q.with_(
            bounds=bounds, relations=rels, options=tuple(sorted(options.items())), data_aware=mode
        )
        from ..compiler.query import resolve_condition

        try:
            resolve_condition(self.ens, q)
        except InputError as e:
            raise self.err(e.message, cls_st or gap_st or blk.name) from None
        return q


_FLIP = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "==": "=="}


def _show_range(lo: float, hi: float) -> str:
    if lo == hi:
        return _fmt_num(lo)
    if lo == -math.inf:
        return f"<= {_fmt_num(hi)}"
    if hi == math.inf:
        return f">= {_fmt_num(lo)}"
    return f"[{_fmt_num(lo)}, {_fmt_num(hi)}]"


def _py_value(v):
    if isinstance(v, Num):  # a whole number as an int (not inf: int(inf) raises)
        return int(v.value) if abs(v.value) < 2**53 and v.value == int(v.value) else v.value
    if isinstance(v, Bool):
        return v.value
    return v.value


# ---------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------


def data_aware_available() -> bool:
    """Whether the compiler implements data-aware modes yet (issue: data-aware).

    The data-aware work is to set ``DATA_AWARE_MODES`` (a non-empty collection of the
    modes it implements) in ``compiler/passes/__init__.py``; until then a data-aware
    query ends in an "error" result saying so, instead of silently ignoring the data.
    """
    from ..compiler import passes

    return bool(getattr(passes, "DATA_AWARE_MODES", ()))


def _error_result(sf: SensFile, q: Query, msg: str):
    from ..compiler.result import ERROR, Result

    return Result(
        query=q.label,
        status=ERROR,
        backend=q.backend,
        features=list(q.vary),
        gap=q.gap.value,
        gap_kind=q.gap.kind,
        model=getattr(sf.ensemble, "source", ""),
        passes=sorted(q.passes),
        classes=list(q.classes) if q.classes else None,
        error=msg,
    )


def run_query(sf: SensFile, q: Query, *, memory_mb: int | None = None):
    """Answer one query of a file; problems with this query become an "error" result."""
    from ..driver import solve_query

    t0 = time.time()
    if q.data_aware != "none":
        from ..compiler import passes

        modes = getattr(passes, "DATA_AWARE_MODES", ())
        if q.data_aware not in modes:
            res = _error_result(
                sf,
                q,
                f"data-aware mode {q.data_aware!r} not implemented yet "
                "(the query is well-formed; run it with 'data_aware none' meanwhile)",
            )
            res.time["total"] = time.time() - t0
            return res
    try:
        res = solve_query(sf.ensemble, q, deadline=t0 + q.timeout, memory_mb=memory_mb)
    except InputError as e:
        res = _error_result(sf, q, str(e))
    except Exception as e:  # noqa: BLE001 - one query's bug must not lose the others' answers
        res = _error_result(sf, q, f"internal error: {type(e).__name__}: {e}")
    res.time["total"] = time.time() - t0
    return res


def run_file(
    path,
    query: str | None = None,
    *,
    timeout: float | None = None,
    memory_mb: int | None = None,
    on_result=None,
) -> list:
    """Answer every query of a ``.sens`` file (or those of one query/sweep block).

    A bad file raises :class:`InputError` before anything is solved; a query that fails
    becomes an "error" result and the others still run. ``on_result(result)`` is called
    as each query ends. ``timeout`` (seconds) overrides every query's own limit.
    """
    if timeout is not None and not timeout > 0:
        raise InputError(f"timeout must be positive, got {timeout}")
    sf = load_queries(path)
    results = []
    for q in sf.select(query):
        if timeout is not None:
            q = q.with_(timeout=timeout)
        res = run_query(sf, q, memory_mb=memory_mb)
        results.append(res)
        if on_result is not None:
            on_result(res)
    return results
