"""Which engines took part while a caller watched: the solvers that ran (a backend's
solve was called) and the compiled box search (numba). The report names their
libraries in its provenance, and only those.

A caller opens ``watching()`` around its work; the driver and the box search note what
they run into every open watch. Watches are process-wide (a race or the box search runs
in threads of its own), so two reports in one process at once would see each other's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Usage:
    solvers: set[str] = field(default_factory=set)  # backends whose solver was called
    compiled_search: bool = False  # the box search ran compiled (numba)


_open: list[Usage] = []
_lock = threading.Lock()


@contextmanager
def watching() -> Iterator[Usage]:
    """What runs in this process until the block ends."""
    seen = Usage()
    with _lock:
        _open.append(seen)
    try:
        yield seen
    finally:
        with _lock:
            _open.remove(seen)


def note_solver(backend: str) -> None:
    with _lock:
        for u in _open:
            u.solvers.add(backend)


def note_compiled_search() -> None:
    with _lock:
        for u in _open:
            u.compiled_search = True
