"""The answer to one query, with the fields of the JSON result (README.md)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .invert import Witness


class Status(StrEnum):
    """The answer to a query; str-valued, so JSON carries the plain word."""

    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"
    UNKNOWN = "unknown"
    ERROR = "error"


SENSITIVE = Status.SENSITIVE
INSENSITIVE = Status.INSENSITIVE
UNKNOWN = Status.UNKNOWN
ERROR = Status.ERROR


@dataclass
class Result:
    query: str
    status: Status
    backend: str
    features: list[str]
    gap: float
    witness: dict | None = None  # {"x1": {name: value}, "x2": {...}}
    outputs: dict | None = None  # {"x1": [per-class probabilities], "x2": [...]}
    validated: bool = False
    distance: float | None = None
    time: dict = field(default_factory=lambda: {"compile": 0.0, "solve": 0.0, "total": 0.0})
    error: str | None = None
    # beyond the required fields
    model: str = ""
    gap_kind: str = "prob"
    classes: list | None = None
    passes: list[str] = field(default_factory=list)
    message: str = ""
    stats: dict = field(default_factory=dict)
    # "how sensitive?" (--max-gap): {"lower", "upper", "tolerance", "proven", "steps",
    # "kind"} (driver/max_gap.py); None, and left out of the JSON, for a plain check
    max_gap: dict | None = None
    # the validated witness as arrays (x1, x2, intervals, leaves): for callers in Python,
    # never serialised
    witness_arrays: Witness | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        return _clean(
            {
                f.name: _plain(getattr(self, f.name))
                for f in fields(self)
                if f.name not in _PRIVATE
                and not (f.name in _OPTIONAL and getattr(self, f.name) is None)
            }
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    @property
    def exit_code(self) -> int:
        return 1 if self.status == ERROR else 0


_PRIVATE = frozenset({"witness_arrays"})
_OPTIONAL = frozenset({"max_gap"})  # in the JSON only when set


def _plain(x):
    """A field's value with dataclasses made dicts (as ``asdict`` does)."""
    return asdict(x) if hasattr(x, "__dataclass_fields__") else x


def _clean(x):
    if isinstance(x, StrEnum):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x) or math.isinf(x):
            return None if math.isnan(x) else (str(x))
        return x
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item"):
        return _clean(x.item())
    return x
