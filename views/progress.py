"""The progress of a Python sweep: a bar in a Jupyter notebook or a terminal, one line per
query elsewhere (a log file, a pipe), nothing when switched off.

In a notebook the bar is an HTML ``<progress>`` element updated in place through
IPython's display (no widget package needed); in a terminal it is rich's progress bar
on stderr.
"""

from __future__ import annotations

import html
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from ..answers.result import ERROR, UNKNOWN, Result
from ..answers.stats import SKIPPED_MEMORY
from ..questions.progress import Silent, SweepProgress
from .result_view import max_gap_outcome


def notebook_display() -> Callable | None:
    """IPython's ``display`` when this runs in a Jupyter kernel, else None. IPython is
    already loaded in a kernel, so nothing is imported here."""
    ipython = sys.modules.get("IPython")
    display = sys.modules.get("IPython.display")
    shell = ipython.get_ipython() if ipython is not None and display is not None else None
    if shell is None:
        return None
    kind = type(shell)
    in_kernel = kind.__name__ == "ZMQInteractiveShell" or "google.colab" in kind.__module__
    return display.display if in_kernel else None


def outcome(res: Result) -> str:
    """A query's answer as its progress line ends: the status (an error's with its first
    line), or a max gap's final bounds (the lines shown while it ran were only its bracket
    so far)."""
    if res.max_gap and res.status != ERROR:
        return max_gap_outcome(res.max_gap, res.features)
    if res.status == ERROR and res.error:  # why, where no table follows (--table none)
        return f"error: {res.error.splitlines()[0]}"
    if res.status == UNKNOWN and skipped_for_memory(res):
        return "unknown (solver stage skipped: above the memory limit)"
    if res.status == UNKNOWN and (why := _brief(res.message)):
        return f"unknown ({why})"  # what ended it: "time limit reached", ...
    return str(res.status)


def _brief(message: str | None, most: int = 60) -> str:
    """A message's first clause (to its first ':' or ';'), where it is short."""
    first = re.split(r"[:;]", message or "", maxsplit=1)[0].strip()
    return first if len(first) <= most else ""


def skipped_for_memory(res: Result) -> bool:
    """Whether a query's solver stage was skipped, its compile passing the memory limit."""
    return (res.stats or {}).get("solver_stage") == SKIPPED_MEMORY


class Lines:
    """``[i/N] query: answer (time)`` per query on ``stream``."""

    def __init__(self, total: int, stream: IO[str]) -> None:
        self.total, self.done, self.stream = total, 0, stream

    def advance(self, res: Result) -> None:
        self.done += 1
        self.note(
            f"[{self.done}/{self.total}] {res.query}: {outcome(res)} ({res.time['total']:.2f}s)"
        )

    def note(self, text: str) -> None:
        # one write: a query's "still running" line comes from another thread
        self.stream.write(text + "\n")
        self.stream.flush()

    def status(self, text: str) -> None:
        self.note(f"  {text}")

    def close(self) -> None:
        pass


class TerminalBar:
    """rich's progress bar on a terminal's stderr."""

    def __init__(self, total: int, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=stream),
        )
        self.bar.start()
        self.task = self.bar.add_task("sweep", total=total)

    def advance(self, res: Result) -> None:
        self.bar.update(self.task, advance=1, description=f"{res.query}: {outcome(res)}")

    def note(self, text: str) -> None:
        self.bar.console.print(text, markup=False, highlight=False)

    def status(self, text: str) -> None:
        self.bar.update(self.task, description=text)

    def close(self) -> None:
        self.bar.stop()


class NotebookBar:
    """An HTML progress bar, updated in place in the notebook cell's output."""

    def __init__(self, total: int, display: Callable) -> None:
        self.total, self.done, self.last, self.notes = total, 0, "", []
        self.start = time.time()
        self.handle = display(self, display_id=True)

    def advance(self, res: Result) -> None:
        self.done += 1
        self.last = f"{res.query}: {outcome(res)}"
        self._refresh()

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._refresh()

    def status(self, text: str) -> None:
        self.last = text
        self._refresh()

    def close(self) -> None:
        self._refresh()

    def _refresh(self) -> None:
        if self.handle is not None:
            self.handle.update(self)

    def __repr__(self) -> str:
        elapsed = time.time() - self.start
        return f"sweep [{self.done}/{self.total}] {self.last} ({elapsed:.0f}s)"

    def _repr_html_(self) -> str:
        notes = "".join(f"<div>{html.escape(n)}</div>" for n in self.notes)
        return (
            f'{notes}<div><progress value="{self.done}" max="{max(self.total, 1)}" '
            f'style="width:20em"></progress> {html.escape(repr(self))}</div>'
        )


@contextmanager
def sweep_progress(
    total: int, enabled: bool = True, stream: IO[str] | None = None
) -> Iterator[SweepProgress]:
    """The progress display of a sweep of ``total`` queries, closed at the end."""
    stream = stream or sys.stderr
    display = notebook_display() if enabled else None
    if not enabled:
        shown: SweepProgress = Silent()
    elif display is not None:
        shown = NotebookBar(total, display)
    elif stream.isatty():
        shown = TerminalBar(total, stream)
    else:
        shown = Lines(total, stream)
    try:
        yield shown
    finally:
        shown.close()
