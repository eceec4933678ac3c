"""What a question tells whoever shows its progress: the interface a display implements
(views/progress.py has the bar, the notebook bar and the lines), and the silent one."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from ..answers.result import Result


class SweepProgress(Protocol):
    def advance(self, res: Result) -> None: ...  # one query ended

    def note(self, text: str) -> None: ...  # a message about the sweep (resume, ...)

    def status(self, text: str) -> None: ...  # how the query in flight is doing

    def close(self) -> None: ...


class Silent:
    def advance(self, res: Result) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def status(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


# a display: given the number of queries, a context that yields a SweepProgress
Display = Callable[[int], AbstractContextManager[SweepProgress]]


@contextmanager
def silent(_total: int):
    yield Silent()
