"""The executor protocol: submit a batch of independent tasks, yield outcomes as they end.

A batch is one function, one shared argument (the model: sent to each worker once) and
a list of items (the queries). ``fn(shared, item)`` runs on some worker for every item;
``run`` yields ``(index, outcome)`` in completion order, each index exactly once. A task
that raises, or whose worker dies, is run once more; when that fails too its outcome is a
``Failure`` (the caller reports it as an error result), so nothing is lost or duplicated.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...compiler.errors import InputError

RETRIES = 1  # extra attempts of a task that raised or whose worker died

TaskFn = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Failure:
    """A task that failed on every attempt: why, in one line."""

    message: str


Outcome = Any  # the task's return value, or a Failure


class Executor(Protocol):
    """Runs ``fn(shared, item)`` for every item; see the module docstring."""

    workers: int

    def run(self, fn: TaskFn, shared: Any, items: Sequence[Any]) -> Iterator[tuple[int, Outcome]]:
        """Yield ``(index into items, outcome)`` as each task ends."""
        ...

    def close(self) -> None:
        """Release the workers (and a cluster this executor started)."""
        ...


def failure_text(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def parse_executor(spec: str) -> tuple[str, str | None]:
    """``"dask=tcp://h:8786"`` -> ``("dask", "tcp://h:8786")``; ``"ray"`` -> ``("ray", None)``."""
    kind, _, address = spec.partition("=")
    kind = kind.strip().lower()
    if kind not in ("local", "dask", "ray"):
        raise InputError(
            f"unknown executor {kind!r}: local, dask[=ADDRESS] or ray[=ADDRESS]",
            f"--executor {spec}",
        )
    if kind == "local" and address:
        raise InputError("the local executor takes no address", f"--executor {spec}")
    return kind, address.strip() or None


def optional_import(module: str, extra: str):
    """Import an optional engine, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise InputError(
            f"the {extra} executor needs {module}: pip install 'treesens[{extra}]'"
        ) from None
