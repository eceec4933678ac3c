"""The typed AST of a ``.sens`` file (positions are kept for messages but never compared)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compiler.errors import InputError
from .errors import located


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
class Given(Str):
    """A path a command-line flag gave in place of the file's own (``treesens test
    --model M``): errors about it name the flag, not the file's line."""

    flag: str = ""


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
    """``a op b [op c]``: operands are Ref, Num, Text, Bool; ops from <=, <, >=, >, ==, !=."""

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
    value: float | None  # "max": the tolerance (None: the default)
    # "prob", "margin", "max" (the largest gap, docs/max-gap.md), "threshold" or "delta"
    kind: str
    below: float | None = None  # "threshold": f(x1) >= value, f(x2) <= below (regressors)
    direction: str | None = None  # "delta": up, down or either (None: either)


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
class Work(Node):
    """A work budget in work units (compiler/options.py ``work``)."""

    units: int


@dataclass(frozen=True)
class Threads(Node):
    n: int


@dataclass(frozen=True)
class Jobs(Node):
    """How many queries of a sweep run at once (how they run, not what they answer)."""

    n: int


@dataclass(frozen=True)
class Budget(Node):
    """The seconds a sweep's queries take in all, asked in two passes
    (questions/sweep_budget.py): how they run, not what they answer."""

    seconds: float


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
class KindSetting(Node):
    """``kind NAME [p = v, ...]``: what the query asks of its pair, and its parameters."""

    name: str
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
class AuditBlock(Node):
    """Which rows of a data set flip when only the varied features change."""

    name: Name
    body: tuple


@dataclass(frozen=True)
class Rows(Node):
    """An audit's data file (``data "rows.csv" label COL`` inside an audit block)."""

    path: Str
    label: str | None = None


@dataclass(frozen=True)
class By(Node):
    name: Name


@dataclass(frozen=True)
class Limit(Node):
    n: int


@dataclass(frozen=True)
class Out(Node):
    path: Str


@dataclass(frozen=True)
class Expect(Node):
    """What must hold of a block's answer (``treesens test``, docs/testing.md).

    ``kind``: "insensitive", "sensitive", "max_gap" (``expect max gap <= LIMIT``) or
    "audit" (``expect audit flippable <= LIMIT[%] [by COL]``); ``op`` the comparison
    written (only ``<=`` is accepted); ``percent``: LIMIT is a percentage of the rows,
    else a number of rows; ``allow_unknown``: ``or unknown``, a time limit may leave it
    open without failing."""

    kind: str
    op: str | None = None
    limit: float | None = None
    percent: bool = False
    by: Name | None = None
    allow_unknown: bool = False


@dataclass(frozen=True)
class ModelDecl(Node):
    path: Str
    format: str | None = None
    base_score: float | tuple[float, ...] | None = None  # one, or one per class
    trust_pickle: bool = False  # a pickled model may be loaded (it runs code when loaded)
    objective: str | None = None  # of an XGBoost dump, as num_class and base_score
    num_class: int | None = None
    num_parallel_tree: int | None = None  # of a multiclass XGBoost dump (default 1)
    # where 'format' and 'base_score' are written (for messages)
    format_pos: Pos | None = _pos()
    base_score_pos: Pos | None = _pos()


@dataclass(frozen=True)
class DataDecl(Node):
    path: Str
    label: str | None = None


@dataclass(frozen=True)
class BoundsFromData(Node):
    """``bounds from data``: each feature's bounds narrowed to its column's range in the
    file's data, within its declared bounds (as ``--bounds data``)."""


@dataclass(frozen=True)
class DetailsDecl(Node):
    path: Str


@dataclass(frozen=True)
class PluginDecl(Node):
    """``plugin "kinds.py"``: a Python file (or module) imported before the queries are
    built, for the kinds, formats or backends it registers."""

    path: Str


@dataclass(frozen=True)
class FeatureDecl(Node):
    name: Name
    kind: str | None = None
    lo: float | None = None
    hi: float | None = None
    categories: tuple[str, ...] | None = None


@dataclass(frozen=True)
class GroupDecl(Node):
    """``group race = race_A, race_B [dropped C]``: one-hot columns as one feature."""

    name: Name
    columns: tuple[Name, ...]
    dropped: Name | None = None


@dataclass(frozen=True)
class GroupsInfer(Node):
    """``groups infer``: one-hot groups found in the file's data."""


@dataclass(frozen=True)
class GroupsNone(Node):
    """``groups none``: no one-hot groups, not even those ``bounds from data`` infers."""


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

    def error(self, message: str, at) -> InputError:
        if isinstance(at, Given):  # not the file's: the flag that gave it is the place
            return InputError(message, at.flag)
        return located(message, self.filename, self.source, at)
