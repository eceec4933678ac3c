"""What the fuzzers share: their hypothesis settings, statistics labels, JSON paths."""

from __future__ import annotations

import contextlib
import os

from hypothesis import HealthCheck, settings
from hypothesis import event as _hypothesis_event
from hypothesis.errors import InvalidArgument


def event(value: str) -> None:
    """hypothesis' statistics label (outside a hypothesis test, nothing)."""
    with contextlib.suppress(InvalidArgument):
        _hypothesis_event(value)


def fuzz_settings(quick: int) -> settings:
    """``quick`` examples (CI), or ``TS_FUZZ_EXAMPLES`` of them; always reproducible."""
    n = int(os.environ.get("TS_FUZZ_EXAMPLES") or quick)
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def json_paths(model) -> list[tuple]:
    """Paths to the values of a JSON document, the root ``()`` first (lists: their first
    three items), for a fuzzer to pick one and break it."""
    out = []

    def walk(x, path):
        out.append(path)
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + (k,))
        elif isinstance(x, list) and x:
            for i in range(min(len(x), 3)):
                walk(x[i], path + (i,))

    walk(model, ())
    return out
