"""Task functions for tests/frontends/test_executors.py, importable by every executor's workers
(``treesens.tests.executor_tasks``). ``shared`` is a directory for marker files."""

from __future__ import annotations

import os
from pathlib import Path


def double(shared: str, item: int) -> int:
    return 2 * item


def _first_time(shared: str, item: int) -> bool:
    marker = Path(shared) / f"ran-{item}"
    if marker.exists():
        return False
    marker.write_text(str(os.getpid()))
    return True


def die_once(shared: str, item: int) -> int:
    """Kills its own worker process the first time it runs (item 0 only)."""
    if item == 0 and _first_time(shared, item):
        os._exit(3)
    return 2 * item


def die_always(shared: str, item: int) -> int:
    """Item 0 kills its worker process on every attempt."""
    if item == 0:
        os._exit(3)
    return 2 * item


def raise_once(shared: str, item: int) -> int:
    if item == 0 and _first_time(shared, item):
        raise RuntimeError("first attempt fails")
    return 2 * item


def raise_always(shared: str, item: int) -> int:
    if item == 0:
        raise RuntimeError("this task always fails")
    return 2 * item
