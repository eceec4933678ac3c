"""The answer to one query, with the fields of the JSON result (SPEC section 3)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

SENSITIVE, INSENSITIVE, UNKNOWN, ERROR = "sensitive", "insensitive", "unknown", "error"


@dataclass
class Result:
    query: str
    status: str
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

    def to_dict(self) -> dict:
        return _clean(asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), allow_nan=False)

    @property
    def exit_code(self) -> int:
        return 1 if self.status == ERROR else 0


def _clean(x):
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
