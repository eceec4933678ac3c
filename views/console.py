"""rich consoles for the command's own output (a verdict, a table). Written into a pipe
that closes early (``treesens check ... | head -1``), rich's console exits 1, the code of
a query that ended in error; this one raises BrokenPipeError instead, after pointing
stdout at the null device, and the command ends with its answer's code
(interfaces/cli/main.py)."""

from __future__ import annotations

import functools
import os
import sys


@functools.cache
def _console_class():
    from rich.console import Console  # rich is kept out of the CLI's start-up

    class QuietOnClosedPipe(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise BrokenPipeError

    return QuietOnClosedPipe


def output_console(**kw):
    """A rich Console (``kw`` as Console's) that lets a closed pipe end the command
    quietly."""
    return _console_class()(**kw)
