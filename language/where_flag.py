"""Constraints given on the command line: ``--where "x1.age <= 30"`` (repeatable), in the
grammar of a ``.sens`` query's ``where`` clause (docs/language.md, "Constraints"). The
text is read by the language's own parser, checked as a file's constraint is and built
into bounds and relations by its BlockBuilder; a problem is one line naming the flag,
its text and the column in it."""

from __future__ import annotations

from pathlib import Path

from ..compiler.ensemble import Ensemble
from ..compiler.errors import InputError
from ..compiler.query import FeatureBound, FeatureRelation, Query, held_by_constraints
from .ast import Defaults, QueryBlock, Where
from .build import BlockBuilder
from .check import check_constraint
from .errors import SensError
from .parse import parse_items

FLAG = "--where"
# the flag's text is read as the where clause of a query block, on its second line
_HEAD = "query where_flag {\n  where "
_COLUMN = len("  where ")


class FlagConstraints:
    """The ``--where`` texts of a command, read and checked once against the model (each
    text one or more constraints joined by ``and``); ``query(q)`` adds them to a query,
    checked with its features as a file's query is (a strict relation on a feature both
    inputs share, bounds that leave no value, varied features held to one value)."""

    def __init__(self, ens: Ensemble, texts, flag: str = FLAG) -> None:
        self.ens, self.texts, self.flag = ens, tuple(texts), flag
        self.bounds: tuple[FeatureBound, ...] = ()
        self.relations: tuple[FeatureRelation, ...] = ()
        for text in self.texts:
            b, r = _built(ens, text, _clause(text, flag), flag)[1:]
            self.bounds += tuple(b)
            self.relations += tuple(r)

    def query(self, q: Query) -> Query:
        """``q`` with the constraints added to its own (InputError: they contradict each
        other or the query's features, in one line)."""
        if not self.texts:
            return q
        clauses = [_clause(t, self.flag) for t in self.texts]
        shown = self.texts[0] if len(self.texts) == 1 else " and ".join(clauses)
        builder, bounds, rels = _built(self.ens, shown, " and ".join(clauses), self.flag)
        try:
            builder.check_consistent(list(q.vary), "", bounds, rels, None)
        except SensError as e:
            raise InputError(_one_line(e, shown, " and ".join(clauses), self.flag)) from None
        return q.with_(
            bounds=(*q.bounds, *self.bounds),
            relations=(*q.relations, *self.relations),
            where=(*q.where, *clauses),
        )

    def held(self, names) -> bool:
        """Whether the constraints hold every feature of ``names`` to one value for both
        inputs (``sex == 1``): a sweep over every feature leaves such a set out."""
        q = Query(vary=tuple(names), bounds=self.bounds, relations=self.relations)
        at = self.ens.feature_names
        try:
            return all(held_by_constraints(self.ens, q, at.index(n)) for n in names)
        except InputError:  # contradictory: the query's check says so
            return False


def _said(flag: str, text: str) -> str:
    """A text as given to the flag (``--where 'x1.age <= 30'``) or keyword (``where='...'``)."""
    return f"{flag}{'' if flag.endswith('=') else ' '}{text!r}"


def _clause(text: str, flag: str) -> str:
    """The constraints of one flag's text (a leading ``where`` allowed), or InputError."""
    if not isinstance(text, str):
        raise InputError(f"{flag}: give constraints as text, e.g. 'x1.age <= 30', not {text!r}")
    clause = text.strip().removeprefix("where ").strip()
    if not clause or "\n" in clause or "\r" in clause:
        raise InputError(
            f"{_said(flag, text)}: give one line of constraints, e.g. {_said(flag, 'x1.age <= 30')}"
        )
    return clause


def _built(ens: Ensemble, text: str, clause: str, flag: str) -> tuple[BlockBuilder, list, list]:
    """The builder of ``clause`` read as a query's where clause, and its bounds and
    relations; a problem is one line about the flag's ``text``."""
    try:
        ast = parse_items(f"{_HEAD}{clause}\n}}\n", flag)
        where = _the_where(ast, text, flag)
        for c in where.items:
            check_constraint(ast, c)
        builder = BlockBuilder(ast, ens, Defaults(()), None, None, Path("."))
        bounds, rels = builder.constraints(QueryBlock(ast.items[0].name, (where,)))
    except SensError as e:
        raise InputError(_one_line(e, text, clause, flag)) from None
    return builder, list(bounds), list(rels)


def _the_where(ast, text: str, flag: str) -> Where:
    """The one where clause the flag's text makes (not a '}' that closes the block and
    opens another, nor a statement of another kind)."""
    items = ast.items
    body = items[0].body if len(items) == 1 and isinstance(items[0], QueryBlock) else ()
    if len(body) != 1 or not isinstance(body[0], Where):
        raise InputError(
            f"{_said(flag, text)}: give constraints only, e.g. {_said(flag, 'x1.age <= 30')}"
        )
    return body[0]


def _one_line(e: SensError, text: str, clause: str, flag: str) -> str:
    """A SensError of the wrapped text as one line about the flag: its message, and the
    column in the flag's text where the constraint is on its line."""
    message = e.message.replace("unexpected '}'", "the constraints end early")
    if e.line == 2 and e.column > _COLUMN and clause in text:
        column = e.column - _COLUMN + text.find(clause)
        return f"{_said(flag, text)}: {message} (at column {column})"
    return f"{_said(flag, text)}: {message}"
