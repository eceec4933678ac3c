"""The one place the driver reads a query's options (typed options replace it later)."""

from __future__ import annotations

from typing import Any

from ..compiler.query import Query


def option(q: Query, key: str, default: Any = None) -> Any:
    """The value of query option ``key``, or ``default`` when the query does not set it."""
    return dict(q.options).get(key, default)


def with_option(q: Query, key: str, value: Any) -> Query:
    """The query with option ``key`` set to ``value``."""
    return q.with_(options=tuple({**dict(q.options), key: value}.items()))
